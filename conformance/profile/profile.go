// Package profile loads and validates the two inputs of a conformance run:
// an operator profile (everything operator-specific) and the suite config
// (intervals, budgets, versions, traffic shape).
package profile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Profile describes how to drive one etcd operator. Specs read only this;
// they never branch on which operator they test.
type Profile struct {
	// Name identifies the profile in reports.
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`

	Operator Operator `json:"operator"`
	// Images are the references the operator and its etcd clusters run.
	// Before installing, the run checks that the nodes hold or can pull
	// each one, and names the missing ones.
	Images       []string     `json:"images,omitempty"`
	Install      []Step       `json:"install"`
	Uninstall    []Step       `json:"uninstall"`
	Cluster      Cluster      `json:"cluster"`
	Etcd         Etcd         `json:"etcd"`
	Capabilities Capabilities `json:"capabilities"`
	// CapabilityLevel is the Operator Framework capability level the
	// operator's CSV declares ("Full Lifecycle"), shown beside the level a
	// run proves; "" when it declares none.
	CapabilityLevel string `json:"capabilityLevel,omitempty"`

	// UpgradeOperator replaces the installed operator with a newer build
	// (e.g. a new image on its Deployment) while clusters run: the
	// operator-upgrade check runs these steps. Required when that check
	// is claimed.
	UpgradeOperator []Step `json:"upgradeOperator,omitempty"`

	// Cleanup declares what the operator leaves behind on purpose.
	Cleanup Cleanup `json:"cleanup,omitempty"`
	// RBAC is what the rbac check judges besides the installed grant.
	RBAC RBAC `json:"rbac,omitempty"`
	// Selftest, set only in known-bad profiles, says which checks must fail
	// and what each failure message must mention: one expectation or a
	// list, each proven by a run of its own limited to its check.
	Selftest Expectations `json:"selftest,omitempty"`

	// dir is the directory of the profile file; relative paths in steps
	// resolve against it.
	dir string
}

// Operator names the operator's identity on the cluster.
type Operator struct {
	Namespace      string `json:"namespace"`
	ServiceAccount string `json:"serviceAccount"`
	// Deployment is waited on after install and its logs are collected.
	Deployment string `json:"deployment"`
	// Version is reported in the environment fingerprint.
	Version string `json:"version,omitempty"`
	// UnansweringMemberDeadline is how long the operator documents it
	// waits before it replaces a member whose pod runs but that does not
	// answer (the reference: 60s); empty when it never replaces a running
	// member for that. The partition check holds less (PartitionHold).
	UnansweringMemberDeadline string `json:"unansweringMemberDeadline,omitempty"`
}

// PartitionHold is how long the partition check may keep a member cut
// off: the suite's max, but two thirds of the operator's deadline for a
// member that does not answer when that is shorter, so that a replacement
// the operator documents is never taken for a wrong one (the third left
// covers the operator's resync and the check's polling).
func (o Operator) PartitionHold(max time.Duration) time.Duration {
	deadline, err := time.ParseDuration(o.UnansweringMemberDeadline)
	if o.UnansweringMemberDeadline == "" || err != nil {
		return max
	}
	return min(max, deadline*2/3)
}

// Step is one install, uninstall or upgradeOperator action. Exactly one
// field is set.
type Step struct {
	// Apply is a file, a directory (a kustomization, or manifest files)
	// or an https URL whose objects are applied as `kubectl apply -k|-f`
	// would, through the API (no kubectl is run).
	Apply string `json:"apply,omitempty"`
	// Delete is like Apply, deleting as `kubectl delete --ignore-not-found
	// --wait` would.
	Delete string `json:"delete,omitempty"`
	// Run is a command; "{{.Kubectl}}", "{{.Namespace}}" (the operator's),
	// "{{.Kubeconfig}}" and "{{.Context}}" are expanded (the latter two may
	// be empty: kubectl then uses its defaults).
	Run []string `json:"run,omitempty"`
	// ApproveInstallPlan names a ClusterServiceVersion that Operator
	// Lifecycle Manager is to install in the operator's namespace: its
	// InstallPlan (of a Subscription with installPlanApproval Manual) is
	// approved, and the step ends once that CSV has Succeeded.
	ApproveInstallPlan string `json:"approveInstallPlan,omitempty"`
	// IfServed and UnlessServed make the step depend on whether the API
	// server serves a group/version (e.g. apiextensions.k8s.io/v1beta1), or
	// a resource in it (group/version/resource, e.g.
	// extensions/v1beta1/deployments: 1.16-1.21 still serve the group, not
	// its Deployments), so one profile installs the right way on old and new
	// clusters.
	IfServed     string `json:"ifServed,omitempty"`
	UnlessServed string `json:"unlessServed,omitempty"`
}

// Cluster describes the custom resource and how to find what it creates.
type Cluster struct {
	// Template is the CR as a Go template over TemplateData.
	Template string `json:"template"`
	// Namespace where clusters are created: "" or "per-spec" gives every
	// spec its own namespace; "operator" uses the operator's namespace
	// (for operators that only watch their own namespace).
	Namespace string `json:"namespace,omitempty"`
	// Resource is the plural resource name with group, e.g.
	// "etcdclusters.etcd.database.coreos.com".
	Resource string `json:"resource"`
	// APIVersion and Kind of the CR, used for dynamic access.
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// SizePath and VersionPath are dotted field paths in the CR.
	SizePath    string `json:"sizePath"`
	VersionPath string `json:"versionPath"`
	// VersionValue is the template of what the upgrade check writes at
	// VersionPath, for operators that want "v3.6.5" or an image reference;
	// default "{{ .Version }}" (3.6.5).
	VersionValue string `json:"versionValue,omitempty"`
	// Status says where the operator reports what it believes.
	Status StatusPaths `json:"status"`
	// MemberSelector is a label selector template for member pods.
	MemberSelector string `json:"memberSelector"`
	// ClientService is the client Service name template; ClientPort its port.
	ClientService string `json:"clientService"`
	ClientPort    int    `json:"clientPort"`
	// ExtraObjects are templates created before the CR (workarounds a
	// profile needs, reported as such).
	ExtraObjects []string `json:"extraObjects,omitempty"`
	// TLS, when set, has the suite make each cluster's certificates and
	// speak TLS to it (tls.go).
	TLS *TLS `json:"tls,omitempty"`
}

// StatusPaths are dotted paths into the CR's status; empty means unsupported.
type StatusPaths struct {
	Phase          string `json:"phase,omitempty"`
	ReadyPhase     string `json:"readyPhase,omitempty"`
	ReadyMembers   string `json:"readyMembers,omitempty"`
	CurrentVersion string `json:"currentVersion,omitempty"`
}

// Etcd lists the etcd versions the profile can run.
type Etcd struct {
	Repository string `json:"repository"`
	// Initial is the version clusters are created with.
	Initial string `json:"initial"`
	// UpgradeTo is the one-minor upgrade target from Initial.
	UpgradeTo string `json:"upgradeTo,omitempty"`
	// UpgradeChain, when set and claimed, is walked in order.
	UpgradeChain []string `json:"upgradeChain,omitempty"`
}

// Cleanup is what the cleanup check accepts as intended.
type Cleanup struct {
	// Retains are resources the operator keeps in the cluster's namespace
	// when the cluster is deleted (e.g. the members' data claims): listed
	// in the report with the reason instead of failing the check.
	Retains []Retention `json:"retains,omitempty"`
}

// Retention is one retained resource: the plural name with its group
// unless core, as the inventory names it (persistentvolumeclaims,
// etcdbackups.etcd.example.com).
type Retention struct {
	Resource string `json:"resource"`
	Reason   string `json:"reason"`
}

// RBAC is what the rbac check needs to know beyond the audit log and the
// installed grant.
type RBAC struct {
	// DeclaredRole is a YAML file or kustomize directory (resources only)
	// holding the Roles and ClusterRoles the operator itself asks for, for a
	// profile that installs it with a grant it did not write (another
	// operator's Role). The check then judges these rules in place of the
	// installed grant: every use must be declared, and the declared rules
	// must hold no wildcard or dangerous grant. A use the install did not
	// grant still fails, and what the install grants beyond them is noted.
	// Roles count in the operator's namespace, ClusterRoles cluster-wide.
	DeclaredRole string `json:"declaredRole,omitempty"`
}

// Load reads and validates a profile file.
func Load(path string) (*Profile, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read profile: %w", err)
	}
	p := &Profile{}
	if err := yaml.UnmarshalStrict(raw, p); err != nil {
		return nil, fmt.Errorf("profile %s: %w", path, err)
	}
	abs, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", path, err)
	}
	p.dir = abs
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("profile %s is invalid:\n%w", path, err)
	}
	return p, nil
}

// IsURL tells a step's remote manifest from a local path.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")
}

// Path resolves a step's path against the profile's directory; URLs are
// kept as they are.
func (p *Profile) Path(rel string) string {
	if filepath.IsAbs(rel) || IsURL(rel) {
		return rel
	}
	return filepath.Join(p.dir, rel)
}

// VersionValue is what the upgrade check writes at cluster.versionPath to
// ask for etcd version.
func (p *Profile) VersionValue(version string) (string, error) {
	if p.Cluster.VersionValue == "" {
		return version, nil
	}
	return Render(p.Cluster.VersionValue, TemplateData{Version: version, Repository: p.Etcd.Repository})
}

// UpgradeVersions is the sequence of versions the upgrade check walks,
// starting with the initial version.
func (p *Profile) UpgradeVersions() []string {
	if p.Capabilities.UpgradeChain && len(p.Etcd.UpgradeChain) >= 3 {
		return p.Etcd.UpgradeChain
	}
	return []string{p.Etcd.Initial, p.Etcd.UpgradeTo}
}

// ClusterNamespace says where a spec creates its cluster.
func (p *Profile) ClusterNamespace(specNamespace string) string {
	if p.Cluster.Namespace == "operator" {
		return p.Operator.Namespace
	}
	return specNamespace
}
