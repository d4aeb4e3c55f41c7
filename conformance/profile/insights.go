package profile

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Insights claims the Operator Framework's Deep Insights (level 4) as the
// insights check observes it: the operator records Kubernetes Events on
// the cluster's CR about what it does to the cluster ("Custom Resources
// emit custom events"), and serves Prometheus metrics about the cluster
// it manages whose values agree with etcd ("Operator exposes health and
// performance metrics about the Operand"). Events need no setting: they
// are read from the API. In YAML:
//
//	capabilities:
//	  insights:
//	    metrics:
//	      port: 8080
//	      path: /metrics
//	      clusterMembers:
//	        metric: etcd_operator_cluster_members
//	        labels: {namespace: "{{ .Namespace }}", cluster: "{{ .Name }}", state: ready}
type Insights struct {
	Metrics InsightsMetrics `json:"metrics"`
}

// InsightsMetrics says where the operator serves its metrics and which of
// them counts a cluster's members.
type InsightsMetrics struct {
	// Port is the operator pod's port of the metrics endpoint, reached
	// through a port-forward (so a listener on the pod's 127.0.0.1 is
	// reached too). The endpoint must speak plain HTTP and Prometheus'
	// text format.
	Port int `json:"port"`
	// Path is the endpoint's path; default /metrics.
	Path string `json:"path,omitempty"`
	// ClusterMembers picks the samples that count one cluster's members:
	// they must sum to the number of members etcd lists once the cluster
	// is whole.
	ClusterMembers MetricSelector `json:"clusterMembers"`
}

// DefaultMetricsPath is where Prometheus looks unless told otherwise.
const DefaultMetricsPath = "/metrics"

// MetricsPath is Path or its default.
func (m InsightsMetrics) MetricsPath() string {
	if m.Path == "" {
		return DefaultMetricsPath
	}
	return m.Path
}

// MetricSelector picks samples of one metric by label equality, as the
// PromQL selector metric{label="value",...} does: a sample matches when it
// carries every label given with that value (other labels are free). Label
// values are templates over the cluster (TemplateData's Name and
// Namespace).
type MetricSelector struct {
	Metric string            `json:"metric"`
	Labels map[string]string `json:"labels,omitempty"`
}

// String prints the selector as PromQL writes it, labels sorted.
func (s MetricSelector) String() string {
	if len(s.Labels) == 0 {
		return s.Metric
	}
	var matchers []string
	for _, name := range slices.Sorted(maps.Keys(s.Labels)) {
		matchers = append(matchers, fmt.Sprintf("%s=%q", name, s.Labels[name]))
	}
	return s.Metric + "{" + strings.Join(matchers, ",") + "}"
}

// ClusterMembersOf renders the member selector for one cluster.
func (m InsightsMetrics) ClusterMembersOf(cluster, namespace string) (MetricSelector, error) {
	out := MetricSelector{Metric: m.ClusterMembers.Metric, Labels: map[string]string{}}
	data := TemplateData{Name: cluster, Namespace: namespace}
	for name, tpl := range m.ClusterMembers.Labels {
		v, err := Render(tpl, data)
		if err != nil {
			return MetricSelector{}, fmt.Errorf("capabilities.insights.metrics.clusterMembers.labels.%s: %w", name, err)
		}
		out.Labels[name] = v
	}
	return out, nil
}

// Prometheus' names (the classic, not the UTF-8, ones: what every exporter
// of an operator uses and what a selector can name unquoted).
var (
	metricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	labelName  = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
)

// validateInsights checks capabilities.insights: an endpoint the suite can
// reach, a selector that names a metric and renders for a cluster, and
// the member replacement the check makes the operator act on.
func (p *Profile) validateInsights() []error {
	in := p.Capabilities.Insights
	if in == nil {
		return nil
	}
	const field = "capabilities.insights"
	var errs []error
	if !p.Capabilities.DeadMemberReplacement {
		errs = append(errs, errors.New("  "+field+": the insights check watches the operator replace a deleted member, so it also needs capabilities.deadMemberReplacement"))
	}
	m := in.Metrics
	if m.Port <= 0 || m.Port > 65535 {
		errs = append(errs, fmt.Errorf("  %s.metrics.port: %d is not a TCP port (the operator pod's port of its metrics endpoint)", field, m.Port))
	}
	if m.Path != "" && !strings.HasPrefix(m.Path, "/") {
		errs = append(errs, fmt.Errorf("  %s.metrics.path: %q must start with / (default %s)", field, m.Path, DefaultMetricsPath))
	}
	sel := m.ClusterMembers
	switch {
	case sel.Metric == "":
		errs = append(errs, fmt.Errorf("  %s.metrics.clusterMembers.metric: required: the metric that counts a cluster's members, e.g. etcd_operator_cluster_members", field))
	case strings.ContainsAny(sel.Metric, "{}="):
		errs = append(errs, fmt.Errorf("  %s.metrics.clusterMembers.metric: %q is not a Prometheus metric name (give the labels under clusterMembers.labels)", field, sel.Metric))
	case !metricName.MatchString(sel.Metric):
		errs = append(errs, fmt.Errorf("  %s.metrics.clusterMembers.metric: %q is not a Prometheus metric name", field, sel.Metric))
	}
	for _, name := range slices.Sorted(maps.Keys(sel.Labels)) {
		if !labelName.MatchString(name) {
			errs = append(errs, fmt.Errorf("  %s.metrics.clusterMembers.labels: %q is not a Prometheus label name", field, name))
			continue
		}
		if _, err := Render(sel.Labels[name], TemplateData{Name: "sample", Namespace: "sample-ns"}); err != nil {
			errs = append(errs, fmt.Errorf("  %s.metrics.clusterMembers.labels.%s: %w", field, name, err))
		}
	}
	return errs
}
