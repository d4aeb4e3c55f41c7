package html

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/etcdproof/etcdproof/conformance/report"
)

// The checks whose own files in the report dir the page shows. A check
// writes them into a folder named after it (framework.Env.WriteJSON), so
// they are found by name, not through report.json.
const (
	rbacCheck    = "rbac"
	cleanupCheck = "cleanup"
)

// addCheckFiles adds to a check's view what it wrote beside report.json:
// rbac's observed requests, diff and minimal Role, cleanup's inventory
// verdicts. Only a check that ran wrote any: one not claimed, not selected
// or skipped gets nothing, not a list of missing files.
func addCheckFiles(v *checkView, dir string, c *report.Check) {
	switch c.State {
	case report.Passed, report.Failed, report.Incomplete:
	default:
		return
	}
	switch c.Name {
	case rbacCheck:
		v.RBAC = newRBACView(dir)
	case cleanupCheck:
		v.Cleanup = newCleanupViews(dir)
	}
}

// readCheckFile reads a check's file, named slash-separated relative to
// the report dir. A file missing or unreadable is a problem to show on the
// page, never an error: the page is still wanted.
func readCheckFile(dir, rel string) (b []byte, problem string) {
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Sprintf("%s is missing from the report dir.", rel)
	case err != nil:
		return nil, fmt.Sprintf("%s could not be read: %v", rel, err)
	}
	return b, ""
}

// readCheckJSON decodes a check's JSON file into v; problem as
// readCheckFile's.
func readCheckJSON(dir, rel string, v any) (problem string) {
	b, problem := readCheckFile(dir, rel)
	if problem != "" {
		return problem
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Sprintf("%s could not be read: %v", rel, err)
	}
	return ""
}
