package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// moduleRoot is the repository root of an import path, as GOPATH-era
// tools (golang.org/x/tools/go/vcs) found it, for the hosts Kubernetes used.
func moduleRoot(path string) string {
	elems := strings.Split(path, "/")
	n := 2 // vanity hosts: k8s.io/x, go.uber.org/x, google.golang.org/x, ...
	switch {
	case elems[0] == "go.opencensus.io":
		n = 1
	case elems[0] == "github.com", elems[0] == "bitbucket.org", elems[0] == "gitlab.com",
		strings.HasPrefix(path, "golang.org/x/"), strings.HasPrefix(path, "gonum.org/v1/"),
		strings.HasPrefix(path, "honnef.co/go/"), strings.HasPrefix(path, "contrib.go.opencensus.io/"):
		n = 3
	case elems[0] == "gopkg.in" && len(elems) > 1 && !gopkgVersion.MatchString(elems[1]):
		n = 3 // gopkg.in/user/pkg.vN
	}
	if len(elems) < n {
		n = len(elems)
	}
	return strings.Join(elems[:n], "/")
}

var (
	gopkgVersion = regexp.MustCompile(`\.v[0-9]+$`)
	semverTag    = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)
	describe     = regexp.MustCompile(`^(v[0-9]+)(\.[0-9]+\.)([0-9]+)-[0-9]+-g[0-9a-f]+$`)
	pseudo       = regexp.MustCompile(`\bv[0-9]+\.[0-9]+\.[0-9]+-(?:[0-9A-Za-z.]+\.)?([0-9]{14})-([0-9a-f]{12})(?:\+incompatible)?\b`)
)

// candidates are the versions that may name m's commit, best first.
func candidates(m *module, index map[string][]string) []string {
	var c []string
	if semverTag.MatchString(m.Comment) {
		c = append(c, incompatible(m.Path, m.Comment))
	}
	for _, v := range index[short(m.Rev)] {
		c = append(c, v)
		s := pseudo.FindStringSubmatch(v)
		c = append(c, "v0.0.0-"+s[1]+"-"+s[2]) // valid whatever the tags
		// The canonical pseudo-version after the tag that git describe saw.
		if d := describe.FindStringSubmatch(m.Comment); d != nil {
			z, _ := strconv.Atoi(d[3])
			c = append(c, incompatible(m.Path, fmt.Sprintf("%s%s%d-0.%s-%s", d[1], d[2], z+1, s[1], s[2])))
		}
	}
	if f, ok := fallbacks[m.Path+"@"+short(m.Rev)]; ok {
		c = append(c, f.To)
	}
	return c
}

// incompatible marks a v2+ version: in GOPATH days, no repository had a
// go.mod. (gopkg.in paths end in their major version.)
func incompatible(path, v string) string {
	if strings.HasPrefix(v, "v0.") || strings.HasPrefix(v, "v1.") || strings.HasPrefix(path, "gopkg.in/") {
		return v
	}
	return v + "+incompatible"
}

func short(rev string) string { return rev[:min(len(rev), 12)] }

// semverLess compares two semantic versions (build metadata ignored).
func semverLess(a, b string) bool {
	pa, pb := splitSemver(a), splitSemver(b)
	for i := 0; i < 3; i++ {
		if pa.num[i] != pb.num[i] {
			return pa.num[i] < pb.num[i]
		}
	}
	switch {
	case pa.pre == pb.pre:
		return false
	case pa.pre == "":
		return false
	case pb.pre == "":
		return true
	}
	xa, xb := strings.Split(pa.pre, "."), strings.Split(pb.pre, ".")
	for i := 0; i < len(xa) && i < len(xb); i++ {
		if xa[i] == xb[i] {
			continue
		}
		na, ea := strconv.ParseUint(xa[i], 10, 64)
		nb, eb := strconv.ParseUint(xb[i], 10, 64)
		switch {
		case ea == nil && eb == nil:
			return na < nb
		case ea == nil || eb == nil:
			return ea == nil // numeric identifiers sort first
		}
		return xa[i] < xb[i]
	}
	return len(xa) < len(xb)
}

type semver struct {
	num [3]uint64
	pre string
}

func splitSemver(v string) semver {
	var s semver
	v, _, _ = strings.Cut(strings.TrimPrefix(v, "v"), "+")
	v, s.pre, _ = strings.Cut(v, "-")
	for i, f := range strings.SplitN(v, ".", 3) {
		s.num[i], _ = strconv.ParseUint(f, 10, 64)
	}
	return s
}
