package controller_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// lostNodeTolerations are a pod's tolerations of the node controller's
// NoExecute taints, by taint.
func lostNodeTolerations(p *corev1.Pod) map[string]corev1.Toleration {
	out := map[string]corev1.Toleration{}
	for _, t := range p.Spec.Tolerations {
		if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
			out[t.Key] = t
		}
	}
	return out
}

// TestMemberPodsTolerateALostNodeForEver: member pods, as the API server
// stores them (after the DefaultTolerationSeconds admission plugin, which
// adds 300 s to a pod that does not tolerate a taint itself), tolerate both
// lost-node taints for ever, on emptyDir and on claims. A running pod made
// with a toleration that runs out (30 s, as the operator gave them before)
// gets it for ever in place, with no restart.
func TestMemberPodsTolerateALostNodeForEver(t *testing.T) {
	needAPIServer(t)
	for _, volumes := range []bool{false, true} {
		t.Run(map[bool]string{false: "emptyDir", true: "claims"}[volumes], func(t *testing.T) {
			ctx := context.Background()
			ns := newNamespace(t)
			startOperator(t, ns, nil)
			c := newCluster(ns, "tolerations", 3, "3.5.21")
			if volumes {
				withVolumes(c)
			}
			if err := k8s.Create(ctx, c); err != nil {
				t.Fatal(err)
			}
			var pods []corev1.Pod
			waitFor(t, "member pods", func() (err error) {
				if pods, err = memberPods(ctx, ns, c.Name); err == nil && len(pods) != 3 {
					err = fmt.Errorf("%d pods", len(pods))
				}
				return err
			})
			forEver := func(p *corev1.Pod) error {
				got := lostNodeTolerations(p)
				for _, taint := range []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable} {
					tol, ok := got[taint]
					if !ok || tol.Effect != corev1.TaintEffectNoExecute || tol.TolerationSeconds != nil {
						return fmt.Errorf("pod %s tolerates %s as %+v, want NoExecute for ever (tolerations %+v)", p.Name, taint, tol, p.Spec.Tolerations)
					}
				}
				return nil
			}
			for i := range pods {
				if err := forEver(&pods[i]); err != nil {
					t.Error(err)
				}
			}

			// A pod as the operator made them before: 30 s.
			old := &pods[0]
			before := old.DeepCopy()
			for i, tol := range old.Spec.Tolerations {
				if tol.Key == corev1.TaintNodeNotReady || tol.Key == corev1.TaintNodeUnreachable {
					old.Spec.Tolerations[i].TolerationSeconds = ptr.To[int64](30)
				}
			}
			if err := k8s.Patch(ctx, old, client.MergeFrom(before)); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the pod made with 30 s tolerates a lost node for ever, in place", func() error {
				var p corev1.Pod
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(old), &p); err != nil {
					return err
				}
				if p.UID != old.UID {
					return fmt.Errorf("pod %s was made anew", p.Name)
				}
				return forEver(&p)
			})
		})
	}
}
