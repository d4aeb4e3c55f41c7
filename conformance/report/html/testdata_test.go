package html

import (
	"bytes"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/etcdproof/etcdproof/conformance/history"
	"github.com/etcdproof/etcdproof/conformance/report"
	"github.com/etcdproof/etcdproof/conformance/validate"
)

var update = flag.Bool("update", false, "rewrite testdata/ from the simulated run")

// testdataDir is a small recorded report: report.json, three histories and
// the rbac and cleanup checks' files; coreosReport, a second profile's
// report.json for the results page.
const (
	testdataDir  = "testdata"
	coreosReport = "results/coreos-v0.9.4/report.json"
)

// The replace phase's history names the path of a run on another machine,
// as a copied CI artifact does; the others are relative.
const (
	scaleHistory   = "scale/history-scale.jsonl"
	replaceHistory = "/home/ci/etcdproof/_report/replace/history-replace.jsonl"
	upgradeHistory = "upgrade/history-to-3.6.5.jsonl"
)

// TestTestdataIsTheRecordedRun keeps testdata/ what the recorder types
// make of a simulated run, so the browser test reads files a real run
// could have written. After a change to the report or history types:
// go test ./conformance/report/html -run TestTestdataIsTheRecordedRun -update
func TestTestdataIsTheRecordedRun(t *testing.T) {
	rep, histories := simulatedRun(t)
	files := simulatedCheckFiles(t)
	for name, h := range histories {
		tmp := filepath.Join(t.TempDir(), "history.jsonl")
		if err := history.WriteFile(tmp, h); err != nil {
			t.Fatal(err)
		}
		files[name] = readFile(t, tmp)
	}
	for name, r := range map[string]*report.Report{"report.json": rep, coreosReport: coreosRun(t, rep)} {
		tmp := filepath.Join(t.TempDir(), "report.json")
		if err := r.WriteJSON(tmp); err != nil {
			t.Fatal(err)
		}
		files[name] = readFile(t, tmp)
	}
	var total int
	for name, b := range files {
		total += len(b)
		path := filepath.Join(testdataDir, name)
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, b) {
			t.Errorf("%s is not what the simulated run records (%v); rerun with -update", path, err)
		}
	}
	// Three short phases of a few clients are enough for every mark a
	// timeline draws.
	if total > 128<<10 {
		t.Errorf("testdata is %d KB; keep it under 128 KB", total>>10)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// simulatedRun is a reference run of create, scale, replace, upgrade, rbac
// and cleanup, recorded through report.Recorder; its three traffic phases are
// simulated clients validated by validate.Validate, the cluster's events
// are simulatedEvents, and rbac and cleanup note what their files
// (simulatedCheckFiles) hold. The histories are keyed by their path in
// the report dir.
func simulatedRun(t *testing.T) (*report.Report, map[string]history.History) {
	t.Helper()
	scale := simulate(trafficScript{seed: 3, step: "scale-scale", length: 5 * time.Second, disturb: membershipChangesAt(1500*time.Millisecond, 3500*time.Millisecond)})
	replace := simulate(trafficScript{seed: 1, step: "replace-replace", length: 10 * time.Second, disturb: leaderDeletedAt(4 * time.Second)})
	upgrade := simulate(trafficScript{seed: 2, step: "upgrade-to-3.6.5", length: 8 * time.Second, disturb: memberRestartAt(3 * time.Second)})
	opts := validate.Options{Timeout: 30 * time.Second, ClientErrors: validate.AllowClientErrors, MaxWriteGap: 10 * time.Second}
	rec := report.NewRecorder()
	for _, p := range []struct {
		check, phase, file string
		h                  history.History
		policy             validate.ClientErrors
		membersChanged     int
	}{
		{"scale", "scale", scaleHistory, scale, validate.NoClientErrors, 1},
		{"replace", "replace", replaceHistory, replace, validate.AllowClientErrors, 1},
		{"upgrade", "to-3.6.5", upgradeHistory, upgrade, validate.NoErrorsAfterRetry, 3},
	} {
		opts.ClientErrors, opts.MaxLeaderChanges = p.policy, p.membersChanged
		res := validate.Validate(p.h, opts)
		if !res.Passed() {
			t.Fatalf("simulated %s traffic fails validation: %v", p.phase, res.Failures)
		}
		rec.Traffic(p.check, p.phase, phaseStarts[p.phase], res, p.file)
		rec.Timing(p.check, p.phase+"/longest-write-gap", res.Stats.LongestWriteGap, opts.MaxWriteGap)
	}
	rec.Timing("create", "time-to-ready", 19200*time.Millisecond, 2*time.Minute)
	rec.Timing("scale", "scale-up", 3400*time.Millisecond, 2*time.Minute)
	rec.Timing("scale", "scale-down", 1100*time.Millisecond, 2*time.Minute)
	rec.Timing("replace", "mttr-follower", 21300*time.Millisecond, 3*time.Minute)
	rec.Timing("replace", "mttr-leader", 25100*time.Millisecond, 3*time.Minute)
	rec.Timing("upgrade", "duration", 26980*time.Millisecond, 8*time.Minute)
	rec.Timing("upgrade", "to-3.6.5", 26980*time.Millisecond, 0)
	rec.Note("upgrade", "path 3.5.21 → 3.6.5")
	rec.Note("replace", "the leader pod's requests in flight failed: the suite killed it (traffic.clientErrors: allowed)")
	for _, n := range simulatedRBACNotes() {
		rec.Note("rbac", "%s", n)
	}
	for _, n := range simulatedCleanupNotes() {
		rec.Note("cleanup", "%s", n)
	}
	durations := map[string]time.Duration{"create": 19200 * time.Millisecond, "scale": 13800 * time.Millisecond, "replace": 33900 * time.Millisecond, "upgrade": 44600 * time.Millisecond,
		"rbac": 500 * time.Millisecond, "cleanup": 20 * time.Second}
	order := []string{"create", "scale", "replace", "upgrade", "rbac", "cleanup"}
	for _, name := range order {
		c := rec.Check(name)
		c.State, c.Required, c.Duration, c.Started = report.Passed, true, report.Ms(durations[name]), checkStarts[name]
	}
	for _, e := range simulatedEvents {
		ev := e.Event
		ev.Time = e.from.Add(time.Duration(e.at * float64(time.Second)))
		rec.Event(e.check, ev)
	}
	rep := &report.Report{SchemaVersion: report.SchemaVersion, Profile: "reference",
		Started: runStarted, Duration: report.Ms(175500 * time.Millisecond),
		Environment: report.Environment{Kubernetes: "v1.34.4", Kind: "v0.33.0", Etcd: []string{"3.5.21", "3.6.5"}, Operator: "dev", Suite: "(devel)"},
		Operator:    &report.OperatorUsage{PeakRSSBytes: 16_567_500, PeakWorkingSetBytes: 22_229_000, Samples: 31},
		Checks:      rec.Checks(order)}
	rep.Judge()
	return rep, map[string]history.History{scaleHistory: scale, "replace/history-replace.jsonl": replace, upgradeHistory: upgrade}
}

// coreosRun is the second column of the results page's tests: the
// simulated reference run turned into what coreos-v0.9.4 could have
// recorded on the same Kubernetes, so the matrix holds each kind of cell
// and the bar charts a value over its budget. It is derived from rep, not
// simulated: it has no traffic phases and no events (the results page
// draws neither). create passes slower, with a profile workaround; scale fails
// on a removed member's "raft: stopped" with scale-up measured; replace
// fails, mttr-leader over its budget; kill is not claimed (the reference
// run has no kill check: "not run"); upgrade fails before measuring any
// timing, so upgrade's timings are the reference's alone and get no chart;
// rbac is INCOMPLETE.
func coreosRun(t *testing.T, rep *report.Report) *report.Report {
	t.Helper()
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	out := &report.Report{}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	out.Profile, out.Started, out.Duration = "coreos-v0.9.4", runStarted.Add(time.Hour), report.Ms(3017*time.Second)
	out.Environment.Etcd, out.Environment.Operator = []string{"3.5.6", "3.6.16"}, "v0.9.4"
	out.Operator = &report.OperatorUsage{PeakRSSBytes: 10_800_000, PeakWorkingSetBytes: 14_100_000, Samples: 402}
	var checks []*report.Check
	for _, c := range out.Checks {
		c.Traffic, c.Events, c.EventsDropped, c.Notes = nil, nil, 0, nil
		if !c.Started.IsZero() {
			c.Started = c.Started.Add(time.Hour)
		}
		switch c.Name {
		case "create":
			c.Duration, c.Timings["time-to-ready"] = 34540, 34540
			c.Notes = []string{"profile workaround: 1 object(s) from cluster.extraObjects are created before every cluster"}
		case "scale":
			c.State, c.Duration, c.Failure = report.Failed, 93100, "scale-down: etcdserver: raft: stopped"
			c.Timings = map[string]report.Millis{"scale-up": 9800}
		case "replace":
			c.State, c.Duration, c.Failure = report.Failed, 221300, "mttr-leader took 3m20s, budget 3m0s"
			c.Timings["mttr-follower"], c.Timings["mttr-leader"], c.Timings["replace/longest-write-gap"] = 23613.809, 200000, 1348.621
			c.Notes = []string{"leader pod replace-77301-9xk2d deleted; replaced by replace-77301-q8w4n after 3m20s"}
			checks = append(checks, c, &report.Check{Name: "kill", State: report.NotClaimed, Skipped: "profile does not claim kill"})
			continue
		case "upgrade":
			c.State, c.Duration, c.Timings, c.Budgets = report.Failed, 600000, nil, nil
			c.Failure = "Timed out after 600.000s. cluster etcd-operator/upgrade-78705 is not healthy: member pods: 0 of 3 ready, want 3"
			c.Notes = []string{"path 3.5.6 → 3.6.16"}
		case "rbac":
			c.State, c.Duration, c.Incomplete = report.Incomplete, 0, "no request of the operator's ServiceAccount in the audit log"
		case "cleanup":
			c.Duration = 51300
		}
		checks = append(checks, c)
	}
	out.Checks = checks
	out.Judge()
	return out
}

// runStarted is when the simulated run began; the checks follow one
// another from it, each traffic phase starts a while into its check.
var (
	runStarted  = time.Date(2026, 12, 3, 8, 22, 31, 0, time.UTC)
	checkStarts = map[string]time.Time{
		"create":  runStarted.Add(time.Second),
		"scale":   runStarted.Add(20500 * time.Millisecond),
		"replace": runStarted.Add(35000 * time.Millisecond),
		"upgrade": runStarted.Add(69200 * time.Millisecond),
		"rbac":    runStarted.Add(114100 * time.Millisecond),
		"cleanup": runStarted.Add(114900 * time.Millisecond),
	}
	phaseStarts = map[string]time.Time{
		"scale":    checkStarts["scale"].Add(8 * time.Second),
		"replace":  checkStarts["replace"].Add(14 * time.Second),
		"to-3.6.5": checkStarts["upgrade"].Add(12 * time.Second),
	}
)

// simulatedEvent is what the cluster did at some seconds from a moment
// (a check's or a phase's start).
type simulatedEvent struct {
	check string
	from  time.Time
	at    float64
	report.Event
}

// simulatedEvents: create's members coming up one by one (no traffic: an
// events-only timeline); replace's leader pod deleted 4 s into the phase,
// as the simulated clients see it, and its replacement joining; upgrade's
// member restarted on the new version 3 s into the phase.
var simulatedEvents = func() []simulatedEvent {
	var out []simulatedEvent
	add := func(check string, from time.Time, at float64, source report.EventSource, object, reason, message string, warning bool) {
		level := report.LevelNormal
		if warning {
			level = report.LevelWarning
		}
		out = append(out, simulatedEvent{check: check, from: from, at: at,
			Event: report.Event{Source: source, Object: object, Reason: reason, Message: message, Level: level}})
	}
	pod, event, etcd := report.SourcePod, report.SourceEvent, report.SourceEtcd
	const node = "etcdproof-control-plane"
	create := checkStarts["create"]
	for i, member := range []string{"create-80532-4bqz7", "create-80532-m9dlc", "create-80532-t2wfx"} {
		from := float64(i) * 5.4
		add("create", create, from+0.4, pod, "pod/"+member, "Created", "", false)
		add("create", create, from+0.41, pod, "pod/"+member, "Scheduled", "on node "+node, false)
		add("create", create, from+1.5, pod, "pod/"+member, "Running", "", false)
		if i == 1 {
			add("create", create, from+2.6, event, "pod/"+member, "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503", true)
		}
		add("create", create, from+4.1, pod, "pod/"+member, "Ready", "", false)
	}
	add("create", create, 17.9, etcd, "etcdcluster/create-80532", "Members", "members create-80532-4bqz7, create-80532-m9dlc, create-80532-t2wfx; leader create-80532-4bqz7", false)

	scale := phaseStarts["scale"]
	add("scale", scale, 0.3, pod, "pod/scale-80540-r5k2p", "Created", "", false)
	add("scale", scale, 0.31, pod, "pod/scale-80540-r5k2p", "Scheduled", "on node "+node, false)
	add("scale", scale, 0.9, pod, "pod/scale-80540-r5k2p", "Running", "", false)
	add("scale", scale, 1.0, event, "pod/scale-80540-r5k2p", "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503", true)
	add("scale", scale, 1.2, etcd, "etcdcluster/scale-80540", "MembersChanged", "added scale-80540-r5k2p as a learner: members scale-80540-6fz8m, scale-80540-j2xqb, scale-80540-wc4ld, scale-80540-r5k2p", false)
	add("scale", scale, 1.5, etcd, "etcdcluster/scale-80540", "MemberPromoted", "scale-80540-r5k2p is a voter", false)
	add("scale", scale, 1.9, pod, "pod/scale-80540-r5k2p", "Ready", "", false)
	add("scale", scale, 3.5, etcd, "etcdcluster/scale-80540", "MembersChanged", "removed scale-80540-r5k2p: members scale-80540-6fz8m, scale-80540-j2xqb, scale-80540-wc4ld", false)
	add("scale", scale, 3.6, pod, "pod/scale-80540-r5k2p", "Terminating", "grace period 30 s", false)
	add("scale", scale, 4.3, pod, "pod/scale-80540-r5k2p", "Deleted", "", false)

	replace, phase := checkStarts["replace"], phaseStarts["replace"]
	for i, member := range []string{"replace-80551-8hx2q", "replace-80551-kq4rn", "replace-80551-w7c5d"} {
		add("replace", replace, 0.5+float64(i)*4, pod, "pod/"+member, "Created", "", false)
		add("replace", replace, 4.2+float64(i)*4, pod, "pod/"+member, "Ready", "", false)
	}
	add("replace", replace, 13.2, etcd, "etcdcluster/replace-80551", "Members", "members replace-80551-8hx2q, replace-80551-kq4rn, replace-80551-w7c5d; leader replace-80551-8hx2q", false)
	add("replace", phase, 4.0, pod, "pod/replace-80551-8hx2q", "Terminating", "grace period 30 s", false)
	add("replace", phase, 4.01, event, "pod/replace-80551-8hx2q", "Killing", "Stopping container etcd", false)
	add("replace", phase, 4.05, pod, "pod/replace-80551-8hx2q", "Unready", "ContainersNotReady: containers with unready status: [etcd]", true)
	add("replace", phase, 4.62, pod, "pod/replace-80551-8hx2q", "Deleted", "", false)
	add("replace", phase, 4.95, pod, "pod/replace-80551-zz6mb", "Created", "", false)
	add("replace", phase, 4.96, pod, "pod/replace-80551-zz6mb", "Scheduled", "on node "+node, false)
	add("replace", phase, 5.7, etcd, "etcdcluster/replace-80551", "MembersChanged", "removed replace-80551-8hx2q: members replace-80551-kq4rn, replace-80551-w7c5d", false)
	add("replace", phase, 5.7, etcd, "etcdcluster/replace-80551", "LeaderChanged", "leader replace-80551-8hx2q → replace-80551-kq4rn", false)
	add("replace", phase, 6.1, pod, "pod/replace-80551-zz6mb", "Running", "", false)
	add("replace", phase, 6.6, event, "pod/replace-80551-zz6mb", "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503", true)
	add("replace", phase, 7.7, etcd, "etcdcluster/replace-80551", "MembersChanged", "added replace-80551-zz6mb: members replace-80551-kq4rn, replace-80551-w7c5d, replace-80551-zz6mb", false)
	add("replace", phase, 7.9, pod, "pod/replace-80551-zz6mb", "Ready", "", false)

	upgrade := phaseStarts["to-3.6.5"]
	add("upgrade", upgrade, 2.95, event, "pod/upgrade-80585-2jd8s", "Killing", "Container etcd definition changed, will be restarted", false)
	add("upgrade", upgrade, 3.0, pod, "pod/upgrade-80585-2jd8s", "Unready", "ContainersNotReady: containers with unready status: [etcd]", true)
	add("upgrade", upgrade, 3.4, pod, "pod/upgrade-80585-2jd8s", "Restarted", "container etcd restarted (1 restarts): Completed, exit code 0", true)
	add("upgrade", upgrade, 3.41, event, "pod/upgrade-80585-2jd8s", "Pulled", `Container image "quay.io/coreos/etcd:v3.6.5" already present on machine`, false)
	add("upgrade", upgrade, 4.1, pod, "pod/upgrade-80585-2jd8s", "Ready", "", false)
	return out
}()

// trafficScript is a phase of simulated clients: each keeps one request
// in flight against a linearizable store, as etcdproof traffic does, and
// disturb says what a request called at some moment meets.
type trafficScript struct {
	seed    uint64
	step    string
	length  time.Duration
	disturb func(call time.Duration, rnd *rand.Rand) outcome
}

// outcome is what a request meets: its latency, and an error if it fails.
type outcome struct {
	latency time.Duration
	err     string
	class   history.ErrorClass
	term    uint64
}

const (
	simulatedClients = 3
	simulatedKeys    = 4
	thinkTime        = 90 * time.Millisecond
	retryBackoff     = 100 * time.Millisecond
)

// normal is a healthy cluster: a few milliseconds, now and then a slow one.
func normal(rnd *rand.Rand, term uint64) outcome {
	d := time.Duration(3+rnd.IntN(9)) * time.Millisecond
	if rnd.IntN(20) == 0 {
		d = time.Duration(30+rnd.IntN(60)) * time.Millisecond
	}
	return outcome{latency: d, term: term}
}

// leaderDeletedAt: requests called in the first 300 ms after the leader's
// pod is deleted hang until their deadline at 700 ms (indeterminate);
// then, until a new leader is elected 1.6 s after the kill, members
// answer "no leader" (definite); latency is high for a while after.
func leaderDeletedAt(kill time.Duration) func(time.Duration, *rand.Rand) outcome {
	return func(call time.Duration, rnd *rand.Rand) outcome {
		switch {
		case call < kill:
			return normal(rnd, 2)
		case call < kill+300*time.Millisecond:
			return outcome{latency: kill + 700*time.Millisecond - call, err: "context deadline exceeded", class: history.Indeterminate}
		case call < kill+1600*time.Millisecond:
			return outcome{latency: time.Duration(1+rnd.IntN(3)) * time.Millisecond, err: "etcdserver: no leader", class: history.Definite}
		case call < kill+2500*time.Millisecond:
			return outcome{latency: time.Duration(20+rnd.IntN(60)) * time.Millisecond, term: 3}
		}
		return normal(rnd, 3)
	}
}

// membershipChangesAt: a member is added or removed at each moment; the
// leader's proposals wait longer for 300 ms, and nothing fails.
func membershipChangesAt(changes ...time.Duration) func(time.Duration, *rand.Rand) outcome {
	return func(call time.Duration, rnd *rand.Rand) outcome {
		for _, c := range changes {
			if call >= c && call < c+300*time.Millisecond {
				return outcome{latency: time.Duration(20+rnd.IntN(40)) * time.Millisecond, term: 2}
			}
		}
		return normal(rnd, 2)
	}
}

// memberRestartAt: a member restarts on the new version; its clients wait
// longer for a second.
func memberRestartAt(restart time.Duration) func(time.Duration, *rand.Rand) outcome {
	return func(call time.Duration, rnd *rand.Rand) outcome {
		if call >= restart && call < restart+time.Second {
			return outcome{latency: time.Duration(40+rnd.IntN(160)) * time.Millisecond, term: 2}
		}
		return normal(rnd, 2)
	}
}

// simulate runs the script's clients and applies each successful put at
// the midpoint of its call and return, so every get reads what a
// linearizable store would return; failed puts never apply. The history
// ends with a final read of every key.
func simulate(s trafficScript) history.History {
	rnd := rand.New(rand.NewPCG(s.seed, 7))
	var ops []history.Operation
	for c := range simulatedClients {
		t, seq := time.Duration(5+rnd.IntN(20))*time.Millisecond, 0
		for t < s.length {
			op := history.Operation{Client: c, Kind: history.Get, Key: fmt.Sprintf("etcdproof/traffic/%s/k%d", s.step, rnd.IntN(simulatedKeys))}
			if rnd.IntN(2) == 0 {
				op.Kind, op.Value = history.Put, fmt.Sprintf("c%d-%d", c, seq)
				seq++
			}
			for attempt := 0; attempt < 2; attempt++ {
				o := s.disturb(t, rnd)
				op.Call, op.Return = int64(t), int64(t+o.latency)
				op.Error, op.ErrorClass, op.Term, op.Retry = o.err, o.class, o.term, attempt > 0
				ops = append(ops, op)
				t += o.latency
				if o.class != history.Definite {
					break
				}
				t += retryBackoff
			}
			t += thinkTime + time.Duration(rnd.IntN(20))*time.Millisecond
		}
	}
	applyInOrder(ops)
	slices.SortStableFunc(ops, func(a, b history.Operation) int { return cmp.Compare(a.Return, b.Return) })
	end := int64(s.length + 500*time.Millisecond)
	for k := range simulatedKeys {
		key := fmt.Sprintf("etcdproof/traffic/%s/k%d", s.step, k)
		final := history.Operation{Client: simulatedClients, Kind: history.Get, Key: key, Call: end, Return: end + int64(2*time.Millisecond), Final: true, Term: 3}
		final.Value, final.Found = lastValue(ops, key)
		ops = append(ops, final)
		end += int64(3 * time.Millisecond)
	}
	return history.History{Operations: ops}
}

// applyInOrder fills the gets' values from the successful puts, in the
// order of their midpoints.
func applyInOrder(ops []history.Operation) {
	idx := make([]int, len(ops))
	for i := range idx {
		idx[i] = i
	}
	mid := func(o history.Operation) int64 { return (o.Call + o.Return) / 2 }
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(mid(ops[a]), mid(ops[b])) })
	store := map[string]string{}
	for _, i := range idx {
		op := &ops[i]
		switch {
		case !op.Succeeded():
		case op.Kind == history.Put:
			store[op.Key] = op.Value
		default:
			op.Value, op.Found = store[op.Key]
			if !op.Found {
				op.Value = ""
			}
		}
	}
}

// lastValue is the value of the key's successful put applied last (the
// latest midpoint, as applyInOrder applies them).
func lastValue(ops []history.Operation, key string) (string, bool) {
	var last *history.Operation
	for i := range ops {
		if o := &ops[i]; o.Kind == history.Put && o.Key == key && o.Succeeded() && (last == nil || (o.Call+o.Return) > (last.Call+last.Return)) {
			last = o
		}
	}
	if last == nil {
		return "", false
	}
	return last.Value, true
}
