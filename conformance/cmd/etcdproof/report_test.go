package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdproof/etcdproof/conformance/runner"
)

func TestReportHTMLRendersACopiedReportDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../report/html/testdata")); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	if code := reportCmd([]string{"html", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	// The replace history is named by the path of the run that wrote it,
	// on another machine: the copy here must still be found.
	// One timeline per traffic phase: scale, replace, upgrade.
	if n := strings.Count(string(page), `<svg class="timeline"`); n != 3 {
		t.Errorf("%d timelines, want 3", n)
	}
}

func TestReportRejectsBadArguments(t *testing.T) {
	for _, args := range [][]string{nil, {"markdown", "."}, {"html"}, {"html", "a", "b"}, {"html", t.TempDir()}} {
		var stdout, stderr strings.Builder
		if code := reportCmd(args, &stdout, &stderr); code != runner.ExitCouldNot || stderr.Len() == 0 {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr.String())
		}
	}
}
