package main

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
)

// Image is what a built image holds: its config and its files.
type Image struct {
	Cmd, Entrypoint []string
	WorkingDir      string
	User            string
	Ports           []string
	// Files maps an absolute path to its entry.
	Files map[string]File
}

// File is one entry of the image's filesystem.
type File struct {
	Mode fs.FileMode
	// Link is a symbolic link's target.
	Link string
	// Content is kept for small regular files under /etc.
	Content string
}

// Lookup finds p as a process in the container would: following symbolic
// links in every component (merged-/usr images have /bin -> usr/bin).
func (img Image) Lookup(p string) (File, bool) {
	resolved := "/"
	rest := strings.Split(strings.Trim(path.Clean(p), "/"), "/")
	for hops := 0; len(rest) > 0 && hops < 40; {
		next := path.Join(resolved, rest[0])
		rest = rest[1:]
		f, ok := img.Files[next]
		if !ok && len(rest) == 0 {
			return File{}, false
		}
		// A directory a tar lists only through its files is a plain one.
		if !ok || f.Mode&fs.ModeSymlink == 0 || f.Link == "" {
			resolved = next
			continue
		}
		hops++
		target := f.Link
		if !path.IsAbs(target) {
			target = path.Join(resolved, target)
		}
		rest = append(strings.Split(strings.Trim(path.Clean(target), "/"), "/"), rest...)
		resolved = "/"
	}
	if len(rest) > 0 {
		return File{}, false
	}
	f, ok := img.Files[resolved]
	return f, ok
}

// Shape is what the base image the upstream Dockerfile starts FROM implies.
type Shape string

const (
	// Distroless is gcr.io/distroless/static: no shell, no package manager.
	Distroless Shape = "distroless"
	// Debian is a Debian image such as debian:bullseye: a shell and apt.
	Debian Shape = "debian"
)

// ShapeOf tells the shape from the local base image's name.
func ShapeOf(base string) (Shape, error) {
	switch {
	case strings.Contains(base, "distroless"):
		return Distroless, nil
	case strings.Contains(base, "debian"):
		return Debian, nil
	}
	return "", fmt.Errorf("unknown base %q: want a distroless or debian image", base)
}

// shells are the paths through which a container could run a shell script.
var shells = []string{"/bin/sh", "/bin/bash", "/bin/dash", "/bin/busybox", "/usr/bin/sh", "/usr/bin/bash"}

// Check lists every way img differs from what the Dockerfile and the base's
// shape say; empty means the image is faithful.
func Check(want Expectation, shape Shape, img Image) []string {
	var bad []string
	add := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	if !slices.Equal(want.Cmd, img.Cmd) {
		add("CMD is %q, the Dockerfile says %q", img.Cmd, want.Cmd)
	}
	if !slices.Equal(want.Entrypoint, img.Entrypoint) {
		add("ENTRYPOINT is %q, the Dockerfile says %q", img.Entrypoint, want.Entrypoint)
	}
	if want.WorkingDir != "" && path.Clean(img.WorkingDir) != want.WorkingDir {
		add("working directory is %q, the Dockerfile says %q", img.WorkingDir, want.WorkingDir)
	}
	if u := strings.TrimSpace(img.User); u != want.User && !(want.User == "" && (u == "0" || u == "root")) {
		add("user is %q, the Dockerfile says %q", img.User, want.User)
	}
	if got, w := sorted(img.Ports), sorted(want.Ports); !slices.Equal(got, w) {
		add("exposed ports are %v, the Dockerfile says %v", got, w)
	}
	for _, f := range want.Files {
		e, ok := img.Lookup(f)
		switch {
		case !ok:
			add("%s is missing", f)
		case !e.Mode.IsRegular() || e.Mode.Perm()&0o111 == 0:
			add("%s is not an executable file (%s)", f, e.Mode)
		}
	}
	for _, d := range want.Dirs {
		if e, ok := img.Lookup(d); !ok || !e.Mode.IsDir() {
			add("directory %s is missing", d)
		}
	}
	for file, lines := range want.Appended {
		for _, l := range lines {
			if f, _ := img.Lookup(file); !strings.Contains(f.Content, l) {
				add("%s lacks the line %q", file, l)
			}
		}
	}
	for _, r := range want.Unverified {
		add("RUN %q: its effect is not checked; teach imagecheck what it does", r)
	}
	switch shape {
	case Distroless:
		for _, s := range append(slices.Clone(shells), "/usr/bin/apt-get", "/usr/bin/dpkg") {
			if _, ok := img.Lookup(s); ok {
				add("%s exists, but the upstream base has no shell or package manager", s)
			}
		}
		if passwd, _ := img.Lookup("/etc/passwd"); !strings.Contains(passwd.Content, "nonroot:x:65532:65532:") {
			add("/etc/passwd lacks distroless' nonroot user (65532)")
		}
		for _, f := range []string{"/etc/ssl/certs/ca-certificates.crt", "/usr/share/zoneinfo/UTC", "/etc/nsswitch.conf", "/etc/os-release"} {
			if _, ok := img.Lookup(f); !ok {
				add("%s is missing (distroless ships it)", f)
			}
		}
		if e, ok := img.Lookup("/tmp"); !ok || e.Mode&fs.ModeSticky == 0 || e.Mode.Perm() != 0o777 {
			add("/tmp is not a world-writable sticky directory")
		}
	case Debian:
		for _, f := range []string{"/bin/sh", "/bin/bash", "/usr/bin/apt-get", "/etc/os-release"} {
			if _, ok := img.Lookup(f); !ok {
				add("%s is missing, but Debian images have it", f)
			}
		}
	}
	return bad
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}
