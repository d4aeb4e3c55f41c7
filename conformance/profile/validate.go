package profile

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

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
		p.validateTLS,
		p.validateInsights,
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
	if d := p.Operator.UnansweringMemberDeadline; d != "" {
		if v, err := time.ParseDuration(d); err != nil || v <= 0 {
			errs = append(errs, fmt.Errorf("  operator.unansweringMemberDeadline: %q is not a duration (for example 60s)", d))
		}
	}
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
	switch p.Capabilities.Space {
	case "", SpaceSurvives, SpaceRecovers:
	default:
		errs = append(errs, fmt.Errorf("  capabilities.space: %q is not one of %q (a lost member is replaced while NOSPACE is raised) or %q (and writes come back once data is deleted: compaction, defragmentation, disarm)",
			p.Capabilities.Space, SpaceSurvives, SpaceRecovers))
	}
	switch p.Capabilities.BackupRestore {
	case "", BackupRestoreCoreosAPI:
	default:
		errs = append(errs, fmt.Errorf("  capabilities.backupRestore: %q is not %q (EtcdBackup and EtcdRestore of coreos v0.9.4, S3 storage)",
			p.Capabilities.BackupRestore, BackupRestoreCoreosAPI))
	}
	if p.CapabilityLevel != "" && !slices.Contains(OperatorFrameworkLevels, p.CapabilityLevel) {
		errs = append(errs, fmt.Errorf("  capabilityLevel: %q is not one of the Operator Framework's levels %q (a CSV's capabilities annotation)",
			p.CapabilityLevel, OperatorFrameworkLevels))
	}
	if p.Cluster.ClientPort <= 0 || p.Cluster.ClientPort > 65535 {
		errs = append(errs, fmt.Errorf("  cluster.clientPort: %d is not a TCP port", p.Cluster.ClientPort))
	}
	if p.Cluster.Status.Phase != "" && p.Cluster.Status.ReadyPhase == "" {
		errs = append(errs, errors.New("  cluster.status.readyPhase: required when cluster.status.phase is set"))
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
