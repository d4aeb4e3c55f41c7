package framework

import (
	"fmt"
	"sort"
	"strings"
)

// judge compares the probed state with the expectation; pure, so tests can
// feed it recorded states.
func (t *Truth) judge(want Want) []string {
	var problems []string
	if len(t.Members) != want.Size {
		problems = append(problems, fmt.Sprintf("%s: etcd lists %d members, want %d", ProblemMembers, len(t.Members), want.Size))
	}
	podOf := map[uint64]string{}
	for _, p := range t.Pods {
		if p.Error == "" {
			podOf[p.MemberID] = p.Pod
		}
	}
	for _, m := range t.Members {
		if m.IsLearner {
			problems = append(problems, fmt.Sprintf("%s: %x (%s)", ProblemLearner, m.ID, m.Name))
		}
		if _, ok := podOf[m.ID]; !ok {
			problems = append(problems, fmt.Sprintf("%s: %x (%q, started=%v) is in the member list but no running pod serves it", ProblemStaleMember, m.ID, m.Name, m.Started))
		}
	}
	leaders := map[uint64]bool{}
	for _, p := range t.Pods {
		if p.Error == "" {
			leaders[p.Leader] = true
			t.LeaderID = p.Leader
		}
		if p.Error == "" && want.Version != "" && p.Version != want.Version {
			problems = append(problems, fmt.Sprintf("%s: %s runs etcd %s, want %s", ProblemVersion, p.Pod, p.Version, want.Version))
		}
	}
	if len(leaders) != 1 || leaders[0] {
		problems = append(problems, fmt.Sprintf("%s: members disagree or have none: %v", ProblemLeader, keys(leaders)))
	}
	hashes := map[uint32][]string{}
	for _, p := range t.Pods {
		if p.Error == "" && p.Hash != 0 {
			hashes[p.Hash] = append(hashes[p.Hash], p.Pod)
		}
	}
	if len(hashes) > 1 {
		problems = append(problems, fmt.Sprintf("%s: HashKV differs across members: %v", ProblemHash, hashes))
	}
	if len(t.Claims.Unfilled) > 0 && len(podOf) > 0 {
		problems = append(problems, fmt.Sprintf("%s: status fields the profile names are missing or zero while etcd answers on %d members: %s",
			ProblemClaims, len(podOf), strings.Join(t.Claims.Unfilled, ", ")))
	}
	if t.Claims.ReadyMembers != 0 && t.Claims.ReadyMembers != len(podOf) {
		problems = append(problems, fmt.Sprintf("%s: status says %d ready members, etcd answers on %d", ProblemClaims, t.Claims.ReadyMembers, len(podOf)))
	}
	if t.Claims.CurrentVersion != "" && want.Version != "" && t.Claims.CurrentVersion != want.Version {
		problems = append(problems, fmt.Sprintf("%s: status says version %s, want %s", ProblemClaims, t.Claims.CurrentVersion, want.Version))
	}
	return problems
}

func keys(m map[uint64]bool) []string {
	var out []string
	for k := range m {
		out = append(out, fmt.Sprintf("%x", k))
	}
	sort.Strings(out)
	return out
}
