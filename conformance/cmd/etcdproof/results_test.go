package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdproof/etcdproof/conformance/runner"
)

// resultsTestdata holds two recorded runs: the reference's report.json
// and, below results/, coreos-v0.9.4's.
const resultsTestdata = "../../report/html/testdata"

// --html adds the page and leaves the Markdown as it was: docs/results.md
// is written by the same command with both flags.
func TestResultsWritesTheHTMLPageBesideTheSameMarkdown(t *testing.T) {
	dir := t.TempDir()
	var alone strings.Builder
	if code := resultsCmd([]string{resultsTestdata}, &alone); code != runner.ExitPass {
		t.Fatalf("exit %d", code)
	}
	md, page := filepath.Join(dir, "results.md"), filepath.Join(dir, "results.html")
	var stdout strings.Builder
	if code := resultsCmd([]string{"-o", md, "--html", page, resultsTestdata}, &stdout); code != runner.ExitPass {
		t.Fatalf("exit %d", code)
	}
	if want := "wrote " + md + " from 2 runs\nwrote " + page + " from 2 runs\n"; stdout.String() != want {
		t.Errorf("stdout %q, want %q", stdout.String(), want)
	}
	if got := readString(t, md); got != alone.String() {
		t.Errorf("the Markdown changed with --html:\n%s\nwant:\n%s", got, alone.String())
	}
	html := readString(t, page)
	for _, want := range []string{
		`<th scope="col" data-column="coreos-v0.9.4 on v1.34.4">coreos-v0.9.4 on v1.34.4</th><th scope="col" data-column="reference on v1.34.4">reference on v1.34.4</th>`,
		`<svg class="bars" data-check="replace" data-timing="mttr-leader" data-columns="2"`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("results page lacks %q", want)
		}
	}
}

// --html alone writes the page and no Markdown.
func TestResultsHTMLAloneWritesNoMarkdown(t *testing.T) {
	page := filepath.Join(t.TempDir(), "results.html")
	var stdout strings.Builder
	if code := resultsCmd([]string{"--html", page, resultsTestdata}, &stdout); code != runner.ExitPass {
		t.Fatalf("exit %d", code)
	}
	if want := "wrote " + page + " from 2 runs\n"; stdout.String() != want {
		t.Errorf("stdout %q, want %q", stdout.String(), want)
	}
	if !strings.Contains(readString(t, page), `<table class="checks matrix" id="matrix">`) {
		t.Errorf("%s has no matrix", page)
	}
}

func TestResultsCannotWriteThePage(t *testing.T) {
	var stdout strings.Builder
	page := filepath.Join(t.TempDir(), "missing-dir", "results.html")
	if code := resultsCmd([]string{"--html", page, resultsTestdata}, &stdout); code != runner.ExitCouldNot {
		t.Errorf("exit %d, want %d", code, runner.ExitCouldNot)
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
