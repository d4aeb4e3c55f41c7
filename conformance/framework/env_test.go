package framework

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
