// Package plan decides the one next safe step for a cluster from what was
// observed. Pure: no client, no clock (time comes in Observed.Now).
package plan

import (
	"time"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
)

// Pod is what the plan needs to know about a member pod.
type Pod struct {
	Name        string
	Version     string
	Image       string
	Failed      bool
	Ready       bool
	Terminating bool
	Created     time.Time
	// NotRunning says why the pod does not run etcd and will not by itself,
	// or has not started yet (see NotRunning), since NotRunningSince; ""
	// while it runs or may still start.
	NotRunning      string
	NotRunningSince time.Time
	// RunningSince is when the pod's etcd container last started, zero
	// while it does not run (the clock of the learner deadline).
	RunningSince time.Time
	// PolicyHash is the pod policy the pod was made with (desired.PodPolicyHash);
	// "" for pods made before it was recorded, which no policy change rolls.
	PolicyHash string
	// BootstrapPeers lists, for a pod started to bootstrap a new cluster, the
	// names of every member of that bootstrap (from its --initial-cluster).
	BootstrapPeers []string
	// Pending is true until the pod's containers start (phase Pending): its
	// member has not run the pod's version yet.
	Pending bool
	// ImageNotPulled is the image the member could not pull before this pod
	// brought it back on its previous version (desired.AnnotationImageNotPulled).
	ImageNotPulled string
	// ImageUnhealthy is the image the member did not become healthy on
	// before this pod brought it back on its previous version
	// (desired.AnnotationImageUnhealthy).
	ImageUnhealthy string
	// Seed is set on a member pod started on a copy of a survivor's data
	// (see LostQuorum); nil for every other pod.
	Seed *Seed
	// Restore is the UID of the EtcdRestore whose backup the pod's member
	// was seeded from; "" for every other pod.
	Restore string
	// SeedFailing, on a seeded pod, is what its seed init container said
	// when it failed again after a retry; "" while it did not.
	SeedFailing string
}

// Member is one entry of etcd's membership, joined with its health.
type Member struct {
	ID        uint64
	Name      string
	IsLearner bool
	// Started is true once the member published its name (it ran at least once).
	Started bool
	// Healthy is true when the member answered a status request without errors
	// and knows a leader.
	Healthy bool
	// RaftIndex is the raft index the member had committed when it last
	// answered a status: among followers, the highest is roughly the most
	// caught up with the leader.
	RaftIndex uint64
	// DBSize is the member's backend file, DBSizeInUse the part of it that
	// holds data (the rest are free pages), both 0 when it did not answer.
	// Quota is its backend quota (etcd's status from 3.6, else its pod's
	// command or environment); 0 when it cannot be told.
	DBSize, DBSizeInUse, Quota int64
}

// Observed is everything a decision is made from.
type Observed struct {
	Now time.Time

	Size       int
	Version    string // spec.version
	Repository string // spec.repository, defaulted
	Paused     bool
	UsesPVC    bool
	Phase      etcdv1beta2.ClusterPhase
	// ReportedVersion is status.currentVersion as last written: the lowest
	// version a member ran, for members that run no pod now (see CurrentVersion).
	ReportedVersion string
	// UnpulledImage is status.unpulledImage as last written (see HeldImage).
	UnpulledImage string
	// UnhealthyImage is status.unhealthyImage as last written (see UnhealthyImage).
	UnhealthyImage string
	// PolicyHash is the pod policy new member pods get (desired.PodPolicyHash).
	PolicyHash string
	// NotRunningDeadline is how long a member pod may not run (Pod.NotRunning)
	// before its member counts as dead; 0 switches the rule off.
	NotRunningDeadline time.Duration
	// CreatingDeadline is how long a member pod may stay being created (see
	// Creating) before its member counts as dead; 0 switches the rule off.
	CreatingDeadline time.Duration
	// LearnerDeadline is the fixed part of how long a learner's etcd may run
	// without being promoted before it counts as dead (see learnerDeadline);
	// 0 switches the rule off.
	LearnerDeadline time.Duration
	// Unseen holds the member pods this operator created that the pod list
	// does not show yet, by name, with when each was created (a cache that
	// lags behind the operator's own writes; see cacheBehind).
	Unseen map[string]time.Time
	// Failures are the changes that failed lately, in a row (see backoff).
	Failures []Failure
	// UnansweringIsDead (unsafe, the self-test's replace-unanswering mode):
	// a member that does not answer is dead at once, however well its pod
	// runs (see Options.ReplaceUnanswering).
	UnansweringIsDead bool

	Pods []Pod
	// PVCs holds the names of existing member claims, PVCCreated when each
	// was made (for OrphanGrace).
	PVCs       map[string]bool
	PVCCreated map[string]time.Time
	// UnownedPVCs names the claims of PVCs that the cluster does not control
	// (an earlier EtcdCluster of the same name deleted with
	// --cascade=orphan): they may hold the cluster's data, so they are
	// brought back or adopted, never deleted. PVCs is filled even when the
	// spec asks for no claims (UsesPVC false), so that no cluster is
	// bootstrapped beside them.
	UnownedPVCs map[string]bool

	// Pods with the cluster's labels that it does not control (its
	// EtcdCluster was deleted with --cascade=orphan and created again, say):
	// Adoptable are members of its etcd cluster with no controller; Foreign
	// name the others, each with why it cannot be adopted.
	Adoptable []string
	Foreign   []string

	// NoClientTLS says why the operator cannot reach members that require a
	// client certificate (the operatorSecret cannot be read, say); "" when
	// it can, or members need none. Nothing is changed while it is set.
	NoClientTLS string

	// NoSpace is true while etcd's NOSPACE alarm is active: the cluster
	// refuses writes (see reclaimSpace).
	NoSpace bool
	// Revision is the key-value store's latest revision; HistoryKept, read
	// only under NOSPACE, is true while etcd keeps revisions older than it.
	Revision    int64
	HistoryKept bool

	// MembershipKnown is false when no member answered.
	MembershipKnown bool
	Members         []Member
	LeaderID        uint64

	// Local is what each answering member says on its own (read locally, so
	// without quorum); filled only on emptyDir while no leader is known.
	Local []Local
	// RecoverFromSurvivor: the cluster opted in to recovering a lost quorum
	// from a survivor's data (desired.AnnotationRecoverFromSurvivor).
	RecoverFromSurvivor bool
	// SeedImage runs the operator's binary in the init container of a
	// seeded member; "" when the operator does not know it.
	SeedImage string
	// Restore is the cluster's EtcdRestore while it is not finished; nil
	// when there is none.
	Restore *Restore
	// EarlierRestore is the cluster's EtcdRestore when it is not in
	// progress (finished, or being deleted); nil when there is none.
	EarlierRestore *EarlierRestore
	// RestoreFromBackup is the latest backup of the EtcdBackup the cluster
	// opted in to restoring from once every member is lost
	// (desired.AnnotationRestoreFromBackup). Read only then (MembersLost):
	// nil otherwise, and when the cluster did not opt in.
	RestoreFromBackup *Backup
}

// Restore is an EtcdRestore of the cluster (same name) still to be done.
type Restore struct {
	// UID identifies the EtcdRestore; its seeded pod records it.
	UID string
	// Seeding is true once the seeded member's pod was created (the
	// EtcdRestore's phase says so): from then on the restored cluster grows
	// as any other and no pod is deleted for the restore.
	Seeding bool
	// Source says where the backup is, for messages.
	Source string
	// AfterLoss, on an EtcdRestore the operator created because every member
	// was lost (afterMembersLost), describes the backup it restores
	// (Backup.Describe); "" on one a person created.
	AfterLoss string
	// Check is how the check of the backup made before any member is
	// touched (desired.RestoreVerifyPod) stands.
	Check BackupCheck
	// CheckFailed is what the check said when it failed.
	CheckFailed string
}

// BackupCheck is the state of a restore's backup check.
type BackupCheck string

// The states of a backup check.
const (
	// BackupNotChecked: no check was started.
	BackupNotChecked BackupCheck = ""
	// BackupChecking: the check runs.
	BackupChecking BackupCheck = "Checking"
	// BackupChecked: the backup was fetched and restored beside the cluster.
	BackupChecked BackupCheck = "Checked"
	// BackupUnusable: the backup could not be fetched or restored.
	BackupUnusable BackupCheck = "Unusable"
)

// EarlierRestore is an EtcdRestore of the cluster that is not in progress:
// what is left of an earlier restore.
type EarlierRestore struct {
	// State says what it is, for messages: "Restored", "Failed", ...
	State string
	// Deleting is true once it is being deleted.
	Deleting bool
}

// Options switch on deliberately unsafe behaviour for the suite's self-test.
type Options struct {
	// SkipDeadMemberRemoval replaces a dead member's pod (same name, empty
	// data) but leaves the dead member in etcd's membership.
	SkipDeadMemberRemoval bool
	// LeaveNoSpace never compacts, defragments or disarms under NOSPACE
	// (what this operator did before): the cluster refuses writes until a
	// person steps in, however much data was deleted.
	LeaveNoSpace bool
	// ReplaceUnanswering takes a member that does not answer the operator,
	// though its pod runs, for dead at once and replaces it: a member only
	// cut off the network for a moment loses its place and its data.
	ReplaceUnanswering bool
	// UpgradeAllAtOnce restarts every outdated member at once with no health gate.
	UpgradeAllAtOnce bool
	// RestartBeforeRejoin rolls an upgrade one member at a time, but
	// restarts the next member as soon as the last one's new pod exists,
	// before its etcd has rejoined: on claims, two of three members are
	// down at once for a few seconds, and the cluster has no quorum
	// meanwhile.
	RestartBeforeRejoin bool
	// RebootstrapAfterQuorumLoss starts a new, empty cluster once most
	// member pods are gone (see unsafeRebootstrap).
	RebootstrapAfterQuorumLoss bool
	// RestoreWithoutData carries out an EtcdRestore but starts the new
	// cluster empty: the backup is never read.
	RestoreWithoutData bool
	// BootstrapBesideClaims bootstraps a new, empty cluster although claims
	// with the cluster's labels exist, and deletes those it does not
	// control as claims of no member (what this operator did before).
	BootstrapBesideClaims bool
	// RestoreUnchecked deletes a cluster's members for an EtcdRestore
	// without checking first that its backup restores (what this operator
	// did before).
	RestoreUnchecked bool
	// OmitCurrentVersion never reports status.currentVersion (the status
	// check's known-bad variant); the plan itself does not read it.
	OmitCurrentVersion bool
	// BudgetFromSize gives the cluster the disruption budget this operator
	// had before (maxUnavailable 1, counted by Kubernetes against
	// spec.size, not against the voters etcd lists).
	BudgetFromSize bool
	// Silent records no Events and sets no metric of the cluster (the
	// insights check's known-bad variant); the plan itself does not read
	// it. The cluster is looked after all the same: nobody is told.
	Silent bool
}

// Kind names an action.
type Kind string

// The actions. Exactly one is taken per pass; the next pass observes its effect.
const (
	// Nothing: the cluster is as desired (or paused).
	Nothing Kind = "Nothing"
	// Wait: something is in progress; look again after RequeueAfter.
	Wait Kind = "Wait"
	// Fail: the cluster cannot recover without a person.
	Fail Kind = "Fail"
	// Bootstrap: create Count members together as a new cluster.
	Bootstrap Kind = "Bootstrap"
	// AddMember: add a learner with Version, then create its pod.
	AddMember Kind = "AddMember"
	// PromoteLearner: make learner MemberID a voter.
	PromoteLearner Kind = "PromoteLearner"
	// RemoveMember: remove member MemberID from membership, then delete its pod
	// (if any is left) and claim.
	RemoveMember Kind = "RemoveMember"
	// StopMember: delete the pod of member MemberID gracefully; once the pod is
	// gone a later pass removes the member from membership (RemoveMember).
	StopMember Kind = "StopMember"
	// RemoveDeadMember: remove dead member MemberID, then delete what is left of it.
	RemoveDeadMember Kind = "RemoveDeadMember"
	// MoveLeader: hand leadership to TargetID before touching the leader.
	MoveLeader Kind = "MoveLeader"
	// RecreatePod: start member Member again on its existing data (PVC) with Version.
	RecreatePod Kind = "RecreatePod"
	// RestartMember: delete pod Member so it comes back with the new image on its PVC.
	RestartMember Kind = "RestartMember"
	// DeleteOrphanPod: delete pod Member, which belongs to no member.
	DeleteOrphanPod Kind = "DeleteOrphanPod"
	// AdoptPods: make the cluster the controller of pods Names (and their claims).
	AdoptPods Kind = "AdoptPods"
	// DeleteOrphanClaim: delete claim Member, which belongs to no member and no pod.
	DeleteOrphanClaim Kind = "DeleteOrphanClaim"
	// RestartAll (unsafe): force-delete and recreate every pod in Names at once.
	RestartAll Kind = "RestartAll"
	// Rebootstrap (unsafe self-test mode only): delete every member pod
	// and claim in Names and bootstrap Count new members.
	Rebootstrap Kind = "Rebootstrap"
	// ResumeBootstrap: create the missing pod Member of an unfinished bootstrap,
	// with the same initial cluster as its peers (copied from pod From).
	ResumeBootstrap Kind = "ResumeBootstrap"
	// SeedFromSurvivor: create the pod of the only member of a new cluster,
	// seeded from a copy of survivor pod From's data (raft index RaftIndex),
	// replacing the pods in Names (see LostQuorum).
	SeedFromSurvivor Kind = "SeedFromSurvivor"
	// RetireOldMembers: delete the pods in Names, the old cluster's, once the
	// seeded member replacing them runs.
	RetireOldMembers Kind = "RetireOldMembers"
	// SeedFromBackup: create the pod of the only member of a new cluster,
	// seeded from the backup of the cluster's EtcdRestore.
	SeedFromBackup Kind = "SeedFromBackup"
	// DeleteForRestore: delete the pods in Names, the members of the cluster
	// an EtcdRestore replaces, before its seeded member starts.
	DeleteForRestore Kind = "DeleteForRestore"
	// CheckBackup: start the check of the EtcdRestore's backup beside the
	// running cluster, before any member is touched.
	CheckBackup Kind = "CheckBackup"
	// RefuseRestore: the EtcdRestore cannot be carried out and nothing was
	// touched: it is marked failed with Message; the cluster goes on as it is.
	RefuseRestore Kind = "RefuseRestore"
	// RestoreLatestBackup: every member is lost; create the cluster's
	// EtcdRestore of the latest backup of EtcdBackup From (Observed.RestoreFromBackup),
	// after deleting the earlier EtcdRestore when there is one. The restore
	// steps then carry it out.
	RestoreLatestBackup Kind = "RestoreLatestBackup"
	// Defragment: give member MemberID's free pages back (it serves nothing
	// meanwhile).
	Defragment Kind = "Defragment"
	// CompactHistory: compact etcd's history to Revision, physically.
	CompactHistory Kind = "CompactHistory"
	// DisarmNoSpace: disarm every NOSPACE alarm, so writes are taken again.
	DisarmNoSpace Kind = "DisarmNoSpace"
)

// Action is the decision of one pass.
type Action struct {
	Kind     Kind
	Member   string
	MemberID uint64
	TargetID uint64
	Count    int
	Names    []string
	From     string
	Version  string
	// Upgrade marks a removal or restart that is a step of an upgrade.
	Upgrade bool
	// Evict, on StopMember and RestartMember, marks the planned stop of a
	// healthy voter that the cluster can spare: its pod goes through the
	// Eviction API, so that the PodDisruptionBudget counts it together with
	// a drain's and the stop waits while the budget allows no disruption.
	// The pods of dead members, and stops the budget could never allow (a
	// cluster of one or two voters, which has none to spare), are deleted.
	Evict bool
	// NotRunning, on the removal of a dead member whose pod does not run,
	// says why it counts as dead (for the Warning Event).
	NotRunning string
	// Stuck, on the removal of a dead member, is the condition reason of the
	// stuck state it was in (conditions.ReasonLearnerNotCaughtUp, say), ""
	// for the other ways of being dead; its Warning Event has that reason.
	Stuck string
	// ImageNotPulled, on a RecreatePod while an upgrade is held, is the image
	// that could not be pulled, recorded on the new pod.
	ImageNotPulled string
	// ImageUnhealthy, on a RecreatePod while an upgrade is held, is the
	// image a member did not become healthy on, recorded on the new pod.
	ImageUnhealthy string
	// RaftIndex, on SeedFromSurvivor, is the survivor's raft index.
	RaftIndex uint64
	// Revision, on CompactHistory, is the revision to compact to.
	Revision int64
	// Reason is a condition reason; Message says the same for people.
	Reason       string
	Message      string
	RequeueAfter time.Duration
}
