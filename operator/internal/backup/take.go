package backup

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/storage/mvcc"
	"go.uber.org/zap"
)

// TimeLayout is the time in a periodic backup's key (UTC), coreos' layout.
const TimeLayout = "2006-01-02-15:04:05"

// DefaultDialTimeout bounds connecting to one member and asking its status.
const DefaultDialTimeout = 5 * time.Second

// Config says which cluster to back up, and where.
type Config struct {
	// Endpoints are client URLs of the cluster's members; the snapshot is
	// streamed from the one with the highest revision among those that answer.
	Endpoints []string
	// TLS, when set, is used to reach the members.
	TLS *tls.Config
	// DialTimeout bounds the status call to each member (DefaultDialTimeout when 0).
	DialTimeout time.Duration
	// Store and Key are where the snapshot goes.
	Store Store
	Key   string
	// Periodic appends "_v<revision>_<UTC time>" to Key (PeriodicKey), so
	// each backup has its own object.
	Periodic bool
	// MaxBackups > 0 (periodic only) keeps that many periodic backups of Key,
	// the newest by revision, then by modification time; older ones are
	// deleted once the new one is stored. The new one is never deleted.
	MaxBackups int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Logger logs progress (none when nil).
	Logger *zap.Logger
	// ScratchDir, when set, holds the snapshot on disk before it is stored,
	// so that the revision recorded is the snapshot's own (read from the
	// file) rather than the member's just before it; memory stays bounded
	// either way.
	ScratchDir string
}

// Result is what a backup stored. It is written as one JSON line, which the
// operator reads from the backup pod's termination message (ParseResult).
type Result struct {
	// Path is Store.Path of the key: "<bucket>/<key>" or the file's path.
	Path string `json:"path"`
	// EtcdRevision is the revision of the member the snapshot was streamed
	// from when it was chosen, just before the snapshot; the snapshot holds
	// that revision, or a later one if writes came in between.
	EtcdRevision int64 `json:"etcdRevision"`
	// EtcdVersion is that member's etcd version.
	EtcdVersion string `json:"etcdVersion"`
	// Size is the snapshot's size in bytes.
	Size int64 `json:"size"`
	// Warning says what went wrong after the backup was stored (deleting
	// old backups); the backup itself succeeded.
	Warning string `json:"warning,omitempty"`
}

// String is the JSON line.
func (r Result) String() string {
	b, _ := json.Marshal(r)
	return string(b)
}

// ParseResult reads the JSON line a backup wrote (the backup pod's
// termination message). A failed backup writes its error text instead,
// which ParseResult returns as the error.
func ParseResult(msg string) (Result, error) {
	var r Result
	msg = strings.TrimSpace(msg)
	if !strings.HasPrefix(msg, "{") {
		if msg == "" {
			return r, errors.New("backup left no result")
		}
		return r, errors.New(msg)
	}
	if err := json.Unmarshal([]byte(msg), &r); err != nil {
		return r, fmt.Errorf("reading the backup's result %q: %w", msg, err)
	}
	if r.Path == "" {
		return r, fmt.Errorf("backup result %q has no path", msg)
	}
	return r, nil
}

// PeriodicKey is the key of a periodic backup of key: coreos' naming.
func PeriodicKey(key string, revision int64, at time.Time) string {
	return fmt.Sprintf("%s_v%d_%s", key, revision, at.UTC().Format(TimeLayout))
}

// ParsePeriodicKey reads back what PeriodicKey wrote; ok is false for other keys.
func ParsePeriodicKey(key, name string) (revision int64, at time.Time, ok bool) {
	rest, ok := strings.CutPrefix(name, key+"_v")
	if !ok {
		return 0, time.Time{}, false
	}
	revText, timeText, ok := strings.Cut(rest, "_")
	if !ok {
		return 0, time.Time{}, false
	}
	revision, err := strconv.ParseInt(revText, 10, 64)
	if err != nil || revision < 0 {
		return 0, time.Time{}, false
	}
	at, err = time.Parse(TimeLayout, timeText)
	if err != nil {
		return 0, time.Time{}, false
	}
	return revision, at, true
}

// Take streams a snapshot of the member with the highest revision into the
// store. The snapshot's sha256 trailer is checked on the way: a snapshot
// that does not match is not stored.
func Take(ctx context.Context, c Config) (Result, error) {
	lg := c.Logger
	if lg == nil {
		lg = zap.NewNop()
	}
	if c.Store == nil || c.Key == "" {
		return Result{}, errors.New("backup: no store or key")
	}
	if len(c.Endpoints) == 0 {
		return Result{}, errors.New("backup: no etcd endpoints")
	}
	best, err := pickMember(ctx, c, lg)
	if err != nil {
		return Result{}, err
	}
	defer func() { _ = best.client.Close() }()
	lg.Info("backing up", zap.String("endpoint", best.endpoint), zap.Int64("revision", best.revision), zap.String("version", best.version))

	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the snapshot stream if the store gave up early
	snap, err := best.client.SnapshotWithVersion(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("opening a snapshot of %s: %w", best.endpoint, err)
	}
	defer func() { _ = snap.Snapshot.Close() }()
	r := &verifyingReader{r: snap.Snapshot, sum: sha256.New()}
	var body io.Reader = r
	revision := best.revision
	if c.ScratchDir != "" {
		f, rev, err := spool(r, c.ScratchDir, lg)
		if err != nil {
			return Result{}, fmt.Errorf("the snapshot of %s: %w", best.endpoint, err)
		}
		defer func() { _ = f.Close(); _ = os.Remove(f.Name()) }()
		body, revision = f, rev
	}
	key := c.Key
	if c.Periodic {
		now := time.Now
		if c.Now != nil {
			now = c.Now
		}
		key = PeriodicKey(c.Key, revision, now())
	}
	if err := c.Store.Put(ctx, key, body); err != nil {
		return Result{}, fmt.Errorf("storing the snapshot of %s: %w", best.endpoint, err)
	}
	res := Result{Path: c.Store.Path(key), EtcdRevision: revision, EtcdVersion: best.version, Size: r.size}
	lg.Info("backup stored", zap.String("path", res.Path), zap.Int64("size", res.Size))
	if c.Periodic && c.MaxBackups > 0 {
		if err := prune(ctx, c.Store, c.Key, key, c.MaxBackups, lg); err != nil {
			res.Warning = "deleting old backups: " + err.Error()
			lg.Warn("deleting old backups failed", zap.Error(err))
		}
	}
	return res, nil
}

// spool writes the snapshot stream r (checked against its sha256 on the
// way) to a file in dir and reads the revision it holds; the file is
// returned at its start.
func spool(r io.Reader, dir string, lg *zap.Logger) (*os.File, int64, error) {
	f, err := os.CreateTemp(dir, "snapshot-*.db")
	if err != nil {
		return nil, 0, err
	}
	fail := func(err error) (*os.File, int64, error) {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return nil, 0, err
	}
	if _, err := io.Copy(f, r); err != nil {
		return fail(err)
	}
	rev, err := SnapshotRevision(f.Name())
	if err != nil {
		return fail(fmt.Errorf("reading its revision: %w", err))
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fail(err)
	}
	return f, rev, nil
}

// SnapshotRevision is the revision of the newest key in a snapshot file:
// the last entry of its key bucket, whose keys are revisions in order. Only
// the pages on the way there are read (etcdutl's snapshot status walks every
// key, which maps the whole file into the process: 360 MiB for a 300 MiB
// snapshot).
func SnapshotRevision(file string) (int64, error) {
	db, err := bolt.Open(file, 0o400, &bolt.Options{ReadOnly: true, Timeout: 10 * time.Second})
	if err != nil {
		return 0, err
	}
	defer func() { _ = db.Close() }()
	var rev int64
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("key"))
		if b == nil {
			return errors.New("no key bucket: not an etcd snapshot")
		}
		if k, _ := b.Cursor().Last(); k != nil {
			rev = mvcc.BytesToRev(k).Main
		}
		return nil
	})
	if err == nil && rev == 0 {
		err = errors.New("the snapshot holds no revision")
	}
	return rev, err
}

type candidate struct {
	endpoint string
	client   *clientv3.Client
	revision int64
	version  string
	err      error
}

// pickMember asks every endpoint's status at once and keeps the client of
// the one with the highest revision (the first listed on a tie).
func pickMember(ctx context.Context, c Config, lg *zap.Logger) (*candidate, error) {
	timeout := c.DialTimeout
	if timeout <= 0 {
		timeout = DefaultDialTimeout
	}
	cands := make([]*candidate, len(c.Endpoints))
	var wg sync.WaitGroup
	for i, ep := range c.Endpoints {
		cand := &candidate{endpoint: ep}
		cands[i] = cand
		wg.Go(func() {
			cli, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}, DialTimeout: timeout, TLS: c.TLS, Logger: lg.Named("etcd-client")})
			if err != nil {
				cand.err = err
				return
			}
			sctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			st, err := cli.Status(sctx, ep)
			if err != nil {
				_ = cli.Close()
				if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
					err = fmt.Errorf("no answer within %s (%w)", timeout, err)
				}
				cand.err = err
				return
			}
			cand.client, cand.revision, cand.version = cli, st.Header.Revision, st.Version
		})
	}
	wg.Wait()
	var best *candidate
	var errs []error
	for _, cand := range cands {
		if cand.client == nil {
			errs = append(errs, fmt.Errorf("%s: %w", cand.endpoint, cand.err))
			continue
		}
		if best == nil || cand.revision > best.revision {
			best = cand
		}
	}
	for _, cand := range cands {
		if cand.client != nil && cand != best {
			_ = cand.client.Close()
		}
	}
	if best == nil {
		return nil, fmt.Errorf("no etcd member answered: %w", errors.Join(errs...))
	}
	for _, err := range errs {
		lg.Info("member did not answer", zap.Error(err))
	}
	return best, nil
}

// prune keeps keep periodic backups of key: the one just stored (kept) and
// the newest others; it deletes the rest.
func prune(ctx context.Context, s Store, key, kept string, keep int, lg *zap.Logger) error {
	objects, err := s.List(ctx, key+"_v")
	if err != nil {
		return err
	}
	type backup struct {
		Object
		revision int64
	}
	var backups []backup
	for _, o := range objects {
		if rev, _, ok := ParsePeriodicKey(key, o.Key); ok && o.Key != kept {
			backups = append(backups, backup{o, rev})
		}
	}
	slices.SortFunc(backups, func(a, b backup) int {
		return cmp.Or(cmp.Compare(b.revision, a.revision), b.LastModified.Compare(a.LastModified), strings.Compare(b.Key, a.Key))
	})
	var errs []error
	for _, b := range backups[min(keep-1, len(backups)):] {
		if err := s.Delete(ctx, b.Key); err != nil {
			errs = append(errs, err)
			continue
		}
		lg.Info("old backup deleted", zap.String("path", s.Path(b.Key)))
	}
	return errors.Join(errs...)
}

// Fetch copies key into the local file dst (written beside it first, then
// renamed, so dst is whole or absent).
func Fetch(ctx context.Context, s Store, key, dst string) error {
	r, err := s.Get(ctx, key)
	if err != nil {
		return err
	}
	defer func() { _ = r.Close() }()
	dst = filepath.Clean(dst)
	if err := (FileStore{Dir: filepath.Dir(dst)}).Put(ctx, filepath.Base(dst), r); err != nil {
		return fmt.Errorf("downloading %s: %w", s.Path(key), err)
	}
	return nil
}

// verifyingReader counts what it passes on and checks, at the end, the
// sha256 trailer etcd appends to a snapshot: the end of a snapshot that does
// not match is an error, not io.EOF.
type verifyingReader struct {
	r    io.Reader
	sum  hash.Hash
	tail []byte // the last sha256.Size bytes seen, not yet hashed
	size int64
}

// ErrCorruptSnapshot is returned at the end of a snapshot whose sha256
// trailer is missing or does not match its data.
var ErrCorruptSnapshot = errors.New("snapshot does not match its sha256")

func (v *verifyingReader) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.add(p[:n])
	if err == io.EOF {
		// etcd's snapshot is the backend's pages (a multiple of 512 bytes)
		// followed by the sha256 of them.
		if v.size%512 != sha256.Size || !bytes.Equal(v.tail, v.sum.Sum(nil)) {
			return n, fmt.Errorf("%w (%d bytes)", ErrCorruptSnapshot, v.size)
		}
	}
	return n, err
}

func (v *verifyingReader) add(p []byte) {
	v.size += int64(len(p))
	if len(p) >= sha256.Size {
		v.sum.Write(v.tail)
		v.sum.Write(p[:len(p)-sha256.Size])
		v.tail = append(v.tail[:0], p[len(p)-sha256.Size:]...)
		return
	}
	v.tail = append(v.tail, p...)
	if extra := len(v.tail) - sha256.Size; extra > 0 {
		v.sum.Write(v.tail[:extra])
		v.tail = append(v.tail[:0], v.tail[extra:]...)
	}
}
