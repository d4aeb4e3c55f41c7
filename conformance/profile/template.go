package profile

import (
	"bytes"
	"text/template"
)

// TemplateData is what profile templates may reference.
type TemplateData struct {
	Name       string
	Namespace  string
	Size       int
	Version    string
	Repository string
	// Durable asks for a cluster whose members keep their data across pod
	// deletion (e.g. on claims); the quorum-loss check of a profile that
	// claims durability sets it.
	Durable bool
	// QuotaBackendBytes, when not 0, asks for members whose backend quota
	// is this many bytes (etcd's --quota-backend-bytes): the space check
	// fills it. A template that ignores it leaves that check INCOMPLETE.
	QuotaBackendBytes int64
	// ServedAPI answers {{ if .Served "group/version" }}; nil means served.
	ServedAPI func(groupVersion string) bool
}

// Served reports whether the cluster serves groupVersion, so a template
// can leave out an object an old or new cluster does not need (a template
// that renders to nothing is not created).
func (d TemplateData) Served(groupVersion string) bool {
	return d.ServedAPI == nil || d.ServedAPI(groupVersion)
}

// SetsQuota reports whether a template renders differently when asked for
// a backend quota: whether the profile has a way to set one.
func SetsQuota(tpl string, data TemplateData) bool {
	without, err := Render(tpl, data)
	if err != nil {
		return false
	}
	data.QuotaBackendBytes = 16 << 20
	with, err := Render(tpl, data)
	return err == nil && with != without
}

// Render expands a template; unknown fields are errors.
func Render(tpl string, data TemplateData) (string, error) {
	t, err := template.New("").Option("missingkey=error").Parse(tpl)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		return "", err
	}
	return buf.String(), nil
}
