package profile

import (
	"os"
	"strings"
	"testing"
)

// referenceMembers is the reference operator's member gauge, as its profile
// names it.
var referenceMembers = MetricSelector{
	Metric: "etcd_operator_cluster_members",
	Labels: map[string]string{"namespace": "{{ .Namespace }}", "cluster": "{{ .Name }}", "state": "ready"},
}

// Each mistake in capabilities.insights is named by its field, at load
// time: a run must not find out in the middle of the check that it cannot
// scrape or match anything.
func TestBadInsightsSectionNamesEveryProblem(t *testing.T) {
	for _, tc := range []struct {
		name     string
		insights Insights
		replaces bool
		want     []string // none: valid
	}{
		{name: "the reference's", insights: Insights{Metrics: InsightsMetrics{Port: 8080, Path: "/metrics", ClusterMembers: referenceMembers}}, replaces: true},
		{name: "the path left to its default", insights: Insights{Metrics: InsightsMetrics{Port: 8080, ClusterMembers: MetricSelector{Metric: "members"}}}, replaces: true},
		{name: "nothing said", insights: Insights{}, replaces: true, want: []string{
			"capabilities.insights.metrics.port: 0 is not a TCP port",
			"capabilities.insights.metrics.clusterMembers.metric: required",
		}},
		{name: "a relative path, a bad metric name", insights: Insights{Metrics: InsightsMetrics{Port: 70000, Path: "metrics", ClusterMembers: MetricSelector{Metric: "etcd-members"}}}, replaces: true, want: []string{
			"capabilities.insights.metrics.port: 70000 is not a TCP port",
			`capabilities.insights.metrics.path: "metrics" must start with /`,
			`capabilities.insights.metrics.clusterMembers.metric: "etcd-members" is not a Prometheus metric name`,
		}},
		{name: "a PromQL selector for a name", insights: Insights{Metrics: InsightsMetrics{Port: 8080, ClusterMembers: MetricSelector{Metric: `members{cluster="x"}`}}}, replaces: true, want: []string{
			`capabilities.insights.metrics.clusterMembers.metric: "members{cluster=\"x\"}" is not a Prometheus metric name (give the labels under clusterMembers.labels)`,
		}},
		{name: "a bad label name, a bad template", insights: Insights{Metrics: InsightsMetrics{Port: 8080, ClusterMembers: MetricSelector{Metric: "members",
			Labels: map[string]string{"cluster-name": "{{ .Name }}", "namespace": "{{ .Nme }}"}}}}, replaces: true, want: []string{
			`capabilities.insights.metrics.clusterMembers.labels: "cluster-name" is not a Prometheus label name`,
			"capabilities.insights.metrics.clusterMembers.labels.namespace: template:",
		}},
		{name: "no member replacement to observe", insights: Insights{Metrics: InsightsMetrics{Port: 8080, ClusterMembers: referenceMembers}}, want: []string{
			"capabilities.insights: the insights check watches the operator replace a deleted member, so it also needs capabilities.deadMemberReplacement",
		}},
	} {
		p := &Profile{Capabilities: Capabilities{Insights: &tc.insights, DeadMemberReplacement: tc.replaces}}
		errs := p.validateInsights()
		expectErrors(t, tc.name, errs, tc.want)
	}
}

// The selector is rendered for each cluster: its label values are
// templates over the cluster's name and namespace; the path defaults to
// /metrics.
func TestInsightsSelectorIsRenderedForACluster(t *testing.T) {
	m := InsightsMetrics{Port: 8080, ClusterMembers: referenceMembers}
	sel, err := m.ClusterMembersOf("insights-1", "etcdproof-insights-x")
	if err != nil {
		t.Fatal(err)
	}
	want := `etcd_operator_cluster_members{cluster="insights-1",namespace="etcdproof-insights-x",state="ready"}`
	if sel.Metric != "etcd_operator_cluster_members" || sel.String() != want {
		t.Errorf("selector %s, want %s", sel, want)
	}
	if m.MetricsPath() != "/metrics" {
		t.Errorf("default path %q", m.MetricsPath())
	}
	if got := (MetricSelector{Metric: "up"}).String(); got != "up" {
		t.Errorf("a selector without labels prints %q", got)
	}
}

// capabilities.insights is checked when a profile loads, with the rest;
// and it is what claims the insights check.
func TestInsightsIsValidatedOnLoadAndClaimsTheCheck(t *testing.T) {
	base, err := os.ReadFile("../profiles/reference.yaml")
	if err != nil {
		t.Fatal(err)
	}
	body := string(base)
	body = body[:strings.Index(body, "\ncapabilities:")] + "\ncapabilities: {deadMemberReplacement: true, insights: {metrics: {port: 8080, clusterMembers: {metric: 'a-b'}}}}\n"
	if _, err := Load(write(t, body)); err == nil || !strings.Contains(err.Error(), `clusterMembers.metric: "a-b" is not a Prometheus metric name`) {
		t.Errorf("error = %v", err)
	}
	p, err := Load("../profiles/reference.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !p.Capabilities.Claims("insights") {
		t.Error("the reference does not claim insights")
	}
	if (Capabilities{DeadMemberReplacement: true}).Claims("insights") {
		t.Error("a profile without capabilities.insights claims the insights check")
	}
}
