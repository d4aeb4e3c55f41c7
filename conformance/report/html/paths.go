package html

import (
	"os"
	"path/filepath"
	"strings"
)

// locate finds a file that report.json names (a history, a visualization)
// for a report in dir. A relative name is relative to dir. An absolute
// name is where the run wrote the file, inside the report dir of that
// run; the dir may have been copied or moved since (CI artifacts, make
// results), so the name's trailing parts are looked up in dir first,
// longest first, and the name itself last. It returns the path found and
// the same path relative to dir (slash-separated) for links and display.
func locate(dir, name string) (found, rel string, ok bool) {
	if name == "" {
		return "", "", false
	}
	var candidates []string
	if !filepath.IsAbs(name) {
		candidates = append(candidates, filepath.Join(dir, name))
	} else {
		parts := strings.Split(filepath.Clean(name), string(filepath.Separator))
		for i := 1; i < len(parts); i++ {
			candidates = append(candidates, filepath.Join(append([]string{dir}, parts[i:]...)...))
		}
		candidates = append(candidates, name)
	}
	for _, c := range candidates {
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			return c, relativeTo(dir, c), true
		}
	}
	return "", "", false
}

// relativeTo is path relative to dir when it can be expressed so, else
// path itself.
func relativeTo(dir, path string) string {
	absDir, err1 := filepath.Abs(dir)
	absPath, err2 := filepath.Abs(path)
	if err1 != nil || err2 != nil {
		return filepath.ToSlash(path)
	}
	rel, err := filepath.Rel(absDir, absPath)
	if err != nil {
		return filepath.ToSlash(path)
	}
	return filepath.ToSlash(rel)
}
