package html

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/etcdproof/etcdproof/conformance/report"
)

// Where the browser test finds Chromium: ETCDPROOF_CHROMIUM names the
// binary (make test passes what make test-assets installed), or is "skip"
// to leave the test out on purpose. A missing browser is a failure, not a
// skip: a test that skips whenever it cannot run passes without looking.
const (
	envChromium     = "ETCDPROOF_CHROMIUM"
	defaultChromium = "/usr/bin/chromium"
	// envArtifacts is where tests leave files for people (the screenshot).
	envArtifacts = "ETCDPROOF_TEST_ARTIFACTS"
	// screenshotName is also docs/report-html.png, made from this test.
	screenshotName = "report-html.png"
	// The window of the screenshot: tall enough for the verdict, the
	// checks table, create's events and replace's traffic timeline with
	// its events lane.
	screenshotWidth, screenshotHeight = 1280, 1400
)

// pageFacts is what the test reads back from the rendered DOM.
type pageFacts struct {
	Verdict   string `json:"verdict"`
	CheckRows int    `json:"checkRows"`
	Timelines []struct {
		Phase            string    `json:"phase"`
		ThroughputPoints int       `json:"throughputPoints"`
		LatencyPoints    int       `json:"latencyPoints"`
		FailureMarks     int       `json:"failureMarks"`
		GapBands         int       `json:"gapBands"`
		RenderedWidthPx  float64   `json:"renderedWidthPx"`
		RenderedHeightPx float64   `json:"renderedHeightPx"`
		ContainedInPhase bool      `json:"containedInPhase"`
		Events           laneFacts `json:"events"`
	} `json:"timelines"`
	EventsOnly []struct {
		Check  string    `json:"check"`
		Events laneFacts `json:"events"`
	} `json:"eventsOnly"`
	RBAC    *rbacFacts       `json:"rbac"`
	Cleanup []inventoryFacts `json:"cleanup"`
}

// rbacFacts is the rbac check's files as the page shows them.
type rbacFacts struct {
	RequestRows  int      `json:"requestRows"`
	Unused       []string `json:"unused"`
	Role         string   `json:"role"`
	RoleHeightPx float64  `json:"roleHeightPx"`
	Problems     []string `json:"problems"`
}

// inventoryFacts is one of the cleanup check's verdicts as the page shows
// it: the objects of its table.
type inventoryFacts struct {
	File     string   `json:"file"`
	Clean    bool     `json:"clean"`
	Objects  []string `json:"objects"`
	Problems []string `json:"problems"`
}

// laneFacts is an events lane and the table under its timeline.
type laneFacts struct {
	Ticks        int `json:"ticks"`
	WarningTicks int `json:"warningTicks"`
	// TicksInLane: every tick is drawn inside the lane's frame.
	TicksInLane bool     `json:"ticksInLane"`
	Titles      []string `json:"titles"`
	TableRows   int      `json:"tableRows"`
}

// The SVG DOM's point lists and lengths, not the attributes: they prove
// the browser parsed the data.
const readPageFacts = `(() => {
const lane = (svg, container) => {
  const frame = svg.querySelector('.events-lane rect.lane');
  const ticks = Array.from(svg.querySelectorAll('.events-lane line.event'));
  const inside = t => frame !== null && t.x1.baseVal.value >= frame.x.baseVal.value && t.x1.baseVal.value <= frame.x.baseVal.value + frame.width.baseVal.value &&
    t.y1.baseVal.value >= frame.y.baseVal.value && t.y2.baseVal.value <= frame.y.baseVal.value + frame.height.baseVal.value;
  return {
    ticks: ticks.length,
    warningTicks: svg.querySelectorAll('.events-lane line.event.warning').length,
    ticksInLane: ticks.every(inside),
    titles: ticks.map(t => t.querySelector('title') ? t.querySelector('title').textContent : ''),
    tableRows: container.querySelectorAll(':scope > details.events table.events tbody tr').length,
  };
};
const texts = (el, sel) => Array.from(el.querySelectorAll(sel)).map(e => e.textContent);
const rbac = document.querySelector('#check-rbac .rbac');
const role = rbac && rbac.querySelector('pre.role');
return {
  rbac: rbac && {
    requestRows: rbac.querySelectorAll('table.requests tbody tr').length,
    unused: texts(rbac, 'ul.unused li'),
    role: role ? role.textContent : '',
    roleHeightPx: role ? role.getBoundingClientRect().height : 0,
    problems: texts(rbac, '.missing-file'),
  },
  cleanup: Array.from(document.querySelectorAll('#check-cleanup .inventory')).map(div => ({
    file: div.dataset.file,
    clean: div.querySelector('p.clean') !== null,
    objects: texts(div, 'table.leftovers tbody td.object'),
    problems: texts(div, '.missing-file'),
  })),
  verdict: document.getElementById('verdict').textContent,
  checkRows: document.querySelectorAll('table.checks tbody tr').length,
  eventsOnly: Array.from(document.querySelectorAll('.events-only')).map(div => ({
    check: div.dataset.check,
    events: lane(div.querySelector('svg.events-timeline'), div),
  })),
  timelines: Array.from(document.querySelectorAll('svg.timeline')).map(svg => {
    const box = svg.getBoundingClientRect();
    const points = sel => Array.from(svg.querySelectorAll(sel)).reduce((n, p) => n + p.points.numberOfItems, 0);
    return {
      phase: svg.dataset.phase,
      throughputPoints: points('polyline.throughput'),
      latencyPoints: points('polyline.p50') + points('polyline.p99'),
      failureMarks: svg.querySelectorAll('.definite, .indeterminate').length,
      gapBands: svg.querySelectorAll('rect.gap').length,
      renderedWidthPx: box.width,
      renderedHeightPx: box.height,
      containedInPhase: svg.closest('.phase') !== null && svg.closest('.phase').dataset.phase === svg.dataset.phase,
      events: lane(svg, svg.closest('.phase')),
    };
  }),
};
})()`

func TestReportHTMLInChromiumHasTheChecksAndATimelinePerPhase(t *testing.T) {
	dir := copyOfTestdata(t)
	rep, err := report.ReadJSON(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, rep); err != nil {
		t.Fatal(err)
	}

	var facts pageFacts
	png := browse(t, filepath.Join(dir, FileName), "#checks", readPageFacts, &facts, screenshotWidth, screenshotHeight)
	writeScreenshot(t, screenshotName, png)

	if facts.Verdict != rep.VerdictLine {
		t.Errorf("verdict %q, want %q", facts.Verdict, rep.VerdictLine)
	}
	if facts.CheckRows != len(rep.Checks) {
		t.Errorf("checks table has %d rows, want %d", facts.CheckRows, len(rep.Checks))
	}
	var wantPhases, gotPhases []string
	for _, c := range rep.Checks {
		for phase := range c.Traffic {
			wantPhases = append(wantPhases, phase)
		}
	}
	for _, tl := range facts.Timelines {
		gotPhases = append(gotPhases, tl.Phase)
		if tl.ThroughputPoints < 2 || tl.LatencyPoints < 2 || tl.GapBands != 1 || !tl.ContainedInPhase || tl.RenderedWidthPx < 500 || tl.RenderedHeightPx < 100 {
			t.Errorf("timeline of %s: %+v", tl.Phase, tl)
		}
	}
	slices.Sort(wantPhases)
	slices.Sort(gotPhases)
	if !slices.Equal(gotPhases, wantPhases) {
		t.Errorf("timelines for phases %v, want one for each of %v", gotPhases, wantPhases)
	}
	// The replace phase's history records the leader's failed requests.
	for _, tl := range facts.Timelines {
		if tl.Phase == "replace" && tl.FailureMarks == 0 {
			t.Errorf("replace timeline marks no failed request")
		}
	}
	checkEventLanes(t, rep, facts)
	checkCheckFiles(t, dir, facts)
}

// checkCheckFiles: the rbac check's section lists every request (verbs
// merged per resource) and every grant no request used, and shows the
// minimal Role as the file holds it; the cleanup check's shows both
// inventories clean, the whole cluster's with the object others created.
func checkCheckFiles(t *testing.T, dir string, facts pageFacts) {
	t.Helper()
	uses, _, diff := simulatedRBAC()
	role := string(readFile(t, filepath.Join(dir, minimalRoleFile)))
	if r := facts.RBAC; r == nil {
		t.Error("no rbac section")
	} else if r.RequestRows != len(requestRows(uses)) || !slices.Equal(r.Unused, diff.Unused) || r.Role != role || r.RoleHeightPx < 100 || len(r.Problems) > 0 {
		t.Errorf("rbac section: %d request rows, unused %q, a role of %d bytes %.0f px high, problems %q; want %d rows, unused %q and the %d bytes of %s",
			r.RequestRows, r.Unused, len(r.Role), r.RoleHeightPx, r.Problems, len(requestRows(uses)), diff.Unused, len(role), minimalRoleFile)
	}
	want := []inventoryFacts{
		{File: "cleanup/namespace-leftovers.json", Clean: true},
		{File: "cleanup/leftovers.json", Clean: true, Objects: []string{simulatedIgnored.String()}},
	}
	if len(facts.Cleanup) != len(want) {
		t.Fatalf("cleanup section: %+v, want %+v", facts.Cleanup, want)
	}
	for i, inv := range facts.Cleanup {
		if w := want[i]; inv.File != w.File || inv.Clean != w.Clean || !slices.Equal(inv.Objects, w.Objects) || len(inv.Problems) > 0 {
			t.Errorf("cleanup inventory %d: %+v, want %+v", i, inv, w)
		}
	}
}

// checkEventLanes: every traffic phase has its cluster events drawn on
// its lane, each with its hover text, and listed under it; the create
// check, which has no traffic, has an events-only timeline of all its
// events; no other check needs one.
func checkEventLanes(t *testing.T, rep *report.Report, facts pageFacts) {
	t.Helper()
	for _, tl := range facts.Timelines {
		ev := tl.Events
		if ev.Ticks == 0 || ev.Ticks != ev.TableRows || !ev.TicksInLane || ev.WarningTicks == 0 {
			t.Errorf("events lane of %s: %+v", tl.Phase, ev)
		}
		for _, title := range ev.Titles {
			if !strings.Contains(title, " s · ") {
				t.Errorf("events lane of %s: tick title %q", tl.Phase, title)
			}
		}
		if tl.Phase == "replace" && !slices.ContainsFunc(ev.Titles, func(s string) bool { return strings.Contains(s, "Deleted") }) {
			t.Errorf("replace lane does not show the leader's pod deleted: %q", ev.Titles)
		}
	}
	var want int
	for _, c := range rep.Checks {
		if c.Name == "create" {
			want = len(c.Events)
		}
	}
	if len(facts.EventsOnly) != 1 || facts.EventsOnly[0].Check != "create" {
		t.Fatalf("events-only timelines %+v, want create's alone", facts.EventsOnly)
	}
	if ev := facts.EventsOnly[0].Events; want == 0 || ev.Ticks != want || ev.TableRows != want || !ev.TicksInLane {
		t.Errorf("create's events-only timeline: %+v, want %d ticks and rows", ev, want)
	}
}

// userDataDir is a profile folder for Chromium, removed after the test. Not
// t.TempDir: Chromium's helper processes may still write there for a moment
// after the browser exited (on a busy machine the removal then failed with
// "directory not empty"), so the removal is retried until it succeeds.
func userDataDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "chromium-profile-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		deadline := time.Now().Add(30 * time.Second)
		for err := os.RemoveAll(dir); err != nil; err = os.RemoveAll(dir) {
			if time.Now().After(deadline) {
				t.Errorf("removing Chromium's profile: %v", err)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	return dir
}

// browse opens a page in headless Chromium in a window of width×height,
// waits for the element ready names, reads what script returns into facts
// and takes a screenshot of the window. Anything the browser complains of
// fails the test: a console error or warning, an exception, a request for
// anything but the page's own file (the page must be self-contained).
func browse(t *testing.T, page, ready, script string, facts any, width, height int64) (png []byte) {
	t.Helper()
	chromium := chromiumPath(t)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(userDataDir(t)),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true), chromedp.WindowSize(int(width), int(height)))...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelTimeout()

	var mu sync.Mutex
	var problems []string
	complain := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		problems = append(problems, s)
	}
	chromedp.ListenTarget(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError || ev.Type == runtime.APITypeAssert || ev.Type == runtime.APITypeWarning {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				complain("console " + string(ev.Type) + ": " + strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			complain("exception: " + ev.ExceptionDetails.Error())
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.LevelError || ev.Entry.Level == cdplog.LevelWarning {
				complain("log " + string(ev.Entry.Level) + ": " + ev.Entry.Text + " " + ev.Entry.URL)
			}
		case *network.EventRequestWillBeSent:
			// The page is one file: anything else it asks for is an
			// external asset.
			if !strings.HasPrefix(ev.Request.URL, "file://") {
				complain("request: " + ev.Request.URL)
			}
		}
	})

	err := chromedp.Run(ctx,
		cdplog.Enable(), network.Enable(),
		chromedp.EmulateViewport(width, height),
		chromedp.Navigate("file://"+page),
		chromedp.WaitReady(ready, chromedp.ByQuery),
		chromedp.Evaluate(script, facts),
		chromedp.CaptureScreenshot(&png),
	)
	if err != nil {
		t.Fatalf("chromium (%s): %v", chromium, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("the page made the browser complain:\n%s", strings.Join(problems, "\n"))
	}
	return png
}

// chromiumPath is the browser to drive, failing the test when it is not
// there (unless ETCDPROOF_CHROMIUM=skip).
func chromiumPath(t *testing.T) string {
	t.Helper()
	path := os.Getenv(envChromium)
	switch path {
	case "skip":
		t.Skipf("%s=skip", envChromium)
	case "":
		path = defaultChromium
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no Chromium for the browser test: %v. `make test-assets` installs Debian's chromium; %s names another binary, or %s=skip leaves the test out",
			err, envChromium, envChromium)
	}
	return path
}

// copyOfTestdata is testdata/ in a folder of its own, so report.html is
// written beside the files it links to, as a run writes it.
func copyOfTestdata(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(testdataDir)); err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeScreenshot(t *testing.T, name string, png []byte) {
	t.Helper()
	dir := os.Getenv(envArtifacts)
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d KB)", path, len(png)>>10)
}
