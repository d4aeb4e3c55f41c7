package plan

import (
	"strings"
	"testing"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
)

// allLost is a 3-member emptyDir cluster that ran, every pod of which is
// gone, opted in to restoring from EtcdBackup nightly, which stored a backup.
func allLost(f func(o *Observed)) Observed {
	return with(cluster("3.5.21", "a", "b", "c"), func(o *Observed) {
		o.Pods, o.MembershipKnown, o.Members, o.LeaderID = nil, false, nil, 0
		o.SeedImage = "etcdproof/etcd-operator:dev"
		o.RestoreFromBackup = &Backup{EtcdBackup: "nightly", StorageType: etcdv1beta2.BackupStorageTypePVC,
			Source:   etcdv1beta2.RestoreSource{PVC: &etcdv1beta2.PVCSource{ClaimName: "backups", Path: "etcd.backup_v42"}},
			Path:     "backups/etcd.backup_v42",
			Revision: 42, Taken: now}
		f(o)
	})
}

func TestAfterMembersLost(t *testing.T) {
	tests := []struct {
		name        string
		in          Observed
		want        Action
		wantMessage []string
	}{
		{"not opted in: Failed, as always",
			allLost(func(o *Observed) { o.RestoreFromBackup = nil }),
			Action{Kind: Fail, Reason: conditions.ReasonAllMembersLost}, []string{"delete and recreate"}},
		{"opted in: an EtcdRestore of the latest backup, saying what it restores and what is lost",
			allLost(func(*Observed) {}),
			Action{Kind: RestoreLatestBackup, From: "nightly", Reason: conditions.ReasonRestoringFromBackup},
			[]string{"EtcdBackup nightly", "PVC backups/etcd.backup_v42", "revision 42", "2026-01-01T12:00:00Z", "writes acknowledged after that backup are lost"}},
		{"pods still terminating count as lost (the restore waits for them to go)",
			allLost(func(o *Observed) { o.Pods = []Pod{{Name: "a", Terminating: true}} }),
			Action{Kind: RestoreLatestBackup}, nil},
		{"an EtcdRestore left from an earlier restore is replaced",
			allLost(func(o *Observed) { o.EarlierRestore = &EarlierRestore{State: "Restored"} }),
			Action{Kind: RestoreLatestBackup}, []string{"earlier restore (Restored) is replaced"}},
		{"a failed earlier restore too",
			allLost(func(o *Observed) { o.EarlierRestore = &EarlierRestore{State: "Failed"} }),
			Action{Kind: RestoreLatestBackup}, []string{"(Failed) is replaced"}},
		{"the earlier EtcdRestore being deleted: wait for it to go",
			allLost(func(o *Observed) { o.EarlierRestore = &EarlierRestore{State: "being deleted", Deleting: true} }),
			Action{Kind: Wait, Reason: conditions.ReasonRestoringFromBackup}, nil},
		{"an EtcdRestore in progress whose seeded member is gone too: nothing new",
			allLost(func(o *Observed) {
				o.Restore = &Restore{UID: "r-1", Seeding: true, Source: "PVC backups/etcd.backup_v42"}
			}),
			Action{Kind: Wait, Reason: conditions.ReasonRestoring}, nil},
		{"an EtcdRestore just created, not started: its steps run (no second one)",
			allLost(func(o *Observed) { o.Restore = &Restore{UID: "r-1", Source: "PVC backups/etcd.backup_v42"} }),
			Action{Kind: SeedFromBackup, Reason: conditions.ReasonRestoring}, nil},
		{"the EtcdBackup is missing: Failed, saying why it was not restored",
			allLost(func(o *Observed) {
				o.RestoreFromBackup = &Backup{EtcdBackup: "nightly", Unusable: "the EtcdBackup does not exist"}
			}),
			Action{Kind: Fail, Reason: conditions.ReasonAllMembersLost},
			[]string{"cannot be restored from EtcdBackup nightly", desired.AnnotationRestoreFromBackup, "does not exist"}},
		{"the EtcdBackup stored nothing yet: Failed",
			allLost(func(o *Observed) {
				o.RestoreFromBackup = &Backup{EtcdBackup: "nightly", Unusable: "the EtcdBackup has no successful backup yet"}
			}),
			Action{Kind: Fail, Reason: conditions.ReasonAllMembersLost}, []string{"no successful backup yet"}},
		{"the operator does not know its image, which fetches the backup: Failed, saying so",
			allLost(func(o *Observed) { o.SeedImage = "" }),
			Action{Kind: Fail, Reason: conditions.ReasonAllMembersLost}, []string{"--seed-image"}},
		{"members on claims come back on their volumes instead",
			allLost(func(o *Observed) {
				o.UsesPVC = true
				o.PVCs = map[string]bool{"a": true, "b": true, "c": true}
			}),
			Action{Kind: RecreatePod, Member: "a"}, nil},
		{"claim spec removed (no CRD rule refused it), the members' claims there: wait for it, never Failed",
			allLost(func(o *Observed) {
				o.RestoreFromBackup = nil
				o.PVCs = map[string]bool{"a": true, "b": true, "c": true}
			}),
			Action{Kind: Wait, Reason: conditions.ReasonClaimsWithoutClaimSpec}, []string{"a, b, c", "set the claim spec back"}},
		{"the same opted in to restoring: no restore over the claims",
			allLost(func(o *Observed) { o.PVCs = map[string]bool{"a": true} }),
			Action{Kind: Wait, Reason: conditions.ReasonClaimsWithoutClaimSpec}, nil},
		{"a cluster that never ran bootstraps, backup or not",
			allLost(func(o *Observed) { o.Phase = etcdv1beta2.PhaseCreating }),
			Action{Kind: Bootstrap, Count: 3}, nil},
		{"a member pod left: no restore",
			allLost(func(o *Observed) { o.Pods = []Pod{{Name: "a", Version: "3.5.21"}} }),
			Action{Kind: Wait, Reason: conditions.ReasonMembershipUnknown}, nil},
		{"a Failed cluster restores once the backup is there",
			allLost(func(o *Observed) { o.Phase = etcdv1beta2.PhaseFailed }),
			Action{Kind: RestoreLatestBackup}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Next(tt.in, Options{})
			if !matches(got, tt.want) || (tt.want.From != "" && got.From != tt.want.From) {
				t.Fatalf("Next() = %+v\nwant %+v", got, tt.want)
			}
			for _, want := range tt.wantMessage {
				if !strings.Contains(got.Message, want) {
					t.Errorf("message %q does not say %q", got.Message, want)
				}
			}
		})
	}
}

func TestRestoreAfterLossMessages(t *testing.T) {
	o := allLost(func(o *Observed) {
		o.Restore = &Restore{UID: "r-1", Source: "PVC backups/etcd.backup_v42", AfterLoss: o.RestoreFromBackup.Describe()}
	})
	got := Next(o, Options{})
	for _, want := range []string{"revision 42", "2026-01-01T12:00:00Z", "writes acknowledged after that backup are lost"} {
		if !strings.Contains(got.Message, want) {
			t.Errorf("restore step %s: message %q does not say %q", got.Kind, got.Message, want)
		}
	}
	if what, ok := RestoringAfterLoss(o); !ok || what != got.Message[:len(what)] {
		t.Errorf("RestoringAfterLoss() = %q, %v; want the restore's own words", what, ok)
	}
	o.Restore.AfterLoss = ""
	if _, ok := RestoringAfterLoss(o); ok {
		t.Errorf("an EtcdRestore a person created counts as a restore after every member was lost")
	}
}
