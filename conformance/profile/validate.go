package profile

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	utilversion "k8s.io/apimachinery/pkg/util/version"

	"github.com/etcdproof/etcdproof/conformance/rbac"
)

// Validate reports every problem at once, one per line, naming the field.
// The validators run in a fixed order, so the problems are listed in it.
func (p *Profile) Validate() error {
	var errs []error
	for _, validate := range []func() []error{
		p.validateRequired,
		p.validateInstall,
		p.validateSelftest,
		p.validateCleanup,
		p.validateRBAC,
		p.validateSettings,
		p.validateEtcd,
		p.validateCapabilities,
		p.validateTemplates,
	} {
		errs = append(errs, validate()...)
	}
	return errors.Join(errs...)
}

// required reports field when value is blank.
func required(field, value string) []error {
	if strings.TrimSpace(value) == "" {
		return []error{fmt.Errorf("  %s: required", field)}
	}
	return nil
}

// validateRequired checks the fields every profile sets.
func (p *Profile) validateRequired() []error {
	var errs []error
	for _, f := range []struct{ field, value string }{
		{"name", p.Name},
		{"operator.namespace", p.Operator.Namespace},
		{"operator.serviceAccount", p.Operator.ServiceAccount},
		{"cluster.template", p.Cluster.Template},
		{"cluster.resource", p.Cluster.Resource},
		{"cluster.apiVersion", p.Cluster.APIVersion},
		{"cluster.kind", p.Cluster.Kind},
		{"cluster.sizePath", p.Cluster.SizePath},
		{"cluster.versionPath", p.Cluster.VersionPath},
		{"cluster.memberSelector", p.Cluster.MemberSelector},
		{"cluster.clientService", p.Cluster.ClientService},
		{"etcd.repository", p.Etcd.Repository},
		{"etcd.initial", p.Etcd.Initial},
	} {
		errs = append(errs, required(f.field, f.value)...)
	}
	return errs
}

// validateInstall checks what installs, uninstalls and upgrades the
// operator: the steps, and the images they need.
func (p *Profile) validateInstall() []error {
	var errs []error
	if len(p.Install) == 0 {
		errs = append(errs, errors.New("  install: at least one step is required"))
	}
	if len(p.Uninstall) == 0 {
		errs = append(errs, errors.New("  uninstall: at least one step is required"))
	}
	for i, img := range p.Images {
		if strings.TrimSpace(img) == "" || strings.ContainsAny(img, " \t") {
			errs = append(errs, fmt.Errorf("  images[%d]: %q is not an image reference", i, img))
		}
	}
	errs = append(errs, validateSteps("install", p.Install)...)
	errs = append(errs, validateSteps("uninstall", p.Uninstall)...)
	errs = append(errs, validateSteps("upgradeOperator", p.UpgradeOperator)...)
	if p.Capabilities.OperatorUpgrade && len(p.UpgradeOperator) == 0 {
		errs = append(errs, errors.New("  upgradeOperator: at least one step is required when capabilities.operatorUpgrade is claimed: "+
			"the steps that replace the running operator with a newer build (e.g. set a new image on its Deployment)"))
	}
	return errs
}

// validateSteps checks each step of one list: exactly one action, and
// group/versions where the step depends on one.
func validateSteps(field string, steps []Step) []error {
	var errs []error
	for i, s := range steps {
		set := 0
		for _, b := range []bool{s.Apply != "", s.Delete != "", len(s.Run) > 0} {
			if b {
				set++
			}
		}
		if set != 1 {
			errs = append(errs, fmt.Errorf("  %s[%d]: set exactly one of apply, delete, run (found %d)", field, i, set))
		}
		for name, gv := range map[string]string{"ifServed": s.IfServed, "unlessServed": s.UnlessServed} {
			if gv != "" && gv != "v1" && (strings.Count(gv, "/") != 1 || strings.HasPrefix(gv, "/") || strings.HasSuffix(gv, "/")) {
				errs = append(errs, fmt.Errorf("  %s[%d].%s: %q is not a group/version like apps/v1", field, i, name, gv))
			}
		}
	}
	return errs
}

// validateSelftest checks the expectations of a known-bad profile, if any:
// each names a check the profile runs, once, and the reason to look for.
// A single expectation is named "selftest", one of a list "selftest[i]".
func (p *Profile) validateSelftest() []error {
	if p.Selftest == nil {
		return nil
	}
	if len(p.Selftest) == 0 {
		return []error{errors.New("  selftest: the list is empty: give at least one expectation {check, reason}, or leave selftest out")}
	}
	var errs []error
	for i, x := range p.Selftest {
		field := "selftest"
		if len(p.Selftest) > 1 {
			field = fmt.Sprintf("selftest[%d]", i)
		}
		if !slices.Contains(CheckLabels, x.Check) {
			errs = append(errs, fmt.Errorf("  %s.check: %q is not one of %s", field, x.Check, strings.Join(CheckLabels, ", ")))
		} else if capability, claimed := p.Capabilities.capabilityOf(x.Check); !claimed {
			errs = append(errs, fmt.Errorf("  %s.check: %s runs only when the profile claims capabilities.%s: without the claim it is reported not claimed, never failed",
				field, x.Check, capability))
		}
		if slices.ContainsFunc(p.Selftest[:i], func(o Expectation) bool { return o.Check == x.Check }) {
			errs = append(errs, fmt.Errorf("  %s.check: %s is listed twice: selftest runs the profile once per check, so give each check one expectation", field, x.Check))
		}
		errs = append(errs, required(field+".reason", x.Reason)...)
		if st := x.State; st != "" && st != ExpectFailed && st != ExpectIncomplete {
			errs = append(errs, fmt.Errorf("  %s.state: %q is not one of %q, %q", field, st, ExpectFailed, ExpectIncomplete))
		}
		switch x.AuditLog {
		case "":
		case AuditLogUnreadable:
			if x.Check != "rbac" {
				errs = append(errs, fmt.Errorf("  %s.auditLog: only the rbac check reads the audit log, and %s.check is %q", field, field, x.Check))
			}
		default:
			errs = append(errs, fmt.Errorf("  %s.auditLog: %q is not %q", field, x.AuditLog, AuditLogUnreadable))
		}
	}
	return errs
}

// validateCleanup checks the retained resources: plural names, each listed
// once, with a reason.
func (p *Profile) validateCleanup() []error {
	var errs []error
	for i, r := range p.Cleanup.Retains {
		if r.Resource == "" || r.Resource != strings.ToLower(r.Resource) || strings.ContainsAny(r.Resource, "/ \t") {
			errs = append(errs, fmt.Errorf("  cleanup.retains[%d].resource: %q is not a plural resource name like persistentvolumeclaims or etcdbackups.example.com", i, r.Resource))
		}
		errs = append(errs, required(fmt.Sprintf("cleanup.retains[%d].reason", i), r.Reason)...)
		if slices.ContainsFunc(p.Cleanup.Retains[:i], func(o Retention) bool { return o.Resource == r.Resource }) {
			errs = append(errs, fmt.Errorf("  cleanup.retains[%d].resource: %s is listed twice", i, r.Resource))
		}
	}
	return errs
}

// validateRBAC reads the declared role, if any: it must be local and hold
// only Roles and ClusterRoles.
func (p *Profile) validateRBAC() []error {
	d := p.RBAC.DeclaredRole
	if d == "" {
		return nil
	}
	if IsURL(d) {
		return []error{fmt.Errorf("  rbac.declaredRole: %q must be a local file or directory", d)}
	}
	if _, err := rbac.ReadDeclared(p.Path(d), p.Operator.Namespace); err != nil {
		return []error{fmt.Errorf("  rbac.declaredRole: %w", err)}
	}
	return nil
}

// validateSettings checks the settings that take one of a few values or a
// range: cluster.namespace, capabilities.quorumLoss, cluster.clientPort,
// and the status paths that need one another.
func (p *Profile) validateSettings() []error {
	var errs []error
	switch p.Cluster.Namespace {
	case "", "per-spec", "operator":
	default:
		errs = append(errs, fmt.Errorf("  cluster.namespace: %q is not one of \"per-spec\", \"operator\"", p.Cluster.Namespace))
	}
	switch p.Capabilities.QuorumLoss {
	case "", QuorumLossDurable, QuorumLossLossy:
	default:
		errs = append(errs, fmt.Errorf("  capabilities.quorumLoss: %q is not one of %q (every acknowledged write survives) or %q (serves again; surviving writes are counted)",
			p.Capabilities.QuorumLoss, QuorumLossDurable, QuorumLossLossy))
	}
	if p.Cluster.ClientPort <= 0 || p.Cluster.ClientPort > 65535 {
		errs = append(errs, fmt.Errorf("  cluster.clientPort: %d is not a TCP port", p.Cluster.ClientPort))
	}
	if p.Cluster.Status.Phase != "" && p.Cluster.Status.ReadyPhase == "" {
		errs = append(errs, errors.New("  cluster.status.readyPhase: required when cluster.status.phase is set"))
	}
	return errs
}

// validateEtcd checks the etcd versions, and that the claimed upgrade
// checks have versions one minor apart to walk.
func (p *Profile) validateEtcd() []error {
	var errs []error
	for _, v := range append([]string{p.Etcd.Initial, p.Etcd.UpgradeTo}, p.Etcd.UpgradeChain...) {
		if v != "" && !validVersion(v) {
			errs = append(errs, fmt.Errorf("  etcd: version %q is not MAJOR.MINOR.PATCH (no leading v)", v))
		}
	}
	if p.Capabilities.Upgrade && p.Etcd.UpgradeTo == "" {
		errs = append(errs, errors.New("  etcd.upgradeTo: required when capabilities.upgrade is claimed"))
	}
	if hop := upgradeHop(p.Etcd.Initial, p.Etcd.UpgradeTo); p.Capabilities.Upgrade && hop != "" {
		errs = append(errs, fmt.Errorf("  etcd.upgradeTo: %s %s etcd.initial %s; the upgrade check moves etcd exactly one minor (etcd's supported upgrade step): set it to a %s release",
			p.Etcd.UpgradeTo, hop, p.Etcd.Initial, nextMinor(p.Etcd.Initial)))
	}
	if p.Capabilities.UpgradeChain && len(p.Etcd.UpgradeChain) < 3 {
		errs = append(errs, errors.New("  etcd.upgradeChain: needs at least three versions when capabilities.upgradeChain is claimed"))
	}
	if p.Capabilities.UpgradeChain {
		for i := 1; i < len(p.Etcd.UpgradeChain); i++ {
			from, to := p.Etcd.UpgradeChain[i-1], p.Etcd.UpgradeChain[i]
			if hop := upgradeHop(from, to); hop != "" {
				errs = append(errs, fmt.Errorf("  etcd.upgradeChain: %s → %s is not one minor newer (%s %s %s); etcd upgrades one minor at a time", from, to, to, hop, from))
			}
		}
	}
	return errs
}

// validateCapabilities checks claims that need another claim.
func (p *Profile) validateCapabilities() []error {
	if p.Capabilities.ScaleDown && !p.Capabilities.ScaleUp {
		return []error{errors.New("  capabilities.scaleDown: the scale check grows the cluster first, so it also needs scaleUp")}
	}
	return nil
}

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

// upgradeHop says how far one version is from another when that is not one
// etcd upgrade step (same major, the next minor): "is not a newer minor
// than" or "is N minors after"; "" when it is a step, or when a version is
// missing or malformed (reported elsewhere).
func upgradeHop(from, to string) string {
	if !validVersion(from) || !validVersion(to) {
		return ""
	}
	f, t := utilversion.MustParseSemantic(from), utilversion.MustParseSemantic(to)
	switch {
	case t.Major() != f.Major() || t.Minor() <= f.Minor():
		return "is not a newer minor than"
	case t.Minor() > f.Minor()+1:
		return fmt.Sprintf("is %d minors after", t.Minor()-f.Minor())
	}
	return ""
}

// nextMinor is the series one upgrade step after v ("3.5.21" → "3.6.x").
func nextMinor(v string) string {
	f := utilversion.MustParseSemantic(v)
	return fmt.Sprintf("%d.%d.x", f.Major(), f.Minor()+1)
}

func validVersion(v string) bool {
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}
