// Package conditions names the condition types, reasons and Event reasons the
// operator reports, so status and Events always use the same words.
package conditions

// Condition types on EtcdCluster status.
const (
	// Available is True while a quorum of voting members is healthy.
	Available = "Available"
	// Scaling is True while membership size differs from spec.size.
	Scaling = "Scaling"
	// Recovering is True while a dead member is being replaced or restarted.
	Recovering = "Recovering"
	// Upgrading is True while members move to a new version or image; False with
	// a refusal reason when the requested version cannot be reached safely.
	Upgrading = "Upgrading"
	// Authorized is False while a write the operator needs is refused (its
	// grant lacks a verb); set once a write has been refused.
	Authorized = "Authorized"
	// SpaceAvailable is False while etcd's NOSPACE alarm is active (the
	// cluster refuses writes), saying what the operator does about it or
	// why it cannot; set once the alarm was seen, True once it is gone.
	SpaceAvailable = "SpaceAvailable"
	// Stalled is True while the next change keeps failing, or the API
	// server refuses a new member's pod, and the change is retried with a
	// growing delay (the kstatus convention: abnormal-true); set once that
	// happened, False once the change went through.
	Stalled = "Stalled"
)

// Condition reasons (CamelCase, as the API requires).
const (
	ReasonQuorumHealthy       = "QuorumHealthy"
	ReasonQuorumLost          = "QuorumLost"
	ReasonBootstrapping       = "Bootstrapping"
	ReasonMembershipUnknown   = "MembershipUnknown"
	ReasonScalingUp           = "ScalingUp"
	ReasonScalingDown         = "ScalingDown"
	ReasonAtDesiredSize       = "AtDesiredSize"
	ReasonReplacingDeadMember = "ReplacingDeadMember"
	ReasonRestartingMember    = "RestartingMember"
	ReasonNoDeadMembers       = "NoDeadMembers"
	ReasonUpgradeInProgress   = "UpgradeInProgress"
	ReasonUpToDate            = "UpToDate"
	ReasonDowngradeRefused    = "DowngradeRefused"
	ReasonVersionSkewRefused  = "VersionSkewRefused"
	ReasonPaused              = "Paused"
	ReasonAllMembersLost      = "AllMembersLost"
	ReasonWriteForbidden      = "WriteForbidden"
	ReasonWritesAuthorized    = "WritesAuthorized"
	// ReasonForeignPods: pods with the cluster's labels that it neither
	// controls nor can adopt; nothing is changed while they exist.
	ReasonForeignPods = "ForeignPods"
	// ReasonAdopting: orphaned member pods of this cluster are being adopted.
	ReasonAdopting = "Adopting"
	// ReasonUpgradeAborted: spec.version went back to status.currentVersion
	// while some members already ran a newer minor release, which they keep.
	ReasonUpgradeAborted = "UpgradeAborted"
	// ReasonImageNotPulled: a member could not pull the image of spec.version
	// in time; it runs its previous version again and the upgrade is held.
	ReasonImageNotPulled = "ImageNotPulled"
	// ReasonNewVersionUnhealthy: a member did not become healthy on the image
	// of spec.version in time (its etcd kept exiting); it runs its previous
	// version again (on its claim; an emptyDir learner is removed) and the
	// upgrade is held.
	ReasonNewVersionUnhealthy = "NewVersionUnhealthy"
	// ReasonOldPatchRefused: spec.version is the next minor release, which
	// etcd's upgrade guide allows only once every member runs a recent
	// enough patch of the current one (3.5 to 3.6: see plan.MinorUpgradeFloors).
	ReasonOldPatchRefused = "OldPatchRefused"
	// ReasonRecoveringFromSurvivor: quorum was lost for good on emptyDir and
	// the cluster opted in: it is started again from a copy of a survivor's
	// data, so writes the lost members acknowledged may be missing.
	ReasonRecoveringFromSurvivor = "RecoveringFromSurvivor"
	// ReasonClientTLSUnavailable: the cluster's members require client
	// certificates and the operator has none for them (its operatorSecret
	// cannot be read or is unusable); nothing is changed until it has one.
	ReasonClientTLSUnavailable = "ClientTLSUnavailable"
	// ReasonRestoring: an EtcdRestore replaces the cluster's members by a new
	// cluster seeded from a backup.
	ReasonRestoring = "Restoring"
	// ReasonRestoringFromBackup: every member pod of the cluster on emptyDir
	// is gone, with the data, and the cluster opted in: it is restored from
	// its EtcdBackup's latest backup, so writes acknowledged after that
	// backup are lost.
	ReasonRestoringFromBackup = "RestoringFromBackup"
	// ReasonClaimsWithoutClaimSpec: claims with the cluster's labels exist
	// (its data, from an earlier EtcdCluster of that name, or its own
	// members' after the claim spec was removed where no CRD rule refuses
	// that) but the spec asks for no claims: no new cluster is bootstrapped
	// beside them, and no cluster of members on them is failed as lost.
	ReasonClaimsWithoutClaimSpec = "ClaimsWithoutClaimSpec"
	// ReasonRestoreRefused: the cluster's EtcdRestore cannot be carried out
	// (its backup does not restore, say) and no member was touched: the
	// EtcdRestore is marked failed, the cluster goes on as it was.
	ReasonRestoreRefused = "RestoreRefused"
	// ReasonNoSpace: a NOSPACE alarm is active and the operator reclaims
	// space (defragments members, then disarms it), or waits to.
	ReasonNoSpace = "NoSpace"
	// ReasonDataFillsQuota: under NOSPACE, a member's data in use (live
	// keys and history not compacted yet) is over the disarm line: the
	// alarm stays, or writes would fill the quota again at once.
	ReasonDataFillsQuota = "DataFillsQuota"
	// ReasonDefragmentationHeld: under NOSPACE, a member must be
	// defragmented, which stops it serving for a while, and the cluster has
	// no voter to spare.
	ReasonDefragmentationHeld = "DefragmentationHeld"
	// ReasonWithinQuota: no NOSPACE alarm is active.
	ReasonWithinQuota = "WithinQuota"
	// ReasonDefragmenting: a member's free pages are being given back.
	ReasonDefragmenting = "Defragmenting"
	// ReasonLearnerNotCaughtUp (Recovering, and the Warning Event of its
	// removal): a learner whose etcd has run for longer than the learner
	// deadline without being promoted (it never reached the leader, or etcd
	// refuses its promotion as not caught up) counts as dead.
	ReasonLearnerNotCaughtUp = "LearnerNotCaughtUp"
	// ReasonPodStuckTerminating (Recovering, and the Warning Event): a member
	// pod on a working node is still there past its grace period and the
	// deadline, and its member does not answer: it counts as dead.
	ReasonPodStuckTerminating = "PodStuckTerminating"
	// ReasonPodStuckCreating (Recovering, and the Warning Event): a member
	// pod on a node has not started its containers (sandbox, volumes or
	// network not ready, ContainerCreating) for longer than the creating
	// deadline: it counts as dead.
	ReasonPodStuckCreating = "PodStuckCreating"
	// ReasonMemberPodRefused (Stalled, and the Warning Event): the API server
	// refuses the pod of a new member (a server-side dry run: ResourceQuota,
	// PodSecurity, an admission webhook, a spec it rejects), so no learner is
	// added; retried with a growing delay.
	ReasonMemberPodRefused = "MemberPodRefused"
	// ReasonBackingOff (Stalled): the same change failed several times in a
	// row; it is retried with a growing delay.
	ReasonBackingOff = "BackingOff"
	// ReasonChangesSucceed (Stalled False): the change that kept failing went through.
	ReasonChangesSucceed = "ChangesSucceed"
	// ReasonPodNotSeenYet: a pod the operator created is not in its cache
	// yet; nothing is decided until it is (or a grace period is over).
	ReasonPodNotSeenYet = "PodNotSeenYet"
)

// Event reasons. The first four are the ones coreos etcd-operator emitted, kept
// word for word so existing alerts and runbooks keep matching.
const (
	EventReplacingDeadMember = "Replacing Dead Member"
	EventMemberRemoved       = "Member Removed"
	EventNewMemberAdded      = "New Member Added"
	EventMemberUpgraded      = "Member Upgraded"
	EventMemberPromoted      = "Member Promoted"
	EventLeaderMoved         = "Leader Moved"
	EventMemberRestarted     = "Member Restarted"
	EventUpgradeRefused      = "Upgrade Refused"
	// EventUpgradeHeld (Warning): the image of spec.version could not be
	// pulled, or a member did not become healthy on it, so the upgrade stops
	// (Upgrading is False, ImageNotPulled or NewVersionUnhealthy).
	EventUpgradeHeld   = "Upgrade Held"
	EventClusterFailed = "Cluster Failed"
	// EventBackupFailed (Warning), on an EtcdBackup: an attempt failed
	// (its reason, as in status.Reason), or its pod did not start in time.
	EventBackupFailed = "Backup Failed"
	// EventEvenSize (Warning): spec.size is even, which tolerates no more
	// lost members than the odd size below it.
	EventEvenSize = "Even Size"
	// EventMemberNotRunning (Warning) names a member taken out because its pod
	// has not run for longer than the deadline, and says why.
	EventMemberNotRunning = "Member Not Running"
	// EventMemberAdopted names an orphaned member pod taken over by the cluster.
	EventMemberAdopted = "Member Adopted"
	// EventRecoveringFromSurvivor (Warning) names the survivor whose data a
	// cluster that lost quorum for good starts again from, and what may be lost.
	EventRecoveringFromSurvivor = "Recovering From Survivor"
	// EventClientTLSUnavailable (Warning) says why the operator cannot reach
	// the members (Available is False, ClientTLSUnavailable).
	EventClientTLSUnavailable = "Client TLS Unavailable"
	// EventRestoring (Warning) says that an EtcdRestore replaces the
	// cluster's members and data by a backup's.
	EventRestoring = "Restoring From Backup"
	// EventStatusNotWritten (Warning) says that the cluster's status cannot
	// be stored (the operator's grant lacks the status subresource, say):
	// without it `kubectl describe` would show no status and no reason.
	EventStatusNotWritten = "Status Not Written"
	// EventMemberDefragmented names a member whose free pages were given
	// back, with its file size before.
	EventMemberDefragmented = "Member Defragmented"
	// EventHistoryCompacted: under NOSPACE, etcd's history was compacted to
	// the latest revision (watchers further behind list again).
	EventHistoryCompacted = "History Compacted"
	// EventAlarmDisarmed: NOSPACE was disarmed once every member's file
	// was back under the disarm line.
	EventAlarmDisarmed = "Alarm Disarmed"
	// EventNoSpace (Warning): the SpaceAvailable condition turned False, or
	// its reason changed: writes are refused, and why it lasts.
	EventNoSpace = "No Space"
	// EventEvictionRefused names a member whose pod the operator was to stop
	// (a roll, a scale down) and did not: the PodDisruptionBudget allows no
	// disruption now (a drain, say, took the last one); the stop is retried.
	EventEvictionRefused = "Eviction Refused"
)
