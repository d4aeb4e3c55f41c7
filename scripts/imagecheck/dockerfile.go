package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"
)

// Expectation is what a Dockerfile says its image holds and how it starts.
type Expectation struct {
	// From is the base image reference, flags dropped.
	From string
	// Files are the absolute paths ADD and COPY put in the image.
	Files []string
	// Dirs are directories WORKDIR or `RUN mkdir -p` create.
	Dirs []string
	// WorkingDir is the last WORKDIR ("" when none).
	WorkingDir string
	// Ports are the EXPOSEd ports as "2379/tcp".
	Ports []string
	// Cmd and Entrypoint are the exec forms of CMD and ENTRYPOINT.
	Cmd, Entrypoint []string
	// User is the last USER ("" is root).
	User string
	// Appended maps a file to lines `RUN echo '...' >> file` add to it.
	Appended map[string][]string
	// Unverified lists RUN commands whose effect is not checked.
	Unverified []string
}

var (
	mkdirRun  = regexp.MustCompile(`^mkdir\s+-p\s+(\S+)$`)
	appendRun = regexp.MustCompile(`^echo\s+'([^']*)'\s+>>\s+(\S+)$`)
)

// ParseDockerfile reads the instructions this checker understands: FROM,
// ADD, COPY, WORKDIR, EXPOSE, CMD, ENTRYPOINT, USER and simple RUNs. ARG,
// ENV and LABEL are accepted and not checked.
func ParseDockerfile(r io.Reader) (Expectation, error) {
	e := Expectation{Appended: map[string][]string{}}
	lines, err := logicalLines(r)
	if err != nil {
		return e, err
	}
	for _, line := range lines {
		instr, args, _ := strings.Cut(line, " ")
		args = strings.TrimSpace(args)
		switch strings.ToUpper(instr) {
		case "FROM":
			for f := range strings.FieldsSeq(args) {
				if !strings.HasPrefix(f, "--") {
					e.From = f
					break
				}
			}
		case "ADD", "COPY":
			f := strings.Fields(args)
			if len(f) < 2 {
				return e, fmt.Errorf("%s needs a source and a destination: %q", instr, line)
			}
			dest := f[len(f)-1]
			for _, src := range f[:len(f)-1] {
				if strings.HasPrefix(src, "--") {
					continue
				}
				p := dest
				if strings.HasSuffix(dest, "/") || len(f) > 2 {
					p = path.Join(dest, path.Base(src))
				}
				e.Files = append(e.Files, p)
			}
		case "WORKDIR":
			e.WorkingDir = path.Clean(args)
			e.Dirs = append(e.Dirs, e.WorkingDir)
		case "EXPOSE":
			for p := range strings.FieldsSeq(args) {
				if !strings.Contains(p, "/") {
					p += "/tcp"
				}
				e.Ports = append(e.Ports, p)
			}
		case "CMD", "ENTRYPOINT":
			var argv []string
			if err := json.Unmarshal([]byte(args), &argv); err != nil {
				return e, fmt.Errorf("%s is not in exec form: %q", instr, line)
			}
			if strings.EqualFold(instr, "CMD") {
				e.Cmd = argv
			} else {
				e.Entrypoint = argv
			}
		case "USER":
			e.User = args
		case "RUN":
			if m := mkdirRun.FindStringSubmatch(args); m != nil {
				e.Dirs = append(e.Dirs, path.Clean(m[1]))
			} else if m := appendRun.FindStringSubmatch(args); m != nil {
				e.Appended[m[2]] = append(e.Appended[m[2]], m[1])
			} else {
				e.Unverified = append(e.Unverified, args)
			}
		case "ARG", "ENV", "LABEL":
		default:
			return e, fmt.Errorf("unsupported instruction %q", line)
		}
	}
	if e.From == "" {
		return e, fmt.Errorf("no FROM")
	}
	return e, nil
}

// logicalLines joins continued lines and drops comments and blank lines.
func logicalLines(r io.Reader) ([]string, error) {
	var out []string
	var cur strings.Builder
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(cont + " ")
			continue
		}
		cur.WriteString(line)
		out = append(out, cur.String())
		cur.Reset()
	}
	return out, sc.Err()
}
