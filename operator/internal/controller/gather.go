package controller

import (
	"context"
	"crypto/tls"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
	"github.com/etcdproof/etcdproof/operator/internal/etcdadmin"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

// etcdCallTimeout bounds each read of etcd state in a pass.
const etcdCallTimeout = 3 * time.Second

// observation is what one pass read: the plan's input plus the raw objects
// the actions need.
type observation struct {
	plan.Observed
	pods    map[string]*corev1.Pod
	members []etcdadmin.Member
	// adoptable holds the pods and claims of Observed.Adoptable.
	adoptable adoptable
	// admin is open when membership is known; the pass closes it.
	admin etcdadmin.Admin
	// tls reaches members that require client certificates; nil for
	// members that serve plain HTTP.
	tls *tls.Config
	// restore is the cluster's unfinished EtcdRestore, nil when none;
	// earlierRestore is its EtcdRestore when that is not in progress.
	restore, earlierRestore *etcdv1beta2.EtcdRestore
	// alarms are the cluster's active etcd alarms (NOSPACE, CORRUPT), as
	// its members list them; reported in the Available condition.
	alarms []string
	// endpoints are the client URLs of the members that answered, by ID
	// (a defragmentation goes to one member).
	endpoints map[uint64]string
	// budgetWritten: this pass created or changed the PodDisruptionBudget,
	// which the disruption controller has not counted yet (see budgetCounted).
	budgetWritten bool
}

func (o *observation) close() {
	if o.admin != nil {
		_ = o.admin.Close()
	}
}

// gather reads pods, claims and etcd's membership and health. It only reads.
func (r *Reconciler) gather(ctx context.Context, c *etcdv1beta2.EtcdCluster) (*observation, error) {
	obs := &observation{
		Observed: plan.Observed{
			Now:        r.now(),
			Size:       c.Spec.Size,
			Version:    c.Spec.Version,
			Repository: desired.Repository(c),
			Paused:     c.Spec.Paused,
			UsesPVC:    desired.UsesPVC(c),
			Phase:      c.Status.Phase,

			ReportedVersion: c.Status.CurrentVersion,
			UnpulledImage:   c.Status.UnpulledImage,
			UnhealthyImage:  c.Status.UnhealthyImage,

			PVCs:        map[string]bool{},
			PVCCreated:  map[string]time.Time{},
			UnownedPVCs: map[string]bool{},
			PolicyHash:  desired.PodPolicyHash(c),

			NotRunningDeadline: r.notRunningDeadline(),
			CreatingDeadline:   orDefault(r.CreatingDeadline, plan.DefaultCreatingDeadline),
			LearnerDeadline:    orDefault(r.LearnerDeadline, plan.DefaultLearnerDeadline),
			Failures:           r.failures.list(types.NamespacedName{Namespace: c.Namespace, Name: c.Name}, c.Generation),
			UnansweringIsDead:  r.Options.ReplaceUnanswering,

			RecoverFromSurvivor: desired.RecoversFromSurvivor(c),
			SeedImage:           r.SeedImage,
		},
		pods: map[string]*corev1.Pod{},
	}
	var err error
	if obs.tls, err = r.clientTLS(ctx, c); err != nil {
		// Told in the Available condition and retried; not an error of the
		// pass, whose backoff would only delay the retry.
		obs.NoClientTLS = fmt.Sprintf("%v; the members require a client certificate, so nothing is changed until the operator has one (looked for again every %s)",
			err, plan.PollClientTLS)
		r.warnOnce(ctx, "client TLS "+c.Namespace+"/"+c.Name+": "+err.Error(), "no client certificate for the cluster's members",
			"error", err.Error())
	}
	er, err := r.clusterRestore(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("reading the cluster's EtcdRestore: %w", err)
	}
	if inProgress(c, er) {
		obs.restore, obs.Restore = er, planRestore(er)
		if err := r.readBackupCheck(ctx, c, er, obs.Restore); err != nil {
			return nil, err
		}
	} else if er != nil {
		obs.earlierRestore, obs.EarlierRestore = er, planEarlierRestore(c, er)
	}
	selector := client.MatchingLabels(desired.Selector(c.Name))
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(c.Namespace), selector); err != nil {
		return nil, fmt.Errorf("listing member pods: %w", err)
	}
	var endpoints []string
	var strangers []*corev1.Pod
	var orphanClaims []*corev1.PersistentVolumeClaim
	for i := range pods.Items {
		p := &pods.Items[i]
		if !metav1.IsControlledBy(p, c) {
			strangers = append(strangers, p)
			continue
		}
		obs.pods[p.Name] = p
		info := podInfo(p)
		obs.Pods = append(obs.Pods, info)
		if p.Status.PodIP != "" && p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodFailed && plan.MayAnswer(info) {
			endpoints = append(endpoints, podClientURL(c, p))
		}
	}
	obs.Unseen = r.created.unseen(types.NamespacedName{Namespace: c.Namespace, Name: c.Name}, obs.pods, obs.Now)
	if _, old, ok := plan.Retiring(obs.Pods); ok {
		// The old cluster's pods, which a seeded member replaces: only the
		// new cluster's membership counts from now on.
		endpoints = withoutPods(c, endpoints, obs.pods, old)
	}
	// Claims are read whatever the spec says: claims an earlier cluster of
	// this name left hold its data, and no cluster is bootstrapped beside them.
	var pvcs corev1.PersistentVolumeClaimList
	if err := r.Client.List(ctx, &pvcs, client.InNamespace(c.Namespace), selector); err != nil {
		return nil, fmt.Errorf("listing member claims: %w", err)
	}
	for i, pvc := range pvcs.Items {
		if pvc.DeletionTimestamp != nil {
			continue
		}
		obs.PVCs[pvc.Name] = true
		obs.PVCCreated[pvc.Name] = pvc.CreationTimestamp.Time
		if metav1.IsControlledBy(&pvc, c) {
			continue
		}
		obs.UnownedPVCs[pvc.Name] = true
		if obs.UsesPVC && metav1.GetControllerOf(&pvc) == nil {
			orphanClaims = append(orphanClaims, &pvcs.Items[i])
		}
	}
	if name := desired.RestoresFromBackup(c); name != "" && plan.MembersLost(obs.Observed) {
		if obs.RestoreFromBackup, err = r.latestBackup(ctx, c, name); err != nil {
			return nil, err
		}
	}
	if obs.NoClientTLS != "" {
		endpoints = nil // no member would answer
	}
	if len(endpoints) > 0 {
		r.readMembership(ctx, obs, endpoints, obs.pods)
	}
	// Only a cluster that ran can lose its quorum (a bootstrap has no leader yet either).
	if len(endpoints) > 0 && !obs.UsesPVC && obs.Phase == etcdv1beta2.PhaseRunning && (!obs.MembershipKnown || obs.LeaderID == 0) {
		r.readLocal(ctx, obs, endpoints)
	}
	r.sortStrangers(ctx, c, obs, strangers, orphanClaims)
	return obs, nil
}

// readMembership fills the etcd part of obs; when no member answers the
// membership stays unknown, which the plan treats as "do not touch
// membership". The endpoints are those of pods, by name: a member list
// that names none of them is another etcd cluster's, and is refused.
func (r *Reconciler) readMembership(ctx context.Context, obs *observation, endpoints []string, pods map[string]*corev1.Pod) {
	admin, err := r.Dial(endpoints, obs.tls)
	if err != nil {
		return
	}
	callCtx, cancel := context.WithTimeout(ctx, etcdCallTimeout)
	defer cancel()
	ms, err := admin.Membership(callCtx)
	if err != nil {
		_ = admin.Close()
		return
	}
	if !ofThisCluster(ms.Members, pods) {
		// A pod's address reaches a member of another etcd cluster (its IP
		// reused, a stale cache): nothing it says is this cluster's.
		r.warnOnce(ctx, fmt.Sprintf("foreign member list %x", ms.ClusterID),
			"member list refused: none of its members is a pod of this cluster, it is another etcd cluster's",
			"clusterID", fmt.Sprintf("%x", ms.ClusterID), "endpoints", endpoints)
		_ = admin.Close()
		return
	}
	members := ms.Members
	healthy := map[uint64]bool{}
	statuses := map[uint64]etcdadmin.Status{}
	leaders := map[uint64]int{}
	obs.endpoints = map[uint64]string{}
	for _, s := range admin.Statuses(callCtx) {
		if s.ClusterID != 0 && s.ClusterID != ms.ClusterID {
			r.warnOnce(ctx, fmt.Sprintf("foreign status %s %x", s.Endpoint, s.ClusterID),
				"member status refused: the endpoint answers for another etcd cluster",
				"endpoint", s.Endpoint, "clusterID", fmt.Sprintf("%x", s.ClusterID), "want", fmt.Sprintf("%x", ms.ClusterID))
			continue
		}
		for _, a := range s.Alarms {
			if !slices.Contains(obs.alarms, a) {
				obs.alarms = append(obs.alarms, a)
			}
		}
		if s.Healthy() {
			healthy[s.MemberID] = true
			statuses[s.MemberID] = s
			obs.endpoints[s.MemberID] = s.Endpoint
			leaders[s.LeaderID]++
			obs.Revision = max(obs.Revision, s.Revision)
		}
	}
	if len(obs.alarms) > 0 {
		obs.NoSpace = noSpace(callCtx, admin, obs.alarms)
	}
	if obs.NoSpace {
		// Unknown counts as compacted: the sizes are judged as they are.
		obs.HistoryKept, _ = admin.HistoryKept(callCtx, obs.Revision)
	}
	obs.admin = admin
	obs.members = members
	obs.MembershipKnown = true
	for id, votes := range leaders {
		if votes > leaders[obs.LeaderID] {
			obs.LeaderID = id
		}
	}
	for _, m := range members {
		s := statuses[m.ID]
		obs.Members = append(obs.Members, plan.Member{
			ID:          m.ID,
			Name:        memberName(m),
			IsLearner:   m.IsLearner,
			Started:     m.Name != "",
			Healthy:     healthy[m.ID],
			RaftIndex:   s.RaftIndex,
			DBSize:      s.DBSize,
			DBSizeInUse: s.DBSizeInUse,
			Quota:       quota(s, obs.pods[memberName(m)]),
		})
	}
}

// noSpace: a NOSPACE alarm is active. The alarm list says it by type; the
// status text is the fallback when that call fails.
func noSpace(ctx context.Context, admin etcdadmin.Admin, listed []string) bool {
	if alarms, err := admin.Alarms(ctx); err == nil {
		return slices.ContainsFunc(alarms, func(a etcdadmin.Alarm) bool { return a.Type == etcdadmin.AlarmNoSpace })
	}
	return slices.ContainsFunc(listed, func(a string) bool { return strings.Contains(a, etcdadmin.AlarmNoSpace) })
}

// quota is the member's backend quota: as etcd reports it (3.6+), else as
// its pod was started with; 0 when neither tells.
func quota(s etcdadmin.Status, pod *corev1.Pod) int64 {
	switch {
	case s.DBSizeQuota > 0:
		return s.DBSizeQuota
	case pod != nil:
		return desired.QuotaOf(pod)
	}
	return 0
}

// ofThisCluster reports whether a member list is this cluster's: at least
// one of its members is one of the cluster's pods (members are named like
// their pods). A member list of another etcd cluster names none of them.
func ofThisCluster(members []etcdadmin.Member, pods map[string]*corev1.Pod) bool {
	for _, m := range members {
		if _, ok := pods[memberName(m)]; ok {
			return true
		}
	}
	return false
}

func (r *Reconciler) notRunningDeadline() time.Duration {
	return orDefault(r.NotRunningDeadline, plan.DefaultNotRunningDeadline)
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func memberName(m etcdadmin.Member) string {
	if m.Name != "" {
		return m.Name
	}
	if len(m.PeerURLs) > 0 {
		return desired.MemberNameFromPeerURL(m.PeerURLs[0])
	}
	return ""
}

func podInfo(p *corev1.Pod) plan.Pod {
	info := plan.Pod{
		Name:        p.Name,
		Version:     p.Annotations[desired.AnnotationVersion],
		Failed:      p.Status.Phase == corev1.PodFailed,
		Terminating: p.DeletionTimestamp != nil,
		Created:     p.CreationTimestamp.Time,
		PolicyHash:  p.Annotations[desired.AnnotationPodPolicy],
		// The API server makes every pod Pending until its kubelet starts it.
		Pending:        p.Status.Phase == corev1.PodPending || p.Status.Phase == "",
		ImageNotPulled: p.Annotations[desired.AnnotationImageNotPulled],
		ImageUnhealthy: p.Annotations[desired.AnnotationImageUnhealthy],
	}
	if from, index, replaces, ok := desired.SeedOf(p); ok {
		info.Seed = &plan.Seed{From: from, RaftIndex: index, Replaces: replaces}
	}
	info.Restore = desired.RestoreOf(p)
	if info.Seed != nil {
		info.SeedFailing = seedFailing(p)
	}
	info.NotRunning, info.NotRunningSince = plan.NotRunning(p)
	for _, st := range p.Status.ContainerStatuses {
		if st.Name == desired.ContainerName && st.State.Running != nil {
			info.RunningSince = st.State.Running.StartedAt.Time
		}
	}
	for _, ctr := range p.Spec.Containers {
		if ctr.Name == desired.ContainerName {
			info.Image = ctr.Image
			if bootstrap := desired.BootstrapCluster(ctr.Command); bootstrap != nil {
				info.BootstrapPeers = slices.Sorted(maps.Keys(bootstrap))
			}
		}
	}
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
			info.Ready = true
		}
	}
	return info
}
