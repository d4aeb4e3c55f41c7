package backup_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/etcdproof/etcdproof/operator/internal/backup"
	"github.com/etcdproof/etcdproof/operator/internal/backup/backuptest"
)

// randomReader yields n pseudo-random bytes without holding them.
type randomReader struct {
	r *rand.ChaCha8
	n int64
}

func newRandom(n int64) *randomReader {
	return &randomReader{r: rand.NewChaCha8([32]byte{1}), n: n}
}

func (r *randomReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), r.n)]
	_, _ = r.r.Read(p)
	r.n -= int64(len(p))
	return len(p), nil
}

func digest(t *testing.T, r io.Reader) [32]byte {
	t.Helper()
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		t.Fatal(err)
	}
	return [32]byte(h.Sum(nil))
}

// TestS3 runs the S3 tests on one store (it takes seconds to start).
func TestS3(t *testing.T) {
	s3 := backuptest.StartS3(t)
	t.Run("store", func(t *testing.T) { testS3Store(t, s3) })
	t.Run("retention", func(t *testing.T) { testRetention(t, s3.Store(t)) })
	t.Run("run", func(t *testing.T) { testRunToS3(t, s3) })
}

// testS3Store: objects larger than a part stream in and out whole, and the
// upload holds about one part in memory, not the object; listing, deleting
// and the errors of absent keys and wrong credentials.
func testS3Store(t *testing.T, s3 *backuptest.S3) {
	store := s3.Store(t)
	ctx := t.Context()
	const size = 5*backup.S3PartSize/2 + 123 // three parts, the last one short

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := store.Put(ctx, "dir/etcd.backup", newRandom(size)); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 2*backup.S3PartSize {
		t.Errorf("uploading %d MiB allocated %d MiB: more than two parts", size>>20, allocated>>20)
	}
	r, err := store.Get(ctx, "dir/etcd.backup")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := digest(t, r), digest(t, newRandom(size)); got != want {
		t.Fatal("the object read back differs from what was stored")
	}
	_ = r.Close()
	if err := store.Put(ctx, "dir/etcd.backup2", bytes.NewReader(nil)); err != nil {
		t.Fatalf("an empty object: %v", err)
	}

	objects, err := store.List(ctx, "dir/etcd.backup")
	if err != nil {
		t.Fatal(err)
	}
	if len(objects) != 2 || objects[0].Key != "dir/etcd.backup" || objects[0].Size != size || objects[0].LastModified.IsZero() || objects[1].Key != "dir/etcd.backup2" {
		t.Fatalf("listed %+v", objects)
	}
	if store.Path("dir/etcd.backup") != "backups/dir/etcd.backup" {
		t.Errorf("Path = %q", store.Path("dir/etcd.backup"))
	}
	if err := store.Delete(ctx, "dir/etcd.backup"); err != nil {
		t.Fatal(err)
	}
	if err := store.Delete(ctx, "dir/etcd.backup"); err != nil {
		t.Fatalf("deleting an absent object: %v", err)
	}
	if _, err := store.Get(ctx, "dir/etcd.backup"); !errors.Is(err, backup.ErrNotFound) {
		t.Fatalf("getting a deleted object: %v, want ErrNotFound", err)
	}

	wrong := s3.Config
	wrong.SecretAccessKey = "wrong"
	bad, err := backup.NewS3Store(wrong, s3.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := bad.Put(ctx, "x", bytes.NewReader([]byte("x"))); err == nil {
		t.Error("a wrong secret key uploads")
	}
	other, err := backup.NewS3Store(s3.Config, "no-such-bucket")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Get(ctx, "x"); !errors.Is(err, backup.ErrNotFound) {
		t.Errorf("getting from an absent bucket: %v, want ErrNotFound", err)
	}
}

// testRunToS3: the subcommand's Run reads the awsSecret's files and stores
// the backup under <bucket>/<key>.
func testRunToS3(t *testing.T, s3 *backuptest.S3) {
	endpoint, c := startEtcd(t, 5)
	res, err := backup.Run(t.Context(), nil, backup.Args{Endpoints: []string{endpoint}, Timeout: backup.DefaultTimeout,
		S3Path: s3.Bucket + "/run/etcd.backup", S3Endpoint: s3.Endpoint, S3ForcePathStyle: true, AWSDir: s3.AWSDir})
	if err != nil {
		t.Fatal(err)
	}
	if res.Path != s3.Bucket+"/run/etcd.backup" || res.EtcdRevision != revision(t, c) || res.Size == 0 {
		t.Fatalf("result %+v", res)
	}
	objects, err := s3.Store(t).List(t.Context(), "run/")
	if err != nil || len(objects) != 1 || objects[0].Size != res.Size {
		t.Fatalf("bucket holds %+v (%v), want the backup of %d bytes", objects, err, res.Size)
	}
}
