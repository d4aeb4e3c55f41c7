package framework

import "fmt"

// Truth is what etcd itself says, probed through every member pod.
type Truth struct {
	Pods     []PodTruth `json:"pods"`
	Members  []Member   `json:"members"`
	LeaderID uint64     `json:"leaderId"`
	Claims   Claims     `json:"claims"`
	// Problems lists every disagreement with the expectation; empty is good.
	Problems []string `json:"problems,omitempty"`
	// OnLostNode are the member pods being deleted on Want.LostNode, left
	// out of the probe: only that node's kubelet (or a force delete) can
	// confirm their deletion.
	OnLostNode []string `json:"onLostNode,omitempty"`
}

// PodTruth is one member pod's view.
type PodTruth struct {
	Pod      string `json:"pod"`
	MemberID uint64 `json:"memberId"`
	Version  string `json:"version"`
	Leader   uint64 `json:"leader"`
	Hash     uint32 `json:"hash"`
	Revision int64  `json:"revision"`
	// Alarms are the cluster's active alarms as the member listed them.
	Alarms []string `json:"alarms,omitempty"`
	Error  string   `json:"error,omitempty"`
}

// Member is one entry of the member list.
type Member struct {
	ID        uint64 `json:"id"`
	Name      string `json:"name"`
	IsLearner bool   `json:"isLearner"`
	Started   bool   `json:"started"`
}

// Want is the state a quiescent cluster must be in.
type Want struct {
	Size    int
	Version string
	// Data maps keys written earlier to the values that must still be there.
	Data map[string]string
	// LostNode is a node that is down: a member pod being deleted there is
	// no member the cluster needs (its deletion waits for a kubelet that is
	// gone), so it is listed in Truth.OnLostNode instead of being a
	// problem. Any other pod on it is probed, and found unreachable.
	LostNode string
}

// Problem message prefixes, so selftests can name the reason a check failed.
const (
	ProblemStaleMember = "stale member"
	ProblemLearner     = "unpromoted learner"
	ProblemMembers     = "member count"
	ProblemLeader      = "leader"
	ProblemVersion     = "version"
	ProblemHash        = "hash mismatch"
	ProblemData        = "data lost"
	// ProblemUnread: a key no member could be asked for; not a loss.
	ProblemUnread      = "data unread"
	ProblemClaims      = "operator claims"
	ProblemUnreachable = "member unreachable"
)

// MajorityPods names size/2+1 member pods of a healthy cluster, the
// leader's first: the pods whose loss takes quorum away.
func (t Truth) MajorityPods() ([]string, error) {
	leader, err := t.PodOfMember(t.LeaderID)
	if err != nil {
		return nil, err
	}
	victims := []string{leader}
	for _, p := range t.Pods {
		if len(victims) == len(t.Members)/2+1 {
			break
		}
		if p.Pod != leader && p.Error == "" {
			victims = append(victims, p.Pod)
		}
	}
	if len(victims) != len(t.Members)/2+1 {
		return nil, fmt.Errorf("only %d answering member pods of %d members: no majority to delete", len(victims), len(t.Members))
	}
	return victims, nil
}

// PodOfMember finds the pod that serves a member ID in a truth.
func (t Truth) PodOfMember(id uint64) (string, error) {
	for _, p := range t.Pods {
		if p.MemberID == id && p.Error == "" {
			return p.Pod, nil
		}
	}
	return "", fmt.Errorf("no pod serves member %x", id)
}

// NonLeaderPod returns any pod that is not the leader.
func (t Truth) NonLeaderPod() (string, error) {
	for _, p := range t.Pods {
		if p.Error == "" && p.MemberID != t.LeaderID {
			return p.Pod, nil
		}
	}
	return "", fmt.Errorf("no non-leader member pod")
}
