package specs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/profile"
)

// The cleanup check and the suite's teardown both ask for the uninstall:
// the steps run until they succeed once, then never again.
func TestUninstallRunsOnceItSucceeded(t *testing.T) {
	ran := filepath.Join(t.TempDir(), "ran")
	fail := filepath.Join(t.TempDir(), "fail")
	step := profile.Step{Run: []string{"sh", "-c", `echo x >> "$0"; test ! -e "$1"`, ran, fail}}
	s := &Suite{Env: &framework.Env{Profile: &profile.Profile{Uninstall: []profile.Step{step}}}}
	r := &runState{get: func() *Suite { return s }}
	runs := func() int {
		b, _ := os.ReadFile(ran)
		return strings.Count(string(b), "x")
	}

	if err := os.WriteFile(fail, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.uninstall(context.Background()); err == nil || r.isUninstalled() {
		t.Fatalf("a failed uninstall: err %v, uninstalled %v; want an error, not uninstalled", err, r.isUninstalled())
	}
	if err := os.Remove(fail); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := r.uninstall(context.Background()); err != nil {
			t.Fatalf("uninstall %d: %v", i+1, err)
		}
	}
	if !r.isUninstalled() || runs() != 2 {
		t.Errorf("uninstalled %v after %d runs of the steps; want uninstalled after 2 (one failed, one succeeded)", r.isUninstalled(), runs())
	}
}
