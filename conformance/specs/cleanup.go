package specs

import (
	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/inventory"
)

// CleanupSpec creates a cluster, deletes it, uninstalls the operator and
// requires the discovery-driven inventory to return to what it was before
// install (PVCs and PVs included, events excluded with a reason).
func CleanupSpec(ctx SpecContext, s *Suite) {
	e := s.Env
	if e.Opts.SkipCleanup {
		Skip("--skip-cleanup leaves resources in place on purpose")
	}
	for _, ex := range inventory.DefaultExclusions {
		s.Report.Note("cleanup", "excluded %s: %s", ex.Resource, ex.Reason)
	}
	By("creating and deleting a cluster")
	c := newCluster(ctx, s, "cleanup", e.Config.Sizes.Create, e.Profile.Etcd.Initial)
	c.WaitForHealthy(ctx, framework.Want{Size: e.Config.Sizes.Create, Version: e.Profile.Etcd.Initial}, e.Config.GetIntervals("cleanup", "members-ready")...)
	Expect(c.Delete(ctx)).To(Succeed())
	c.WaitForGone(ctx, e.Config.GetIntervals("cleanup", "cr-deleted")...)
	if c.SpecNamespace != "" {
		e.DeleteNamespace(ctx, c.SpecNamespace, e.Config.GetIntervals("cleanup", "namespace-deleted")...)
	}

	By("uninstalling the operator")
	s.StopMemorySampler()
	Expect(e.RunSteps(ctx, e.Profile.Uninstall)).To(Succeed())
	s.Uninstalled = true

	By("waiting for the inventory to match the one taken before install")
	leftovers := func() []string {
		after, err := inventory.Take(ctx, e.Disc, e.Dynamic)
		if err != nil {
			return []string{err.Error()}
		}
		left := inventory.Leftovers(s.Before, after, inventory.DefaultExclusions)
		// Saved on every poll so the last state is in the report dir.
		_ = e.WriteJSON(left, "cleanup", "leftovers.json")
		var out []string
		for _, o := range left {
			out = append(out, o.String())
		}
		return out
	}
	Eventually(ctx, leftovers).WithTimeout(e.Config.Timeout("cleanup", "inventory-empty")).WithPolling(e.Config.Polling("cleanup", "inventory-empty")).
		Should(BeEmpty(), "objects left behind after uninstall (cleanup/leftovers.json)")
}
