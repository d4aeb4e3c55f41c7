package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

// The CRD's validation speaks to users: each bad value must be refused with
// a message that says what is wrong.
func TestCRDRefusesBadClusters(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	// Without CEL (Kubernetes < 1.25) the OpenAPI checks still refuse the
	// same values, with the API server's generic wording.
	cel := celRules(t)
	tests := []struct {
		name, version, repository string
		size                      int
		wantMessage, wantOpenAPI  string
	}{
		{"size 0", "3.5.21", "", 0, "spec.size must be at least 1", "spec.size in body should be greater than or equal to 1"},
		{"size -1", "3.5.21", "", -1, "spec.size must be at least 1", "spec.size in body should be greater than or equal to 1"},
		{"size 8", "3.5.21", "", 8, "spec.size must be at most 7", "spec.size in body should be less than or equal to 7"},
		{"size 9", "3.5.21", "", 9, "spec.size must be at most 7", "spec.size in body should be less than or equal to 7"},
		{"version latest", "latest", "", 3, "spec.version must be a semantic version", "spec.version in body should match"},
		{"version 3.x", "3.x", "", 3, "spec.version must be a semantic version", "spec.version in body should match"},
		{"empty repository", "3.5.21", "\"\"", 3, "spec.repository must not be empty", "spec.repository in body should be at least 1 chars long"},
	}
	for i, tt := range tests {
		if !cel {
			tt.wantMessage = tt.wantOpenAPI
		}
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(ns, "bad", tt.size, tt.version)
			c.Name = "bad-" + string(rune('a'+i))
			obj := toUnstructured(t, c)
			if tt.repository != "" {
				if err := setNested(obj, "", "spec", "repository"); err != nil {
					t.Fatal(err)
				}
			}
			err := k8s.Create(ctx, obj)
			if err == nil {
				t.Fatalf("created a cluster with %s", tt.name)
			}
			if !strings.Contains(err.Error(), tt.wantMessage) {
				t.Fatalf("error %q does not contain %q", err, tt.wantMessage)
			}
			t.Logf("refused as it should be: %v", err)
		})
	}
}

// TestCRDVersionChanges checks the CRD's side of the shared table of version
// changes; the operator's side is plan.TestVersionChanges.
func TestCRDVersionChanges(t *testing.T) {
	needAPIServer(t)
	if !celRules(t) {
		t.Skip("CEL transition rules need Kubernetes 1.25+; older clusters rely on the operator's own refusal (TestOperatorRefusesSkippingAMinorRelease)")
	}
	ctx := context.Background()
	ns := newNamespace(t)
	words := map[string]string{
		conditions.ReasonDowngradeRefused:   "downgrade refused",
		conditions.ReasonVersionSkewRefused: "version skew refused",
		conditions.ReasonOldPatchRefused:    "upgrade to 3.6 refused",
	}
	for i, vc := range plan.VersionChanges {
		t.Run(vc.Name, func(t *testing.T) {
			c := newCluster(ns, fmt.Sprintf("v-%d", i), 3, vc.OldSpec)
			c.Spec.Paused = true // the objects only
			if err := k8s.Create(ctx, c); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = k8s.Delete(ctx, c, client.PropagationPolicy("Background")) }()
			if vc.Current != "" {
				c.Status.CurrentVersion = vc.Current
				if err := k8s.Status().Update(ctx, c); err != nil {
					t.Fatalf("reporting currentVersion %s: %v", vc.Current, err)
				}
			}
			c.Spec.Version = vc.NewSpec
			err := k8s.Update(ctx, c)
			switch want := words[vc.Refusal]; {
			case want == "" && err != nil:
				t.Fatalf("%s→%s (members on %q) refused: %v", vc.OldSpec, vc.NewSpec, vc.Current, err)
			case want != "" && err == nil:
				t.Fatalf("%s→%s (members on %q) accepted, want %s", vc.OldSpec, vc.NewSpec, vc.Current, want)
			case want != "" && !strings.Contains(err.Error(), want):
				t.Fatalf("error %q does not contain %q", err, want)
			case err != nil:
				t.Logf("refused as it should be: %v", err)
			}
		})
	}
}

// An update that keeps spec.version is never refused for it, even where
// spec.version and status.currentVersion are further apart than a change
// may go (a version refused by the operator on a cluster without CEL, or
// set before the operator reported one): status writes and scaling go on.
func TestCRDKeepsAnUnchangedVersion(t *testing.T) {
	needAPIServer(t)
	if !celRules(t) {
		t.Skip("CEL transition rules need Kubernetes 1.25+")
	}
	ctx := context.Background()
	ns := newNamespace(t)
	c := newCluster(ns, "skewed", 3, "3.6.16")
	c.Spec.Paused = true
	if err := k8s.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	c.Status.CurrentVersion = "3.4.37"
	if err := k8s.Status().Update(ctx, c); err != nil {
		t.Fatalf("status write: %v", err)
	}
	c.Spec.Size = 5
	if err := k8s.Update(ctx, c); err != nil {
		t.Fatalf("scaling: %v", err)
	}
	c.Status.ReadyMembers = "0/5"
	if err := k8s.Status().Update(ctx, c); err != nil {
		t.Fatalf("second status write: %v", err)
	}
}
