package specs

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// OperatorCrashSpecInput is what OperatorCrashSpec needs.
type OperatorCrashSpecInput struct {
	// Env reaches the cluster and the operator's pods, and holds the
	// profile and the suite config.
	Env *framework.Env
	// Report records the check's notes, timings and traffic.
	Report *report.Recorder
	// Namespaces creates the namespace of the check's cluster.
	Namespaces NamespaceCreator
}

// crashStep is one change the operator carries out while it is killed.
type crashStep struct {
	name   string
	change func() error
	want   framework.Want
}

// OperatorCrashSpec kills the operator (its pods, with no grace period: no
// SIGTERM, no lease released) at random points while it scales a cluster up
// by two members, back down, and upgrades it one minor, under traffic. After
// each step the cluster must be exactly what the spec says: size members,
// none extra or left over in etcd or as pods, every member on the version,
// the data kept; the history must be linearizable. Each step must have seen
// at least one kill, or nothing was proven about a crash in it.
func OperatorCrashSpec(ctx SpecContext, inputGetter func() OperatorCrashSpecInput) {
	const check = "operator-crash"
	input := inputGetter()
	Expect(input.Env).NotTo(BeNil(), "Invalid argument. input.Env can't be nil when calling OperatorCrashSpec")
	Expect(input.Report).NotTo(BeNil(), "Invalid argument. input.Report can't be nil when calling OperatorCrashSpec")
	Expect(input.Namespaces).NotTo(BeNil(), "Invalid argument. input.Namespaces can't be nil when calling OperatorCrashSpec")
	e, rep := input.Env, input.Report

	caps := e.Profile.Capabilities
	if !caps.OperatorCrash {
		notClaimed(rep, check, "operatorCrash")
	}
	if e.Profile.Operator.Deployment == "" {
		Incomplete(rep, check, "the profile names no operator Deployment (operator.deployment): there is no operator pod to kill")
	}
	size, version := e.Config.Sizes.OperatorCrash, e.Profile.Etcd.Initial
	c := newCluster(ctx, newClusterInput{Env: e, Report: rep, Namespaces: input.Namespaces, Check: check, Size: size, Version: version})
	c.WaitForHealthy(ctx, framework.Want{Size: size, Version: version}, e.Config.GetIntervals(check, "members-ready")...)
	marker := map[string]string{"etcdproof/marker/operator-crash": "before-crashes"}
	Expect(c.WriteMarkers(ctx, marker)).To(Succeed())

	steps := []crashStep{
		{"scale-up", func() error { return c.SetSize(ctx, size+2) }, framework.Want{Size: size + 2, Version: version, Data: marker}},
		{"scale-down", func() error { return c.SetSize(ctx, size) }, framework.Want{Size: size, Version: version, Data: marker}},
	}
	if to := e.Profile.Etcd.UpgradeTo; caps.Upgrade && to != "" {
		steps = append(steps, crashStep{"upgrade", func() error { return c.SetVersion(ctx, to) }, framework.Want{Size: size, Version: to, Data: marker}})
	} else {
		// Skipped is not passed: the check promises an upgrade with crashes.
		unobserved(rep, check, "the upgrade step did not run: the profile does not claim upgrade (with etcd.upgradeTo)")
	}
	kills, first, maxPause := e.Config.OperatorCrash.Schedule()
	poll := e.Config.Polling(check, "members-ready")
	schedule := framework.KillSchedule{Kills: kills, FirstWithin: first, MaxPause: maxPause}
	took := map[string]time.Duration{}
	// The scale-down removes 2 members; an upgrade restarts or replaces each.
	changed := 2
	if len(steps) > 2 {
		changed += size
	}
	limits := framework.TrafficLimits{MembersChanged: changed}
	res := withTraffic(ctx, trafficInput{Env: e, Report: rep, Cluster: c, Check: check, Phase: check, Limits: limits}, func() {
		for _, step := range steps {
			By(fmt.Sprintf("%s to %d members on etcd %s, killing the operator %d times on the way", step.name, step.want.Size, step.want.Version, kills))
			Expect(step.change()).To(Succeed())
			killer := e.StartOperatorKiller(ctx, schedule)
			d, _ := c.WaitForHealthy(ctx, step.want, e.Config.GetIntervals(check, "members-ready")...)
			done, err := killer.Stop()
			Expect(err).NotTo(HaveOccurred())
			took[step.name] = d
			rep.Note(check, "%s: operator killed %d times (%s); whole again after %s", step.name, len(done), describeKills(done), d.Round(100*time.Millisecond))
			// The cluster was whole at some moment of the last poll before
			// d: a kill after that may have hit an operator with nothing
			// left to do, and proves nothing about a crash mid-change.
			if landed := killsBefore(done, d-poll); landed == 0 {
				// The next steps are still judged.
				unobserved(rep, check, "%s finished in %s, before the operator could be killed (%d kills, none more than one poll, %s, before the end): nothing was proven about a crash in it",
					step.name, d.Round(100*time.Millisecond), len(done), poll)
			}
			c.WaitForExactMemberPods(ctx, step.want.Size, e.Config.GetIntervals(check, "no-leftovers")...)
		}
	})
	for _, step := range steps {
		expectWithin(rep, check, step.name, took[step.name], e.Config.Budget("operator-crash/step"))
	}
	expectTraffic(res, check)
}

// killsBefore counts the kills that landed before at.
func killsBefore(kills []framework.OperatorKill, at time.Duration) int {
	n := 0
	for _, k := range kills {
		if k.After < at {
			n++
		}
	}
	return n
}

func describeKills(kills []framework.OperatorKill) string {
	var at []string
	for _, k := range kills {
		at = append(at, fmt.Sprintf("%s at +%s", strings.Join(k.Pods, ","), k.After.Round(100*time.Millisecond)))
	}
	return strings.Join(at, "; ")
}
