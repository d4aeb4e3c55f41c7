package html

import (
	"github.com/etcdproof/etcdproof/conformance/inventory"
)

// cleanupInventories are the cleanup check's verdicts in the report dir
// (specs.CleanupSpec writes them), in the order it takes them.
var cleanupInventories = []struct{ file, title string }{
	{"cleanup/namespace-leftovers.json", "the cluster's namespace once its CR was deleted"},
	{"cleanup/leftovers.json", "the whole cluster after uninstall"},
}

// inventoryView is one of the cleanup check's verdicts: what was left
// behind, or why it cannot be shown (Problem).
type inventoryView struct {
	Title, File, Problem string
	Summary              string
	// Clean: nothing fails the check or keeps it from being judged; Rows
	// may still list what was retained or created by others.
	Clean bool
	Rows  []leftoverRow
}

// leftoverRow is one object (or resource, when it could not be listed)
// and how the check judged it; Class is fails, unjudged or reported.
type leftoverRow struct{ Judged, Class, Object, Why string }

func newCleanupViews(dir string) []inventoryView {
	views := make([]inventoryView, 0, len(cleanupInventories))
	for _, inv := range cleanupInventories {
		v := inventoryView{Title: inv.title, File: inv.file}
		var verdict inventory.Verdict
		if v.Problem = readCheckJSON(dir, inv.file, &verdict); v.Problem == "" {
			v.Summary, v.Clean, v.Rows = verdict.Summary(), verdict.Clean(), leftoverRows(verdict)
		}
		views = append(views, v)
	}
	return views
}

// leftoverRows lists a verdict as the check judges it: what fails it
// first, then what leaves it unjudged, then what is only reported.
func leftoverRows(v inventory.Verdict) []leftoverRow {
	var rows []leftoverRow
	for _, u := range v.Unlisted {
		rows = append(rows, leftoverRow{"cannot list", "fails", u.Resource, u.Error})
	}
	for _, group := range []struct {
		judged, class string
		findings      []inventory.Finding
	}{
		{"leftover", "fails", v.Leftovers},
		{"unattributed", "unjudged", v.Unattributed},
		{"retained", "reported", v.Retained},
		{"created by others", "reported", v.Ignored},
	} {
		for _, f := range group.findings {
			rows = append(rows, leftoverRow{group.judged, group.class, f.Object.String(), f.Why})
		}
	}
	return rows
}
