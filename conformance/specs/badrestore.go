package specs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// BadRestoreSpecInput is what BadRestoreSpec needs.
type BadRestoreSpecInput struct {
	// Env reaches the cluster and holds the profile and the suite config.
	Env *framework.Env
	// Report records the check's notes, timings and traffic.
	Report *report.Recorder
	// Namespaces creates the namespace of the check's cluster.
	Namespaces NamespaceCreator
}

// BadRestoreSpec asks a running cluster, holding acknowledged writes, to
// restore a backup that cannot be restored: one whose object does not
// exist (a typo in the path), then one whose bytes were changed after it
// was taken (a corrupt object). Each time the restore must say that it
// failed, and why, and the cluster must keep serving with every marker
// written before: an operator that deletes the members before it has read
// the backup loses the cluster to a typo. Clients write throughout; their
// history must be linearizable with no client error after one retry.
// Asked of every profile that claims backup-restore.
func BadRestoreSpec(ctx SpecContext, inputGetter func() BadRestoreSpecInput) {
	const check = "bad-restore"
	input := inputGetter()
	Expect(input.Env).NotTo(BeNil(), "Invalid argument. input.Env can't be nil when calling BadRestoreSpec")
	Expect(input.Report).NotTo(BeNil(), "Invalid argument. input.Report can't be nil when calling BadRestoreSpec")
	Expect(input.Namespaces).NotTo(BeNil(), "Invalid argument. input.Namespaces can't be nil when calling BadRestoreSpec")
	e, rep := input.Env, input.Report
	if e.Profile.Capabilities.BackupRestore == "" {
		notClaimed(rep, check, "backupRestore")
	}
	size, version := e.Config.Sizes.BackupRestore, e.Profile.Etcd.Initial
	whole := framework.Want{Size: size, Version: version}
	var store *framework.ObjectStore
	c := newCluster(ctx, newClusterInput{Env: e, Report: rep, Namespaces: input.Namespaces, Check: check, Size: size, Version: version,
		BeforeCR: startObjectStore(ctx, e, check, &store)})
	c.WaitForHealthy(ctx, whole, e.Config.GetIntervals(check, "members-ready")...)
	kept := markers(check, "before-restore")
	Expect(c.WriteMarkers(ctx, kept)).To(Succeed())

	By("backing the cluster up, then changing bytes of the backup's last page")
	good := c.Name + ".backup"
	took, err := c.BackUp(ctx, store, good, e.Config.GetIntervals(check, "backup-done")...)
	Expect(err).NotTo(HaveOccurred())
	if !took.Succeeded {
		Incomplete(rep, check, "the backup to corrupt failed: %s", took.Reason)
	}
	file := filepath.Join(GinkgoT().TempDir(), good)
	Expect(store.Download(ctx, good, file)).To(Succeed())
	data, err := os.ReadFile(file)
	Expect(err).NotTo(HaveOccurred())
	if len(data) < 4096 {
		Incomplete(rep, check, "the backup %s is only %d bytes: no page to corrupt", good, len(data))
	}
	for i := len(data) - 200; i < len(data)-100; i++ {
		data[i] ^= 0xff // in the last page, before etcd's sha256 trailer
	}
	corrupt := c.Name + ".corrupt"
	Expect(store.Upload(ctx, corrupt, data)).To(Succeed())

	for _, bad := range []struct{ key, what string }{
		{c.Name + ".no-such-backup", "a backup that does not exist"},
		{corrupt, "a corrupt backup"},
	} {
		phase := strings.ReplaceAll(bad.what, " ", "-")
		var outcome framework.Outcome
		res := withTraffic(ctx, trafficInput{Env: e, Report: rep, Cluster: c, Check: check, Phase: phase}, func() {
			By(fmt.Sprintf("restoring %s (%s/%s) with an EtcdRestore", bad.what, store.Bucket, bad.key))
			outcome, err = c.Restore(ctx, store, bad.key, e.Config.GetIntervals(check, "restore-refused")...)
			if err != nil {
				Fail(fmt.Sprintf("the restore of %s never said it failed: %v", bad.what, err))
			}
			if outcome.Succeeded {
				Fail(fmt.Sprintf("the restore of %s says it succeeded", bad.what))
			}
			rep.Note(check, "%s: the restore says it failed: %s", bad.what, outcome.Reason)
			By("checking that the cluster still serves every write acknowledged before")
			want := whole
			want.Data = kept
			intervals := e.Config.GetIntervals(check, "members-ready")
			if err := InterceptGomegaFailure(func() { c.WaitForHealthy(ctx, want, intervals...) }); err != nil {
				Fail(fmt.Sprintf("the cluster lost data to a restore of %s that failed: it did not serve the %d marker writes acknowledged before within %s: %v",
					bad.what, len(kept), intervals[0], err))
			}
		})
		expectTraffic(res, phase)
		Expect(c.DeleteRestore(ctx, e.Config.GetIntervals(check, "cr-deleted")...)).To(Succeed())
	}
}
