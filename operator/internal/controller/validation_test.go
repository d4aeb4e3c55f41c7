package controller_test

import (
	"context"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
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

func TestCRDRefusesDowngradeAndSkippedMinor(t *testing.T) {
	needAPIServer(t)
	if !celRules(t) {
		t.Skip("CEL transition rules need Kubernetes 1.25+; older clusters rely on the operator's own refusal (TestOperatorRefusesSkippingAMinorRelease)")
	}
	ctx := context.Background()
	ns := newNamespace(t)
	tests := []struct {
		name, from, to, wantMessage string
	}{
		{"downgrade", "3.5.21", "3.4.37", "downgrade refused"},
		{"patch downgrade", "3.5.21", "3.5.17", "downgrade refused"},
		{"3.4 to 3.6", "3.4.37", "3.6.5", "version skew refused"},
		{"one minor up is fine", "3.4.37", "3.5.21", ""},
		{"patch up is fine", "3.5.17", "3.5.21", ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(ns, "v", 3, tt.from)
			c.Name = "v-" + string(rune('a'+i))
			c.Spec.Paused = true // the objects only
			if err := k8s.Create(ctx, c); err != nil {
				t.Fatal(err)
			}
			c.Spec.Version = tt.to
			err := k8s.Update(ctx, c)
			switch {
			case tt.wantMessage == "" && err != nil:
				t.Fatalf("update %s→%s refused: %v", tt.from, tt.to, err)
			case tt.wantMessage != "" && err == nil:
				t.Fatalf("update %s→%s accepted", tt.from, tt.to)
			case tt.wantMessage != "" && !strings.Contains(err.Error(), tt.wantMessage):
				t.Fatalf("error %q does not contain %q", err, tt.wantMessage)
			case err != nil:
				t.Logf("refused as it should be: %v", err)
			}
			_ = k8s.Delete(ctx, c, client.PropagationPolicy("Background"))
		})
	}
}
