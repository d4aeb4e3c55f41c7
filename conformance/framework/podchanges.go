package framework

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// podChange is one step of a pod's life seen between two of its states.
type podChange struct {
	Reason, Message string
	Warning         bool
}

// podChanges is what happened to a pod between two states a watch
// delivered (old is nil for a pod just created), in the order a pod lives
// them. Pure, so tests feed it states; the watch may skip states (a
// relist after a broken connection), so each step is read from the
// difference, never from the watch event's type.
func podChanges(old, cur *corev1.Pod) []podChange {
	var out []podChange
	if old == nil {
		created := podChange{Reason: "Created"}
		if cur.Spec.NodeName != "" {
			created.Message = "on node " + cur.Spec.NodeName
		}
		out = append(out, created)
		old = &corev1.Pod{Spec: corev1.PodSpec{NodeName: cur.Spec.NodeName}}
	}
	if old.Spec.NodeName == "" && cur.Spec.NodeName != "" {
		out = append(out, podChange{Reason: "Scheduled", Message: "on node " + cur.Spec.NodeName})
	}
	if p := cur.Status.Phase; p != old.Status.Phase && p != "" && p != corev1.PodPending {
		out = append(out, podChange{Reason: string(p), Message: joinNonEmpty(": ", cur.Status.Reason, cur.Status.Message), Warning: p == corev1.PodFailed})
	}
	out = append(out, containerChanges(old.Status.ContainerStatuses, cur.Status.ContainerStatuses, cur.DeletionTimestamp != nil)...)
	if wasReady, ready := readyCondition(old), readyCondition(cur); wasReady.Status != ready.Status {
		switch {
		case ready.Status == corev1.ConditionTrue:
			out = append(out, podChange{Reason: "Ready"})
		case wasReady.Status == corev1.ConditionTrue:
			// A member that stops serving: worth seeing even when the
			// suite deleted it.
			out = append(out, podChange{Reason: "Unready", Message: joinNonEmpty(": ", ready.Reason, ready.Message), Warning: true})
		}
	}
	if old.DeletionTimestamp == nil && cur.DeletionTimestamp != nil {
		msg := ""
		if g := cur.DeletionGracePeriodSeconds; g != nil {
			msg = fmt.Sprintf("grace period %d s", *g)
		}
		out = append(out, podChange{Reason: "Terminating", Message: msg})
	}
	return out
}

// containerChanges are the restarts, the problems a container waits on
// (CrashLoopBackOff, ImagePullBackOff...) and the ends of containers that
// will not restart.
func containerChanges(old, cur []corev1.ContainerStatus, deleting bool) []podChange {
	before := map[string]corev1.ContainerStatus{}
	for _, s := range old {
		before[s.Name] = s
	}
	var out []podChange
	for _, s := range cur {
		was := before[s.Name]
		if s.RestartCount > was.RestartCount {
			msg := fmt.Sprintf("container %s restarted (%d restarts)", s.Name, s.RestartCount)
			if t := s.LastTerminationState.Terminated; t != nil {
				msg += fmt.Sprintf(": %s, exit code %d", orUnknown(t.Reason), t.ExitCode)
			}
			out = append(out, podChange{Reason: "Restarted", Message: msg, Warning: true})
			continue
		}
		if w := s.State.Waiting; w != nil && !startingUp(w.Reason) && (was.State.Waiting == nil || was.State.Waiting.Reason != w.Reason) {
			out = append(out, podChange{Reason: w.Reason, Message: joinNonEmpty(": ", "container "+s.Name, w.Message), Warning: true})
		}
		if t := s.State.Terminated; t != nil && was.State.Terminated == nil && !deleting {
			out = append(out, podChange{Reason: "Terminated", Message: fmt.Sprintf("container %s: %s, exit code %d", s.Name, orUnknown(t.Reason), t.ExitCode), Warning: t.ExitCode != 0})
		}
	}
	return out
}

// startingUp are the waiting reasons of a container on its way up.
func startingUp(reason string) bool {
	return reason == "" || reason == "ContainerCreating" || reason == "PodInitializing"
}

func readyCondition(p *corev1.Pod) corev1.PodCondition {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c
		}
	}
	return corev1.PodCondition{Status: corev1.ConditionFalse}
}

func joinNonEmpty(sep string, parts ...string) string {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, sep)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown reason"
	}
	return s
}
