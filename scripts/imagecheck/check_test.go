package main

import (
	"io/fs"
	"maps"
	"slices"
	"strings"
	"testing"
)

// A release Dockerfile in the layout etcd 3.6 uses.
const distrolessDockerfile = `ARG ARCH=amd64
FROM --platform=linux/${ARCH} gcr.io/distroless/static-debian12@sha256:0123

ADD etcd /usr/local/bin/
ADD etcdctl /usr/local/bin/
ADD etcdutl /usr/local/bin/

WORKDIR /var/etcd/
WORKDIR /var/lib/etcd/

EXPOSE 2379 2380

# Define default command.
CMD ["/usr/local/bin/etcd"]
`

// A release Dockerfile in the layout etcd 3.5.0-3.5.6 used: a Debian base.
const debianDockerfile = `FROM debian:bullseye-20220328

ADD etcd /usr/local/bin/
ADD etcdctl /usr/local/bin/
RUN mkdir -p /var/etcd/
RUN mkdir -p /var/lib/etcd/
RUN echo 'hosts: files mdns4_minimal [NOTFOUND=return] dns mdns4' >> /etc/nsswitch.conf
EXPOSE 2379 \
  2380
CMD ["/usr/local/bin/etcd"]
`

func parse(t *testing.T, s string) Expectation {
	t.Helper()
	e, err := ParseDockerfile(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestParseDockerfile(t *testing.T) {
	e := parse(t, distrolessDockerfile)
	if e.From != "gcr.io/distroless/static-debian12@sha256:0123" {
		t.Errorf("From = %q", e.From)
	}
	if want := []string{"/usr/local/bin/etcd", "/usr/local/bin/etcdctl", "/usr/local/bin/etcdutl"}; !slices.Equal(e.Files, want) {
		t.Errorf("Files = %q, want %q", e.Files, want)
	}
	if e.WorkingDir != "/var/lib/etcd" || !slices.Equal(e.Dirs, []string{"/var/etcd", "/var/lib/etcd"}) {
		t.Errorf("WorkingDir = %q, Dirs = %q", e.WorkingDir, e.Dirs)
	}
	if !slices.Equal(e.Ports, []string{"2379/tcp", "2380/tcp"}) || !slices.Equal(e.Cmd, []string{"/usr/local/bin/etcd"}) {
		t.Errorf("Ports = %q, Cmd = %q", e.Ports, e.Cmd)
	}
}

func TestParseDockerfileRefusesWhatItCannotCheck(t *testing.T) {
	for _, df := range []string{"ADD etcd /usr/local/bin/\n", "FROM x\nCMD etcd --name a\n", "FROM x\nHEALTHCHECK CMD true\n"} {
		if _, err := ParseDockerfile(strings.NewReader(df)); err == nil {
			t.Errorf("%q parsed without error", df)
		}
	}
}

func distrolessImage() Image {
	dir := File{Mode: fs.ModeDir | 0o755}
	exe := File{Mode: 0o755}
	return Image{
		Cmd: []string{"/usr/local/bin/etcd"}, WorkingDir: "/var/lib/etcd", Ports: []string{"2380/tcp", "2379/tcp"},
		Files: map[string]File{
			"/usr/local/bin/etcd": exe, "/usr/local/bin/etcdctl": exe, "/usr/local/bin/etcdutl": exe,
			"/var/etcd": dir, "/var/lib/etcd": dir, "/tmp": {Mode: fs.ModeDir | fs.ModeSticky | 0o777},
			"/etc/passwd":                        {Content: "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"},
			"/etc/ssl/certs/ca-certificates.crt": {}, "/usr/share/zoneinfo/UTC": {}, "/etc/nsswitch.conf": {}, "/etc/os-release": {Mode: fs.ModeSymlink},
		},
	}
}

func TestCheckAcceptsAFaithfulImage(t *testing.T) {
	if bad := Check(parse(t, distrolessDockerfile), Distroless, distrolessImage()); len(bad) > 0 {
		t.Fatalf("faithful image refused: %q", bad)
	}
}

func TestCheckFindsWhatAKinderImageHas(t *testing.T) {
	for name, tc := range map[string]struct {
		mutate func(*Image)
		want   string
	}{
		"busybox shell":   {func(i *Image) { i.Files["/bin/sh"] = File{Mode: fs.ModeSymlink} }, "/bin/sh exists"},
		"no etcdutl":      {func(i *Image) { delete(i.Files, "/usr/local/bin/etcdutl") }, "/usr/local/bin/etcdutl is missing"},
		"other command":   {func(i *Image) { i.Cmd = []string{"/bin/sh"} }, "CMD is"},
		"no workdir":      {func(i *Image) { i.WorkingDir = "/" }, "working directory"},
		"runs as nonroot": {func(i *Image) { i.User = "65532" }, "user is"},
		"no nonroot user": {func(i *Image) { i.Files["/etc/passwd"] = File{Content: "root:x:0:0::/root:/bin/sh\n"} }, "nonroot"},
		"one port":        {func(i *Image) { i.Ports = []string{"2379/tcp"} }, "exposed ports"},
	} {
		t.Run(name, func(t *testing.T) {
			img := distrolessImage()
			img.Files = maps.Clone(img.Files)
			tc.mutate(&img)
			bad := Check(parse(t, distrolessDockerfile), Distroless, img)
			if !slices.ContainsFunc(bad, func(s string) bool { return strings.Contains(s, tc.want) }) {
				t.Fatalf("problems %q do not mention %q", bad, tc.want)
			}
		})
	}
}

func TestCheckDebianBase(t *testing.T) {
	want := parse(t, debianDockerfile)
	if len(want.Appended["/etc/nsswitch.conf"]) != 1 || !slices.Equal(want.Dirs, []string{"/var/etcd", "/var/lib/etcd"}) {
		t.Fatalf("RUN lines not understood: %+v", want)
	}
	img := distrolessImage()
	img.WorkingDir = ""
	delete(img.Files, "/usr/local/bin/etcdutl")
	bad := Check(want, Debian, img)
	for _, w := range []string{"/bin/sh is missing", "/etc/nsswitch.conf lacks"} {
		if !slices.ContainsFunc(bad, func(s string) bool { return strings.Contains(s, w) }) {
			t.Errorf("problems %q do not mention %q", bad, w)
		}
	}
	img.Files["/bin/sh"], img.Files["/bin/bash"], img.Files["/usr/bin/apt-get"] = File{}, File{}, File{}
	img.Files["/etc/nsswitch.conf"] = File{Content: "hosts: files mdns4_minimal [NOTFOUND=return] dns mdns4\n"}
	if bad := Check(want, Debian, img); len(bad) > 0 {
		t.Fatalf("faithful Debian image refused: %q", bad)
	}
}

// Merged-/usr images reach /bin/sh through /bin -> usr/bin; distroless must
// not gain a shell that way either.
func TestLookupFollowsSymlinks(t *testing.T) {
	img := Image{Files: map[string]File{
		"/":             {Mode: fs.ModeDir},
		"/bin":          {Mode: fs.ModeSymlink, Link: "usr/bin"},
		"/usr":          {Mode: fs.ModeDir},
		"/usr/bin":      {Mode: fs.ModeDir},
		"/usr/bin/dash": {Mode: 0o755},
		"/usr/bin/sh":   {Mode: fs.ModeSymlink, Link: "dash"},
		"/etc/loop":     {Mode: fs.ModeSymlink, Link: "/etc/loop"},
	}}
	if f, ok := img.Lookup("/bin/sh"); !ok || !f.Mode.IsRegular() {
		t.Fatalf("/bin/sh through /bin -> usr/bin: %v %v", f, ok)
	}
	for _, p := range []string{"/bin/bash", "/etc/loop", "/usr/bin/dash/x"} {
		if _, ok := img.Lookup(p); ok {
			t.Errorf("%s found", p)
		}
	}
	bad := Check(Expectation{}, Distroless, img)
	if !slices.ContainsFunc(bad, func(s string) bool { return strings.Contains(s, "/bin/sh exists") }) {
		t.Errorf("a shell behind a symlinked /bin went unnoticed: %q", bad)
	}
}
