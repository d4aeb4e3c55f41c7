package specs

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/report"
	"github.com/etcdproof/etcdproof/conformance/validate"
)

// NamespaceCreator creates the namespace of a check's cluster. The run's
// creator keeps the names for the cleanup check; *framework.Env creates
// without keeping them.
type NamespaceCreator interface {
	CreateNamespace(ctx context.Context, prefix string) (string, error)
}

// NamespaceLog is a NamespaceCreator that lists the namespaces the run
// created for its clusters so far.
type NamespaceLog interface {
	NamespaceCreator
	CreatedNamespaces() []string
}

// newClusterInput is what newCluster needs.
type newClusterInput struct {
	Env *framework.Env
	// Report gets the events of the cluster's namespace until the check
	// ends.
	Report     *report.Recorder
	Namespaces NamespaceCreator
	Check      string
	Size       int
	Version    string
	// Durable asks for members whose data survives their pods.
	Durable bool
	// QuotaBackendBytes asks for members with this backend quota.
	QuotaBackendBytes int64
	// BeforeCR runs once the cluster's namespace exists, before anything
	// is created in it.
	BeforeCR func(clusterNS string)
}

// newCluster creates a namespace (unless the profile pins one) and a cluster,
// and registers their deletion; failed specs dump their namespace first.
// From the moment the namespace exists until the check ends, what happens
// in it and to the operator's pods is recorded in the check's events.
func newCluster(ctx context.Context, in newClusterInput) *framework.EtcdCluster {
	e, check := in.Env, in.Check
	ns := ""
	clusterNS := e.Profile.Operator.Namespace
	if e.Profile.Cluster.Namespace != "operator" {
		var err error
		ns, err = in.Namespaces.CreateNamespace(ctx, "etcdproof-"+check)
		Expect(err).NotTo(HaveOccurred())
		clusterNS = ns
	}
	name := fmt.Sprintf("%s-%d", check, time.Now().Unix()%100000)
	record := recordClusterEvents(ctx, in, clusterNS, name)
	if in.BeforeCR != nil {
		in.BeforeCR(clusterNS)
	}
	c, err := e.CreateCluster(ctx, framework.ClusterSpec{Namespace: clusterNS, Name: name, Size: in.Size, Version: in.Version, Durable: in.Durable, QuotaBackendBytes: in.QuotaBackendBytes})
	Expect(err).NotTo(HaveOccurred())
	c.SpecNamespace = ns
	c.RecordMembershipChanges(record)
	DeferCleanup(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() {
			e.DumpNamespace(ctx, clusterNS, framework.SafeName(check))
		}
		if e.Opts.SkipCleanup {
			return
		}
		Expect(c.Delete(ctx)).To(Succeed())
		c.WaitForGone(ctx, e.Config.GetIntervals(check, "cr-deleted")...)
		// The check is over: the suite does not wait for the members'
		// graceful stop (the cleanup check judges the operator's deletion
		// itself, before this runs). Only a shortcut: on an error the
		// namespace's deletion below still stops them.
		if err := c.DiscardMemberPods(ctx); err != nil {
			GinkgoWriter.Printf("discarding the member pods of %s/%s: %v\n", c.Namespace, c.Name, err)
		}
		if ns != "" {
			e.DeleteNamespace(ctx, ns, e.Config.GetIntervals(check, "namespace-deleted")...)
		} else {
			// The namespace stays: the run's TLS Secrets must not.
			Expect(c.DeleteTLSSecrets(ctx)).To(Succeed())
		}
	}, NodeTimeout(e.Config.SpecTimeout(profile.TimeoutClusterCleanup)))
	return c
}

// recordClusterEvents records the events of the cluster name in namespace
// into the check's report until the check ends: registered before the
// cluster's own cleanup, its stop runs after it, so the deletion is
// recorded too. The events only inform the report, so a recording that
// cannot start is a note, never the check's failure.
func recordClusterEvents(ctx context.Context, in newClusterInput, namespace, name string) func(report.Event) {
	record := func(ev report.Event) { in.Report.Event(in.Check, ev) }
	listCtx, cancel := context.WithTimeout(ctx, in.Env.Config.Timeout(in.Check, "events-listed"))
	defer cancel()
	r, err := in.Env.RecordClusterEvents(listCtx, namespace, name, record)
	if err != nil {
		in.Report.Note(in.Check, "the cluster's events were not recorded: %v", err)
		return record
	}
	DeferCleanup(r.Stop)
	return record
}

// trafficInput is what withTraffic needs: a phase of a check's traffic
// against a cluster, judged within limits.
type trafficInput struct {
	Env     *framework.Env
	Report  *report.Recorder
	Cluster *framework.EtcdCluster
	Check   string
	Phase   string
	Limits  framework.TrafficLimits
	// OnNode is where the clients run ("": where the scheduler puts them).
	OnNode string
	// Outages are the windows in which the check itself takes the
	// cluster's quorum away; the phase's quorum samples there judge nothing.
	Outages *outages
	// quorumSampledByCheck: the check samples the quorum itself (the drains
	// do, until the cluster is whole after them) or judges no operator
	// (the floor), so the phase does not.
	quorumSampledByCheck bool
}

// withTraffic runs fn while in-cluster clients put and get through the
// client Service, then validates and records the history of the phase.
func withTraffic(ctx context.Context, in trafficInput, fn func()) phaseTraffic {
	return withTrafficPod(ctx, in, func(*framework.TrafficPod) { fn() })
}

// withTrafficPod is withTraffic for a check that needs to know where the
// clients run (the node-loss check must not stop their node).
func withTrafficPod(ctx context.Context, in trafficInput, fn func(*framework.TrafficPod)) phaseTraffic {
	check, phase, rep := in.Check, in.Phase, in.Report
	By(fmt.Sprintf("starting traffic for %s", phase))
	tp, err := in.Cluster.StartTraffic(ctx, framework.SafeName(check+"-"+phase), in.OnNode)
	Expect(err).NotTo(HaveOccurred())
	finished := false
	defer func() {
		if finished {
			return
		}
		// fn failed: keep and report the history anyway, it often shows
		// what the failure did to clients. No assertion here: the spec
		// has already failed.
		stopCtx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if res, err := tp.StopAndValidate(stopCtx, check, phase, in.Limits); err == nil {
			rep.Traffic(check, phase, res.Started, res.Result, res.HistoryFile)
			if res.Passed() {
				rep.Note(check, "traffic during %s, stopped after the failure: passed its own checks (the failure is the check's)", phase)
			} else {
				rep.Note(check, "traffic during %s, stopped after the failure: %s", phase, strings.Join(res.Failures, "; "))
			}
		}
	}()
	tp.WaitForTraffic(ctx, in.Env.Config.GetIntervals(check, "traffic-ready")...)
	quorum := startQuorumSampling(ctx, in)
	defer quorum.stop() // on the failure path; a no-op once judged
	var stops *framework.MemberStops
	if in.Limits.Undrained {
		stops, err = in.Cluster.WatchMemberStops(ctx)
		Expect(err).NotTo(HaveOccurred(), "watching the member pods' stops")
		defer stops.Stop() // on the failure path; idempotent
	}
	fn(tp)
	if stops != nil {
		in.Limits.UndrainedStopsAt = stops.Stop()
	}
	// The quorum first: a lost quorum is the cause of what the history
	// shows, and the report must name it (the deferred stop keeps the
	// history of a phase that fails here).
	if samples := quorum.stop(); !in.quorumSampledByCheck {
		judgeQuorum(rep, check, phase, samples, in.Outages.list(), "")
	}
	finished = true
	By(fmt.Sprintf("stopping traffic for %s and checking its history", phase))
	res, err := tp.StopAndValidate(ctx, check, phase, in.Limits)
	if err != nil {
		// The suite could not fetch the history: nothing was judged.
		res.Result = validate.Result{Incomplete: true, Failures: []string{fmt.Sprintf("the history could not be fetched: %v", err)}}
		return phaseTraffic{TrafficResult: res, report: rep, check: check}
	}
	rep.Traffic(check, phase, res.Started, res.Result, res.HistoryFile)
	rep.Timing(check, phase+"/longest-write-gap", res.Stats.LongestWriteGap, in.Limits.MaxWriteGap)
	if in.Limits.Undrained {
		noteUndrainedStops(rep, check, phase, res.Started, in.Limits.UndrainedStopsAt)
	}
	return phaseTraffic{TrafficResult: res, report: rep, check: check}
}

// noteUndrainedStops lists the member stops a phase's closed-connection
// failures were excused at, on the history's clock, as etcdproof
// validate's --undrained-stop-at takes them to judge the history again:
// the same moments the phase was judged with (none when the history's
// zero is unknown).
func noteUndrainedStops(rep *report.Recorder, check, phase string, zero time.Time, stops []time.Time) {
	var at []string
	for _, d := range framework.SinceZero(zero, stops) {
		at = append(at, d.Round(time.Millisecond).String())
	}
	rep.Note(check, "%s: %d member stops seen (pod deletions, etcd exits), at %s of the history (--undrained-stop-at): a closed-connection failure is excused only when in flight at one, one per client and stop",
		phase, len(stops), strings.Join(at, ","))
}

// phaseQuorum is the quorum sampler of a traffic phase.
type phaseQuorum struct {
	sampler *framework.QuorumSampler
	samples framework.QuorumSamples
}

// startQuorumSampling samples the cluster's quorum every second (the
// suite config's default/quorum-sample) from the start of a phase's
// traffic, unless the check samples it itself.
func startQuorumSampling(ctx context.Context, in trafficInput) *phaseQuorum {
	if in.quorumSampledByCheck {
		return &phaseQuorum{}
	}
	every := in.Env.Config.Polling(in.Check, "quorum-sample")
	return &phaseQuorum{sampler: in.Cluster.StartQuorumSampler(ctx, every, in.Cluster.Size())}
}

// stop ends sampling (once) and returns the samples.
func (q *phaseQuorum) stop() framework.QuorumSamples {
	if q.sampler != nil {
		q.samples = q.sampler.Stop()
		q.sampler = nil
	}
	return q.samples
}

// phaseTraffic is a validated traffic phase and the check it belongs to.
type phaseTraffic struct {
	framework.TrafficResult
	report *report.Recorder
	check  string
}

// expectTraffic judges a traffic phase: a failed one ends the spec failed;
// one whose only problem is keys whose writes could not be read back at the
// end (nothing failed, but lost writes cannot be ruled out) is unobserved:
// the check goes on judging what follows, so a later failure is never
// hidden behind it.
func expectTraffic(res phaseTraffic, phase string) {
	switch {
	case res.Passed():
	case res.Incomplete:
		unobserved(res.report, res.check, "traffic during %s: %s (history %s)", phase, strings.Join(res.Failures, "; "), res.HistoryFile)
	default:
		Fail(fmt.Sprintf("traffic during %s: %s (history %s)", phase, strings.Join(res.Failures, "; "), res.HistoryFile), 1)
	}
}

// expectWithin records a timing and holds it to its budget.
func expectWithin(rep *report.Recorder, check, name string, d, budget time.Duration) {
	rep.Timing(check, name, d, budget)
	ExpectWithOffset(1, d).To(BeNumerically("<=", budget), "%s took %s, budget %s", name, d.Round(time.Millisecond), budget)
}
