package profile

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// validateTLS checks cluster.tls: a known format, and three Secret names
// that render, are valid and distinct (the suite creates all three), and
// that the cluster template names (else the operator would never use the
// certificates the suite made, and every probe would fail its handshake).
func (p *Profile) validateTLS() []error {
	t := p.Cluster.TLS
	if t == nil {
		return nil
	}
	var errs []error
	switch t.Format {
	case TLSCoreosStatic:
	case "":
		errs = append(errs, fmt.Errorf("  cluster.tls.format: required: %q (coreos v0.9.4's spec.TLS.static Secrets)", TLSCoreosStatic))
	default:
		errs = append(errs, fmt.Errorf("  cluster.tls.format: %q is not %q (coreos v0.9.4's spec.TLS.static Secrets)", t.Format, TLSCoreosStatic))
	}
	const cluster, namespace = "sample", "sample-ns"
	rendered, err := Render(p.Cluster.Template, TemplateData{Name: cluster, Namespace: namespace, Size: 3, Version: p.Etcd.Initial, Repository: p.Etcd.Repository})
	if err != nil {
		rendered = "" // validateTemplates reports it
	}
	seen := map[string]string{}
	for _, f := range []struct{ field, tpl string }{
		{"cluster.tls.peerSecret", t.PeerSecret},
		{"cluster.tls.serverSecret", t.ServerSecret},
		{"cluster.tls.clientSecret", t.ClientSecret},
	} {
		if strings.TrimSpace(f.tpl) == "" {
			errs = append(errs, fmt.Errorf("  %s: required: the Secret's name, a template like \"{{ .Name }}-tls\"", f.field))
			continue
		}
		name, err := Render(f.tpl, TemplateData{Name: cluster, Namespace: namespace})
		if err != nil {
			errs = append(errs, fmt.Errorf("  %s: %w", f.field, err))
			continue
		}
		if problems := validation.IsDNS1123Subdomain(name); len(problems) > 0 {
			errs = append(errs, fmt.Errorf("  %s: %q (for cluster %s) is not a Secret name: %s", f.field, name, cluster, strings.Join(problems, "; ")))
			continue
		}
		if other, dup := seen[name]; dup {
			errs = append(errs, fmt.Errorf("  %s: %q is also %s; the three Secrets hold different keys and need three names", f.field, name, other))
			continue
		}
		seen[name] = f.field
		if rendered != "" && !strings.Contains(rendered, name) {
			errs = append(errs, fmt.Errorf("  %s: the cluster template does not name %q (for cluster %s): the operator would not use the certificates the suite makes", f.field, name, cluster))
		}
	}
	return errs
}
