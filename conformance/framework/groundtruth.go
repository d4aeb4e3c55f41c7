package framework

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
)

const probeTimeout = 5 * time.Second

// statusTimeout bounds a member's first answer: the connection through
// the port-forward (clientv3 connects lazily) and its Status, which it
// answers from its own state without raft. A member that does not answer
// within it is stopping (its pod being deleted) or gone, and the probe
// need not wait the full probeTimeout for it.
const statusTimeout = 3 * time.Second

// unreadyStatusTimeout is statusTimeout for a pod its kubelet does not find
// ready: most often a new member whose etcd does not serve yet. Waiting the
// full statusTimeout for it would hold every probe of a check that waits for
// that member, and delay the moment the check sees it ready.
const unreadyStatusTimeout = time.Second

// slowGroundTruth is how long a ground truth may take before the check's
// timeline says so: the timed checks wait on these probes, so a slow one
// is the suite's cost inside an operator's figure.
const slowGroundTruth = 1500 * time.Millisecond

// GroundTruth probes every member pod through a port-forward and compares
// etcd's answers with the expectation and with the operator's claims.
//
// The members are asked at once, not one after the other: a member that
// stops answering mid-probe (its pod being deleted) then costs the probe
// one timeout, not one per question asked of it.
func (c *EtcdCluster) GroundTruth(ctx context.Context, want Want) (Truth, error) {
	began := time.Now()
	pods, err := c.MemberPods(ctx)
	if err != nil {
		return Truth{}, err
	}
	var t Truth
	t.Claims, err = c.Claims(ctx)
	if err != nil {
		return Truth{}, fmt.Errorf("read claims: %w", err)
	}
	var probed []corev1.Pod
	for _, p := range pods {
		if want.LostNode != "" && p.Spec.NodeName == want.LostNode && p.DeletionTimestamp != nil {
			t.OnLostNode = append(t.OnLostNode, p.Name)
			continue
		}
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			t.Problems = append(t.Problems, fmt.Sprintf("%s: pod %s is %s", ProblemUnreachable, p.Name, p.Status.Phase))
			continue
		}
		probed = append(probed, p)
	}
	slices.SortFunc(probed, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	answers := make([]*memberAnswer, len(probed))
	var wg sync.WaitGroup
	for i, p := range probed {
		timeout := statusTimeout
		if !podReady(p) {
			timeout = unreadyStatusTimeout
		}
		wg.Go(func() { answers[i] = c.askStatus(ctx, p.Name, timeout) })
	}
	wg.Wait()
	defer func() {
		for _, a := range answers {
			a.close()
		}
	}()
	var answering []*memberAnswer
	minRev := int64(-1)
	for _, a := range answers {
		t.Pods = append(t.Pods, a.truth)
		if a.truth.Error != "" {
			t.Problems = append(t.Problems, fmt.Sprintf("%s: %s: %s", ProblemUnreachable, a.truth.Pod, a.truth.Error))
			continue
		}
		answering = append(answering, a)
		if minRev < 0 || a.truth.Revision < minRev {
			minRev = a.truth.Revision
		}
	}
	var listedAt time.Time
	for _, a := range answering {
		asked := time.Now()
		if members, err := a.memberList(ctx); err == nil {
			t.Members, listedAt = members, asked
			break
		}
	}
	if minRev > 0 {
		hashErrs := make([]error, len(answers))
		for i, a := range answers {
			if a.truth.Error == "" {
				wg.Go(func() { hashErrs[i] = a.hashKV(ctx, minRev) })
			}
		}
		wg.Wait()
		for i, a := range answers {
			switch {
			case a.truth.Error != "":
			case hashErrs[i] != nil:
				t.Problems = append(t.Problems, fmt.Sprintf("%s: HashKV on %s: %v", ProblemHash, a.truth.Pod, hashErrs[i]))
			default:
				t.Pods[i].Hash = a.hash
			}
		}
	}
	t.Problems = append(t.Problems, t.judge(want)...)
	if c.membership != nil && !listedAt.IsZero() {
		c.membership.observe(t, listedAt)
	}
	if len(want.Data) > 0 {
		t.Problems = append(t.Problems, checkData(ctx, answering, want.Data)...)
	}
	if took := time.Since(began); took > slowGroundTruth && c.membership != nil {
		c.membership.slowProbe(began, took, answers)
	}
	return t, nil
}

// memberAnswer is one member pod's client and what it answered; steps
// keeps how long each question took, for a probe that was slow.
type memberAnswer struct {
	cli *clientv3.Client
	// closeClient closes cli and its port-forward; nil when none opened.
	closeClient func()
	truth       PodTruth
	hash        uint32
	steps       []string
}

func (a *memberAnswer) close() {
	if a.closeClient != nil {
		a.closeClient()
	}
}

// timed runs one question of the member and keeps how long it took.
func (a *memberAnswer) timed(step string, do func() error) error {
	start := time.Now()
	err := do()
	a.steps = append(a.steps, fmt.Sprintf("%s %.1f s", step, time.Since(start).Seconds()))
	return err
}

// askStatus opens a client of the pod's member and asks its status,
// waiting at most timeout for the connection and the answer.
func (c *EtcdCluster) askStatus(ctx context.Context, pod string, timeout time.Duration) *memberAnswer {
	a := &memberAnswer{truth: PodTruth{Pod: pod}}
	err := a.timed("port-forward", func() (err error) {
		a.cli, a.closeClient, err = c.memberClient(pod)
		return err
	})
	if err == nil {
		err = a.timed("status", func() error {
			pctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			st, err := a.cli.Status(pctx, a.cli.Endpoints()[0])
			if err != nil {
				return err
			}
			a.truth.MemberID, a.truth.Version, a.truth.Leader, a.truth.Revision = st.Header.MemberId, st.Version, st.Leader, st.Header.Revision
			var errs []string
			errs, a.truth.Alarms = splitAlarms(st.Errors)
			if len(errs) > 0 {
				return fmt.Errorf("%s", strings.Join(errs, "; "))
			}
			return nil
		})
	}
	if err != nil {
		a.truth.Error = err.Error()
	}
	return a
}

func (a *memberAnswer) memberList(ctx context.Context) ([]Member, error) {
	var members []Member
	err := a.timed("member list", func() error {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		defer cancel()
		ml, err := a.cli.MemberList(pctx)
		if err != nil {
			return err
		}
		for _, m := range ml.Members {
			members = append(members, Member{ID: m.ID, Name: m.Name, IsLearner: m.IsLearner, Started: len(m.ClientURLs) > 0})
		}
		return nil
	})
	return members, err
}

func (a *memberAnswer) hashKV(ctx context.Context, rev int64) error {
	return a.timed("hashKV", func() error {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		defer cancel()
		h, err := a.cli.HashKV(pctx, a.cli.Endpoints()[0], rev)
		if err == nil {
			a.hash = h.Hash
		}
		return err
	})
}

// checkData reads each key through the answering members in turn, until
// one answers: a key is lost only when a member shows it gone or changed;
// one that no member could read is unread, which proves nothing either way.
func checkData(ctx context.Context, answering []*memberAnswer, data map[string]string) []string {
	var problems []string
	for _, k := range slices.Sorted(maps.Keys(data)) {
		var resp *clientv3.GetResponse
		err := fmt.Errorf("no member answered")
		for _, a := range answering {
			pctx, cancel := context.WithTimeout(ctx, probeTimeout)
			resp, err = a.cli.Get(pctx, k)
			cancel()
			if err == nil {
				break
			}
		}
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: read %s: %v", ProblemUnread, k, err))
		case len(resp.Kvs) == 0:
			problems = append(problems, fmt.Sprintf("%s: %s is gone", ProblemData, k))
		case string(resp.Kvs[0].Value) != data[k]:
			problems = append(problems, fmt.Sprintf("%s: %s = %q, want %q", ProblemData, k, resp.Kvs[0].Value, data[k]))
		}
	}
	return problems
}

// splitAlarms tells the cluster's active alarms from a member's errors in
// its status answer: etcd lists every alarm there ("memberID:... alarm:
// NOSPACE"), and an alarm says the cluster refuses writes, not that the
// member is unhealthy (the space check fills a cluster until NOSPACE and
// must still see it whole).
func splitAlarms(statusErrors []string) (errs, alarms []string) {
	for _, e := range statusErrors {
		if strings.HasPrefix(e, "memberID:") && strings.Contains(e, "alarm:") {
			alarms = append(alarms, e)
			continue
		}
		errs = append(errs, e)
	}
	return errs, alarms
}
