package profile

import "fmt"

// validateTemplates renders the templates with sample data, so mistakes
// surface at load time rather than in the middle of a run.
func (p *Profile) validateTemplates() []error {
	var errs []error
	sample := TemplateData{Name: "sample", Namespace: "sample-ns", Size: 3, Version: p.Etcd.Initial, Repository: p.Etcd.Repository}
	for field, tpl := range map[string]string{
		"cluster.template":       p.Cluster.Template,
		"cluster.memberSelector": p.Cluster.MemberSelector,
		"cluster.clientService":  p.Cluster.ClientService,
		"cluster.versionValue":   p.Cluster.VersionValue,
	} {
		if tpl == "" {
			continue
		}
		if _, err := Render(tpl, sample); err != nil {
			errs = append(errs, fmt.Errorf("  %s: %w", field, err))
		}
	}
	for i, tpl := range p.Cluster.ExtraObjects {
		if _, err := Render(tpl, sample); err != nil {
			errs = append(errs, fmt.Errorf("  cluster.extraObjects[%d]: %w", i, err))
		}
	}
	return errs
}
