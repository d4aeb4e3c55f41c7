package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

// The self-test's silent mode (the insights check's known-bad variant), on
// real members beside the same operator not silent: a dead member is
// replaced all the same, but the silent one tells nobody: no Event on the
// cluster, no series of it in the operator's metrics.
func TestSilentOperatorTellsNothingOfAReplacement(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	for _, silent := range []bool{false, true} {
		t.Run(fmt.Sprintf("silent=%v", silent), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c, pods, members := runningCluster(t, "told", 3, plan.Options{Silent: silent})
			victim := pods[2]
			stopMember(members[victim.Name])
			if err := k8s.Delete(ctx, &victim, client.GracePeriodSeconds(0)); err != nil {
				t.Fatal(err)
			}
			waitForLearnerInPlaceOf(t, "the dead member replaced by a learner", clientURLs(members, pods[0], pods[1]), victim.Name)

			if !silent {
				// What the silent mode must take away is there without it.
				if eventsRecorded(t) {
					waitFor(t, "the replacement's Events", func() error {
						seen, err := eventReasons(ctx, c.Namespace)
						if err != nil {
							return err
						}
						if !seen[conditions.EventReplacingDeadMember] || !seen[conditions.EventNewMemberAdded] {
							return fmt.Errorf("have %v", seen)
						}
						return nil
					})
				}
				if series := clusterSeries(t, c.Namespace); !strings.Contains(series, `etcd_operator_cluster_members{cluster="told",namespace="`+c.Namespace+`",state="ready"}`) ||
					!strings.Contains(series, "etcd_operator_dead_member_replacements_total") {
					t.Errorf("the operator's metrics of the cluster: %s", series)
				}
				return
			}
			var events corev1.EventList
			if err := k8s.List(ctx, &events, client.InNamespace(c.Namespace)); err != nil {
				t.Fatal(err)
			}
			for _, ev := range events.Items {
				if ev.InvolvedObject.Kind == "EtcdCluster" {
					t.Errorf("silent, yet an Event on the cluster: %s %q", ev.Reason, ev.Message)
				}
			}
			if series := clusterSeries(t, c.Namespace); series != "" {
				t.Errorf("silent, yet the operator's metrics have the cluster: %s", series)
			}
		})
	}
}

// clusterSeries lists the series of the operator's registry (the one
// /metrics serves) labelled with namespace ns.
func clusterSeries(t *testing.T, ns string) string {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			var pairs []string
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
				pairs = append(pairs, fmt.Sprintf("%s=%q", lp.GetName(), lp.GetValue()))
			}
			if labels["namespace"] == ns {
				out = append(out, f.GetName()+"{"+strings.Join(pairs, ",")+"}")
			}
		}
	}
	return strings.Join(out, " ")
}
