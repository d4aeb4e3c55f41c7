package framework

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/etcdproof/etcdproof/conformance/profile"
)

func TestStepArgs(t *testing.T) {
	e := &Env{
		Opts:    Options{Kubectl: "/bin/kubectl", Kubeconfig: "/tmp/kc", Context: "kind-x"},
		Profile: &profile.Profile{Operator: profile.Operator{Namespace: "ops"}},
	}
	tests := []struct {
		name    string
		run     []string
		want    []string
		wantErr []string // substrings of the error
	}{
		{
			name: "the four fields",
			run:  []string{"{{.Kubectl}}", "--kubeconfig={{.Kubeconfig}}", "--context={{.Context}}", "-n", "{{.Namespace}}", "get", "pods"},
			want: []string{"/bin/kubectl", "--kubeconfig=/tmp/kc", "--context=kind-x", "-n", "ops", "get", "pods"},
		},
		{
			name: "template syntax as in cluster templates",
			run:  []string{"sh", "-c", `k() { "{{ .Kubectl }}" ${KUBE_CONTEXT:+--context "$KUBE_CONTEXT"} "$@"; }{{if .Context}} # {{.Context}}{{end}}`},
			want: []string{"sh", "-c", `k() { "/bin/kubectl" ${KUBE_CONTEXT:+--context "$KUBE_CONTEXT"} "$@"; } # kind-x`},
		},
		{
			name: "plain arguments unchanged",
			run:  []string{"sh", "-c", `echo x >> "$0"; test ! -e "$1"`, "{.items[*].metadata.name}"},
			want: []string{"sh", "-c", `echo x >> "$0"; test ! -e "$1"`, "{.items[*].metadata.name}"},
		},
		{
			name:    "unknown field",
			run:     []string{"{{.Kubectl}}", "delete", "ns", "{{.OperatorNamespace}}"},
			wantErr: []string{"step 2 (run {{.Kubectl}})", `argument 4 "{{.OperatorNamespace}}"`, "OperatorNamespace"},
		},
		{
			name:    "syntax error, first line of a script",
			run:     []string{"sh", "-c", "set -e\n{{.Kubectl}} get {{.Namespace"},
			wantErr: []string{"step 2 (run sh)", `argument 3 "set -e"...`, "unclosed action"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps := []profile.Step{{Apply: "crds.yaml"}, {Run: tt.run}}
			got, err := e.stepArgs(steps)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("stepArgs = %q, want an error", got)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got[0] != nil || strings.Join(got[1], "\x00") != strings.Join(tt.want, "\x00") {
				t.Errorf("stepArgs = %q, want [[] %q]", got, tt.want)
			}
		})
	}
}

// A template error in any step stops the steps before the first runs.
func TestRunStepsRendersEveryStepFirst(t *testing.T) {
	ran := filepath.Join(t.TempDir(), "ran")
	e := &Env{Profile: &profile.Profile{}}
	err := e.RunSteps(context.Background(), []profile.Step{
		{Run: []string{"sh", "-c", `echo x > "$0"`, ran}},
		{Run: []string{"sh", "-c", "{{.Nope}}"}},
	})
	if err == nil || !strings.Contains(err.Error(), "step 2 (run sh), argument 3") {
		t.Errorf("RunSteps error = %v, want one naming step 2, argument 3", err)
	}
	if _, statErr := os.Stat(ran); statErr == nil {
		t.Error("step 1 ran although step 2's arguments do not render")
	}
}

// A step may need a resource, not only its group/version: Kubernetes 1.16 to
// 1.21 serve extensions/v1beta1 (Ingresses) but no longer its Deployments,
// which the book's manifests use. A profile none of whose steps applies
// fails, naming what each step needs, instead of installing nothing.
func TestStepsConditionedOnAServedResource(t *testing.T) {
	kube := kubefake.NewClientset()
	kube.Resources = []*metav1.APIResourceList{
		{GroupVersion: "extensions/v1beta1", APIResources: []metav1.APIResource{{Name: "ingresses"}}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{{Name: "deployments"}}},
	}
	e := &Env{Profile: &profile.Profile{}, Disc: kube.Discovery(), ServerVersion: "v1.21.14"}
	for cond, want := range map[string]bool{
		"extensions/v1beta1": true, "extensions/v1beta1/ingresses": true, "extensions/v1beta1/deployments": false,
		"apps/v1/deployments": true, "apiextensions.k8s.io/v1beta1": false,
	} {
		if got := e.Served(cond); got != want {
			t.Errorf("Served(%q) = %v, want %v", cond, got, want)
		}
	}
	ran := filepath.Join(t.TempDir(), "ran")
	err := e.RunSteps(context.Background(), []profile.Step{
		{Run: []string{"sh", "-c", `echo x > "$0"`, ran}, IfServed: "extensions/v1beta1/deployments"},
	})
	if err == nil || !strings.Contains(err.Error(), "no step applies to this cluster (Kubernetes v1.21.14): step 1 needs extensions/v1beta1/deployments served") {
		t.Errorf("RunSteps error = %v, want one saying no step applies and what step 1 needs", err)
	}
	if _, statErr := os.Stat(ran); statErr == nil {
		t.Error("a step ran although the resource it needs is not served")
	}
	if err := e.RunSteps(context.Background(), nil); err != nil {
		t.Errorf("no steps at all: %v", err)
	}
}
