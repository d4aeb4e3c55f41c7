package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// FileStore keeps snapshots as files in a directory, for example a mounted
// PersistentVolumeClaim. Keys are paths relative to the directory.
type FileStore struct {
	Dir string
}

// FileMode is a stored file's mode: readable by the group too, as a claim
// mounted with an fsGroup is shared by the pods of that group (the backup
// pod and the pod that restores from it may run as different users).
const FileMode = 0o640

var _ Store = FileStore{}

// NewFileStore returns a store on the directory that holds file, and file's
// key in it.
func NewFileStore(file string) (FileStore, string, error) {
	if file == "" || strings.HasSuffix(file, "/") {
		return FileStore{}, "", fmt.Errorf("backup file %q: want the path of a file, for example /var/etcd-backup/etcd.backup", file)
	}
	file = filepath.Clean(file)
	return FileStore{Dir: filepath.Dir(file)}, filepath.Base(file), nil
}

func (s FileStore) file(key string) (string, error) {
	if key == "" || !filepath.IsLocal(key) {
		return "", fmt.Errorf("backup key %q: want a relative path inside %s", key, s.Dir)
	}
	return filepath.Join(s.Dir, key), nil
}

// Path is the key's file.
func (s FileStore) Path(key string) string { return filepath.Join(s.Dir, key) }

// Put writes r to a temporary file beside key's, syncs it and renames it to
// key's, so the file is either whole or absent, also after a crash.
func (s FileStore) Put(ctx context.Context, key string, r io.Reader) (err error) {
	name, err := s.file(key)
	if err != nil {
		return err
	}
	dir := filepath.Dir(name)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(name)+".part-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if _, err = io.Copy(f, contextReader{ctx, r}); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err = f.Chmod(FileMode); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err = os.Rename(f.Name(), name); err != nil {
		return err
	}
	return syncDir(dir)
}

// Get opens key's file.
func (s FileStore) Get(_ context.Context, key string) (io.ReadCloser, error) {
	name, err := s.file(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", name, ErrNotFound)
	}
	return f, err
}

// List returns the regular files whose key starts with prefix. Temporary
// files of a Put under way are not listed.
func (s FileStore) List(_ context.Context, prefix string) ([]Object, error) {
	sub, base := "", prefix
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		sub, base = prefix[:i], prefix[i+1:]
	}
	entries, err := os.ReadDir(filepath.Join(s.Dir, sub))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var objects []Object
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), base) || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return nil, err
		}
		key := e.Name()
		if sub != "" {
			key = sub + "/" + key
		}
		objects = append(objects, Object{Key: key, LastModified: info.ModTime(), Size: info.Size()})
	}
	return objects, nil
}

// Delete removes key's file.
func (s FileStore) Delete(_ context.Context, key string) error {
	name, err := s.file(key)
	if err != nil {
		return err
	}
	if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	return d.Sync()
}

// contextReader stops a copy once ctx is done.
type contextReader struct {
	ctx context.Context
	r   io.Reader
}

func (c contextReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
