// Command godeps2gomod writes the builder go.mod of a Kubernetes release that
// predates Go modules (v1.14 and older): its dependency pins live in
// Godeps/Godeps.json as import paths and commit hashes, and its staging
// repositories (k8s.io/api, k8s.io/client-go, ...) only in staging/src/k8s.io.
//
// usage: godeps2gomod -godeps Godeps.json -version v1.14.10 -moddir DIR -builder DIR
//
// DIR of -moddir is k8s.io/kubernetes@version as `go mod download` extracts it.
// The tool copies it to BUILDER/kubernetes-src (unless there already), gives that
// copy and each staging repository in it a minimal go.mod, and writes
// BUILDER/go.mod: every Godeps repository at its pin, as a require and a replace
// (replace pins hold whatever other go.mod files ask for), and the staging
// repositories and k8s.io/kubernetes replaced by the local copy.
//
// The Go module proxy serves canonical versions only (no commit hashes, no
// version lists), and a pseudo-version needs the commit's time, which Godeps
// lacks. So the candidates for a pin are: the exact tag that Godeps recorded in
// Comment; pseudo-versions of the same commit that later Kubernetes releases'
// go.mod files (hintModules) or pins.txt name; then a fallback of pins.go. The
// first one that `go list -m` finds served wins; pins.go may then raise it
// (bumps). A repository with no served candidate is an error, unless dropped.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// dep is one Godeps.json entry.
type dep struct {
	ImportPath, Rev, Comment string
}

// module is one repository of Godeps.json.
type module struct {
	Path, Rev, Comment string
	Target, Version    string // replacement module and version
	Note               string // why the replacement differs from the pin
}

// lister answers `go list -m -e -json` for path@version queries: the set of
// queries that the proxy serves, and the go.mod file of each served one.
type lister func(queries []string) (map[string]string, error)

func main() {
	godeps := flag.String("godeps", "", "Godeps/Godeps.json of the release")
	version := flag.String("version", "", "the Kubernetes version, e.g. v1.14.10")
	moddir := flag.String("moddir", "", "k8s.io/kubernetes@version as go mod download extracted it")
	builder := flag.String("builder", "", "folder of the builder module (written)")
	flag.Parse()
	if *godeps == "" || *version == "" || *moddir == "" || *builder == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*godeps, *version, *moddir, *builder, goList); err != nil {
		fmt.Fprintln(os.Stderr, "godeps2gomod:", err)
		os.Exit(1)
	}
}

func run(godeps, version, moddir, builder string, list lister) error {
	data, err := os.ReadFile(godeps)
	if err != nil {
		return err
	}
	var g struct{ Deps []dep }
	if err := json.Unmarshal(data, &g); err != nil {
		return fmt.Errorf("%s: %v", godeps, err)
	}
	mods, err := group(g.Deps)
	if err != nil {
		return err
	}
	if err := resolve(mods, list); err != nil {
		return err
	}
	src := filepath.Join(builder, "kubernetes-src")
	if _, err := os.Stat(src); os.IsNotExist(err) {
		// The module cache is read-only; CopyFS makes files owner-writable.
		if err := os.CopyFS(src, os.DirFS(moddir)); err != nil {
			return err
		}
	}
	staging, err := stagingModules(src)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(builder, "go.mod"), []byte(gomod(version, mods, staging)), 0o644)
}

// group maps every import path to its repository root, one pin per root,
// and adds the extras of the fallbacks among them.
func group(deps []dep) ([]*module, error) {
	byPath := map[string]*module{}
	var mods []*module
	for _, d := range deps {
		root := moduleRoot(d.ImportPath)
		if m := byPath[root]; m != nil {
			if m.Rev != d.Rev {
				return nil, fmt.Errorf("%s: two commits, %s and %s", root, m.Rev, d.Rev)
			}
			continue
		}
		m := &module{Path: root, Rev: d.Rev, Comment: d.Comment, Target: root}
		if o, ok := moved[root]; ok {
			m.Target, m.Note = o.To, o.Reason
		}
		byPath[root] = m
		mods = append(mods, m)
	}
	for _, m := range mods {
		if e, ok := extras[m.Path+"@"+short(m.Rev)]; ok && byPath[e.Path] == nil {
			byPath[e.Path] = &e
			mods = append(mods, &e)
		}
	}
	sort.Slice(mods, func(i, j int) bool { return mods[i].Path < mods[j].Path })
	return mods, nil
}

// resolve sets Version of every module: its first candidate that the proxy
// serves, raised to the floor of bumps. Modules of drop are left out.
func resolve(mods []*module, list lister) error {
	hints, err := list(hintModules)
	if err != nil {
		return err
	}
	texts := []string{pins}
	for _, f := range hints {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		texts = append(texts, string(b))
	}
	index := map[string][]string{} // commit (12 hex digits) => pseudo-versions
	for _, t := range texts {
		for _, s := range pseudo.FindAllStringSubmatch(t, -1) {
			index[s[2]] = append(index[s[2]], s[0])
		}
	}
	var queries []string
	for _, m := range mods {
		for _, v := range candidates(m, index) {
			queries = append(queries, m.Target+"@"+v)
		}
	}
	served, err := list(queries)
	if err != nil {
		return err
	}
	var missing []string
	for _, m := range mods {
		for _, v := range candidates(m, index) {
			if _, ok := served[m.Target+"@"+v]; ok {
				m.Version = v
				break
			}
		}
		if f, ok := fallbacks[m.Path+"@"+short(m.Rev)]; ok && m.Version == f.To {
			m.Note = "instead of commit " + short(m.Rev) + ": " + f.Reason
		}
		b, ok := bumps[m.Path+"@"+short(m.Rev)]
		if !ok {
			b, ok = bumps[m.Path]
		}
		if ok && (m.Version == "" || semverLess(m.Version, b.To)) {
			from := m.Version
			if from == "" {
				from = "commit " + short(m.Rev)
			}
			m.Version, m.Note = b.To, "bumped from "+from+": "+b.Reason
		}
		if _, ok := drop[m.Path]; m.Version == "" && !ok {
			missing = append(missing, m.Path+"@"+m.Rev+" ("+m.Comment+")")
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("no served version for these pins; name them in pins.txt or pins.go:\n\t%s", strings.Join(missing, "\n\t"))
	}
	return nil
}

// goList is the lister of the go command, run outside any module.
func goList(queries []string) (map[string]string, error) {
	served := map[string]string{}
	if len(queries) == 0 {
		return served, nil
	}
	tmp, err := os.MkdirTemp("", "godeps2gomod")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command("go", append([]string{"list", "-m", "-e", "-json"}, queries...)...)
	cmd.Dir, cmd.Stderr = tmp, os.Stderr
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var r struct {
			Path, Version, GoMod string
			Error                *struct{ Err string }
		}
		if err := dec.Decode(&r); err != nil {
			return nil, err
		}
		if r.Error == nil {
			served[r.Path+"@"+r.Version] = r.GoMod
		}
	}
	return served, nil
}

// stagingModules gives src and each staging repository in it a minimal
// go.mod, and returns the staging module paths.
func stagingModules(src string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(src, "staging/src/k8s.io"))
	if err != nil {
		return nil, err
	}
	var mods []string
	dirs := map[string]string{"k8s.io/kubernetes": src}
	for _, e := range entries {
		if e.IsDir() {
			p := "k8s.io/" + e.Name()
			mods = append(mods, p)
			dirs[p] = filepath.Join(src, "staging/src", p)
		}
	}
	for p, dir := range dirs {
		f := filepath.Join(dir, "go.mod")
		if _, err := os.Stat(f); os.IsNotExist(err) {
			if err := os.WriteFile(f, []byte("module "+p+"\n"), 0o644); err != nil {
				return nil, err
			}
		}
	}
	return mods, nil
}

func gomod(version string, mods []*module, staging []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// Generated by scripts/godeps2gomod from k8s.io/kubernetes %s Godeps/Godeps.json.\n", version)
	fmt.Fprintf(&b, "module etcdproof.local/k8sbuilder\n\ngo 1.24\n\nrequire (\n\tk8s.io/kubernetes %s\n", version)
	for _, s := range staging {
		fmt.Fprintf(&b, "\t%s v0.0.0\n", s)
	}
	for _, m := range mods {
		if m.Version != "" {
			fmt.Fprintf(&b, "\t%s %s\n", m.Path, m.Version)
		}
	}
	b.WriteString(")\n\nreplace (\n\tk8s.io/kubernetes => ./kubernetes-src\n")
	for _, s := range staging {
		fmt.Fprintf(&b, "\t%s => ./kubernetes-src/staging/src/%s\n", s, s)
	}
	for _, m := range mods {
		switch {
		case m.Version == "":
			fmt.Fprintf(&b, "\t// %s@%s left out: %s\n", m.Path, m.Rev, drop[m.Path])
		case m.Note != "":
			fmt.Fprintf(&b, "\t%s => %s %s // %s\n", m.Path, m.Target, m.Version, m.Note)
		default:
			fmt.Fprintf(&b, "\t%s => %s %s\n", m.Path, m.Target, m.Version)
		}
	}
	b.WriteString(")\n")
	return b.String()
}
