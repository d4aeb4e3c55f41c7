package framework

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

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
	Error    string `json:"error,omitempty"`
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
	ProblemClaims      = "operator claims"
	ProblemUnreachable = "member unreachable"
)

const probeTimeout = 5 * time.Second

// GroundTruth probes every member pod through a port-forward and compares
// etcd's answers with the expectation and with the operator's claims.
func (c *EtcdCluster) GroundTruth(ctx context.Context, want Want) (Truth, error) {
	pods, err := c.MemberPods(ctx)
	if err != nil {
		return Truth{}, err
	}
	var t Truth
	t.Claims, err = c.Claims(ctx)
	if err != nil {
		return Truth{}, fmt.Errorf("read claims: %w", err)
	}
	clients := map[string]*clientv3.Client{}
	defer func() {
		for _, cli := range clients {
			_ = cli.Close()
		}
	}()
	for _, p := range pods {
		if want.LostNode != "" && p.Spec.NodeName == want.LostNode && p.DeletionTimestamp != nil {
			t.OnLostNode = append(t.OnLostNode, p.Name)
			continue
		}
		if p.DeletionTimestamp != nil || p.Status.Phase != "Running" {
			t.Problems = append(t.Problems, fmt.Sprintf("%s: pod %s is %s", ProblemUnreachable, p.Name, p.Status.Phase))
			continue
		}
		local, stop, err := c.env.Forward(c.Namespace, p.Name, c.env.Profile.Cluster.ClientPort)
		if err != nil {
			t.Pods = append(t.Pods, PodTruth{Pod: p.Name, Error: err.Error()})
			t.Problems = append(t.Problems, fmt.Sprintf("%s: %s: %v", ProblemUnreachable, p.Name, err))
			continue
		}
		defer stop()
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{fmt.Sprintf("127.0.0.1:%d", local)}, DialTimeout: probeTimeout, Logger: zap.NewNop()})
		if err != nil {
			t.Problems = append(t.Problems, fmt.Sprintf("%s: %s: %v", ProblemUnreachable, p.Name, err))
			continue
		}
		clients[p.Name] = cli
	}
	minRev := int64(-1)
	for _, name := range slices.Sorted(maps.Keys(clients)) {
		pt := probeStatus(ctx, clients[name], name)
		if pt.Error != "" {
			t.Problems = append(t.Problems, fmt.Sprintf("%s: %s: %s", ProblemUnreachable, name, pt.Error))
		} else if minRev < 0 || pt.Revision < minRev {
			minRev = pt.Revision
		}
		t.Pods = append(t.Pods, pt)
	}
	for _, name := range slices.Sorted(maps.Keys(clients)) {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		ml, err := clients[name].MemberList(pctx)
		cancel()
		if err == nil {
			for _, m := range ml.Members {
				t.Members = append(t.Members, Member{ID: m.ID, Name: m.Name, IsLearner: m.IsLearner, Started: len(m.ClientURLs) > 0})
			}
			break
		}
	}
	if minRev > 0 {
		for i := range t.Pods {
			if t.Pods[i].Error != "" {
				continue
			}
			pctx, cancel := context.WithTimeout(ctx, probeTimeout)
			h, err := clients[t.Pods[i].Pod].HashKV(pctx, clients[t.Pods[i].Pod].Endpoints()[0], minRev)
			cancel()
			if err != nil {
				t.Problems = append(t.Problems, fmt.Sprintf("%s: HashKV on %s: %v", ProblemHash, t.Pods[i].Pod, err))
				continue
			}
			t.Pods[i].Hash = h.Hash
		}
	}
	t.Problems = append(t.Problems, t.judge(want)...)
	if len(want.Data) > 0 && len(clients) > 0 {
		t.Problems = append(t.Problems, checkData(ctx, clients[slices.Sorted(maps.Keys(clients))[0]], want.Data)...)
	}
	return t, nil
}

func probeStatus(ctx context.Context, cli *clientv3.Client, pod string) PodTruth {
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	pt := PodTruth{Pod: pod}
	st, err := cli.Status(pctx, cli.Endpoints()[0])
	if err != nil {
		pt.Error = err.Error()
		return pt
	}
	pt.MemberID, pt.Version, pt.Leader, pt.Revision = st.Header.MemberId, st.Version, st.Leader, st.Header.Revision
	if len(st.Errors) > 0 {
		pt.Error = strings.Join(st.Errors, "; ")
	}
	return pt
}

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
	if t.Claims.ReadyMembers != 0 && t.Claims.ReadyMembers != len(podOf) {
		problems = append(problems, fmt.Sprintf("%s: status says %d ready members, etcd answers on %d", ProblemClaims, t.Claims.ReadyMembers, len(podOf)))
	}
	if t.Claims.CurrentVersion != "" && want.Version != "" && t.Claims.CurrentVersion != want.Version {
		problems = append(problems, fmt.Sprintf("%s: status says version %s, want %s", ProblemClaims, t.Claims.CurrentVersion, want.Version))
	}
	return problems
}

func checkData(ctx context.Context, cli *clientv3.Client, data map[string]string) []string {
	var problems []string
	for _, k := range slices.Sorted(maps.Keys(data)) {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		resp, err := cli.Get(pctx, k)
		cancel()
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: read %s: %v", ProblemData, k, err))
		case len(resp.Kvs) == 0:
			problems = append(problems, fmt.Sprintf("%s: %s is gone", ProblemData, k))
		case string(resp.Kvs[0].Value) != data[k]:
			problems = append(problems, fmt.Sprintf("%s: %s = %q, want %q", ProblemData, k, resp.Kvs[0].Value, data[k]))
		}
	}
	return problems
}

// WriteMarker writes a key through a member pod so later steps can check
// it survived.
func (c *EtcdCluster) WriteMarker(ctx context.Context, key, value string) error {
	return c.WriteMarkers(ctx, map[string]string{key: value})
}

// WriteMarkers writes each key through one ready member pod; each write is
// acknowledged when it returns.
func (c *EtcdCluster) WriteMarkers(ctx context.Context, data map[string]string) error {
	pods, err := c.MemberPods(ctx)
	if err != nil {
		return err
	}
	for _, p := range pods {
		if !podReady(p) {
			continue
		}
		local, stop, err := c.env.Forward(c.Namespace, p.Name, c.env.Profile.Cluster.ClientPort)
		if err != nil {
			continue
		}
		defer stop()
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{fmt.Sprintf("127.0.0.1:%d", local)}, DialTimeout: probeTimeout, Logger: zap.NewNop()})
		if err != nil {
			continue
		}
		defer func() { _ = cli.Close() }()
		for _, k := range slices.Sorted(maps.Keys(data)) {
			pctx, cancel := context.WithTimeout(ctx, probeTimeout)
			_, err = cli.Put(pctx, k, data[k])
			cancel()
			if err != nil {
				return fmt.Errorf("write %s through %s: %w", k, p.Name, err)
			}
		}
		return nil
	}
	return fmt.Errorf("no ready member pod to write %d keys through", len(data))
}

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

func keys(m map[uint64]bool) []string {
	var out []string
	for k := range m {
		out = append(out, fmt.Sprintf("%x", k))
	}
	sort.Strings(out)
	return out
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
