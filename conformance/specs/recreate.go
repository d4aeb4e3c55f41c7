package specs

import (
	"fmt"
	"maps"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// RecreateOverClaimsSpecInput is what RecreateOverClaimsSpec needs.
type RecreateOverClaimsSpecInput struct {
	// Env reaches the cluster and holds the profile and the suite config.
	Env *framework.Env
	// Report records the check's notes, timings and traffic.
	Report *report.Recorder
	// Namespaces creates the namespace of the check's cluster.
	Namespaces NamespaceCreator
}

// RecreateOverClaimsSpec deletes the CR of a durable cluster with
// --cascade=orphan (its pods, claims and Services stay, ownerless), then
// every member pod, then creates the CR again under its name: what a user
// does to move a cluster between operator installs, or what a GitOps tool
// does when it prunes and re-applies. The claims hold the cluster's data.
// The operator must bring the cluster back on them with every
// acknowledged write, and delete none of them; starting a new, empty
// cluster beside them, or deleting one, fails. Only profiles whose members
// keep their data on claims (quorumLoss: durable) are asked.
func RecreateOverClaimsSpec(ctx SpecContext, inputGetter func() RecreateOverClaimsSpecInput) {
	const check = "recreate-over-claims"
	input := inputGetter()
	Expect(input.Env).NotTo(BeNil(), "Invalid argument. input.Env can't be nil when calling RecreateOverClaimsSpec")
	Expect(input.Report).NotTo(BeNil(), "Invalid argument. input.Report can't be nil when calling RecreateOverClaimsSpec")
	Expect(input.Namespaces).NotTo(BeNil(), "Invalid argument. input.Namespaces can't be nil when calling RecreateOverClaimsSpec")
	e, rep := input.Env, input.Report

	if e.Profile.Capabilities.QuorumLoss != profile.QuorumLossDurable {
		notClaimed(rep, check, "quorumLoss: durable (members whose data lives on claims)")
	}
	size, version := e.Config.Sizes.QuorumLoss, e.Profile.Etcd.Initial
	whole := framework.Want{Size: size, Version: version}
	// A namespace the profile pins may hold other claims: only the ones
	// made after the CR count.
	earlier := map[types.UID]bool{}
	c := newCluster(ctx, newClusterInput{Env: e, Report: rep, Namespaces: input.Namespaces, Check: check, Size: size, Version: version, Durable: true,
		BeforeCR: func(ns string) {
			list, err := e.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
			Expect(err).NotTo(HaveOccurred())
			for _, pvc := range list.Items {
				earlier[pvc.UID] = true
			}
		}})
	c.WaitForHealthy(ctx, whole, e.Config.GetIntervals(check, "members-ready")...)
	// Each must be there after the CR is created again.
	kept := markers(check, "before-recreate")
	Expect(c.WriteMarkers(ctx, kept)).To(Succeed())
	claims, err := c.NamespaceClaims(ctx)
	Expect(err).NotTo(HaveOccurred())
	maps.DeleteFunc(claims, func(uid types.UID, _ string) bool { return earlier[uid] })
	if len(claims) == 0 {
		Incomplete(rep, check, "the durable cluster has no PersistentVolumeClaim in %s: there is nothing to create it again over", c.Namespace)
	}
	rep.Note(check, "claims of the cluster: %s", strings.Join(framework.ClaimNames(claims), ", "))
	pods, err := c.MemberPods(ctx)
	Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, p := range pods {
		names = append(names, p.Name)
	}

	By(fmt.Sprintf("deleting the cluster's CR with --cascade=orphan, then its member pods %s", strings.Join(names, ", ")))
	Expect(c.DeleteOrphaning(ctx)).To(Succeed())
	c.WaitForGone(ctx, e.Config.GetIntervals(check, "cr-deleted")...)
	if err := c.DeletePodsNow(ctx, names, e.Config.GetIntervals(check, "pods-deleted")...); err != nil {
		Incomplete(rep, check, "the member pods were never seen gone: %v", err)
	}
	expectClaimsKept(ctx, rep, check, c, claims, "once the CR was deleted with --cascade=orphan")

	By("creating the cluster's CR again under its name")
	created := time.Now()
	// A second cluster started beside the claims may win or lose the race
	// with the claims' members, and be deleted again: its claims and pods
	// are looked for all along.
	stopSampling := c.SampleObjects(ctx, claims, time.Second)
	defer stopSampling()
	Expect(c.CreateAgain(ctx)).To(Succeed())
	c.WaitForHealthy(ctx, whole, e.Config.GetIntervals(check, "members-ready")...)
	recovery := time.Since(created)
	if lost := lostMarkers(ctx, c, whole, kept, e.Config.GetIntervals(check, "members-ready")...); len(lost) > 0 {
		deleted := ""
		if missing, err := c.MissingClaims(ctx, claims); err == nil && len(missing) > 0 {
			deleted = "; claims deleted: " + strings.Join(missing, ", ")
		}
		Fail(fmt.Sprintf("an empty cluster: created again over the claims %s, the cluster lost %d of %d acknowledged marker writes: %s%s",
			strings.Join(framework.ClaimNames(claims), ", "), len(lost), len(kept), strings.Join(lost, "; "), deleted))
	}
	// An operator may delete claims it takes for leftovers some time after
	// the cluster runs (the reference waits 15 s before it deletes a claim
	// of no member): the claims are watched for a while longer.
	settle := e.Config.GetIntervals(check, "claims-kept")
	Consistently(ctx, func() ([]string, error) { return c.MissingClaims(ctx, claims) }).
		WithTimeout(settle[0].(time.Duration)).WithPolling(settle[1].(time.Duration)).
		Should(BeEmpty(), "claims of the cluster deleted after it was created again over them")
	samples := stopSampling()
	if samples.Samples == 0 {
		Incomplete(rep, check, "the claims and member pods were never listed while the cluster came back")
	}
	rep.Note(check, "%d samples of the claims and member pods while the cluster came back: at most %d member pods at once", samples.Samples, samples.MostPods)
	if len(samples.NewClaims) > 0 {
		Fail(fmt.Sprintf("an empty cluster beside the claims: created again over %s, the operator made new claims %s",
			strings.Join(framework.ClaimNames(claims), ", "), strings.Join(samples.NewClaims, ", ")))
	}
	if samples.MostPods > size {
		Fail(fmt.Sprintf("two clusters behind one name: %d member pods at once for a cluster of %d (%s)",
			samples.MostPods, size, strings.Join(samples.MostPodsNames, ", ")))
	}
	expectWithin(rep, check, "recovery", recovery, e.Config.Budget("recreate-over-claims/recovery"))
}

// expectClaimsKept fails the check when one of claims is gone.
func expectClaimsKept(ctx SpecContext, rep *report.Recorder, check string, c *framework.EtcdCluster, claims map[types.UID]string, when string) {
	missing, err := c.MissingClaims(ctx, claims)
	Expect(err).NotTo(HaveOccurred())
	if len(missing) > 0 {
		rep.Note(check, "claims deleted %s: %s", when, strings.Join(missing, ", "))
		Fail(fmt.Sprintf("claims deleted %s: %s; the data of their members is gone", when, strings.Join(missing, ", ")))
	}
}
