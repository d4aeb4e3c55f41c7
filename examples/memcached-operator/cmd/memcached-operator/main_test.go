package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/etcdproof/etcdproof/examples/memcached-operator/internal/controller"
)

func TestWatchedNamespaces(t *testing.T) {
	unset := "<unset>"
	cases := []struct {
		watch, pod string
		want       []string
		fails      bool
	}{
		{watch: "", pod: "ops", want: nil},                      // OLM AllNamespaces
		{watch: "ops", pod: "ops", want: []string{"ops"}},       // OwnNamespace
		{watch: "team-a", pod: "ops", want: []string{"team-a"}}, // SingleNamespace
		{watch: "a,b", pod: "ops", want: []string{"a", "b"}},    // MultiNamespace
		{watch: unset, pod: "ops", want: []string{"ops"}},       // config/default: its own
		{watch: unset, pod: unset, want: nil},                   // go run: all
		{watch: " , ", pod: "ops", fails: true},                 // not "all" by mistake
		{watch: "a, b,", pod: unset, want: []string{"a", "b"}},  // spaces and a trailing comma
		{watch: unset, pod: "", want: nil},                      // empty is unset
		{watch: "ops", pod: unset, want: []string{"ops"}},       // no own namespace needed
	}
	for _, c := range cases {
		env := map[string]string{}
		if c.watch != unset {
			env[envWatchNamespace] = c.watch
		}
		if c.pod != unset {
			env[envPodNamespace] = c.pod
		}
		got, err := watchedNamespaces(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		if (err != nil) != c.fails || !slices.Equal(got, c.want) {
			t.Errorf("WATCH_NAMESPACE=%q POD_NAMESPACE=%q: %q, %v; want %q (fails: %v)", c.watch, c.pod, got, err, c.want, c.fails)
		}
	}
}

// The memcached image is named in three places that must agree: the
// operator's default, the manager's Deployment (and so the bundle's
// relatedImages), and the version the image script builds.
func TestMemcachedImageIsTheOneTheScriptBuilds(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "manager", "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict(raw, &d); err != nil {
		t.Fatal(err)
	}
	var configured string
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		if e.Name == envMemcachedImage {
			configured = e.Value
		}
	}
	if configured != controller.DefaultImage {
		t.Errorf("config/manager runs %s=%q, the operator defaults to %q", envMemcachedImage, configured, controller.DefaultImage)
	}

	script, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "scripts", "build-memcached-image.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^MEMCACHED_DEBIAN_VERSION=(\S+)$`).FindSubmatch(script)
	if m == nil {
		t.Fatal("scripts/build-memcached-image.sh sets no MEMCACHED_DEBIAN_VERSION")
	}
	// The script's tag: the Debian version, what a tag cannot hold made '_'.
	built := "etcdproof/memcached:" + regexp.MustCompile(`[^A-Za-z0-9_.-]`).ReplaceAllString(string(m[1]), "_")
	if built != controller.DefaultImage {
		t.Errorf("scripts/build-memcached-image.sh builds %s, the operator defaults to %s", built, controller.DefaultImage)
	}
}
