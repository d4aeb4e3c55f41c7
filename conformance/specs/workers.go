package specs

import "github.com/etcdproof/etcdproof/conformance/profile"

// workersNeeded are the checks that stop or drain the node of one member
// and need every other member on a node of its own: one worker node per
// member of the cluster they make, whose size the suite config sets. The
// runner leaves them out of a run on a cluster with fewer schedulable nodes
// unless they are asked for by name; asked for, they say INCOMPLETE there.
var workersNeeded = map[string]func(profile.Sizes) int{
	"node-loss":            func(s profile.Sizes) int { return s.NodeLoss },
	"drain":                func(s profile.Sizes) int { return s.Drain },
	"drain-during-rollout": func(s profile.Sizes) int { return s.Drain },
}

// WorkersNeeded is how many worker nodes check needs to run at all; 0 for
// a check that runs on any cluster, a single node too.
func WorkersNeeded(check string, sizes profile.Sizes) int {
	if need, ok := workersNeeded[check]; ok {
		return need(sizes)
	}
	return 0
}
