package specs

import (
	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// CreateSpecInput is what CreateSpec needs.
type CreateSpecInput struct {
	// Env reaches the cluster and holds the profile and the suite config.
	Env *framework.Env
	// Report records the check's notes, timings and traffic.
	Report *report.Recorder
	// Namespaces creates the namespace of the check's cluster.
	Namespaces NamespaceCreator
}

// CreateSpec: N members ready within a budget, ground truth agrees with
// the operator's claims, and the client Service serves puts and gets.
func CreateSpec(ctx SpecContext, inputGetter func() CreateSpecInput) {
	const check = "create"
	input := inputGetter()
	Expect(input.Env).NotTo(BeNil(), "Invalid argument. input.Env can't be nil when calling CreateSpec")
	Expect(input.Report).NotTo(BeNil(), "Invalid argument. input.Report can't be nil when calling CreateSpec")
	Expect(input.Namespaces).NotTo(BeNil(), "Invalid argument. input.Namespaces can't be nil when calling CreateSpec")
	e, rep := input.Env, input.Report

	size, version := e.Config.Sizes.Create, e.Profile.Etcd.Initial
	By("creating a cluster of " + itoa(size) + " members at etcd " + version)
	c := newCluster(ctx, newClusterInput{Env: e, Report: rep, Namespaces: input.Namespaces, Check: check, Size: size, Version: version})
	if c.ExtraObjects > 0 {
		// A result that needed help must say so next to the result.
		rep.Note(check, "profile workaround: %d object(s) from cluster.extraObjects are created before every cluster; the operator did not create them itself (the profile says why)", c.ExtraObjects)
	}
	if c.TLS() {
		rep.Note(check, "TLS (cluster.tls %s): the suite issued the cluster's peer, server and client certificates from a CA of its own; its probes and traffic present the client certificate", e.Profile.Cluster.TLS.Format)
	}
	took, truth := c.WaitForHealthy(ctx, framework.Want{Size: size, Version: version}, e.Config.GetIntervals(check, "members-ready")...)
	expectWithin(rep, check, "time-to-ready", took, e.Config.Budget("create/time-to-ready"))
	Expect(e.WriteJSON(truth, check, "ground-truth.json")).To(Succeed())

	By("putting and getting through the client Service")
	res := withTraffic(ctx, trafficInput{Env: e, Report: rep, Cluster: c, Check: check, Phase: "client-service"}, func() {})
	expectTraffic(res, "client-service")
}
