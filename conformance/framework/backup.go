package framework

// Backups and restores through coreos v0.9.4's API (EtcdBackup and
// EtcdRestore, etcd.database.coreos.com/v1beta2, S3 storage), and the
// keyspace reads the backup-restore check judges them by.

import (
	"context"
	"fmt"
	"slices"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

var (
	etcdBackupGVR  = schema.GroupVersionResource{Group: "etcd.database.coreos.com", Version: "v1beta2", Resource: "etcdbackups"}
	etcdRestoreGVR = schema.GroupVersionResource{Group: "etcd.database.coreos.com", Version: "v1beta2", Resource: "etcdrestores"}
)

// Outcome is what an EtcdBackup's or EtcdRestore's status says once it
// is done: succeeded, or the reason it failed.
type Outcome struct {
	Succeeded bool
	Reason    string
	// Revision is an EtcdBackup's status.etcdRevision.
	Revision int64
}

// s3Source is the s3 field of an EtcdBackup or EtcdRestore for key.
func (s *ObjectStore) s3Source(key string) map[string]any {
	return map[string]any{"path": s.Bucket + "/" + key, "awsSecret": s.AWSSecret, "endpoint": s.Endpoint, "forcePathStyle": true}
}

// BackUp creates a one-shot EtcdBackup of c into store under key and waits
// until its status says it succeeded or why it failed. An error means no
// outcome was seen in time.
func (c *EtcdCluster) BackUp(ctx context.Context, store *ObjectStore, key string, intervals ...any) (Outcome, error) {
	spec := map[string]any{
		"etcdEndpoints": []any{c.ClientEndpoint()},
		"storageType":   "S3",
		"s3":            store.s3Source(key),
	}
	if c.tls != nil {
		// coreos' field for the client certificate of a TLS cluster.
		spec["clientTLSSecret"] = c.tls.secrets.Client
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "etcd.database.coreos.com/v1beta2", "kind": "EtcdBackup",
		"metadata": map[string]any{"name": c.Name + "-backup", "namespace": c.Namespace},
		"spec":     spec,
	}}
	return c.env.createAndAwait(ctx, etcdBackupGVR, obj, "Reason", intervals...)
}

// Restore creates an EtcdRestore of c (named like c, coreos' rule) from
// store's key and waits until its status says it succeeded or failed.
func (c *EtcdCluster) Restore(ctx context.Context, store *ObjectStore, key string, intervals ...any) (Outcome, error) {
	spec := map[string]any{
		"etcdCluster":       map[string]any{"name": c.Name},
		"backupStorageType": "S3",
		"s3":                store.s3Source(key),
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "etcd.database.coreos.com/v1beta2", "kind": "EtcdRestore",
		"metadata": map[string]any{"name": c.Name, "namespace": c.Namespace},
		"spec":     spec,
	}}
	return c.env.createAndAwait(ctx, etcdRestoreGVR, obj, "reason", intervals...)
}

// DeleteRestore deletes c's EtcdRestore and waits until it is gone, so that
// another can be created under its name; a missing one is not an error.
func (c *EtcdCluster) DeleteRestore(ctx context.Context, intervals ...any) error {
	r := c.env.Dynamic.Resource(etcdRestoreGVR).Namespace(c.Namespace)
	if err := r.Delete(ctx, c.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting EtcdRestore %s: %w", c.Name, err)
	}
	return wait.PollUntilContextTimeout(ctx, intervals[1].(time.Duration), intervals[0].(time.Duration), true, func(ctx context.Context) (bool, error) {
		_, err := r.Get(ctx, c.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// createAndAwait creates obj and polls its status until succeeded is true
// or the reason field (coreos spells it "Reason" on backups) is set.
func (e *Env) createAndAwait(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, reasonField string, intervals ...any) (Outcome, error) {
	r := e.Dynamic.Resource(gvr).Namespace(obj.GetNamespace())
	if _, err := r.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		return Outcome{}, fmt.Errorf("creating %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	var out Outcome
	var last error
	err := wait.PollUntilContextTimeout(ctx, intervals[1].(time.Duration), intervals[0].(time.Duration), true, func(ctx context.Context) (bool, error) {
		got, err := r.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if err != nil {
			last = err
			return false, nil
		}
		out.Succeeded, _, _ = unstructured.NestedBool(got.Object, "status", "succeeded")
		out.Reason, _, _ = unstructured.NestedString(got.Object, "status", reasonField)
		out.Revision, _, _ = unstructured.NestedInt64(got.Object, "status", "etcdRevision")
		last = fmt.Errorf("status %v", got.Object["status"])
		return out.Succeeded || out.Reason != "", nil
	})
	if err != nil {
		return out, fmt.Errorf("%s %s did not finish: %w (last: %v)", obj.GetKind(), obj.GetName(), err, last)
	}
	return out, nil
}

// SnapshotRevision is the revision of the key-value store in a snapshot
// file: what a cluster restored from it holds.
func SnapshotRevision(file string) (int64, error) {
	st, err := snapshot.NewV3(zap.NewNop()).Status(file)
	if err != nil {
		return 0, fmt.Errorf("reading snapshot %s: %w", file, err)
	}
	return st.Revision, nil
}

// Keyspace is every key of a cluster and its value, at Revision.
type Keyspace struct {
	Revision int64
	Data     map[string]string
}

// ReadKeyspace reads every key through a ready member, at revision rev (0:
// the latest). etcd serves a past revision from its own MVCC history until
// it is compacted.
func (c *EtcdCluster) ReadKeyspace(ctx context.Context, rev int64) (Keyspace, error) {
	pods, err := c.MemberPods(ctx)
	if err != nil {
		return Keyspace{}, err
	}
	var last error = fmt.Errorf("no ready member pod")
	for _, p := range pods {
		if !podReady(p) {
			continue
		}
		ks, err := c.readKeyspaceFrom(ctx, p.Name, rev)
		if err == nil {
			return ks, nil
		}
		last = err
	}
	return Keyspace{}, fmt.Errorf("reading the keyspace: %w", last)
}

func (c *EtcdCluster) readKeyspaceFrom(ctx context.Context, pod string, rev int64) (Keyspace, error) {
	cli, closeClient, err := c.memberClient(pod)
	if err != nil {
		return Keyspace{}, err
	}
	defer closeClient()
	pctx, cancel := context.WithTimeout(ctx, 4*probeTimeout)
	defer cancel()
	opts := []clientv3.OpOption{clientv3.WithFromKey()}
	if rev > 0 {
		opts = append(opts, clientv3.WithRev(rev))
	}
	resp, err := cli.Get(pctx, "\x00", opts...)
	if err != nil {
		return Keyspace{}, fmt.Errorf("%s: %w", pod, err)
	}
	ks := Keyspace{Revision: resp.Header.Revision, Data: map[string]string{}}
	if rev > 0 {
		ks.Revision = rev
	}
	for _, kv := range resp.Kvs {
		ks.Data[string(kv.Key)] = string(kv.Value)
	}
	return ks, nil
}

// DiffKeyspaces lists how got differs from want, key by key: missing,
// extra and changed keys, sorted.
func DiffKeyspaces(want, got map[string]string) (missing, extra, changed []string) {
	for k, v := range want {
		g, ok := got[k]
		switch {
		case !ok:
			missing = append(missing, k)
		case g != v:
			changed = append(changed, fmt.Sprintf("%s = %q, backup has %q", k, g, v))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			extra = append(extra, k)
		}
	}
	sortStrings(missing, extra, changed)
	return missing, extra, changed
}

func sortStrings(lists ...[]string) {
	for _, l := range lists {
		slices.Sort(l)
	}
}
