package controller

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/etcdproof/etcdproof/operator/internal/desired"
)

// labelVoters labels the pod of every member etcd lists as a voter with
// desired.LabelVoter, which the PodDisruptionBudget selects on. Labels
// follow etcd's membership, read this pass, and nothing else: a pod is
// created without one (even a bootstrap member's) and gets it once etcd
// says its member votes, so a learner's pod can never count towards the
// budget. With membership unknown nothing changes. A voter never turns
// back into a learner, so the label is never taken off.
func (r *Reconciler) labelVoters(ctx context.Context, obs *observation) error {
	if !obs.MembershipKnown {
		return nil
	}
	for _, m := range obs.Members {
		if m.IsLearner {
			continue
		}
		p, ok := obs.pods[m.Name]
		if !ok || p.DeletionTimestamp != nil || p.Labels[desired.LabelVoter] == desired.VoterLabelValue {
			continue
		}
		before := p.DeepCopy()
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		p.Labels[desired.LabelVoter] = desired.VoterLabelValue
		if err := r.Client.Patch(ctx, p, client.MergeFrom(before)); err != nil {
			return fmt.Errorf("labelling the pod of voter %s: %w", m.Name, err)
		}
	}
	return nil
}
