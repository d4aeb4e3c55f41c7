package specs

import (
	"context"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/audit"
	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/inventory"
	"github.com/etcdproof/etcdproof/conformance/rbac"
)

// CleanupSpec creates a cluster, deletes it, uninstalls the operator and
// judges two discovery-driven inventories (PVCs and PVs included, events
// excluded with a reason):
//   - the cluster's namespace once the CR is gone, before the namespace is
//     deleted (which would take what is left with it): whatever appeared
//     there since the CR was created is a leftover unless the profile
//     retains it (cleanup.retains, reported with its reason);
//   - the whole cluster once the run's namespaces are deleted and the
//     operator uninstalled, against the inventory before install (see
//     inventory.Cluster): what the audit log shows someone else created
//     during the run neither fails nor masks this run.
//
// A resource that cannot be listed fails the check by name; new objects
// whose creator the audit log cannot name leave it incomplete.
func CleanupSpec(ctx SpecContext, s *Suite) {
	e := s.Env
	if e.Opts.SkipCleanup {
		Skip("--skip-cleanup leaves resources in place on purpose")
	}
	rules := inventory.Rules{Exclusions: inventory.DefaultExclusions}
	for _, r := range e.Profile.Cleanup.Retains {
		rules.Retains = append(rules.Retains, inventory.Retention{Resource: r.Resource, Reason: r.Reason})
	}
	for _, ex := range rules.Exclusions {
		s.Report.Note("cleanup", "excluded %s: %s", ex.Resource, ex.Reason)
	}
	runUser, err := e.RunUser(ctx)
	if err != nil {
		s.Report.Note("cleanup", "the API server did not say who the run is (%v): the audit log will", err)
	}

	By("creating a cluster in a provisioned namespace, after an inventory of that namespace")
	var nsBefore inventory.Snapshot
	c := newClusterWith(ctx, s, "cleanup", e.Config.Sizes.Create, e.Profile.Etcd.Initial, clusterOptions{beforeCR: func(clusterNS string) {
		e.WaitForNamespaceProvisioned(ctx, clusterNS, e.Config.GetIntervals("cleanup", "namespace-provisioned")...)
		var err error
		nsBefore, err = inventory.TakeNamespace(ctx, e.Disc, e.Dynamic, clusterNS)
		Expect(err).NotTo(HaveOccurred(), "inventory of namespace %s", clusterNS)
	}})
	c.WaitForHealthy(ctx, framework.Want{Size: e.Config.Sizes.Create, Version: e.Profile.Etcd.Initial}, e.Config.GetIntervals("cleanup", "members-ready")...)

	By("deleting the cluster and waiting until its namespace holds nothing the operator made for it")
	Expect(c.Delete(ctx)).To(Succeed())
	c.WaitForGone(ctx, e.Config.GetIntervals("cleanup", "cr-deleted")...)
	inNS, err := framework.WaitForCleanInventory(ctx, framework.WaitForCleanInventoryInput{
		Take: func(ctx context.Context) (inventory.Snapshot, error) {
			return inventory.TakeNamespace(ctx, e.Disc, e.Dynamic, c.Namespace)
		},
		Judge: func(snap inventory.Snapshot) inventory.Verdict {
			return inventory.InNamespace(nsBefore, snap, c.ExtraUIDs, rules)
		},
		Saved: func(v inventory.Verdict) { _ = e.WriteJSON(v, "cleanup", "namespace-leftovers.json") },
	}, e.Config.GetIntervals("cleanup", "inventory-empty")...)
	Expect(err).NotTo(HaveOccurred(), "inventory of namespace %s", c.Namespace)

	By("deleting the cluster's namespace and uninstalling the operator")
	if c.SpecNamespace != "" {
		e.DeleteNamespace(ctx, c.SpecNamespace, e.Config.GetIntervals("cleanup", "namespace-deleted")...)
	}
	s.StopMemorySampler()
	Expect(e.RunSteps(ctx, e.Profile.Uninstall)).To(Succeed())
	s.Uninstalled = true

	By("waiting until the cluster holds nothing the run or the operator made")
	runNamespaces := s.runNamespaces()
	who := &auditAttribution{s: s, id: inventory.Identity{
		Operator: rbac.Username(e.Profile.Operator.Namespace, e.Profile.Operator.ServiceAccount),
		Run:      runUser, RunAgent: e.RunAgent, AgentPrefix: framework.RunAgentPrefix,
	}}
	whole, err := framework.WaitForCleanInventory(ctx, framework.WaitForCleanInventoryInput{
		Take: func(ctx context.Context) (inventory.Snapshot, error) { return inventory.Take(ctx, e.Disc, e.Dynamic) },
		Judge: func(snap inventory.Snapshot) inventory.Verdict {
			v := inventory.Cluster(s.Before, snap, runNamespaces, who.get(), rules)
			if len(v.Unattributed) > 0 {
				who.forget() // their creation may be written by the next poll
			}
			return v
		},
		Saved: func(v inventory.Verdict) { _ = e.WriteJSON(v, "cleanup", "leftovers.json") },
	}, e.Config.GetIntervals("cleanup", "inventory-empty")...)
	Expect(err).NotTo(HaveOccurred(), "inventory of the cluster")

	judgeCleanup(s, inNS, whole, who.stats)
}

// runNamespaces are the namespaces the run created: its clusters' and the
// operator's when the install created it.
func (s *Suite) runNamespaces() []string {
	ns := slices.Clone(s.Namespaces)
	op := s.Env.Profile.Operator.Namespace
	if !slices.ContainsFunc(s.Before.Objects, func(o inventory.Object) bool { return o.Resource == "namespaces" && o.Name == op }) {
		ns = append(ns, op)
	}
	return ns
}

// judgeCleanup reports what is retained and ignored, then fails on
// leftovers and unlistable resources, or ends the check incomplete when
// only unattributed objects remain.
func judgeCleanup(s *Suite, inNS, whole inventory.Verdict, st audit.Stats) {
	for _, f := range append(inNS.Retained, whole.Retained...) {
		s.Report.Note("cleanup", "%s", f)
	}
	if n := len(whole.Ignored); n > 0 {
		s.Report.Note("cleanup", "%d object(s) created during the run by others, not judged (cleanup/leftovers.json)", n)
	}
	if len(st.Files) > 0 {
		s.Report.Note("cleanup", "audit log: %d file(s) read for attribution, %d half-written last line(s) ignored", len(st.Files), st.TornLines)
	}
	failNS, _ := inNS.Problems()
	failing, unjudged := whole.Problems()
	if len(failNS) > 0 {
		failNS = append([]string{"in the cluster's namespace once its CR was deleted (cleanup/namespace-leftovers.json):"}, failNS...)
	}
	if len(failing) > 0 {
		failing = append([]string{"after uninstall (cleanup/leftovers.json):"}, failing...)
	}
	if all := append(failNS, failing...); len(all) > 0 {
		if len(unjudged) > 0 {
			all = append(append(all, "creator unknown (not judged):"), unjudged...)
		}
		Fail("objects left behind:\n" + strings.Join(all, "\n"))
	}
	if len(unjudged) > 0 {
		Incomplete(s, "cleanup", "cannot tell who created %d new object(s) outside the run's namespaces (cleanup/leftovers.json):\n%s",
			len(unjudged), strings.Join(unjudged, "\n"))
	}
}

// auditAttribution reads the audit log for the cleanup judgement once, and
// again after forget.
type auditAttribution struct {
	s       *Suite
	id      inventory.Identity
	current inventory.Attribution
	stats   audit.Stats
}

func (a *auditAttribution) get() inventory.Attribution {
	if a.current != nil {
		return a.current
	}
	path := a.s.Env.Opts.AuditLog
	if path == "" {
		a.current = inventory.Unattributable("no --audit-log given: the API server's audit log says who created what")
		return a.current
	}
	creations, st, err := audit.Creations(path, a.s.Started)
	if err != nil {
		a.current = inventory.Unattributable("cannot read the audit log: " + err.Error())
		return a.current
	}
	a.stats, a.current = st, inventory.NewAttribution(creations, a.id)
	return a.current
}

func (a *auditAttribution) forget() { a.current = nil }
