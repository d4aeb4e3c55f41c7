package plan

import (
	"fmt"
	"time"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
)

// Failure is a change that failed, as the operator remembers it. Kept in
// memory only: an operator that restarts tries every change at once again.
type Failure struct {
	// Kind and Member name the change (Member is "" for AddMember: the new
	// member's name is only made when it is added).
	Kind   Kind
	Member string
	// Count is how many times in a row it failed, Last when it last did.
	Count int
	Last  time.Time
	// Error is what the last failure said.
	Error string
	// Refused: the last failure was the API server refusing the new
	// member's pod (a dry run), so nothing was changed.
	Refused bool
}

// MaxBackoff is the longest delay between tries of a change that keeps
// failing. A refusal that lasts then costs one try every two minutes (a
// dry run, at worst a learner added and removed), and a fix (a quota
// raised, a webhook corrected) is picked up within two minutes.
const MaxBackoff = 2 * time.Minute

// Backoff is the delay before the next try of a change that failed count
// times in a row: PollInFlight (the retry pace of a change etcd refuses for
// a moment, after a member reconnected), doubled for each further failure,
// up to MaxBackoff.
func Backoff(count int) time.Duration {
	d := PollInFlight
	for i := 1; i < count && d < MaxBackoff; i++ {
		d *= 2
	}
	return min(d, MaxBackoff)
}

// NextTry is when the change may be tried again.
func (f Failure) NextTry() time.Time { return f.Last.Add(Backoff(f.Count)) }

// stalls: the failure is worth telling (Stalled): the API server refused
// the member's pod, or the change failed more than once in a row (a single
// failure is retried at once, at the in-flight pace).
func (f Failure) stalls() bool { return f.Refused || f.Count > 1 }

// describe says what failed, how often, what it said and when it is tried
// again, in words that stay the same until the next failure.
func (f Failure) describe() string {
	next := fmt.Sprintf("next try at %s (%s after the last)", f.NextTry().UTC().Format(time.RFC3339), Backoff(f.Count))
	if f.Refused {
		return fmt.Sprintf("the API server refuses the pod of a new member: %s; no member is added (refused %d time(s) in a row; %s)",
			f.Error, f.Count, next)
	}
	return fmt.Sprintf("%s failed %d times in a row, last at %s: %s; %s",
		describeChange(f.Kind, f.Member), f.Count, f.Last.UTC().Format(time.RFC3339), f.Error, next)
}

func describeChange(k Kind, member string) string {
	switch k {
	case AddMember:
		return "adding a member"
	case PromoteLearner:
		return "promoting learner " + member
	case RemoveDeadMember, RemoveMember:
		return "removing member " + member
	}
	if member == "" {
		return string(k)
	}
	return fmt.Sprintf("%s %s", k, member)
}

func (o Observed) failure(k Kind, member string) (Failure, bool) {
	for _, f := range o.Failures {
		if f.Kind == k && f.Member == member {
			return f, true
		}
	}
	return Failure{}, false
}

// backoff holds action a while the same change failed lately and its delay
// is not over: the pass waits for the next try instead of repeating a
// change that fails (a learner added whose pod is refused, then removed as
// a member with no pod, and so on every second and a half).
func backoff(o Observed, a Action) Action {
	f, ok := o.failure(a.Kind, a.Member)
	if !ok || !o.Now.Before(f.NextTry()) {
		return a
	}
	return wait(a.Reason, fmt.Sprintf("%s: held, %s", a.Message, f.describe()), f.NextTry().Sub(o.Now))
}

// StalledCondition is the Stalled condition: True while a change keeps
// failing or its member's pod is refused (about the failure repeated most),
// False when none does (the operator sets that only where the condition
// was set before).
func StalledCondition(o Observed) (stalled bool, reason, message string) {
	var worst *Failure
	for i, f := range o.Failures {
		if f.stalls() && (worst == nil || f.Count > worst.Count) {
			worst = &o.Failures[i]
		}
	}
	switch {
	case worst == nil:
		return false, conditions.ReasonChangesSucceed, "the changes that failed before went through"
	case worst.Refused:
		return true, conditions.ReasonMemberPodRefused, worst.describe()
	}
	return true, conditions.ReasonBackingOff, worst.describe()
}
