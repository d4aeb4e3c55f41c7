package plan

import (
	"testing"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
)

// restoring is a healthy 3-member cluster with an EtcdRestore to carry out.
func restoring(f func(o *Observed)) Observed {
	return with(cluster("3.5.21", "a", "b", "c"), func(o *Observed) {
		o.SeedImage = "etcdproof/etcd-operator:dev"
		o.Restore = &Restore{UID: "r-1", Source: "S3 bucket/etcd.backup"}
		f(o)
	})
}

// restoredSeed adds the pod seeded from the restore's backup, answering alone.
func restoredSeed(o *Observed) {
	for _, n := range []string{"a", "b", "c"} {
		dropPod(o, n)
	}
	o.Pods = append(o.Pods, Pod{Name: "s", Version: "3.5.21", Created: now, Restore: "r-1", Seed: &Seed{From: "backup S3 bucket/etcd.backup"}})
	o.MembershipKnown, o.LeaderID = true, 9
	o.Members = []Member{{ID: 9, Name: "s", Started: true, Healthy: true}}
}

func TestRestore(t *testing.T) {
	tests := []struct {
		name string
		in   Observed
		want Action
	}{
		{"the backup is checked beside the running cluster before any member is touched",
			restoring(func(*Observed) {}),
			Action{Kind: CheckBackup, Reason: conditions.ReasonRestoring}},
		{"while the check runs: wait, every member as it is",
			restoring(func(o *Observed) { o.Restore.Check = BackupChecking }),
			Action{Kind: Wait, Reason: conditions.ReasonRestoring}},
		{"a backup that does not restore (missing, corrupt): refused, no member touched",
			restoring(func(o *Observed) {
				o.Restore.Check, o.Restore.CheckFailed = BackupUnusable, "object bucket/etcd.backup: not found"
			}),
			Action{Kind: RefuseRestore, Reason: conditions.ReasonRestoreRefused}},
		{"once the backup restores, the members of the cluster being replaced go first, all at once",
			restoring(func(o *Observed) { o.Restore.Check = BackupChecked }),
			Action{Kind: DeleteForRestore, Names: []string{"a", "b", "c"}, Reason: conditions.ReasonRestoring}},
		{"while they terminate: wait, no new cluster yet (clients never see two)",
			restoring(func(o *Observed) {
				for i := range o.Pods {
					o.Pods[i].Terminating = true
				}
			}),
			Action{Kind: Wait, Reason: conditions.ReasonRestoring}},
		{"old members gone: one member starts a new cluster on the backup",
			restoring(func(o *Observed) {
				o.Pods, o.MembershipKnown, o.Members, o.LeaderID = nil, false, nil, 0
			}),
			Action{Kind: SeedFromBackup, Version: "3.5.21", Reason: conditions.ReasonRestoring}},
		{"the operator does not know its own image (which fetches the backup): nothing is deleted, the condition says so",
			restoring(func(o *Observed) { o.SeedImage = "" }),
			Action{Kind: Wait, Reason: conditions.ReasonRestoring}},
		{"seeded member answers: the restored cluster grows as any other",
			restoring(restoredSeed),
			Action{Kind: AddMember, Reason: conditions.ReasonScalingUp}},
		{"members added after the seed are never deleted for the restore",
			restoring(func(o *Observed) {
				restoredSeed(o)
				o.Pods = append(o.Pods, Pod{Name: "t", Version: "3.5.21", Created: now})
				o.Members = append(o.Members, Member{ID: 10, Name: "t", Started: true, Healthy: true})
			}),
			Action{Kind: AddMember, Reason: conditions.ReasonScalingUp}},
		{"seeding recorded but the seeded pod not seen yet (a lagging cache): no second seed",
			restoring(func(o *Observed) {
				o.Pods, o.MembershipKnown, o.Members, o.LeaderID = nil, false, nil, 0
				o.Restore.Seeding = true
			}),
			Action{Kind: Wait, Reason: conditions.ReasonRestoring}},
		{"the seeded member failed (its backup could not be read): the restore fails, nothing retried blindly",
			restoring(func(o *Observed) {
				restoredSeed(o)
				o.Pods[0].Failed = true
				o.MembershipKnown, o.Members, o.LeaderID = false, nil, 0
			}),
			Action{Kind: Fail, Reason: conditions.ReasonRestoring}},
		{"the seed init container fails again after a retry (a wrong path, say): the restore fails",
			restoring(func(o *Observed) {
				restoredSeed(o)
				o.Pods[0].SeedFailing = "object bucket/etcd.backup: not found"
				o.MembershipKnown, o.Members, o.LeaderID = false, nil, 0
			}),
			Action{Kind: Fail, Reason: conditions.ReasonRestoring}},
		{"members on claims: refused, nothing changed (the cluster does not fail for it)",
			restoring(func(o *Observed) { o.UsesPVC = true }),
			Action{Kind: RefuseRestore, Reason: conditions.ReasonRestoreRefused}},
		{"paused: nothing, restore or not",
			restoring(func(o *Observed) { o.Paused = true }),
			Action{Kind: Nothing, Reason: conditions.ReasonPaused}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Next(tt.in, Options{})
			if !matches(got, tt.want) {
				t.Fatalf("Next() = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestUnsafeRestoreUnchecked: the self-test's known-bad mode deletes the
// members before the backup was checked, as this operator did before.
func TestUnsafeRestoreUnchecked(t *testing.T) {
	got := Next(restoring(func(*Observed) {}), Options{RestoreUnchecked: true})
	if got.Kind != DeleteForRestore {
		t.Fatalf("Next() = %s (%s), want DeleteForRestore", got.Kind, got.Message)
	}
}
