package framework

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// ArtifactPath returns a path under the report dir, creating its folder.
func (e *Env) ArtifactPath(parts ...string) string {
	p := filepath.Join(append([]string{e.Opts.ReportDir}, parts...)...)
	_ = os.MkdirAll(filepath.Dir(p), 0o755)
	return p
}

// WriteJSON writes any value as indented JSON into the report dir.
func (e *Env) WriteJSON(v any, parts ...string) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(e.ArtifactPath(parts...), b, 0o644)
}

// WriteYAML writes any value as YAML into the report dir.
func (e *Env) WriteYAML(v any, parts ...string) error {
	b, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(e.ArtifactPath(parts...), b, 0o644)
}

// DumpNamespace saves pods, events, the CR and the operator's logs, for a
// failed spec.
func (e *Env) DumpNamespace(ctx context.Context, namespace, dir string) {
	if pods, err := e.Kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{}); err == nil {
		_ = e.WriteYAML(pods, dir, "pods.yaml")
	}
	if ev, err := e.Kube.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{}); err == nil {
		_ = e.WriteYAML(ev, dir, "events.yaml")
	}
	if crs, err := e.crResource().Namespace(namespace).List(ctx, metav1.ListOptions{}); err == nil {
		_ = e.WriteYAML(crs, dir, "clusters.yaml")
	}
	if e.Profile.Operator.Deployment != "" {
		out, _ := e.Kubectl(ctx, "logs", "-n", e.Profile.Operator.Namespace, "deploy/"+e.Profile.Operator.Deployment, "--all-containers", "--tail=2000")
		_ = os.WriteFile(e.ArtifactPath(dir, "operator.log"), []byte(out), 0o644)
	}
}

// SafeName turns a spec text into a folder name.
func SafeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, strings.ToLower(s))
}
