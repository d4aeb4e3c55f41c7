package specs

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// InsightsSpecInput is what InsightsSpec needs.
type InsightsSpecInput struct {
	// Env reaches the cluster and the operator's pods, and holds the
	// profile and the suite config.
	Env *framework.Env
	// Report records the check's notes and timings.
	Report *report.Recorder
	// Namespaces creates the namespace of the check's cluster.
	Namespaces NamespaceCreator
}

// InsightsSpec observes the Operator Framework's Deep Insights (level 4)
// where etcd can vouch for them. It deletes a non-leader member pod so the
// operator must replace its member, then, once the cluster is whole again:
//   - an Event on the cluster's CR, recorded since the deletion, must name
//     a member etcd's member list lost or gained (within insights/event);
//   - the operator's metrics endpoint (the profile's port and path, through
//     a port-forward) must serve the profile's member metric for the
//     cluster, summing to the members etcd lists (within insights/metric).
//
// Both are judged, and a failure names what was seen instead. If etcd
// lists the same members after the deletion (the operator brought the
// member back in place), there was no replacement to report: INCOMPLETE.
// Alerts are not observed (see report.CapabilityLevels).
func InsightsSpec(ctx SpecContext, inputGetter func() InsightsSpecInput) {
	const check = "insights"
	input := inputGetter()
	Expect(input.Env).NotTo(BeNil(), "Invalid argument. input.Env can't be nil when calling InsightsSpec")
	Expect(input.Report).NotTo(BeNil(), "Invalid argument. input.Report can't be nil when calling InsightsSpec")
	Expect(input.Namespaces).NotTo(BeNil(), "Invalid argument. input.Namespaces can't be nil when calling InsightsSpec")
	e, rep := input.Env, input.Report

	claim := e.Profile.Capabilities.Insights
	if claim == nil {
		notClaimed(rep, check, "insights")
	}
	size, version := e.Config.Sizes.Insights, e.Profile.Etcd.Initial
	c := newCluster(ctx, newClusterInput{Env: e, Report: rep, Namespaces: input.Namespaces, Check: check, Size: size, Version: version})
	want := framework.Want{Size: size, Version: version}
	_, before := c.WaitForHealthy(ctx, want, e.Config.GetIntervals(check, "members-ready")...)
	sel, err := claim.Metrics.ClusterMembersOf(c.Name, c.Namespace)
	Expect(err).NotTo(HaveOccurred())

	victim, err := before.NonLeaderPod()
	Expect(err).NotTo(HaveOccurred())
	By("deleting member pod " + victim + ": the operator must replace its member, and tell of it")
	deleted := time.Now()
	Expect(c.DeletePod(ctx, victim)).To(Succeed())
	_, after := c.WaitForHealthy(ctx, want, e.Config.GetIntervals(check, "members-ready")...)
	healed := time.Now()
	lost, gained := memberChanges(before, after)
	if len(lost)+len(gained) == 0 {
		Incomplete(rep, check, "etcd lists the same members after pod %s was deleted (%s): the operator brought its member back in place, so there was no replacement for its Events to tell of",
			victim, strings.Join(namesOf(after), ", "))
	}
	rep.Note(check, "pod %s deleted: etcd's member list lost %s and gained %s", victim, orNone(lost), orNone(gained))

	obs := insightsObservation{env: e, rep: rep, check: check, cluster: c, healed: healed}
	var failures []string
	if msg := obs.expectEvent(ctx, deleted, slices.Concat(lost, gained)); msg != "" {
		failures = append(failures, msg)
	}
	if msg := obs.expectMemberMetric(ctx, claim.Metrics, sel, len(after.Members)); msg != "" {
		failures = append(failures, msg)
	}
	if len(failures) > 0 {
		Fail(strings.Join(failures, "; "))
	}
}

// insightsObservation is what the insights check's two observations share:
// both start once the cluster is whole again after the replacement.
type insightsObservation struct {
	env     *framework.Env
	rep     *report.Recorder
	check   string
	cluster *framework.EtcdCluster
	healed  time.Time
}

// expectEvent waits for an Event on the cluster's CR, recorded since the
// deletion, that names one of members; it returns the failure, or "" (an
// API that never lists the Events leaves the check unobserved, not failed).
func (o insightsObservation) expectEvent(ctx context.Context, deleted time.Time, members []string) string {
	c, budget := o.cluster, o.env.Config.Budget("insights/event")
	var listed []corev1.Event
	var listErr error
	var naming []corev1.Event
	listedOnce := false
	found := poll(ctx, o.env.Config.Timeout(o.check, "event"), o.env.Config.Polling(o.check, "event"), func() bool {
		listed, listErr = c.Events(ctx)
		if listErr != nil {
			return false
		}
		listedOnce = true
		naming = eventsNaming(listed, o.env.Profile.Cluster.Kind, c.Name, deleted, members)
		return len(naming) > 0
	})
	object := strings.ToLower(o.env.Profile.Cluster.Kind) + "/" + c.Name
	if !listedOnce {
		unobserved(o.rep, o.check, "the Events on %s could not be listed: %v", object, listErr)
		return ""
	}
	if !found {
		return fmt.Sprintf("no Event on %s names a member etcd's member list lost or gained (%s) within %s of the cluster whole again; its Events since the deletion: %s",
			object, strings.Join(members, ", "), o.env.Config.Timeout(o.check, "event"), describeEvents(since(listed, deleted)))
	}
	took := time.Since(o.healed)
	first := naming[0]
	o.rep.Note(o.check, "Event on %s: %s %q, %s after the pod's deletion", object, first.Reason, first.Message,
		framework.EventTime(first).Sub(deleted.Truncate(time.Second)).Round(time.Second))
	o.rep.Timing(o.check, "event-after-heal", took, budget)
	if took > budget {
		return fmt.Sprintf("the Event naming the replaced member was seen %s after the cluster was whole again, budget %s", took.Round(time.Millisecond), budget)
	}
	return ""
}

// expectMemberMetric scrapes the operator's metrics until the member
// metric agrees with the members etcd lists; it returns the failure, or
// "" (no operator pod ever reached leaves the check unobserved).
func (o insightsObservation) expectMemberMetric(ctx context.Context, m profile.InsightsMetrics, sel profile.MetricSelector, members int) string {
	budget := o.env.Config.Budget("insights/metric")
	var says string
	var scrapeErr error
	scraped := false
	agreed := poll(ctx, o.env.Config.Timeout(o.check, "metric"), o.env.Config.Polling(o.check, "metric"), func() bool {
		scrapes, err := o.env.ScrapeOperatorMetrics(ctx, m.Port, m.MetricsPath())
		if err != nil {
			scrapeErr = err
			return false
		}
		scraped = true
		var agrees bool
		agrees, says = judgeMemberMetric(scrapes, sel, members)
		return agrees
	})
	if !scraped {
		unobserved(o.rep, o.check, "the operator's metrics (port %d, %s) could not be reached: %v", m.Port, m.MetricsPath(), scrapeErr)
		return ""
	}
	if !agreed {
		return fmt.Sprintf("the operator's metrics never counted the cluster's members as etcd does within %s of the cluster whole again: %s",
			o.env.Config.Timeout(o.check, "metric"), says)
	}
	took := time.Since(o.healed)
	o.rep.Note(o.check, "metrics: %s", says)
	o.rep.Timing(o.check, "metric-after-heal", took, budget)
	if took > budget {
		return fmt.Sprintf("the member metric agreed with etcd %s after the cluster was whole again, budget %s", took.Round(time.Millisecond), budget)
	}
	return ""
}

// poll calls observe every `every` until it returns true or timeout
// passed; it reports whether it did.
func poll(ctx context.Context, timeout, every time.Duration, observe func() bool) bool {
	err := wait.PollUntilContextTimeout(ctx, every, timeout, true, func(context.Context) (bool, error) {
		return observe(), nil
	})
	return err == nil
}

// memberChanges are the names etcd's member list lost and gained between
// two ground truths, sorted; a member not started yet has no name.
func memberChanges(before, after framework.Truth) (lost, gained []string) {
	was, is := namesOf(before), namesOf(after)
	for _, n := range was {
		if !slices.Contains(is, n) {
			lost = append(lost, n)
		}
	}
	for _, n := range is {
		if !slices.Contains(was, n) {
			gained = append(gained, n)
		}
	}
	return lost, gained
}

// namesOf are the names of the members a truth lists, sorted.
func namesOf(t framework.Truth) []string {
	var names []string
	for _, m := range t.Members {
		if m.Name != "" {
			names = append(names, m.Name)
		}
	}
	slices.Sort(names)
	return names
}

// eventsNaming are the Events on the CR kind/name, recorded no earlier
// than the second of from (the API's times are whole seconds), that name
// one of members: in their message, as a whole name, or as their related
// object (events.k8s.io). In the order they happened.
func eventsNaming(events []corev1.Event, kind, name string, from time.Time, members []string) []corev1.Event {
	var out []corev1.Event
	for _, ev := range since(events, from) {
		if ev.InvolvedObject.Kind != kind || ev.InvolvedObject.Name != name {
			continue
		}
		if slices.ContainsFunc(members, func(m string) bool {
			return (ev.Related != nil && ev.Related.Name == m) || namesMember(ev.Message, m)
		}) {
			out = append(out, ev)
		}
	}
	slices.SortStableFunc(out, func(a, b corev1.Event) int { return framework.EventTime(a).Compare(framework.EventTime(b)) })
	return out
}

// since are the Events recorded no earlier than the second of from.
func since(events []corev1.Event, from time.Time) []corev1.Event {
	var out []corev1.Event
	for _, ev := range events {
		if !framework.EventTime(ev).Before(from.Truncate(time.Second)) {
			out = append(out, ev)
		}
	}
	return out
}

// namesMember reports whether text names member as a whole name: not as
// part of a longer one (demo-b in demo-bx or demo-b.example), though a
// sentence may end right after it ("Removed demo-b.").
func namesMember(text, member string) bool {
	nameChar := func(r byte) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
	}
	for i := 0; i+len(member) <= len(text); {
		at := strings.Index(text[i:], member)
		if at < 0 {
			return false
		}
		start, end := i+at, i+at+len(member)
		next := end
		if next < len(text) && text[next] == '.' {
			next++ // a full stop, unless a name goes on after it
		}
		if (start == 0 || !nameChar(text[start-1])) && (next == len(text) || !nameChar(text[next])) {
			return true
		}
		i = start + 1
	}
	return false
}

// describeEvents lists Events for a failure message, the first few.
func describeEvents(events []corev1.Event) string {
	if len(events) == 0 {
		return "none"
	}
	const most = 5
	var parts []string
	for i, ev := range events {
		if i == most {
			parts = append(parts, fmt.Sprintf("and %d more", len(events)-most))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %q", ev.Reason, ev.Message))
	}
	return strings.Join(parts, "; ")
}

// judgeMemberMetric holds the operator pods' samples of sel against the
// members etcd lists: it agrees when at least one pod serves samples of
// sel and every pod that does sums them to members (a standby replica
// serves none). says is what was seen, for the report or the failure.
func judgeMemberMetric(scrapes []framework.OperatorScrape, sel profile.MetricSelector, members int) (agrees bool, says string) {
	var parts []string
	counted, disagree := 0, false
	for _, s := range scrapes {
		if s.Err != nil {
			parts = append(parts, fmt.Sprintf("operator pod %s: %v", s.Pod, s.Err))
			disagree = true
			continue
		}
		samples, err := s.Families.Samples(sel.Metric, sel.Labels)
		if err != nil {
			parts = append(parts, fmt.Sprintf("operator pod %s: %v", s.Pod, err))
			disagree = true
			continue
		}
		if len(samples) == 0 {
			parts = append(parts, fmt.Sprintf("operator pod %s serves no %s (%s)", s.Pod, sel, servedInstead(s.Families, sel.Metric)))
			continue
		}
		counted++
		sum := 0.0
		for _, smp := range samples {
			sum += smp.Value
		}
		series := ""
		if len(samples) > 1 {
			series = fmt.Sprintf(" (%d series)", len(samples))
		}
		if sum == float64(members) {
			parts = append(parts, fmt.Sprintf("%s = %g on operator pod %s%s; etcd lists %d members", sel, sum, s.Pod, series, members))
			continue
		}
		disagree = true
		parts = append(parts, fmt.Sprintf("%s = %g on operator pod %s%s, but etcd lists %d members", sel, sum, s.Pod, series, members))
	}
	return counted > 0 && !disagree, strings.Join(parts, "; ")
}

// servedInstead says what an endpoint without the selected samples serves.
func servedInstead(f framework.MetricFamilies, metric string) string {
	mf, ok := f[metric]
	if !ok {
		return fmt.Sprintf("%d metrics, none named %s", len(f), metric)
	}
	return fmt.Sprintf("%d %s series, none with those labels", len(mf.GetMetric()), metric)
}
