package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// served is what the fake proxy serves for testdata/Godeps.json.
var served = []string{
	"github.com/coreos/etcd@v3.2.24+incompatible",
	"github.com/davecgh/go-spew@v1.1.1-0.20170626231645-782f4967f2dc", // after the tag Comment names
	"github.com/modern-go/reflect2@v1.0.1",
	"github.com/peterbourgon/diskv@v2.0.1+incompatible",
	"github.com/vmware/govmomi@v0.17.2-0.20180508155031-e70dd44f80ba", // time from pins.txt
	"golang.org/x/net@v0.0.0-20190812203447-cdfb69ac37fc",             // from the hint module
	"gopkg.in/square/go-jose.v2@v2.1.7-0.20180411045311-89060dee6a84",
	"gopkg.in/yaml.v2@v2.2.4",
	"k8s.io/kube-openapi@v0.0.0-20181109181836-c59034cc13d5", // a fallback
	"github.com/fvbommel/util@v0.0.0-20160121211510-db5cfe13f5cc",
}

// fakeList serves the versions of served, and testdata/hint.mod as the
// go.mod of every hint module.
func fakeList(served []string) lister {
	return func(queries []string) (map[string]string, error) {
		out := map[string]string{}
		for _, q := range queries {
			for _, h := range hintModules {
				if q == h {
					out[q] = "testdata/hint.mod"
				}
			}
			for _, s := range served {
				if q == s {
					out[q] = ""
				}
			}
		}
		return out, nil
	}
}

func TestRun(t *testing.T) {
	builder := t.TempDir()
	if err := run("testdata/Godeps.json", "v1.99.0", "testdata/kubernetes", builder, fakeList(served)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(builder, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	gomod := string(b)
	for _, want := range []string{
		"module etcdproof.local/k8sbuilder\n",
		"\tk8s.io/kubernetes v1.99.0\n",
		"\tk8s.io/api v0.0.0\n",
		"\tk8s.io/kubernetes => ./kubernetes-src\n",
		"\tk8s.io/api => ./kubernetes-src/staging/src/k8s.io/api\n",
		"\tk8s.io/client-go => ./kubernetes-src/staging/src/k8s.io/client-go\n",
		"\tgithub.com/coreos/etcd => github.com/coreos/etcd v3.3.13+incompatible // bumped from v3.2.24+incompatible: ",
		"\tgithub.com/davecgh/go-spew v1.1.1-0.20170626231645-782f4967f2dc\n",
		"\tgithub.com/davecgh/go-spew => github.com/davecgh/go-spew v1.1.1-0.20170626231645-782f4967f2dc\n",
		"\tgithub.com/modern-go/reflect2 => github.com/modern-go/reflect2 v1.0.2 // bumped from v1.0.1: ",
		"\tgithub.com/peterbourgon/diskv => github.com/peterbourgon/diskv v2.0.1+incompatible\n",
		"\tgithub.com/vmware/govmomi => github.com/vmware/govmomi v0.17.2-0.20180508155031-e70dd44f80ba\n",
		"\tgolang.org/x/net => golang.org/x/net v0.0.0-20190812203447-cdfb69ac37fc\n",
		"\tgopkg.in/square/go-jose.v2 => gopkg.in/square/go-jose.v2 v2.1.7-0.20180411045311-89060dee6a84\n",
		"\tgopkg.in/yaml.v2 => gopkg.in/yaml.v2 v2.2.4\n",
		"\tk8s.io/kube-openapi => k8s.io/kube-openapi v0.0.0-20181109181836-c59034cc13d5 // instead of commit fd52d7a69c20: ",
		"\tvbom.ml/util v0.0.0-20160121211510-db5cfe13f5cc\n",
		"\tvbom.ml/util => github.com/fvbommel/util v0.0.0-20160121211510-db5cfe13f5cc // ",
	} {
		if !strings.Contains(gomod, want) {
			t.Errorf("go.mod lacks %q:\n%s", want, gomod)
		}
	}
	if n := strings.Count(gomod, "govmomi =>"); n != 1 {
		t.Errorf("govmomi has %d replace lines, want 1 for its two packages", n)
	}
	for f, want := range map[string]string{
		"kubernetes-src/go.mod":                              "module k8s.io/kubernetes\n",
		"kubernetes-src/staging/src/k8s.io/api/go.mod":       "module k8s.io/api\n",
		"kubernetes-src/staging/src/k8s.io/client-go/go.mod": "module k8s.io/client-go\n",
	} {
		if b, err := os.ReadFile(filepath.Join(builder, f)); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", f, b, err, want)
		}
	}
}

func TestRunMissing(t *testing.T) {
	err := run("testdata/Godeps.json", "v1.99.0", "testdata/kubernetes", t.TempDir(), fakeList(served[2:]))
	if err == nil || !strings.Contains(err.Error(), "github.com/davecgh/go-spew@782f4967f2dc4564575ca782fe2d04090b5faca8") {
		t.Fatalf("err = %v, want one naming go-spew's pin", err)
	}
}

func TestModuleRoot(t *testing.T) {
	for path, want := range map[string]string{
		"github.com/a/b/c/d":                   "github.com/a/b",
		"bitbucket.org/bertimus9/systemstat":   "bitbucket.org/bertimus9/systemstat",
		"golang.org/x/net/http2/hpack":         "golang.org/x/net",
		"gopkg.in/yaml.v2":                     "gopkg.in/yaml.v2",
		"gopkg.in/square/go-jose.v2/jwt":       "gopkg.in/square/go-jose.v2",
		"gopkg.in/natefinch/lumberjack.v2":     "gopkg.in/natefinch/lumberjack.v2",
		"cloud.google.com/go/compute/metadata": "cloud.google.com/go",
		"gonum.org/v1/gonum/mat":               "gonum.org/v1/gonum",
		"k8s.io/utils/exec/testing":            "k8s.io/utils",
		"sigs.k8s.io/kustomize/pkg/fs":         "sigs.k8s.io/kustomize",
		"go.opencensus.io/trace":               "go.opencensus.io",
		"vbom.ml/util/sortorder":               "vbom.ml/util",
	} {
		if got := moduleRoot(path); got != want {
			t.Errorf("moduleRoot(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestSemverLess(t *testing.T) {
	for _, c := range [][2]string{
		{"v1.0.1", "v1.0.2"},
		{"v0.0.0-20171031081856-95c657629925", "v0.0.0-20190812203447-cdfb69ac37fc"},
		{"v1.1.1-0.20170626231645-782f4967f2dc", "v1.1.1"},
		{"v2.0.1+incompatible", "v10.0.0+incompatible"},
		{"v1.0.0-rc.2", "v1.0.0-rc.10"},
	} {
		if !semverLess(c[0], c[1]) || semverLess(c[1], c[0]) {
			t.Errorf("want %s < %s", c[0], c[1])
		}
	}
}
