package plan

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
)

// newerMinor reports whether version v is of a later minor (or major)
// release than target. Such a member is never moved to target: the data a
// newer minor release wrote need not be readable by an older one. That is
// what keeps an aborted upgrade (spec.version set back to
// status.currentVersion) safe; patch releases of one minor are rolled either way.
func newerMinor(v, target string) bool {
	pv, errV := ParseVersion(v)
	pt, errT := ParseVersion(target)
	if errV != nil || errT != nil {
		return false
	}
	return version.MajorMinor(pv.Major(), pv.Minor()).GreaterThan(version.MajorMinor(pt.Major(), pt.Minor()))
}

// outdated: the member's pod runs another image than version's, or was made
// with another pod policy (desired.PodPolicyHash),
// so it is rolled like an upgrade; unless it runs a newer minor release than
// version (newerMinor). Pods that carry no policy hash are never rolled for
// their policy alone.
func (o Observed) outdated(name, version string) bool {
	p, ok := o.pod(name)
	if !ok || newerMinor(p.Version, version) {
		return false
	}
	return p.Image != desired.ImageOf(o.Repository, version) || (p.PolicyHash != "" && o.PolicyHash != "" && p.PolicyHash != o.PolicyHash)
}

// Ahead lists the members whose pod runs a newer minor release than version,
// by name, with the versions they run.
func Ahead(o Observed, version string) (names, versions []string) {
	for _, name := range o.memberNames() {
		if p, ok := o.pod(name); ok && newerMinor(p.Version, version) {
			names = append(names, name)
			if !slices.Contains(versions, p.Version) {
				versions = append(versions, p.Version)
			}
		}
	}
	// Every version listed parsed: newerMinor is false for the others.
	slices.SortFunc(versions, func(a, b string) int {
		va, _ := ParseVersion(a)
		vb, _ := ParseVersion(b)
		switch {
		case va.LessThan(vb):
			return -1
		case vb.LessThan(va):
			return 1
		}
		return strings.Compare(a, b)
	})
	return names, versions
}

// rolling reports whether a member's pod runs another image than version's
// and will be moved to it.
func rolling(o Observed, version string) bool {
	image := desired.ImageOf(o.Repository, version)
	for _, m := range o.Members {
		if p, ok := o.pod(m.Name); ok && p.Image != image && !newerMinor(p.Version, version) {
			return true
		}
	}
	return false
}

// UpgradeCondition is the Upgrading condition: True while members move to
// the effective version's image; False with the refusal, the hold
// (HeldImage), or the abort (members that stay on a newer minor) otherwise.
func UpgradeCondition(o Observed) (upgrading bool, reason, message string) {
	version, refusal := EffectiveVersion(o)
	image := desired.ImageOf(o.Repository, version)
	if refusal != nil {
		return false, refusal.Reason, refusal.Message
	}
	if !o.MembershipKnown {
		return false, conditions.ReasonUpToDate, fmt.Sprintf("every member runs %s", image)
	}
	names, versions := Ahead(o, version)
	stay := ""
	if len(names) > 0 {
		stay = fmt.Sprintf("members %s stay on %s, as a member never goes back to an older minor release",
			strings.Join(names, ", "), strings.Join(versions, ", "))
	}
	switch {
	case rolling(o, version) && stay != "":
		return true, conditions.ReasonUpgradeInProgress, fmt.Sprintf("moving members to %s; %s", image, stay)
	case rolling(o, version):
		return true, conditions.ReasonUpgradeInProgress, "moving members to " + image
	case stay != "":
		return false, conditions.ReasonUpgradeAborted, fmt.Sprintf("upgrade aborted: spec.version is %s; %s; set spec.version to %s to finish the upgrade",
			version, stay, versions[len(versions)-1])
	}
	return false, conditions.ReasonUpToDate, fmt.Sprintf("every member runs %s", image)
}

func upgrade(o Observed, opts Options, version string) (Action, bool) {
	if held(o) {
		// Held: the members that moved already stay, as do the others,
		// until spec.version names another image.
		return Action{}, false
	}
	var outdated []string
	for _, m := range o.Members {
		if o.outdated(m.Name, version) {
			outdated = append(outdated, m.Name)
		}
	}
	if len(outdated) == 0 {
		return Action{}, false
	}
	sort.Strings(outdated)
	if opts.UpgradeAllAtOnce {
		return Action{Kind: RestartAll, Names: outdated, Version: version, Upgrade: true, Reason: conditions.ReasonUpgradeInProgress,
			Message: "restarting every outdated member at once (unsafe mode)", RequeueAfter: AfterChange}, true
	}
	if !o.UsesPVC {
		// emptyDir: a restarted member would come back empty, so add an
		// up-to-date member first and then take out an outdated one (scale
		// picks it and stops it first where quorum allows, see stopFirst):
		// the cluster never has fewer voters than spec.size.
		return Action{Kind: AddMember, Version: version, Upgrade: true, Reason: conditions.ReasonUpgradeInProgress,
			Message:      fmt.Sprintf("adding a %s member to replace an outdated one (%d outdated)", version, len(outdated)),
			RequeueAfter: AfterChange}, true
	}
	live := liveMembers(o)
	victim, _ := pickVictim(o, live, version)
	if victim.ID == o.LeaderID && Voters(live) > 1 {
		return moveLeaderAway(o, live, version, victim)
	}
	// A single voter has nobody to hand leadership to: it restarts in place
	// on its claim, and the cluster is down until it is back, as it would be
	// for any restart of it. From three voters on the restart is a voter
	// the cluster can spare, stopped through the budget (Action.Evict); with
	// one or two the budget allows no disruption at all, and the restart
	// takes the cluster down however it is made. (The unsafe
	// RestartBeforeRejoin deletes, to show what a roll that waits for no
	// one does.)
	return Action{Kind: RestartMember, Member: victim.Name, MemberID: victim.ID, Version: version, Upgrade: true,
		Evict:        Voters(live) >= 3 && !opts.RestartBeforeRejoin,
		Reason:       conditions.ReasonUpgradeInProgress,
		Message:      fmt.Sprintf("restarting member %s with %s", victim.Name, desired.ImageOf(o.Repository, version)),
		RequeueAfter: AfterChange}, true
}

// Voters counts the members that vote (learners do not).
func Voters(members []Member) int {
	n := 0
	for _, m := range members {
		if !m.IsLearner {
			n++
		}
	}
	return n
}

// recreating completes a RecreatePod decided elsewhere (a lost pod on its
// claim). While an upgrade is held the new pod records the image that could
// not be pulled, or that a member did not become healthy on. Otherwise, while
// members run a newer minor release than the version asked for (an aborted
// upgrade), the member comes back on the newest of them: which version its data was last written by is not known any more,
// and a newer release reads an older one's data, not the other way round.
func recreating(o Observed, a Action) Action {
	if a.Kind != RecreatePod {
		return a
	}
	a.ImageNotPulled, a.ImageUnhealthy = HeldImage(o), UnhealthyImage(o)
	if a.ImageNotPulled != "" || a.ImageUnhealthy != "" {
		return a
	}
	if _, versions := Ahead(o, a.Version); len(versions) > 0 {
		a.Version = versions[len(versions)-1]
	}
	return a
}
