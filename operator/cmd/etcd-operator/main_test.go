package main

import (
	"strings"
	"testing"

	"github.com/etcdproof/etcdproof/operator/internal/desired"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

func TestParseFlags(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "")
	tests := []struct {
		name    string
		env     string
		args    []string
		wantErr string
		check   func(t *testing.T, o options)
	}{
		{name: "namespace is required", args: nil, wantErr: "--namespace is required"},
		{name: "namespace from the downward API", env: "ops", check: func(t *testing.T, o options) {
			if o.namespace != "ops" || o.leaderElectionNamespace != "ops" || o.clusterWide {
				t.Errorf("options %+v", o)
			}
			if o.unsafe != (plan.Options{}) || o.unsafeMembers != (desired.Unsafe{}) {
				t.Errorf("unsafe behaviour on by default: %+v %+v", o.unsafe, o.unsafeMembers)
			}
		}},
		{name: "cluster-wide needs no namespace", args: []string{"--cluster-wide"}, check: func(t *testing.T, o options) {
			if !o.clusterWide {
				t.Errorf("options %+v", o)
			}
		}},
		{name: "leader election needs a namespace", args: []string{"--cluster-wide", "--leader-elect"}, wantErr: "--leader-election-namespace"},
		{name: "unsafe flags", args: []string{"--namespace=a", "--unsafe-skip-dead-member-removal", "--unsafe-upgrade-all-at-once",
			"--unsafe-leave-pvc-on-delete", "--unsafe-shell-probe"},
			check: func(t *testing.T, o options) {
				if !o.unsafe.SkipDeadMemberRemoval || !o.unsafe.UpgradeAllAtOnce {
					t.Errorf("unsafe flags not parsed: %+v", o.unsafe)
				}
				if !o.unsafeMembers.LeavePVCOnDelete || !o.unsafeMembers.ShellProbe {
					t.Errorf("unsafe member flags not parsed: %+v", o.unsafeMembers)
				}
			}},
		{name: "unknown flag", args: []string{"--namespace=a", "--bogus"}, wantErr: "bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("POD_NAMESPACE", tt.env)
			o, _, err := parseFlags(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, o)
		})
	}
}
