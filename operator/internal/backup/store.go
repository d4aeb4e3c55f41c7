// Package backup takes etcd snapshots into an object store or a directory
// and reads them back. The operator never runs it in its own process: an
// EtcdBackup's pod runs `etcd-operator backup` (Take), and a restored member's
// init container runs `etcd-operator seed --from-s3-path|--from-file` (Fetch),
// so only those pods mount the user's AWS Secret or the backup volume.
package backup

import (
	"context"
	"errors"
	"io"
	"time"
)

// Store keeps snapshots under keys.
type Store interface {
	// Put stores what r yields under key, streaming: a snapshot is never
	// held in memory whole. Nothing is stored under key when it fails.
	Put(ctx context.Context, key string, r io.Reader) error
	// Get opens what is stored under key; an absent key is an error that
	// matches ErrNotFound.
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	// List returns the objects whose key starts with prefix.
	List(ctx context.Context, prefix string) ([]Object, error)
	// Delete removes key; an absent key is no error.
	Delete(ctx context.Context, key string) error
	// Path names key in the store for people and for the EtcdBackup's
	// status: "<bucket>/<key>" for S3, the file's path for a directory.
	Path(key string) string
}

// Object is a stored snapshot.
type Object struct {
	Key          string
	LastModified time.Time
	Size         int64
}

// ErrNotFound is matched (errors.Is) by the error of Get for an absent key.
var ErrNotFound = errors.New("no such backup")
