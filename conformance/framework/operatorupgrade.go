package framework

// What the operator-upgrade check needs to see: the operator's pods
// replaced by a rollout, and member pods that stay as they were meanwhile.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/gomega" //nolint:revive // Gomega's DSL reads best dot-imported.

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

// WaitForOperatorReplaced waits until no operator pod of before is left in
// the API (not even terminating: an old build still running could still
// act on the cluster) and every operator pod is ready, at least one. It
// returns the operator's pods then. Otherwise it returns the last pods it
// saw and why they do not count as replaced, for the caller to tell a
// rollout that failed from steps that replaced nothing.
func (e *Env) WaitForOperatorReplaced(ctx context.Context, before []corev1.Pod, intervals ...any) ([]corev1.Pod, error) {
	old := map[types.UID]bool{}
	for _, p := range before {
		old[p.UID] = true
	}
	var now []corev1.Pod
	var last error
	err := wait.PollUntilContextTimeout(ctx, intervals[1].(time.Duration), intervals[0].(time.Duration), true, func(ctx context.Context) (bool, error) {
		pods, err := e.OperatorPods(ctx)
		if err != nil {
			last = err
			return false, nil
		}
		now = pods
		if last = operatorNotReplaced(old, pods); last == nil {
			return true, nil
		}
		// An image that cannot be pulled never heals: say so now.
		if msg := e.imagePullProblem(ctx, e.Profile.Operator.Namespace); msg != "" {
			return false, fmt.Errorf("the new operator cannot start: %s", msg)
		}
		return false, nil
	})
	if err != nil {
		return now, fmt.Errorf("operator deployment %s/%s was not replaced: %w (last: %v)", e.Profile.Operator.Namespace, e.Profile.Operator.Deployment, err, last)
	}
	return now, nil
}

// operatorNotReplaced says why pods are not a replaced operator: a pod of
// old (by UID) is still there, a pod is not ready, or there is none; nil
// when they are.
func operatorNotReplaced(old map[types.UID]bool, pods []corev1.Pod) error {
	if len(pods) == 0 {
		return errors.New("no operator pod")
	}
	var problems []string
	for _, p := range pods {
		switch {
		case old[p.UID]:
			problems = append(problems, fmt.Sprintf("operator pod %s from before the upgrade is still there", p.Name))
		case !podReady(p):
			problems = append(problems, fmt.Sprintf("operator pod %s is not ready", p.Name))
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// MemberPodState is what shows that a member pod was left alone: its UID
// (a pod recreated under the same name gets a new one) and the restart
// count of its etcd container (a restart in place keeps the UID).
type MemberPodState struct {
	UID      types.UID
	Restarts int32
}

// MemberPodStates reads the state of each member pod, by pod name. Pods
// being deleted are left out: they are on their way out of the cluster.
func (c *EtcdCluster) MemberPodStates(ctx context.Context) (map[string]MemberPodState, error) {
	pods, err := c.MemberPods(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]MemberPodState{}
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		out[p.Name] = MemberPodState{UID: p.UID, Restarts: RestartCount(p, c.EtcdContainer(p))}
	}
	return out, nil
}

// ConsistentlyMemberPods watches the member pods for intervals' duration,
// every polling interval, and fails as soon as judge names a problem with
// them. A poll whose pods cannot be read is no evidence either way and is
// skipped; a watch that could read none fails.
func (c *EtcdCluster) ConsistentlyMemberPods(ctx context.Context, judge func(now map[string]MemberPodState) []string, intervals ...any) {
	seen := 0
	var readErr error
	Consistently(ctx, func(g Gomega) {
		now, err := c.MemberPodStates(ctx)
		if err != nil {
			readErr = err
			return
		}
		seen++
		problems := judge(now)
		g.Expect(problems).To(BeEmpty(), "member pods of cluster %s/%s:\n%s", c.Namespace, c.Name, strings.Join(problems, "\n"))
	}).WithTimeout(intervals[0].(time.Duration)).WithPolling(intervals[1].(time.Duration)).Should(Succeed())
	ExpectWithOffset(1, seen).To(BeNumerically(">", 0), "the member pods of cluster %s/%s could not be read once in %s: %v", c.Namespace, c.Name, intervals[0], readErr)
}
