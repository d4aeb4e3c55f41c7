package plan

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
)

// Times of the pod fixtures below.
var (
	created   = now.Add(-10 * time.Minute)
	scheduled = now.Add(-9 * time.Minute)
	unready   = now.Add(-5 * time.Minute)
)

func cond(t corev1.PodConditionType, s corev1.ConditionStatus, reason string, at time.Time) corev1.PodCondition {
	return corev1.PodCondition{Type: t, Status: s, Reason: reason, LastTransitionTime: metav1.NewTime(at)}
}

// memberPod is a pod as the kubelet reports it: on a node, with the given
// phase, etcd container state and Ready/ContainersReady status.
func memberPod(phase corev1.PodPhase, state corev1.ContainerState, ready corev1.ConditionStatus) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "a", CreationTimestamp: metav1.NewTime(created)},
		Spec:       corev1.PodSpec{NodeName: "worker"},
		Status: corev1.PodStatus{
			Phase: phase,
			Conditions: []corev1.PodCondition{
				cond(corev1.PodScheduled, corev1.ConditionTrue, "", scheduled),
				cond(corev1.ContainersReady, ready, "", unready),
				cond(corev1.PodReady, ready, "", unready),
			},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "etcd", State: state, Ready: ready == corev1.ConditionTrue}},
		},
	}
}

func waiting(reason string) corev1.ContainerState {
	return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}
}

var running = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(scheduled)}}

func deleting(p *corev1.Pod, requested time.Time) *corev1.Pod {
	p.DeletionGracePeriodSeconds = ptr.To[int64](60)
	p.DeletionTimestamp = ptr.To(metav1.NewTime(requested.Add(60 * time.Second)))
	return p
}

// nodeLost is what the node controller leaves on the pods of a node that
// stopped reporting: Ready turned False at lost, everything else as the
// kubelet last said (running, containers ready).
func nodeLost(p *corev1.Pod, lost time.Time) *corev1.Pod {
	for i, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			p.Status.Conditions[i] = cond(corev1.PodReady, corev1.ConditionFalse, "", lost)
		}
	}
	return p
}

func withCondition(p *corev1.Pod, c corev1.PodCondition) *corev1.Pod {
	p.Status.Conditions = append(p.Status.Conditions, c)
	return p
}

func TestNotRunning(t *testing.T) {
	lost := now.Add(-3 * time.Minute)
	tests := []struct {
		name       string
		pod        *corev1.Pod
		wantReason string
		wantSince  time.Time
	}{
		{"running and ready", memberPod(corev1.PodRunning, running, corev1.ConditionTrue), "", time.Time{}},
		{"running, not ready (startup probe within its window, or catching up): runs",
			memberPod(corev1.PodRunning, running, corev1.ConditionFalse), "", time.Time{}},
		{"pulling its image without error: creating, since it was scheduled (the creating deadline judges it)",
			memberPod(corev1.PodPending, waiting("ContainerCreating"), corev1.ConditionFalse), Creating, scheduled},
		{"sandbox not ready (a volume that does not mount, a network plugin that fails): creating since the kubelet said so",
			withCondition(memberPod(corev1.PodPending, waiting("ContainerCreating"), corev1.ConditionFalse),
				cond("PodReadyToStartContainers", corev1.ConditionFalse, "", unready)), Creating, unready},
		{"the same before 1.29 (PodHasNetwork)",
			withCondition(memberPod(corev1.PodPending, waiting("ContainerCreating"), corev1.ConditionFalse),
				cond("PodHasNetwork", corev1.ConditionFalse, "", unready)), Creating, unready},
		{"sandbox not ready while an init container waits: creating",
			withCondition(memberPod(corev1.PodPending, waiting("PodInitializing"), corev1.ConditionFalse),
				cond("PodReadyToStartContainers", corev1.ConditionFalse, "", unready)), Creating, unready},
		{"sandbox ready, image being pulled: creating since the sandbox was ready",
			withCondition(memberPod(corev1.PodPending, waiting("ContainerCreating"), corev1.ConditionFalse),
				cond("PodReadyToStartContainers", corev1.ConditionTrue, "", unready)), Creating, unready},
		{"sandbox ready, an init container runs (a seed copying data): not creating",
			withCondition(memberPod(corev1.PodPending, waiting("PodInitializing"), corev1.ConditionFalse),
				cond("PodReadyToStartContainers", corev1.ConditionTrue, "", unready)), "", time.Time{}},
		{"an error wins over a sandbox not ready",
			withCondition(memberPod(corev1.PodRunning, waiting("CrashLoopBackOff"), corev1.ConditionFalse),
				cond("PodReadyToStartContainers", corev1.ConditionFalse, "", now)), "CrashLoopBackOff", unready},
		{"ErrImagePull", memberPod(corev1.PodPending, waiting("ErrImagePull"), corev1.ConditionFalse), "ErrImagePull", unready},
		{"ImagePullBackOff", memberPod(corev1.PodPending, waiting("ImagePullBackOff"), corev1.ConditionFalse), "ImagePullBackOff", unready},
		{"CrashLoopBackOff: not running since the containers were last ready",
			memberPod(corev1.PodRunning, waiting("CrashLoopBackOff"), corev1.ConditionFalse), "CrashLoopBackOff", unready},
		{"a missing Secret or ConfigMap",
			memberPod(corev1.PodPending, waiting("CreateContainerConfigError"), corev1.ConditionFalse), "CreateContainerConfigError", unready},
		{"etcd exited, not restarted yet",
			memberPod(corev1.PodRunning, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}, corev1.ConditionFalse),
			ContainerExited, unready},
		{"a failed pod is Pod.Failed's business",
			memberPod(corev1.PodFailed, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}, corev1.ConditionFalse), "", time.Time{}},
		{"pending, unschedulable since the scheduler said so",
			&corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(created)},
				Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
					cond(corev1.PodScheduled, corev1.ConditionFalse, "Unschedulable", scheduled)}},
			}, "Unschedulable", scheduled},
		{"pending on no node without a word from a scheduler: since created",
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(created)}, Status: corev1.PodStatus{Phase: corev1.PodPending}},
			NotScheduled, created},
		{"just bound to a node", &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
			cond(corev1.PodScheduled, corev1.ConditionTrue, "", scheduled)}}}, "", time.Time{}},
		{"scheduled, no word from the kubelet yet",
			&corev1.Pod{Spec: corev1.PodSpec{NodeName: "worker"}, Status: corev1.PodStatus{Phase: corev1.PodPending}}, "", time.Time{}},
		{"terminating on a Ready node: its kubelet stops it within the grace period, which the clock starts after",
			deleting(memberPod(corev1.PodRunning, running, corev1.ConditionTrue), now.Add(-10*time.Minute)),
			TerminatingPastGrace, now.Add(-9 * time.Minute)},
		{"terminating on a Ready node after a crash: the same",
			deleting(memberPod(corev1.PodRunning, waiting("CrashLoopBackOff"), corev1.ConditionFalse), now.Add(-10*time.Minute)),
			TerminatingPastGrace, now.Add(-9 * time.Minute)},
		{"terminating on a Ready node, stopped by its kubelet but not gone: the same",
			deleting(memberPod(corev1.PodRunning, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}, corev1.ConditionFalse), now.Add(-time.Minute)),
			TerminatingPastGrace, now},
		{"terminating on a NotReady node, deleted after the node was lost: since the deletion",
			deleting(nodeLost(memberPod(corev1.PodRunning, running, corev1.ConditionTrue), lost), now.Add(-time.Minute)),
			TerminatingOnNotReadyNode, now.Add(-time.Minute)},
		{"terminating on a node lost after the deletion: since the node was lost",
			deleting(nodeLost(memberPod(corev1.PodRunning, running, corev1.ConditionTrue), lost), now.Add(-4*time.Minute)),
			TerminatingOnNotReadyNode, lost},
		{"on a NotReady node, not deleted (tolerated for ever): since the node was lost",
			nodeLost(memberPod(corev1.PodRunning, running, corev1.ConditionTrue), lost), NodeLost, lost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reason, since := NotRunning(tt.pod)
			if reason != tt.wantReason || !since.Equal(tt.wantSince) {
				t.Fatalf("NotRunning() = %q since %v, want %q since %v", reason, since, tt.wantReason, tt.wantSince)
			}
		})
	}
}

// notRunning marks member name's pod as not running for d (and the member
// as not answering, as such a member does not).
func notRunning(o *Observed, name, reason string, d time.Duration) {
	for i := range o.Pods {
		if o.Pods[i].Name == name {
			o.Pods[i].NotRunning, o.Pods[i].NotRunningSince, o.Pods[i].Ready = reason, o.Now.Add(-d), false
		}
	}
	for i := range o.Members {
		if o.Members[i].Name == name {
			o.Members[i].Healthy = false
		}
	}
}

func addLearner(o *Observed, name, version string) {
	o.Pods = append(o.Pods, Pod{Name: name, Version: version, Image: repo + ":v" + version, Created: o.Now.Add(-5 * time.Minute)})
	o.Members = append(o.Members, Member{ID: uint64(len(o.Members) + 1), Name: name, IsLearner: true})
}

func TestMembersThatDoNotRunAreDeadAfterTheDeadline(t *testing.T) {
	const deadline = DefaultNotRunningDeadline
	healthy := with(cluster("3.5.21", "a", "b", "c"), func(o *Observed) { o.NotRunningDeadline = deadline })
	under, over := deadline-time.Second, deadline+time.Second
	tests := []struct {
		name string
		in   Observed
		want Action // only the fields set here are compared
	}{
		{"ImagePullBackOff just under the deadline: wait",
			with(healthy, func(o *Observed) { notRunning(o, "c", "ImagePullBackOff", under) }),
			Action{Kind: Wait}},
		{"ImagePullBackOff over the deadline: the voter is removed first",
			with(healthy, func(o *Observed) { notRunning(o, "c", "ImagePullBackOff", over) }),
			Action{Kind: RemoveDeadMember, Member: "c", MemberID: 3, NotRunning: "yes"}},
		{"ErrImagePull over the deadline",
			with(healthy, func(o *Observed) { notRunning(o, "c", "ErrImagePull", over) }),
			Action{Kind: RemoveDeadMember, Member: "c"}},
		{"CrashLoopBackOff just under the deadline: wait",
			with(healthy, func(o *Observed) { notRunning(o, "b", "CrashLoopBackOff", under) }),
			Action{Kind: Wait}},
		{"CrashLoopBackOff over the deadline",
			with(healthy, func(o *Observed) { notRunning(o, "b", "CrashLoopBackOff", over) }),
			Action{Kind: RemoveDeadMember, Member: "b", MemberID: 2}},
		{"unschedulable over the deadline",
			with(healthy, func(o *Observed) { notRunning(o, "b", "Unschedulable", over) }),
			Action{Kind: RemoveDeadMember, Member: "b"}},
		{"unschedulable just under the deadline: wait",
			with(healthy, func(o *Observed) { notRunning(o, "b", "Unschedulable", under) }),
			Action{Kind: Wait}},
		{"terminating on a NotReady node over the deadline",
			with(healthy, func(o *Observed) {
				notRunning(o, "b", TerminatingOnNotReadyNode, over)
				o.Pods[1].Terminating = true
			}),
			Action{Kind: RemoveDeadMember, Member: "b"}},
		{"terminating on a Ready node within the margin past its grace period: wait for its kubelet",
			with(healthy, func(o *Observed) {
				notRunning(o, "b", TerminatingPastGrace, under)
				o.Pods[1].Terminating = true
			}),
			Action{Kind: Wait}},
		{"terminating on a Ready node past its grace period and the margin: stuck, removed",
			with(healthy, func(o *Observed) {
				notRunning(o, "b", TerminatingPastGrace, over)
				o.Pods[1].Terminating = true
			}),
			Action{Kind: RemoveDeadMember, Member: "b", MemberID: 2, NotRunning: "yes", Stuck: conditions.ReasonPodStuckTerminating}},
		{"a member stopped for a scale down whose pod is stuck terminating leaves the membership",
			with(healthy, func(o *Observed) {
				o.Size = 2
				notRunning(o, "c", TerminatingPastGrace, over)
				o.Pods[2].Terminating = true
			}),
			Action{Kind: RemoveMember, Member: "c", MemberID: 3, NotRunning: "yes", Stuck: conditions.ReasonPodStuckTerminating}},
		{"creating over the not-running deadline but within its own: wait",
			with(healthy, func(o *Observed) {
				o.CreatingDeadline = DefaultCreatingDeadline
				notRunning(o, "c", Creating, DefaultCreatingDeadline-time.Second)
			}),
			Action{Kind: Wait}},
		{"creating over its deadline: stuck, removed",
			with(healthy, func(o *Observed) {
				o.CreatingDeadline = DefaultCreatingDeadline
				notRunning(o, "c", Creating, DefaultCreatingDeadline+time.Second)
			}),
			Action{Kind: RemoveDeadMember, Member: "c", MemberID: 3, NotRunning: "yes", Stuck: conditions.ReasonPodStuckCreating}},
		{"a learner stuck creating is removed (and scale adds another)",
			with(healthy, func(o *Observed) {
				o.Size, o.CreatingDeadline = 4, DefaultCreatingDeadline
				addLearner(o, "d", "3.5.21")
				notRunning(o, "d", Creating, DefaultCreatingDeadline+time.Second)
			}),
			Action{Kind: RemoveDeadMember, Member: "d", MemberID: 4, Stuck: conditions.ReasonPodStuckCreating}},
		{"creating deadline 0 switches that rule off",
			with(healthy, func(o *Observed) { notRunning(o, "c", Creating, time.Hour) }),
			Action{Kind: Wait}},
		{"quorum: a stuck pod is not removed unless the others keep quorum",
			with(healthy, func(o *Observed) {
				notRunning(o, "b", TerminatingPastGrace, over)
				o.Pods[1].Terminating = true
				o.Members[2].Healthy = false
			}),
			Action{Kind: Wait, Reason: conditions.ReasonQuorumLost}},
		{"a voter that runs but is not ready is left alone, however long",
			with(healthy, func(o *Observed) { o.Pods[1].Ready = false; o.Members[1].Healthy = false }),
			Action{Kind: Wait}},
		{"on a NotReady node over the deadline, not answering: removed, without waiting for an eviction",
			with(healthy, func(o *Observed) { notRunning(o, "b", NodeLost, over) }),
			Action{Kind: RemoveDeadMember, Member: "b", MemberID: 2, NotRunning: "yes"}},
		{"on a NotReady node just under the deadline: wait",
			with(healthy, func(o *Observed) { notRunning(o, "b", NodeLost, under) }),
			Action{Kind: Wait}},
		{"on a NotReady node, answering (only its kubelet is cut off): left alone, however long",
			with(healthy, func(o *Observed) {
				notRunning(o, "b", NodeLost, time.Hour)
				o.Members[1].Healthy = true
			}),
			Action{Kind: Nothing}},
		{"kubelets cut off on two of three nodes, members not answering either: neither is removed",
			with(healthy, func(o *Observed) {
				notRunning(o, "b", NodeLost, time.Hour)
				notRunning(o, "c", NodeLost, time.Hour)
			}),
			Action{Kind: Wait, Reason: conditions.ReasonQuorumLost}},
		{"a member that answers runs, whatever its pod looks like",
			with(healthy, func(o *Observed) {
				notRunning(o, "b", TerminatingOnNotReadyNode, time.Hour)
				o.Members[1].Healthy = true
			}),
			Action{Kind: Nothing}},
		{"a learner whose pod never starts is removed (and scale adds another)",
			with(healthy, func(o *Observed) {
				o.Size = 4
				addLearner(o, "d", "3.5.21")
				notRunning(o, "d", "ImagePullBackOff", over)
			}),
			Action{Kind: RemoveDeadMember, Member: "d", MemberID: 4, NotRunning: "yes"}},
		{"a learner just under the deadline is waited for",
			with(healthy, func(o *Observed) {
				o.Size = 4
				addLearner(o, "d", "3.5.21")
				notRunning(o, "d", "ImagePullBackOff", under)
			}),
			Action{Kind: Wait}},
		{"an upgrade's learner whose image does not exist is removed, not promoted",
			with(healthy, func(o *Observed) {
				o.Version = "3.6.5"
				addLearner(o, "d", "3.6.5")
				notRunning(o, "d", "ImagePullBackOff", over)
			}),
			Action{Kind: RemoveMember, Member: "d", MemberID: 4, NotRunning: "yes"}},
		{"quorum: two of three voters do not run: neither is removed",
			with(healthy, func(o *Observed) {
				notRunning(o, "b", TerminatingOnNotReadyNode, over)
				notRunning(o, "c", TerminatingOnNotReadyNode, over)
			}),
			Action{Kind: Wait, Reason: conditions.ReasonQuorumLost}},
		{"quorum: one voter does not run, another is unhealthy: not removed",
			with(healthy, func(o *Observed) {
				notRunning(o, "c", "CrashLoopBackOff", over)
				o.Members[1].Healthy = false
			}),
			Action{Kind: Wait, Reason: conditions.ReasonQuorumLost}},
		{"quorum: two of five voters do not run: one is removed, three keep quorum",
			with(cluster("3.5.21", "a", "b", "c", "d", "e"), func(o *Observed) {
				o.NotRunningDeadline = deadline
				notRunning(o, "d", "Unschedulable", over)
				notRunning(o, "e", "Unschedulable", over)
			}),
			Action{Kind: RemoveDeadMember, Member: "d", MemberID: 4}},
		{"with volumes a member that does not run is replaced, not restarted on its claim",
			with(healthy, func(o *Observed) {
				o.UsesPVC = true
				o.PVCs = map[string]bool{"a": true, "b": true, "c": true}
				notRunning(o, "c", "CrashLoopBackOff", over)
			}),
			Action{Kind: RemoveDeadMember, Member: "c", MemberID: 3}},
		{"deadline 0 switches the rule off",
			with(healthy, func(o *Observed) { o.NotRunningDeadline = 0; notRunning(o, "c", "ImagePullBackOff", time.Hour) }),
			Action{Kind: Wait}},
		{"the next look is at the deadline when that comes first",
			with(healthy, func(o *Observed) {
				notRunning(o, "c", "ImagePullBackOff", deadline-5*time.Second)
				o.Pods = append(o.Pods, Pod{Name: "x", Created: now.Add(-time.Second)}) // a young orphan: wait 14 s
			}),
			Action{Kind: Wait, RequeueAfter: 5*time.Second + time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Next(tt.in, Options{}); !matches(got, tt.want) {
				t.Fatalf("Next() = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestWhyDead(t *testing.T) {
	o := with(cluster("3.5.21", "a", "b", "c"), func(o *Observed) {
		o.NotRunningDeadline = time.Minute
		notRunning(o, "b", "ImagePullBackOff", 75*time.Second)
		dropPod(o, "c")
	})
	for i, want := range []string{
		"",
		"its pod b has been in ImagePullBackOff since 2026-01-01T11:58:45Z, longer than the 1m0s deadline",
		"its pod is gone",
	} {
		if got := WhyDead(o, o.Members[i]); got != want {
			t.Errorf("WhyDead(%s) = %q, want %q", o.Members[i].Name, got, want)
		}
	}
	o = with(o, func(o *Observed) {
		o.CreatingDeadline = 10 * time.Minute
		notRunning(o, "a", Creating, 11*time.Minute)
		o.Pods = append(o.Pods, Pod{Name: "c", Terminating: true, NotRunning: TerminatingPastGrace, NotRunningSince: now.Add(-2 * time.Minute)})
		o.Members[2].Healthy = false
	})
	for i, want := range []string{
		"its pod a has been creating its containers (ContainerCreating, or its sandbox, volumes or network not ready) since 2026-01-01T11:49:00Z, longer than the 10m0s deadline",
		"its pod b has been in ImagePullBackOff since 2026-01-01T11:58:45Z, longer than the 1m0s deadline",
		"its pod c has been terminating past its grace period on a working node since 2026-01-01T11:58:00Z, longer than the 1m0s deadline",
	} {
		if got := WhyDead(o, o.Members[i]); got != want {
			t.Errorf("WhyDead(%s) = %q, want %q", o.Members[i].Name, got, want)
		}
	}
}

func TestPodPolicyChangesRollOneMemberAtATime(t *testing.T) {
	healthy := with(cluster("3.5.21", "a", "b", "c"), func(o *Observed) {
		o.PolicyHash = "new"
		for i := range o.Pods {
			o.Pods[i].PolicyHash = "old"
		}
	})
	tests := []struct {
		name string
		in   Observed
		want Action
	}{
		{"emptyDir: an up-to-date member is added first", healthy, Action{Kind: AddMember, Version: "3.5.21", Upgrade: true}},
		{"emptyDir: then an outdated follower is stopped",
			with(healthy, func(o *Observed) {
				o.Pods = append(o.Pods, Pod{Name: "d", Version: "3.5.21", Image: repo + ":v3.5.21", PolicyHash: "new", Created: now})
				o.Members = append(o.Members, Member{ID: 4, Name: "d", Started: true, Healthy: true})
			}),
			Action{Kind: StopMember, Member: "b", MemberID: 2, Upgrade: true}},
		{"volumes: an outdated follower is restarted in place",
			with(healthy, func(o *Observed) { o.UsesPVC = true; o.PVCs = map[string]bool{"a": true, "b": true, "c": true} }),
			Action{Kind: RestartMember, Member: "b", MemberID: 2, Upgrade: true}},
		{"an unhealthy member holds the rollout", with(healthy, func(o *Observed) { o.Members[2].Healthy = false }),
			Action{Kind: Wait}},
		{"pods that carry no policy hash are not rolled",
			with(healthy, func(o *Observed) {
				for i := range o.Pods {
					o.Pods[i].PolicyHash = ""
				}
			}),
			Action{Kind: Nothing}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Next(tt.in, Options{}); !matches(got, tt.want) {
				t.Fatalf("Next() = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
