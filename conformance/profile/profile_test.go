package profile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

func TestShippedProfilesAndConfigLoad(t *testing.T) {
	files, err := filepath.Glob("../profiles/*.yaml")
	if err != nil || len(files) < 2 {
		t.Fatalf("profiles: %v %v", files, err)
	}
	for _, f := range files {
		p, err := Load(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		// The quorum-loss check asks durable profiles for .Durable clusters:
		// both renderings must be objects.
		for _, durable := range []bool{false, true} {
			out, err := Render(p.Cluster.Template, TemplateData{Name: "n", Namespace: "ns", Size: 3, Version: "3.5.21", Durable: durable})
			obj := map[string]any{}
			if err == nil {
				err = yaml.Unmarshal([]byte(out), &obj)
			}
			if err != nil || obj["kind"] == nil {
				t.Errorf("%s: cluster template with Durable=%v: %v\n%s", f, durable, err, out)
			}
		}
	}
	c, err := LoadConfig("../config/suite.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Every wait the specs and framework ask for must resolve (GetIntervals
	// panics otherwise, in the middle of a run).
	for _, spec := range append([]string{"install"}, CheckLabels...) {
		for _, wait := range []string{"operator-ready", "members-ready", "traffic-ready", "cr-deleted", "namespace-deleted", "uninstall"} {
			c.GetIntervals(spec, wait)
		}
	}
	c.GetIntervals("cleanup", "inventory-empty")
	c.GetIntervals("install", "image-pull")
	c.GetIntervals("default", "operator-memory")
	c.GetIntervals("kill", "container-dead")
	c.GetIntervals("quorum-loss", "pods-deleted")
	c.GetIntervals("node-loss", "node-not-ready")
	c.GetIntervals("node-loss", "node-ready")
	c.GetIntervals("operator-crash", "no-leftovers")
	c.GetIntervals("operator-upgrade", "operator-replaced")
	c.GetIntervals("operator-upgrade", "settle")
	c.GetIntervals("insights", "event")
	c.GetIntervals("insights", "metric")
	if kills, first, pause := c.OperatorCrash.Schedule(); kills < 1 || first <= 0 || pause <= 0 {
		t.Errorf("operatorCrash schedule = %d kills, first within %s, pause %s", kills, first, pause)
	}
	for _, b := range []string{"kill/recovery", "kill/longest-write-gap", "quorum-loss/recovery", "node-loss/recovery", "node-loss/longest-write-gap", "operator-crash/step", "operator-upgrade/operator-replaced", "operator-upgrade/longest-write-gap", "create/time-to-ready", "scale/time-to-scale", "replace/mttr", "insights/event", "insights/metric", "upgrade/duration", "upgrade/longest-write-gap", "scale/longest-write-gap", "replace/longest-write-gap"} {
		c.Budget(b)
	}
}

func TestVersionValueFormatsWhatTheUpgradeWrites(t *testing.T) {
	p := &Profile{Etcd: Etcd{Repository: "quay.io/coreos/etcd"}}
	if v, _ := p.VersionValue("3.6.5"); v != "3.6.5" {
		t.Errorf("default = %q, want the bare version", v)
	}
	p.Cluster.VersionValue = "{{ .Repository }}:v{{ .Version }}"
	if v, _ := p.VersionValue("3.6.5"); v != "quay.io/coreos/etcd:v3.6.5" {
		t.Errorf("image template = %q", v)
	}
}

func TestTemplatesCanDependOnServedAPIs(t *testing.T) {
	tpl := `{{ if not (.Served "discovery.k8s.io/v1") }}kind: Service{{ end }}`
	old := TemplateData{ServedAPI: func(gv string) bool { return gv != "discovery.k8s.io/v1" }}
	if out, err := Render(tpl, old); err != nil || out != "kind: Service" {
		t.Errorf("old cluster: %q %v", out, err)
	}
	if out, _ := Render(tpl, TemplateData{ServedAPI: func(string) bool { return true }}); out != "" {
		t.Errorf("new cluster rendered %q, want nothing", out)
	}
}

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBadProfileNamesEveryProblem(t *testing.T) {
	_, err := Load(write(t, `
name: bad
operator: {namespace: ops}
install: [{apply: x, run: [y]}, {apply: z, ifServed: apiextensions.k8s.io}]
images: ["", "two words"]
cluster:
  template: "{{ .Nme }}"
  namespace: everywhere
  clientPort: 0
etcd: {repository: r, initial: v3.5}
capabilities: {upgrade: true, scaleDown: true, quorumLoss: maybe}
selftest: {check: speed, reason: "", state: passed, auditLog: missing}
`))
	if err == nil {
		t.Fatal("a bad profile loaded")
	}
	for _, want := range []string{
		"operator.serviceAccount: required",
		"uninstall: at least one step",
		"install[0]: set exactly one of apply, delete, run, approveInstallPlan (found 2)",
		`install[1].ifServed: "apiextensions.k8s.io" is not a group/version`,
		`images[0]: "" is not an image reference`,
		`images[1]: "two words" is not an image reference`,
		`cluster.namespace: "everywhere"`,
		"cluster.clientPort: 0 is not a TCP port",
		`version "v3.5" is not MAJOR.MINOR.PATCH`,
		"etcd.upgradeTo: required when capabilities.upgrade",
		"capabilities.scaleDown",
		`capabilities.quorumLoss: "maybe" is not one of`,
		"cluster.template:",
		`selftest.check: "speed" is not one of`,
		"selftest.reason: required",
		`selftest.state: "passed" is not one of "failed", "incomplete"`,
		`selftest.auditLog: "missing" is not "unreadable"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
}

func TestUnknownFieldIsAnError(t *testing.T) {
	_, err := Load(write(t, "name: x\nsize: 3\n"))
	if err == nil || !strings.Contains(err.Error(), `unknown field "size"`) {
		t.Errorf("error = %v", err)
	}
}

func TestBadConfigNamesEveryProblem(t *testing.T) {
	p := write(t, `
intervals: {create/members-ready: [4m], scale/x: [soon, 1s]}
budgets: {upgrade/duration: -1s}
timeouts: {create: 20m, scale: forever}
sizes: {create: 3, scaleFrom: 4, scaleTo: 4, replace: 1, kill: 2, quorumLoss: 2, nodeLoss: 2, upgrade: 3}
operatorCrash: {killsPerStep: 0, firstKillWithin: now}
traffic: {clients: 0, keys: 1, ratePerSecond: 1, requestTimeout: 5s}
`)
	_, err := LoadConfig(p)
	if err == nil {
		t.Fatal("a bad config loaded")
	}
	for _, want := range []string{
		"intervals.create/members-ready: want [timeout, polling], got 1",
		`intervals.scale/x: "soon" is not a duration`,
		`budgets.upgrade/duration: "-1s" must be positive`,
		"linearizabilityTimeout: missing duration",
		"traffic.clients: must be at least 1",
		"sizes.replace: must be at least 3",
		"sizes.kill: must be at least 3",
		"sizes.quorumLoss: must be at least 3",
		"sizes.nodeLoss: must be at least 3",
		"sizes.operatorCrash: must be at least 1",
		"sizes.operatorUpgrade: must be at least 1",
		"operatorCrash.killsPerStep: must be at least 1",
		`operatorCrash.firstKillWithin: "now" is not a duration`,
		"operatorCrash.maxPause: missing duration",
		"timeouts.upgrade: missing",
		"timeouts.setup: missing",
		`timeouts.scale: "forever" is not a duration`,
		"sizes.scaleTo: must exceed",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
}

func TestUpgradeVersionsMustMoveOneMinorAtATime(t *testing.T) {
	base, err := os.ReadFile("../profiles/reference.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, etcd, caps string
		want             []string // empty: the profile loads
	}{
		{name: "one minor", etcd: "{repository: r, initial: 3.5.21, upgradeTo: 3.6.5}", caps: "{upgrade: true}"},
		{name: "nothing to upgrade", etcd: "{repository: r, initial: 3.5.21, upgradeTo: 3.5.21}", caps: "{upgrade: true}",
			want: []string{"etcd.upgradeTo: 3.5.21 is not a newer minor than etcd.initial 3.5.21"}},
		{name: "patch only", etcd: "{repository: r, initial: 3.5.21, upgradeTo: 3.5.22}", caps: "{upgrade: true}",
			want: []string{"etcd.upgradeTo: 3.5.22 is not a newer minor than etcd.initial 3.5.21"}},
		{name: "downgrade", etcd: "{repository: r, initial: 3.6.5, upgradeTo: 3.5.21}", caps: "{upgrade: true}",
			want: []string{"etcd.upgradeTo: 3.5.21 is not a newer minor than etcd.initial 3.6.5"}},
		{name: "two minors", etcd: "{repository: r, initial: 3.4.25, upgradeTo: 3.6.5}", caps: "{upgrade: true}",
			want: []string{"etcd.upgradeTo: 3.6.5 is 2 minors after etcd.initial 3.4.25"}},
		{name: "not claimed", etcd: "{repository: r, initial: 3.5.21, upgradeTo: 3.5.21}", caps: "{upgrade: false}"},
		{name: "good chain", etcd: "{repository: r, initial: 3.5.21, upgradeTo: 3.6.5, upgradeChain: [3.4.25, 3.5.21, 3.6.5]}", caps: "{upgrade: true, upgradeChain: true}"},
		{name: "chain repeats and skips", etcd: "{repository: r, initial: 3.5.21, upgradeTo: 3.6.5, upgradeChain: [3.4.25, 3.4.26, 3.6.5]}", caps: "{upgrade: true, upgradeChain: true}",
			want: []string{"etcd.upgradeChain: 3.4.25 → 3.4.26 is not one minor newer", "etcd.upgradeChain: 3.4.26 → 3.6.5 is not one minor newer"}},
		{name: "chain not claimed", etcd: "{repository: r, initial: 3.5.21, upgradeTo: 3.6.5, upgradeChain: [3.6.5, 3.5.21, 3.4.25]}", caps: "{upgrade: true}"},
	} {
		body := string(base)
		body = body[:strings.Index(body, "\netcd:")] + "\netcd: " + tc.etcd + "\ncapabilities: " + tc.caps + "\n"
		p := write(t, body)
		// Relative install paths resolve against the profile's folder; they are not read at load.
		_, err := Load(p)
		if len(tc.want) == 0 {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: loaded", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error does not mention %q:\n%v", tc.name, w, err)
			}
		}
	}
}

func TestUnreadableAuditLogOnlyMeansSomethingToRBAC(t *testing.T) {
	p := &Profile{Selftest: Expectations{{Check: "create", Reason: "x", State: ExpectIncomplete, AuditLog: AuditLogUnreadable}}}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), `selftest.auditLog: only the rbac check reads the audit log, and selftest.check is "create"`) {
		t.Errorf("error = %v", err)
	}
	if got := (&Expectation{}).WantState(); got != ExpectFailed {
		t.Errorf("default state = %q", got)
	}
}

// Each claimed check (the fault checks and insights) is claimed by its own
// capability, and by nothing else; but members on claims (quorumLoss:
// durable) are asked to survive their CR created again over those claims
// too.
func TestClaimsNameEachClaimedCheck(t *testing.T) {
	also := map[string]string{"recreate-over-claims": "quorum-loss", "bad-restore": "backup-restore", "backup-restore": "bad-restore", "drain": "drain-during-rollout", "drain-during-rollout": "drain"}
	claims := map[string]Capabilities{
		"kill":                 {Kill: true},
		"partition":            {Partition: true},
		"space":                {Space: SpaceRecovers},
		"quorum-loss":          {QuorumLoss: QuorumLossLossy},
		"recreate-over-claims": {QuorumLoss: QuorumLossDurable},
		"node-loss":            {NodeLoss: true},
		"drain":                {Drain: true},
		"drain-during-rollout": {Drain: true},
		"operator-crash":       {OperatorCrash: true},
		"operator-upgrade":     {OperatorUpgrade: true},
		"backup-restore":       {BackupRestore: BackupRestoreCoreosAPI},
		"bad-restore":          {BackupRestore: BackupRestoreCoreosAPI},
		"insights":             {Insights: &Insights{}},
	}
	for _, check := range ClaimedChecks {
		if check == "space" {
			continue // asked of every profile: TestSpaceIsAskedOfEveryProfile
		}
		caps, ok := claims[check]
		if !ok {
			t.Errorf("claimed check %s has no case here", check)
			continue
		}
		for _, other := range ClaimedChecks {
			if got := caps.Claims(other); got != (other == check || also[check] == other || other == "space") {
				t.Errorf("%+v claims %s = %v", caps, other, got)
			}
		}
	}
}

// TestSpaceIsAskedOfEveryProfile: a full disk (NOSPACE) is a fault every
// etcd cluster meets, and losing no member and no quorum over it asks
// nothing of an operator but not to take an alarm for a death: the space
// check is required of every profile, whatever it claims; "recovers"
// only adds what it judges.
func TestSpaceIsAskedOfEveryProfile(t *testing.T) {
	for _, caps := range []Capabilities{{}, {Space: SpaceSurvives}, {Space: SpaceRecovers}, {Kill: true}} {
		if !caps.Claims("space") {
			t.Errorf("%+v: space not required", caps)
		}
	}
}

// A profile that claims operatorUpgrade must say how to upgrade the
// operator; the steps are held to the same rules as install's.
func TestUpgradeOperatorStepsAreRequiredWhenClaimed(t *testing.T) {
	base, err := os.ReadFile("../profiles/reference.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, steps, caps string
		want              string // "": the profile loads
	}{
		{name: "claimed with a step", steps: `[{run: [kubectl, rollout, restart, deployment/etcd-operator]}]`, caps: "{operatorUpgrade: true}"},
		{name: "claimed without steps", steps: "[]", caps: "{operatorUpgrade: true}",
			want: "upgradeOperator: at least one step is required when capabilities.operatorUpgrade is claimed"},
		{name: "not claimed, no steps", steps: "[]", caps: "{operatorUpgrade: false}"},
		{name: "a step with two actions", steps: "[{apply: x, run: [y]}]", caps: "{operatorUpgrade: true}",
			want: "upgradeOperator[0]: set exactly one of apply, delete, run, approveInstallPlan (found 2)"},
		{name: "a bad group/version", steps: "[{apply: x, ifServed: apps}]", caps: "{operatorUpgrade: false}",
			want: `upgradeOperator[0].ifServed: "apps" is not a group/version`},
		{name: "a served resource", steps: "[{apply: x, ifServed: extensions/v1beta1/deployments}]", caps: "{operatorUpgrade: true}"},
		{name: "a resource with an empty version", steps: "[{apply: x, unlessServed: extensions//deployments}]", caps: "{operatorUpgrade: true}",
			want: `upgradeOperator[0].unlessServed: "extensions//deployments" is not a group/version`},
	} {
		body := string(base)
		body = body[:strings.Index(body, "\nupgradeOperator:")] + body[strings.Index(body, "\ncluster:"):]
		body = body[:strings.Index(body, "\ncapabilities:")] + "\nupgradeOperator: " + tc.steps + "\ncapabilities: " + tc.caps + "\n"
		_, err := Load(write(t, body))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && err == nil:
			t.Errorf("%s: loaded", tc.name)
		case tc.want != "" && !strings.Contains(err.Error(), tc.want):
			t.Errorf("%s: error does not mention %q:\n%v", tc.name, tc.want, err)
		}
	}
}

// A selftest section is one expectation (the form every profile had) or a
// list of them, each proven by a run of its own; a bad one is named by
// its place in the list.
func TestSelftestIsOneExpectationOrAList(t *testing.T) {
	base, err := os.ReadFile("../profiles/selftest-upgrade-all-at-once.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// It claims upgrade and operatorCrash, not kill or nodeLoss.
	body := string(base)
	body = body[:strings.Index(body, "\nselftest:")] + "\n"
	for _, tc := range []struct {
		name, selftest string
		checks         []string // the checks of a profile that loads
		want           []string // what the error names
	}{
		{name: "one expectation", selftest: "{check: upgrade, reason: member unreachable}", checks: []string{"upgrade"}},
		{name: "a list", selftest: "[{check: upgrade, reason: a}, {check: operator-crash, reason: b}, {check: rbac, reason: c, state: incomplete, auditLog: unreadable}]",
			checks: []string{"upgrade", "operator-crash", "rbac"}},
		{name: "a list of one", selftest: "[{check: upgrade, reason: a}]", checks: []string{"upgrade"}},
		{name: "no section", selftest: "null"},
		{name: "an empty list", selftest: "[]", want: []string{"selftest: the list is empty"}},
		{name: "a word", selftest: "upgrade", want: []string{"selftest: want one expectation {check, reason[, state, auditLog]} or a list of them"}},
		{name: "an unknown field in the list", selftest: "[{check: upgrade, reason: a}, {check: operator-crash, reasons: b}]",
			want: []string{"selftest: want one expectation", `unknown field "reasons"`}},
		{name: "an unknown field alone", selftest: "{check: upgrade, because: a}", want: []string{`unknown field "because"`}},
		{name: "a bad entry", selftest: "[{check: upgrade, reason: a}, {check: speed, state: passed}]",
			want: []string{`selftest[1].check: "speed" is not one of`, "selftest[1].reason: required", `selftest[1].state: "passed" is not one of`}},
		{name: "a check twice", selftest: "[{check: upgrade, reason: a}, {check: upgrade, reason: b}]",
			want: []string{"selftest[1].check: upgrade is listed twice"}},
		{name: "a check the profile does not claim", selftest: "[{check: upgrade, reason: a}, {check: node-loss, reason: b}]",
			want: []string{"selftest[1].check: node-loss runs only when the profile claims capabilities.nodeLoss"}},
		{name: "one check it does not claim", selftest: "{check: kill, reason: b}",
			want: []string{"selftest.check: kill runs only when the profile claims capabilities.kill"}},
		{name: "the audit log of another check", selftest: "[{check: upgrade, reason: a}, {check: create, reason: b, auditLog: unreadable}]",
			want: []string{`selftest[1].auditLog: only the rbac check reads the audit log, and selftest[1].check is "create"`}},
	} {
		p, err := Load(write(t, body+"selftest: "+tc.selftest+"\n"))
		if len(tc.want) > 0 {
			if err == nil {
				t.Errorf("%s: loaded", tc.name)
				continue
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: error does not mention %q:\n%v", tc.name, w, err)
				}
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		var checks []string
		for _, x := range p.Selftest {
			checks = append(checks, x.Check)
		}
		if strings.Join(checks, ",") != strings.Join(tc.checks, ",") {
			t.Errorf("%s: checks %v, want %v", tc.name, checks, tc.checks)
		}
	}
}

// The shipped known-bad profiles: each fault check added to the self-test
// is proven by the variant meant for it, and every expectation can run.
func TestShippedSelftestsNameTheirChecks(t *testing.T) {
	want := map[string][]string{
		"selftest-upgrade-all-at-once":    {"upgrade", "operator-crash"},
		"selftest-restarts-before-rejoin": {"upgrade", "operator-crash"},
		"selftest-no-dead-member-removal": {"replace", "node-loss"},
	}
	files, err := filepath.Glob("../profiles/selftest-*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("selftest profiles: %v %v", files, err)
	}
	for _, f := range files {
		p, err := Load(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if len(p.Selftest) == 0 {
			t.Errorf("%s: no selftest section", f)
			continue
		}
		checks, ok := want[p.Name]
		if !ok {
			continue
		}
		var got []string
		for _, x := range p.Selftest {
			got = append(got, x.Check)
		}
		if strings.Join(got, ",") != strings.Join(checks, ",") {
			t.Errorf("%s: selftest checks %v, want %v", p.Name, got, checks)
		}
	}
}

// TestPartitionHoldStaysInsideTheOperatorsDeadline: the partition check
// must never hold a member cut off for as long as the operator says it
// waits before it replaces a member that does not answer (that would be a
// correct replacement, judged as a wrong one); an operator that states no
// such deadline never replaces a running member for not answering, and
// gets the suite's whole hold. A deadline that is no duration is refused.
func TestPartitionHoldStaysInsideTheOperatorsDeadline(t *testing.T) {
	for _, tc := range []struct {
		deadline string
		max      time.Duration
		want     time.Duration
	}{
		{"", 2 * time.Minute, 2 * time.Minute},
		{"60s", 2 * time.Minute, 40 * time.Second},
		{"10m", 2 * time.Minute, 2 * time.Minute},
	} {
		p := Profile{Operator: Operator{UnansweringMemberDeadline: tc.deadline}}
		if got := p.Operator.PartitionHold(tc.max); got != tc.want {
			t.Errorf("deadline %q, suite hold %s: hold %s, want %s", tc.deadline, tc.max, got, tc.want)
		}
	}
	p := Profile{Operator: Operator{UnansweringMemberDeadline: "a minute"}}
	if errs := p.validateSettings(); len(errs) == 0 || !strings.Contains(errors.Join(errs...).Error(), `operator.unansweringMemberDeadline: "a minute" is not a duration`) {
		t.Errorf("errors = %v", errs)
	}
}
