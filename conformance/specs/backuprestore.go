package specs

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// markersPerSet is how many keys a set of markers holds: written and
// acknowledged before a fault (each must be there after it), or after a
// backup (none may come back with it).
const markersPerSet = 10

// BackupRestoreSpecInput is what BackupRestoreSpec needs.
type BackupRestoreSpecInput struct {
	// Env reaches the cluster and holds the profile and the suite config.
	Env *framework.Env
	// Report records the check's notes, timings and traffic.
	Report *report.Recorder
	// Namespaces creates the namespace of the check's cluster.
	Namespaces NamespaceCreator
}

// BackupRestoreSpec backs a cluster up while clients write, writes more,
// and restores the backup. It starts an S3-compatible store (SeaweedFS) in
// the cluster's namespace, and judges against etcd's own ground truth:
//   - the backup object itself is downloaded and its revision Rs read from
//     the snapshot (not from the operator's status, which may only bound it);
//   - the source cluster's keyspace at Rs, from its own MVCC history, is what
//     the backup must hold: the markers written before it are there, those
//     written after it are not;
//   - once restored, the cluster's keyspace must equal that, key by key (no
//     key missing, extra or changed) at revision Rs, and clients writing to
//     it afterwards must see a linearizable history.
//
// The traffic during the backup must be linearizable and, as everywhere,
// lose no acknowledged write.
func BackupRestoreSpec(ctx SpecContext, inputGetter func() BackupRestoreSpecInput) {
	const check = "backup-restore"
	input := inputGetter()
	Expect(input.Env).NotTo(BeNil(), "Invalid argument. input.Env can't be nil when calling BackupRestoreSpec")
	Expect(input.Report).NotTo(BeNil(), "Invalid argument. input.Report can't be nil when calling BackupRestoreSpec")
	Expect(input.Namespaces).NotTo(BeNil(), "Invalid argument. input.Namespaces can't be nil when calling BackupRestoreSpec")
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
	before, after := markers(check, "before-backup"), markers(check, "after-backup")
	Expect(c.WriteMarkers(ctx, before)).To(Succeed())

	key := c.Name + ".backup"
	var backedUp framework.Outcome
	var backupTook time.Duration
	res := withTraffic(ctx, trafficInput{Env: e, Report: rep, Cluster: c, Check: check, Phase: "backup"}, func() {
		By("backing the cluster up with an EtcdBackup to " + store.Bucket + "/" + key)
		start := time.Now()
		var err error
		backedUp, err = c.BackUp(ctx, store, key, e.Config.GetIntervals(check, "backup-done")...)
		backupTook = time.Since(start)
		Expect(err).NotTo(HaveOccurred())
		if !backedUp.Succeeded {
			Fail("the backup failed: " + backedUp.Reason)
		}
		Expect(c.WriteMarkers(ctx, after)).To(Succeed())
	})
	expectTraffic(res, "backup")
	expectWithin(rep, check, "backup", backupTook, e.Config.Budget("backup-restore/backup"))

	By("reading the backup's revision from the snapshot itself")
	file := filepath.Join(GinkgoT().TempDir(), key)
	Expect(store.Download(ctx, key, file)).To(Succeed(), "the backup %s/%s", store.Bucket, key)
	rs, err := framework.SnapshotRevision(file)
	Expect(err).NotTo(HaveOccurred())
	rep.Note(check, "backup at revision %d (the EtcdBackup's status says %d)", rs, backedUp.Revision)
	if rs < backedUp.Revision {
		Fail(fmt.Sprintf("the EtcdBackup's status says revision %d, but the snapshot stored holds revision %d", backedUp.Revision, rs))
	}
	truth, err := c.ReadKeyspace(ctx, rs)
	if err != nil {
		Incomplete(rep, check, "the source cluster's keyspace at the backup's revision %d cannot be read (compacted?): %v", rs, err)
	}
	if lost := absent(truth.Data, before); len(lost) > 0 {
		Fail(fmt.Sprintf("the backup (revision %d) misses %d of %d keys acknowledged before it was started: %s",
			rs, len(lost), len(before), strings.Join(lost, ", ")))
	}
	if kept := present(truth.Data, after); len(kept) > 0 {
		Fail(fmt.Sprintf("the backup's revision %d is later than keys written after the EtcdBackup said succeeded: %s", rs, strings.Join(kept, ", ")))
	}

	By("restoring the backup with an EtcdRestore")
	start := time.Now()
	restored, err := c.Restore(ctx, store, key, e.Config.GetIntervals(check, "restored")...)
	Expect(err).NotTo(HaveOccurred())
	if !restored.Succeeded {
		Fail("the restore failed: " + restored.Reason)
	}
	c.WaitForHealthy(ctx, whole, e.Config.GetIntervals(check, "members-ready")...)
	expectWithin(rep, check, "restore", time.Since(start), e.Config.Budget("backup-restore/restore"))

	got, err := c.ReadKeyspace(ctx, 0)
	Expect(err).NotTo(HaveOccurred())
	missing, extra, changed := framework.DiffKeyspaces(truth.Data, got.Data)
	rep.Note(check, "restored: %d keys at revision %d; the backup: %d keys at revision %d", len(got.Data), got.Revision, len(truth.Data), rs)
	if len(missing)+len(extra)+len(changed) > 0 {
		Fail(fmt.Sprintf("the restored data differs from the backup (%d keys at revision %d): %d keys missing%s, %d extra%s, %d changed%s",
			len(truth.Data), rs, len(missing), some(missing), len(extra), some(extra), len(changed), some(changed)))
	}
	if got.Revision != rs {
		Fail(fmt.Sprintf("the restored cluster is at revision %d, the backup at %d: the restore is not the backup's point in time", got.Revision, rs))
	}
	res = withTraffic(ctx, trafficInput{Env: e, Report: rep, Cluster: c, Check: check, Phase: "after-restore"}, func() {})
	expectTraffic(res, "after-restore")
}

// startObjectStore is a BeforeCR that starts the S3-compatible store of
// check in the cluster's namespace into *store, and deletes it when the
// check ends.
func startObjectStore(ctx SpecContext, e *framework.Env, check string, store **framework.ObjectStore) func(ns string) {
	return func(ns string) {
		By("starting an S3-compatible object store (SeaweedFS) in " + ns)
		var err error
		*store, err = e.StartObjectStore(ctx, ns, e.Config.ObjectStoreImage, e.Config.GetIntervals(check, "object-store-ready")...)
		DeferCleanup(func(ctx SpecContext) {
			if *store != nil && !e.Opts.SkipCleanup {
				Expect((*store).Delete(ctx)).To(Succeed())
			}
		})
		Expect(err).NotTo(HaveOccurred())
	}
}

// markers are markersPerSet keys of check whose value says when they were
// written.
func markers(check, when string) map[string]string {
	m := map[string]string{}
	for i := range markersPerSet {
		m[fmt.Sprintf("etcdproof/marker/%s/%s/%02d", check, when, i)] = when
	}
	return m
}

// absent lists the keys of want that data lacks or holds with another value.
func absent(data, want map[string]string) []string {
	var out []string
	for k, v := range want {
		if data[k] != v {
			out = append(out, k)
		}
	}
	return sortedCopy(out)
}

// present lists the keys of unwanted that data holds.
func present(data, unwanted map[string]string) []string {
	var out []string
	for k := range unwanted {
		if _, ok := data[k]; ok {
			out = append(out, k)
		}
	}
	return sortedCopy(out)
}

// some quotes the first few of a list, for a failure message.
func some(list []string) string {
	const shown = 5
	switch {
	case len(list) == 0:
		return ""
	case len(list) > shown:
		return " (" + strings.Join(list[:shown], ", ") + ", …)"
	}
	return " (" + strings.Join(list, ", ") + ")"
}

func sortedCopy(list []string) []string {
	slices.Sort(list)
	return list
}
