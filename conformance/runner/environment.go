package runner

import (
	"context"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// environment fingerprints what the run tested, for the report: the etcd
// releases here, kindVersion in cluster.go, suiteVersion in version.go.
func environment(ctx context.Context, o Options, env *framework.Env) report.Environment {
	e := report.Environment{Kubernetes: env.ServerVersion, Operator: env.Profile.Operator.Version, Suite: suiteVersion()}
	e.Kind = kindVersion(env.Opts.Context)
	e.Etcd = etcdVersions(env.Profile)
	return e
}

// etcdVersions are the releases a profile runs, oldest first.
func etcdVersions(p *profile.Profile) []string {
	var out []string
	for _, v := range append([]string{p.Etcd.Initial}, p.UpgradeVersions()...) {
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int {
		va, err := version.ParseGeneric(a)
		if err != nil {
			return strings.Compare(a, b)
		}
		c, err := va.Compare(b)
		if err != nil {
			return strings.Compare(a, b)
		}
		return c
	})
	return out
}
