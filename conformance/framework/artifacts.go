package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
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
		_ = os.WriteFile(e.ArtifactPath(dir, "operator.log"), []byte(e.operatorLogs(ctx, operatorLogTail)), 0o644)
	}
}

// operatorLogTail is how many lines of each operator container's log a
// failed spec keeps.
const operatorLogTail = 2000

// operatorLogs is the tail of every container's log in every pod of the
// operator's Deployment, each under a header naming it, through the API
// (no kubectl). What cannot be read is said in place of the log.
func (e *Env) operatorLogs(ctx context.Context, tail int64) string {
	ns, name := e.Profile.Operator.Namespace, e.Profile.Operator.Deployment
	d, err := e.Kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Sprintf("cannot read deployment %s/%s: %v\n", ns, name, err)
	}
	selector, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return fmt.Sprintf("deployment %s/%s: %v\n", ns, name, err)
	}
	pods, err := e.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return fmt.Sprintf("cannot list the pods of deployment %s/%s: %v\n", ns, name, err)
	}
	var b strings.Builder
	for _, p := range pods.Items {
		for _, c := range p.Spec.Containers {
			fmt.Fprintf(&b, "==> pod %s, container %s <==\n", p.Name, c.Name)
			raw, err := e.Kube.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{Container: c.Name, TailLines: &tail}).DoRaw(ctx)
			if err != nil {
				fmt.Fprintf(&b, "cannot read its log: %v\n", err)
				continue
			}
			b.Write(raw)
		}
	}
	return b.String()
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
