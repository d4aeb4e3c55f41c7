package main

// The repository's documentation, checked against what it describes: the
// README stays short, every relative link and anchor resolves, every `make`
// target it names exists, every flag it gives `etcdproof run` or
// `etcdproof cluster` is one the CLI defines, and its minimal profile loads.
// The tests live here because only package main can parse the CLI's flags.

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/etcdproof/etcdproof/conformance/profile"
)

// repoRoot is the repository, seen from this package's folder.
const repoRoot = "../../.."

const (
	readmeMaxLines = 200
	readmeMaxWidth = 200
)

// docFiles are the Markdown files whose links, targets and commands are
// checked: the README, everything under docs/, and the suite's README.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join(repoRoot, "README.md"), filepath.Join(repoRoot, "conformance", "README.md")}, files...)
}

func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mdLine is a line of a Markdown file with its number, whether it is
// inside a fenced code block, and that block's language.
type mdLine struct {
	n    int
	text string
	code bool
	lang string
}

func mdLines(doc string) []mdLine {
	var out []mdLine
	fenced, lang := false, ""
	for i, l := range strings.Split(doc, "\n") {
		if fence, ok := strings.CutPrefix(strings.TrimSpace(l), "```"); ok {
			fenced = !fenced
			lang = fence
			out = append(out, mdLine{n: i + 1, text: l, code: true})
			continue
		}
		out = append(out, mdLine{n: i + 1, text: l, code: fenced, lang: lang})
	}
	return out
}

var codeSpan = regexp.MustCompile("`[^`]*`")

// commandText is what a reader of a Markdown file would type, one string
// per line: the lines of shell blocks (sh, bash or unlabelled) and the code
// spans of prose. Blocks in other languages (YAML, the example report) are
// left out: a workflow for another repository calls its own make targets.
func commandText(doc string) []string {
	var out []string
	for _, l := range mdLines(doc) {
		if l.code {
			if slices.Contains([]string{"", "sh", "bash"}, l.lang) {
				out = append(out, l.text)
			}
			continue
		}
		for _, span := range codeSpan.FindAllString(l.text, -1) {
			out = append(out, strings.Trim(span, "`"))
		}
	}
	return out
}

func TestREADMEIsShort(t *testing.T) {
	lines := strings.Split(strings.TrimSuffix(readDoc(t, filepath.Join(repoRoot, "README.md")), "\n"), "\n")
	if len(lines) > readmeMaxLines {
		t.Errorf("README.md has %d lines, at most %d: move details to docs/", len(lines), readmeMaxLines)
	}
	for i, l := range lines {
		if n := len([]rune(l)); n > readmeMaxWidth {
			t.Errorf("README.md:%d is %d characters wide, at most %d", i+1, n, readmeMaxWidth)
		}
	}
}

var isoDate = regexp.MustCompile(`\b20\d\d-\d\d-\d\d\b`)

// Run history and dated measurements belong in docs/ (history.md,
// timings.md), never in the README.
func TestREADMEHasNoDatedRunEntry(t *testing.T) {
	for _, l := range mdLines(readDoc(t, filepath.Join(repoRoot, "README.md"))) {
		if d := isoDate.FindString(l.text); d != "" {
			t.Errorf("README.md:%d names the date %s: dated runs go to docs/history.md", l.n, d)
		}
	}
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// githubAnchor is the anchor GitHub gives a heading: lower case, spaces as
// hyphens, every character but letters, digits, marks, hyphens and
// underscores dropped.
func githubAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

var heading = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)

// anchors are the anchors of a Markdown file's headings; a repeated heading
// gets -1, -2... as on GitHub.
func anchors(doc string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range mdLines(doc) {
		m := heading.FindStringSubmatch(l.text)
		if l.code || m == nil {
			continue
		}
		a := githubAnchor(m[1])
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

func TestDocLinksResolve(t *testing.T) {
	for _, file := range docFiles(t) {
		doc := readDoc(t, file)
		rel, _ := filepath.Rel(repoRoot, file)
		for _, l := range mdLines(doc) {
			if l.code {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(l.text, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.Join(filepath.Dir(file), path)
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s:%d: link %s: %s does not exist", rel, l.n, target, path)
						continue
					}
				}
				if anchor == "" {
					continue
				}
				if !strings.HasSuffix(dest, ".md") {
					t.Errorf("%s:%d: link %s: an anchor into a file that is not Markdown", rel, l.n, target)
					continue
				}
				if !anchors(readDoc(t, dest))[anchor] {
					t.Errorf("%s:%d: link %s: no heading with anchor #%s", rel, l.n, target, anchor)
				}
			}
		}
	}
}

var (
	makeTarget    = regexp.MustCompile(`(?m)^([A-Za-z0-9_-]+):`)
	makeCall      = regexp.MustCompile(`\bmake\s+(.*)`)
	makeGoalToken = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
)

func TestDocMakeTargetsExist(t *testing.T) {
	defined := map[string]bool{}
	for _, m := range makeTarget.FindAllStringSubmatch(readDoc(t, filepath.Join(repoRoot, "Makefile")), -1) {
		defined[m[1]] = true
	}
	for _, file := range docFiles(t) {
		rel, _ := filepath.Rel(repoRoot, file)
		for _, code := range commandText(readDoc(t, file)) {
			for _, call := range makeCall.FindAllStringSubmatch(code, -1) {
				for _, word := range strings.Fields(call[1]) {
					if !makeGoalToken.MatchString(word) {
						break // a variable, a comment, the next command
					}
					if !defined[word] {
						t.Errorf("%s: `make %s`: the Makefile has no target %s", rel, call[1], word)
					}
				}
			}
		}
	}
}

// etcdproofCommands are the `etcdproof run` and `etcdproof cluster ...`
// command lines in a Markdown file's code, continuation lines joined.
func etcdproofCommands(doc string) []string {
	var joined []string
	pending := ""
	for _, code := range commandText(doc) {
		line := pending + code
		if strings.HasSuffix(strings.TrimSpace(line), `\`) {
			pending = strings.TrimSuffix(strings.TrimSpace(line), `\`) + " "
			continue
		}
		pending = ""
		joined = append(joined, line)
	}
	var out []string
	for _, l := range joined {
		if i := strings.Index(l, "etcdproof run "); i >= 0 {
			out = append(out, l[i:])
		}
		if i := strings.Index(l, "etcdproof cluster "); i >= 0 {
			out = append(out, l[i:])
		}
	}
	return out
}

var flagToken = regexp.MustCompile(`^--?([a-z][a-z0-9-]*)`)

// definesFlag tells whether `etcdproof <sub>` defines flag, by parsing it
// alone: an unknown flag is refused as "not defined", a known one gets
// another complaint (a missing value or a missing --profile) and runs nothing.
func definesFlag(t *testing.T, cmd []string, flag string) bool {
	t.Helper()
	var msg strings.Builder
	switch {
	case cmd[0] == "run":
		_, err := parseRun([]string{"--" + flag}, io.Discard)
		if err != nil {
			msg.WriteString(err.Error())
		}
	case cmd[0] == "cluster" && len(cmd) > 1 && slices.Contains([]string{"up", "down", "load"}, cmd[1]):
		clusterCmd(context.Background(), []string{cmd[1], "--" + flag}, &msg)
	default:
		return true // not checked
	}
	return !strings.Contains(msg.String(), "flag provided but not defined")
}

func TestDocEtcdproofFlagsExist(t *testing.T) {
	for _, file := range docFiles(t) {
		rel, _ := filepath.Rel(repoRoot, file)
		for _, command := range etcdproofCommands(readDoc(t, file)) {
			words := strings.Fields(command)[1:] // after "etcdproof"
			sub := words[:1]
			if words[0] == "cluster" && len(words) > 1 {
				sub = words[:2]
			}
			for _, w := range words[len(sub):] {
				if w == "#" || w == "&&" || w == "|" || w == ";" {
					break
				}
				m := flagToken.FindStringSubmatch(w)
				if m == nil {
					continue
				}
				if !definesFlag(t, sub, m[1]) {
					t.Errorf("%s: `etcdproof %s` has no flag --%s (in: %s)", rel, strings.Join(sub, " "), m[1], command)
				}
			}
		}
	}
}

// The README's minimal profile is a profile the suite loads.
func TestREADMEMinimalProfileLoads(t *testing.T) {
	doc := readDoc(t, filepath.Join(repoRoot, "README.md"))
	_, after, ok := strings.Cut(doc, "## A minimal profile")
	if !ok {
		t.Fatal(`README.md has no "## A minimal profile" section`)
	}
	_, block, ok := strings.Cut(after, "```yaml\n")
	if !ok {
		t.Fatal("the minimal profile section has no yaml block")
	}
	block, _, _ = strings.Cut(block, "```")
	path := filepath.Join(t.TempDir(), "my-operator.yaml")
	if err := os.WriteFile(path, []byte(block), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := profile.Load(path); err != nil {
		t.Errorf("the README's minimal profile does not load: %v", err)
	}
}
