package specs

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// OperatorUpgradeSpecInput is what OperatorUpgradeSpec needs.
type OperatorUpgradeSpecInput struct {
	// Env reaches the cluster, the operator's pods and the profile's
	// upgradeOperator steps, and holds the suite config.
	Env *framework.Env
	// Report records the check's notes, timings and traffic.
	Report *report.Recorder
	// Namespaces creates the namespace of the check's cluster.
	Namespaces NamespaceCreator
}

// OperatorUpgradeSpec replaces the operator with a newer build (the
// profile's upgradeOperator steps) while a cluster runs, under traffic that
// may see no failed request. No member pod may be replaced or restarted by
// it: same UID, same etcd restart count, none gone while the new operator
// settles. The new operator must then take the cluster over: scale it up by
// a member and back. The marker written before must survive and the
// history must be linearizable. Steps that replace no operator pod leave
// the check INCOMPLETE: nothing was upgraded.
func OperatorUpgradeSpec(ctx SpecContext, inputGetter func() OperatorUpgradeSpecInput) {
	const check = "operator-upgrade"
	input := inputGetter()
	Expect(input.Env).NotTo(BeNil(), "Invalid argument. input.Env can't be nil when calling OperatorUpgradeSpec")
	Expect(input.Report).NotTo(BeNil(), "Invalid argument. input.Report can't be nil when calling OperatorUpgradeSpec")
	Expect(input.Namespaces).NotTo(BeNil(), "Invalid argument. input.Namespaces can't be nil when calling OperatorUpgradeSpec")
	e, rep := input.Env, input.Report

	caps := e.Profile.Capabilities
	if !caps.OperatorUpgrade {
		notClaimed(rep, check, "operatorUpgrade")
	}
	if e.Profile.Operator.Deployment == "" {
		Incomplete(rep, check, "the profile names no operator Deployment (operator.deployment): there are no operator pods to see replaced")
	}
	if !caps.ScaleUp || !caps.ScaleDown {
		Incomplete(rep, check, "the new operator proves it took the cluster over by scaling it up and down, and the profile does not claim scaleUp and scaleDown")
	}
	size, version := e.Config.Sizes.OperatorUpgrade, e.Profile.Etcd.Initial
	c := newCluster(ctx, newClusterInput{Env: e, Report: rep, Namespaces: input.Namespaces, Check: check, Size: size, Version: version})
	whole := framework.Want{Size: size, Version: version}
	c.WaitForHealthy(ctx, whole, e.Config.GetIntervals(check, "members-ready")...)
	marker := map[string]string{"etcdproof/marker/operator-upgrade": "before-operator-upgrade"}
	Expect(c.WriteMarkers(ctx, marker)).To(Succeed())
	whole.Data = marker

	u := &operatorUpgrade{env: e, report: rep, cluster: c, whole: whole}
	var err error
	u.members, err = c.MemberPodStates(ctx)
	Expect(err).NotTo(HaveOccurred())
	u.operator, err = e.OperatorPods(ctx)
	Expect(err).NotTo(HaveOccurred())
	rep.Note(check, "before the upgrade: member pods %s; operator pods %s", describeMemberPods(u.members), podNames(u.operator))

	// The scale back down removes one member.
	limits := framework.TrafficLimits{MaxWriteGap: e.Config.Budget("operator-upgrade/longest-write-gap"), MembersChanged: 1}
	res := withTraffic(ctx, trafficInput{Env: e, Report: rep, Cluster: c, Check: check, Phase: check, Limits: limits}, func() {
		u.run(ctx)
	})
	now, err := c.MemberPodStates(ctx)
	Expect(err).NotTo(HaveOccurred())
	changes := memberPodChanges(u.members, now, false)
	Expect(changes).To(BeEmpty(), "%s", strings.Join(changes, "; "))
	expectWithin(rep, check, "operator-replaced", u.replaced, e.Config.Budget("operator-upgrade/operator-replaced"))
	expectTraffic(res, check)
}

// operatorUpgrade is the operator-upgrade check's work on a healthy cluster.
type operatorUpgrade struct {
	env     *framework.Env
	report  *report.Recorder
	cluster *framework.EtcdCluster
	// whole is the cluster healthy at its size, with the marker.
	whole framework.Want
	// members and operator are the member and operator pods before.
	members  map[string]framework.MemberPodState
	operator []corev1.Pod
	// replaced is the time from the start of the steps until the new
	// operator was ready and none from before was left.
	replaced time.Duration
}

// run replaces the operator, watches the members while the new one
// settles, then has it scale the cluster up by one and back.
func (u *operatorUpgrade) run(ctx SpecContext) {
	const check = "operator-upgrade"
	e, rep, c := u.env, u.report, u.cluster

	By("replacing the operator with a newer build (the profile's upgradeOperator steps)")
	start := time.Now()
	Expect(e.RunSteps(ctx, e.Profile.UpgradeOperator)).To(Succeed())
	after, err := e.WaitForOperatorReplaced(ctx, u.operator, e.Config.GetIntervals(check, "operator-replaced")...)
	if err != nil && len(newPods(u.operator, after)) == 0 {
		Incomplete(rep, check, "the upgrade steps did not replace the operator's pods (%s still run): %v", podNames(after), err)
	}
	Expect(err).NotTo(HaveOccurred())
	u.replaced = time.Since(start)
	rep.Note(check, "operator pods %s replaced by %s in %s", podNames(u.operator), podNames(after), u.replaced.Round(100*time.Millisecond))

	settle := e.Config.GetIntervals(check, "settle")
	By(fmt.Sprintf("letting the new operator run for %s, every member pod watched", settle[0]))
	c.ConsistentlyMemberPods(ctx, func(now map[string]framework.MemberPodState) []string {
		return memberPodChanges(u.members, now, true)
	}, settle...)

	size := u.whole.Size
	By(fmt.Sprintf("scaling %d → %d: the new operator must have taken the cluster over", size, size+1))
	Expect(c.SetSize(ctx, size+1)).To(Succeed())
	grown := u.whole
	grown.Size = size + 1
	c.WaitForHealthy(ctx, grown, e.Config.GetIntervals(check, "members-ready")...)
	By(fmt.Sprintf("scaling %d → %d", size+1, size))
	Expect(c.SetSize(ctx, size)).To(Succeed())
	c.WaitForHealthy(ctx, u.whole, e.Config.GetIntervals(check, "members-ready")...)
}

// memberPodChanges names each member pod of before that the operator
// upgrade replaced (a new UID under its name) or restarted (its etcd
// container's restart count moved); with whole, also each that is gone.
// Without whole a pod that is gone is not judged: scaling down may remove
// any member.
func memberPodChanges(before, now map[string]framework.MemberPodState, whole bool) []string {
	var changes []string
	for _, name := range slices.Sorted(maps.Keys(before)) {
		was := before[name]
		is, ok := now[name]
		switch {
		case !ok && whole:
			changes = append(changes, fmt.Sprintf("member pod %s was deleted by the operator upgrade", name))
		case !ok:
		case is.UID != was.UID:
			changes = append(changes, fmt.Sprintf("member pod %s was replaced by the operator upgrade (UID %s, now %s)", name, was.UID, is.UID))
		case is.Restarts != was.Restarts:
			changes = append(changes, fmt.Sprintf("member pod %s was restarted by the operator upgrade (etcd container restarts %d, now %d)", name, was.Restarts, is.Restarts))
		}
	}
	return changes
}

// newPods are the pods of now that are not in before (by UID).
func newPods(before, now []corev1.Pod) []corev1.Pod {
	old := map[types.UID]bool{}
	for _, p := range before {
		old[p.UID] = true
	}
	var out []corev1.Pod
	for _, p := range now {
		if !old[p.UID] {
			out = append(out, p)
		}
	}
	return out
}

func podNames(pods []corev1.Pod) string {
	if len(pods) == 0 {
		return "(none)"
	}
	names := make([]string, len(pods))
	for i, p := range pods {
		names[i] = p.Name
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func describeMemberPods(pods map[string]framework.MemberPodState) string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(pods)) {
		out = append(out, fmt.Sprintf("%s (etcd restarts %d)", name, pods[name].Restarts))
	}
	return strings.Join(out, ", ")
}
