package html

import (
	"bytes"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/etcdproof/etcdproof/conformance/inventory"
	"github.com/etcdproof/etcdproof/conformance/rbac"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// The recorded run's page shows what its rbac and cleanup checks wrote:
// the requests, the grants no request used and the minimal Role, escaped;
// its two inventories, clean, with what others created.
func TestRenderShowsTheRBACAndCleanupFilesOfTheRecordedRun(t *testing.T) {
	page := renderTestdata(t, copyOfTestdata(t))
	uses, _, diff := simulatedRBAC()
	if len(diff.Unused) == 0 || len(diff.Findings) != 0 {
		t.Fatalf("the simulated rbac diff should have unused grants and no finding: %+v", diff)
	}
	want := []string{
		// A request of the operator's own namespace, verbs merged, and a
		// cluster-wide one.
		`<tr><td>etcd-operator-system</td><td>coordination.k8s.io</td><td class="object">leases</td><td>create, get, update</td></tr>`,
		`<tr><td>cluster-wide</td><td>etcd.database.coreos.com</td><td class="object">etcdclusters</td><td>list, watch</td></tr>`,
		`<tr><td>etcdproof-replace-5vz7m</td><td>core</td><td class="object">pods</td><td>create, delete</td></tr>`,
		"Grants no observed request used",
		`<p class="clean">nothing left behind</p>`,
		`<tr class="reported"><td class="judged">created by others</td><td class="object">` + simulatedIgnored.String() + `</td><td>created during the run by system:apiserver</td></tr>`,
	}
	for _, u := range diff.Unused {
		want = append(want, "<li>"+html.EscapeString(u)+"</li>")
	}
	for _, w := range want {
		if !strings.Contains(page, w) {
			t.Errorf("report.html lacks %q", w)
		}
	}
	if pre := `<pre class="role">` + html.EscapeString(string(readFile(t, filepath.Join(testdataDir, minimalRoleFile)))) + `</pre>`; !strings.Contains(page, pre) {
		t.Errorf("report.html lacks %s, escaped, in a <pre> block", minimalRoleFile)
	}
	if n := strings.Count(page, `<td class="object">`+"pods</td>"); n != 5 {
		t.Errorf("%d rows of pods requests, want 5 (cluster-wide and each cluster's namespace): %d uses", n, len(uses))
	}
	for _, never := range []string{"missing-file", "Findings, which fail the check", `class="fails"`} {
		if strings.Contains(page, never) {
			t.Errorf("report.html of a clean recorded run contains %q", never)
		}
	}
}

// A failed run's page shows the findings, what the installed grant allows
// beyond the declared rules and each kind of leftover; a file missing or
// unreadable is named and the rest still rendered.
func TestRenderShowsExcessGrantsLeftoversAndMissingFiles(t *testing.T) {
	dir := t.TempDir()
	const ns = "etcdproof-cleanup-x"
	rule := func(verbs ...string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods", "secrets"}, Verbs: verbs}
	}
	uses := []rbac.Use{{Namespace: ns, Resource: "pods", Verb: "get"}, {Namespace: ns, Resource: "pods", Verb: "create"}}
	installed := []rbac.Grant{{Rule: rule("*"), Source: "ClusterRoleBinding op -> ClusterRole op"}}
	declared := []rbac.Grant{
		{Namespace: ns, Rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}, Source: "declared Role op"},
		{Namespace: ns, Rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"list"}}, Source: "declared Role op"},
	}
	diff := rbac.CompareDeclared(uses, installed, declared, rbac.Scope{OperatorNamespace: "op"})
	if len(diff.Excess) == 0 || len(diff.Findings) == 0 || len(diff.Unused) == 0 {
		t.Fatalf("the declared diff should have findings, unused rules and excess grants: %+v", diff)
	}
	writeJSON(t, dir, rbacRecordFile, rbac.Record{Uses: uses, Grants: installed, Declared: declared, Diff: diff})
	writeFile(t, dir, minimalRoleFile, "kind: Role # <escaped> & kept\n")
	writeFile(t, dir, "cleanup/namespace-leftovers.json", "{not json")
	pvc := inventory.Object{Resource: "persistentvolumeclaims", Namespace: ns, Name: "data-cleanup-0", UID: "u1"}
	crd := inventory.Object{Resource: "customresourcedefinitions.apiextensions.k8s.io", Name: "etcdclusters.etcd.database.coreos.com", UID: "u2"}
	cm := inventory.Object{Resource: "configmaps", Namespace: "default", Name: "lock", UID: "u3"}
	writeJSON(t, dir, "cleanup/leftovers.json", inventory.Verdict{
		Leftovers:    []inventory.Finding{{Object: pvc, Why: "in namespace " + ns + ", which the run created"}, {Object: crd, Why: "cluster-scoped, new since install"}},
		Unlisted:     []inventory.Unlisted{{Resource: "widgets.example.com", Namespaced: true, Error: "the server is currently unable to handle the request"}},
		Unattributed: []inventory.Finding{{Object: cm, Why: "creator unknown: no creation of it in the audit log since the run started"}},
	})
	rec := report.NewRecorder()
	rec.Check("rbac").State, rec.Check("rbac").Failure = report.Failed, "RBAC findings"
	rec.Check("cleanup").State, rec.Check("cleanup").Failure = report.Failed, "objects left behind"
	page := render(t, dir, &report.Report{SchemaVersion: report.SchemaVersion, Profile: "selftest", Checks: rec.Checks([]string{"rbac", "cleanup"})})

	want := []string{
		"Findings, which fail the check:",
		`<tr><td>etcdproof-cleanup-x</td><td>core</td><td class="object">pods</td><td>create, get</td></tr>`,
		"Declared rules no observed request used",
		"the 2 declared rules",
		`<pre class="role">kind: Role # &lt;escaped&gt; &amp; kept` + "\n</pre>",
		`<p class="problem missing-file">cleanup/namespace-leftovers.json could not be read: `,
		`<tr class="fails"><td class="judged">cannot list</td><td class="object">widgets.example.com</td><td>the server is currently unable to handle the request</td></tr>`,
		`<tr class="fails"><td class="judged">leftover</td><td class="object">` + pvc.String() + `</td><td>in namespace etcdproof-cleanup-x, which the run created</td></tr>`,
		`<tr class="fails"><td class="judged">leftover</td><td class="object">` + crd.String() + `</td>`,
		`<tr class="unjudged"><td class="judged">unattributed</td><td class="object">` + cm.String() + `</td>`,
	}
	for _, lists := range [][]string{diff.Excess, diff.Unused} {
		for _, s := range lists {
			want = append(want, "<li>"+html.EscapeString(s)+"</li>")
		}
	}
	for _, f := range diff.Findings {
		want = append(want, "<li>"+html.EscapeString(f.Message)+"</li>")
	}
	for _, w := range want {
		if !strings.Contains(page, w) {
			t.Errorf("report.html lacks %q", w)
		}
	}
	if strings.Contains(page, "nothing left behind") {
		t.Error("report.html says nothing was left behind")
	}

	// Without the files, the page names each and renders.
	for _, f := range []string{rbacRecordFile, minimalRoleFile, "cleanup/leftovers.json"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	page = render(t, dir, &report.Report{SchemaVersion: report.SchemaVersion, Profile: "selftest", Checks: rec.Checks([]string{"rbac", "cleanup"})})
	for _, f := range []string{rbacRecordFile, minimalRoleFile, "cleanup/leftovers.json"} {
		if w := `<p class="problem missing-file">` + f + " is missing from the report dir.</p>"; !strings.Contains(page, w) {
			t.Errorf("report.html lacks %q", w)
		}
	}
	if strings.Contains(page, "requests the operator made") || strings.Contains(page, "minimal Role") {
		t.Error("report.html shows the rbac files it could not read")
	}
}

// A check that did not run wrote nothing: its files are not missing.
func TestChecksThatDidNotRunHaveNoFiles(t *testing.T) {
	rec := report.NewRecorder()
	rec.Check("rbac").State = report.NotClaimed
	rec.Check("cleanup").State = report.Skipped
	page := render(t, t.TempDir(), &report.Report{SchemaVersion: report.SchemaVersion, Profile: "selftest", Checks: rec.Checks([]string{"rbac", "cleanup"})})
	if strings.Contains(page, "missing-file") || strings.Contains(page, `<section class="check"`) {
		t.Errorf("checks that did not run got a section:\n%s", page)
	}
}

func renderTestdata(t *testing.T, dir string) string {
	t.Helper()
	rep, err := report.ReadJSON(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	return render(t, dir, rep)
}

func render(t *testing.T, dir string, rep *report.Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, dir, rep); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func writeJSON(t *testing.T, dir, rel string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, rel, string(b))
}

func writeFile(t *testing.T, dir, rel, content string) {
	t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
