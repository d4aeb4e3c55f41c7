package framework

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
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
		cli, err := clientv3.New(c.ClientConfig(local))
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
	if c.membership != nil {
		c.membership.observe(t, time.Now())
	}
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
