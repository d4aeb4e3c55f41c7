package specs

import (
	"context"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/audit"
	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/inventory"
	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/rbac"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// CleanupSpecInput is what CleanupSpec needs.
type CleanupSpecInput struct {
	// Env reaches the cluster and the audit log, and holds the profile and
	// the suite config.
	Env *framework.Env
	// Report records the check's notes.
	Report *report.Recorder
	// Namespaces creates the namespace of the check's cluster and lists
	// every namespace the run created for its clusters.
	Namespaces NamespaceLog
	// Before is the inventory taken before the operator was installed.
	Before inventory.Snapshot
	// Started is when the run started: the audit log's creations since
	// then say who made what is new.
	Started time.Time
	// Uninstall uninstalls the operator (once per run, whoever asks).
	Uninstall func(context.Context) error
}

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
//
// The operator is uninstalled through input.Uninstall, the run's own
// uninstall, which the suite's teardown then does not repeat.
func CleanupSpec(ctx SpecContext, inputGetter func() CleanupSpecInput) {
	const check = "cleanup"
	input := inputGetter()
	Expect(input.Env).NotTo(BeNil(), "Invalid argument. input.Env can't be nil when calling CleanupSpec")
	Expect(input.Report).NotTo(BeNil(), "Invalid argument. input.Report can't be nil when calling CleanupSpec")
	Expect(input.Namespaces).NotTo(BeNil(), "Invalid argument. input.Namespaces can't be nil when calling CleanupSpec")
	Expect(input.Started.IsZero()).To(BeFalse(), "Invalid argument. input.Started can't be zero when calling CleanupSpec")
	Expect(input.Uninstall).NotTo(BeNil(), "Invalid argument. input.Uninstall can't be nil when calling CleanupSpec")
	e, rep := input.Env, input.Report

	if e.Opts.SkipCleanup {
		Skip("--skip-cleanup leaves resources in place on purpose")
	}
	rules := inventory.Rules{Exclusions: inventory.DefaultExclusions}
	for _, r := range e.Profile.Cleanup.Retains {
		rules.Retains = append(rules.Retains, inventory.Retention{Resource: r.Resource, Reason: r.Reason})
	}
	for _, ex := range rules.Exclusions {
		rep.Note(check, "excluded %s: %s", ex.Resource, ex.Reason)
	}
	runUser, err := e.RunUser(ctx)
	if err != nil {
		rep.Note(check, "the API server did not say who the run is (%v): the audit log will", err)
	}

	c, inNS := cleanUpCluster(ctx, input, rules)

	By("deleting the cluster's namespace and uninstalling the operator")
	if c.SpecNamespace != "" {
		e.DeleteNamespace(ctx, c.SpecNamespace, e.Config.GetIntervals(check, "namespace-deleted")...)
	}
	Expect(input.Uninstall(ctx)).To(Succeed())

	By("waiting until the cluster holds nothing the run or the operator made")
	runNamespaces := runNamespaces(input.Namespaces.CreatedNamespaces(), input.Before, e.Profile.Operator.Namespace)
	who := &auditAttribution{env: e, started: input.Started, id: inventory.Identity{
		Operator: rbac.Username(e.Profile.Operator.Namespace, e.Profile.Operator.ServiceAccount),
		Run:      runUser, RunAgent: e.RunAgent, AgentPrefix: framework.RunAgentPrefix,
	}}
	whole, err := framework.WaitForCleanInventory(ctx, framework.WaitForCleanInventoryInput{
		Take: func(ctx context.Context) (inventory.Snapshot, error) { return inventory.Take(ctx, e.Disc, e.Dynamic) },
		Judge: func(snap inventory.Snapshot) inventory.Verdict {
			v := inventory.Cluster(input.Before, snap, runNamespaces, who.get(), rules)
			if len(v.Unattributed) > 0 {
				who.forget() // their creation may be written by the next poll
			}
			return v
		},
		Saved: func(v inventory.Verdict) { _ = e.WriteJSON(v, check, "leftovers.json") },
	}, e.Config.GetIntervals(check, "inventory-empty")...)
	Expect(err).NotTo(HaveOccurred(), "inventory of the cluster")

	judgeCleanup(rep, inNS, whole, who.stats)
}

// cleanUpCluster creates a cluster in a namespace of its own, after an
// inventory of that namespace, deletes it and waits until the namespace
// holds nothing the operator made for it; it returns the deleted cluster
// and the last verdict on its namespace.
func cleanUpCluster(ctx SpecContext, input CleanupSpecInput, rules inventory.Rules) (*framework.EtcdCluster, inventory.Verdict) {
	const check = "cleanup"
	e := input.Env
	By("creating a cluster in a provisioned namespace, after an inventory of that namespace")
	var nsBefore inventory.Snapshot
	size, version := e.Config.Sizes.Create, e.Profile.Etcd.Initial
	// A profile whose members can keep their data on claims gets that
	// form: a claim the operator leaks is then a leftover (with emptyDir
	// members there was nothing to leak, and cleanup never saw one).
	durable := e.Profile.Capabilities.QuorumLoss == profile.QuorumLossDurable
	if durable {
		input.Report.Note(check, "the cluster keeps its members' data on claims (the profile's durable form): every claim must go with it")
	}
	c := newCluster(ctx, newClusterInput{Env: e, Report: input.Report, Namespaces: input.Namespaces, Check: check, Size: size, Version: version, Durable: durable, BeforeCR: func(clusterNS string) {
		e.WaitForNamespaceProvisioned(ctx, clusterNS, e.Config.GetIntervals(check, "namespace-provisioned")...)
		var err error
		nsBefore, err = inventory.TakeNamespace(ctx, e.Disc, e.Dynamic, clusterNS)
		Expect(err).NotTo(HaveOccurred(), "inventory of namespace %s", clusterNS)
	}})
	c.WaitForHealthy(ctx, framework.Want{Size: size, Version: version}, e.Config.GetIntervals(check, "members-ready")...)

	By("deleting the cluster and waiting until its namespace holds nothing the operator made for it")
	Expect(c.Delete(ctx)).To(Succeed())
	c.WaitForGone(ctx, e.Config.GetIntervals(check, "cr-deleted")...)
	inNS, err := framework.WaitForCleanInventory(ctx, framework.WaitForCleanInventoryInput{
		Take: func(ctx context.Context) (inventory.Snapshot, error) {
			return inventory.TakeNamespace(ctx, e.Disc, e.Dynamic, c.Namespace)
		},
		Judge: func(snap inventory.Snapshot) inventory.Verdict {
			return inventory.InNamespace(nsBefore, snap, c.RunCreatedUIDs(), rules)
		},
		Saved: func(v inventory.Verdict) { _ = e.WriteJSON(v, check, "namespace-leftovers.json") },
	}, e.Config.GetIntervals(check, "inventory-empty")...)
	Expect(err).NotTo(HaveOccurred(), "inventory of namespace %s", c.Namespace)
	// The run's own TLS Secrets go before the inventory after uninstall,
	// which would count them where the namespace outlives the run.
	Expect(c.DeleteTLSSecrets(ctx)).To(Succeed())
	return c, inNS
}

// runNamespaces are the namespaces the run created: its clusters' and the
// operator's when the install created it (it is not in the inventory
// before install).
func runNamespaces(created []string, before inventory.Snapshot, operatorNS string) []string {
	ns := slices.Clone(created)
	if !slices.ContainsFunc(before.Objects, func(o inventory.Object) bool { return o.Resource == "namespaces" && o.Name == operatorNS }) {
		ns = append(ns, operatorNS)
	}
	return ns
}

// judgeCleanup reports what is retained and ignored, then fails on
// leftovers and unlistable resources, or ends the check incomplete when
// only unattributed objects remain.
func judgeCleanup(rep *report.Recorder, inNS, whole inventory.Verdict, st audit.Stats) {
	for _, f := range append(inNS.Retained, whole.Retained...) {
		rep.Note("cleanup", "%s", f)
	}
	if n := len(whole.Ignored); n > 0 {
		rep.Note("cleanup", "%d object(s) created during the run by others, not judged (cleanup/leftovers.json)", n)
	}
	if len(st.Files) > 0 {
		rep.Note("cleanup", "audit log: %d file(s) read for attribution, %d half-written last line(s) ignored", len(st.Files), st.TornLines)
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
		Incomplete(rep, "cleanup", "cannot tell who created %d new object(s) outside the run's namespaces (cleanup/leftovers.json):\n%s",
			len(unjudged), strings.Join(unjudged, "\n"))
	}
}

// auditAttribution reads the audit log for the cleanup judgement once, and
// again after forget.
type auditAttribution struct {
	env     *framework.Env
	started time.Time
	id      inventory.Identity
	current inventory.Attribution
	stats   audit.Stats
}

func (a *auditAttribution) get() inventory.Attribution {
	if a.current != nil {
		return a.current
	}
	if a.env.Opts.AuditLog == "" {
		a.current = inventory.Unattributable("no --audit-log given: the API server's audit log says who created what")
		return a.current
	}
	creations, st, err := a.env.ReadAuditCreations(a.started)
	if err != nil {
		a.current = inventory.Unattributable("cannot read the audit log: " + err.Error())
		return a.current
	}
	a.stats, a.current = st, inventory.NewAttribution(creations, a.id)
	return a.current
}

func (a *auditAttribution) forget() { a.current = nil }
