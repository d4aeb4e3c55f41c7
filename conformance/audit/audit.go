// Package audit reads the API server's audit log (JSON lines of
// audit.k8s.io/v1 Events, as kube-apiserver writes with
// --audit-log-format=json) across its rotated backups, and answers the two
// questions the suite asks of it: what a user did (the rbac check) and who
// created an object (the cleanup check).
package audit

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// Event is one audit event, the API server's own type.
type Event = auditv1.Event

// backupTimeFormat is how kube-apiserver's log rotation (lumberjack, driven
// by --audit-log-maxsize/-maxbackup/-maxage) stamps a backup: the live file
// <base><ext> is renamed to <base>-<UTC time of rotation><ext>, plus .gz
// with --audit-log-compress.
const backupTimeFormat = "2006-01-02T15-04-05.000"

// File is one file of the log.
type File struct {
	Path string
	// Rotated is when a backup was rotated out (every event in it is
	// older); zero for the live file.
	Rotated time.Time
}

// Files lists the log at path in the order it was written: backups oldest
// first, then the live file. The live file must exist.
func Files(path string) ([]File, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	dir, name := filepath.Split(path)
	ext := filepath.Ext(name)
	prefix := strings.TrimSuffix(name, ext) + "-"
	entries, err := os.ReadDir(filepath.Clean(dir + "."))
	if err != nil {
		return nil, err
	}
	var files []File
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasPrefix(n, prefix) {
			continue
		}
		stamp := strings.TrimSuffix(strings.TrimSuffix(n, ".gz"), ext)
		if !strings.HasSuffix(strings.TrimSuffix(n, ".gz"), ext) {
			continue
		}
		t, err := time.Parse(backupTimeFormat, strings.TrimPrefix(stamp, prefix))
		if err != nil {
			continue // not a backup of this log
		}
		files = append(files, File{Path: filepath.Join(dir, n), Rotated: t})
	}
	slices.SortFunc(files, func(a, b File) int { return a.Rotated.Compare(b.Rotated) })
	return append(files, File{Path: path}), nil
}

// Stats says what a read covered.
type Stats struct {
	// Files read, oldest first; backups rotated before the time asked for
	// are not read.
	Files []string `json:"files"`
	// Events is how many events were passed on.
	Events int `json:"events"`
	// TornLines counts half-written last lines of the live file, ignored:
	// the API server was writing while the log was read.
	TornLines int `json:"tornLines,omitempty"`
}

// Read calls fn with every event of the log at path received at or after
// since (zero: all), oldest file first. A line that is not an event fails
// the read, except a half-written last line of the live file.
func Read(path string, since time.Time, fn func(*Event) error) (Stats, error) {
	var st Stats
	open, err := openLog(path, since)
	if err != nil {
		return st, fmt.Errorf("audit log: %w", err)
	}
	defer func() {
		for _, o := range open {
			_ = o.fh.Close()
		}
	}()
	for _, o := range open {
		st.Files = append(st.Files, o.Path)
		if err := readFile(o, since, fn, &st); err != nil {
			return st, err
		}
	}
	return st, nil
}

type openFile struct {
	File
	fh *os.File
}

// openLog opens every file of the log that may hold events since a time.
// Open files survive a rotation (a rename), but a rotation between listing
// and opening would hide the renamed file: the listing is then redone.
func openLog(path string, since time.Time) ([]openFile, error) {
	for attempt := 0; ; attempt++ {
		files, err := Files(path)
		if err != nil {
			return nil, err
		}
		var open []openFile
		for _, f := range files {
			if !f.Rotated.IsZero() && !since.IsZero() && f.Rotated.Before(since) {
				continue
			}
			fh, err := os.Open(f.Path)
			if err != nil {
				for _, o := range open {
					_ = o.fh.Close()
				}
				return nil, err
			}
			open = append(open, openFile{f, fh})
		}
		again, err := Files(path)
		if err == nil && (len(again) == len(files) || attempt == 2) {
			return open, nil
		}
		for _, o := range open {
			_ = o.fh.Close()
		}
		if err != nil {
			return nil, err
		}
	}
}

func readFile(f openFile, since time.Time, fn func(*Event) error, st *Stats) error {
	var r io.Reader = f.fh
	if strings.HasSuffix(f.Path, ".gz") {
		gz, err := gzip.NewReader(f.fh)
		if err != nil {
			return fmt.Errorf("audit log %s: %w", f.Path, err)
		}
		defer func() { _ = gz.Close() }()
		r = gz
	}
	live := f.Rotated.IsZero()
	br := bufio.NewReaderSize(r, 1<<20)
	for line := 1; ; line++ {
		raw, readErr := br.ReadBytes('\n')
		if readErr != nil && readErr != io.EOF {
			return fmt.Errorf("audit log %s line %d: %w", f.Path, line, readErr)
		}
		complete := bytes.HasSuffix(raw, []byte("\n"))
		if len(bytes.TrimSpace(raw)) > 0 {
			var ev Event
			if err := json.Unmarshal(raw, &ev); err != nil {
				if live && !complete {
					// The API server is writing this line right now.
					st.TornLines++
					return nil
				}
				return fmt.Errorf("audit log %s line %d: %w", f.Path, line, err)
			}
			if since.IsZero() || !ev.RequestReceivedTimestamp.Time.Before(since) {
				st.Events++
				if err := fn(&ev); err != nil {
					return err
				}
			}
		}
		if readErr == io.EOF {
			return nil
		}
	}
}

// Creation is a request that created an object: a create, or an update or
// patch (server-side apply) answered 201 Created.
type Creation struct {
	// Resource is the plural resource, with ".group" unless core, as the
	// inventory names it.
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	// Name is empty for an object created with generateName: the Metadata
	// audit level records the request, made before the name is.
	Name      string    `json:"name,omitempty"`
	User      string    `json:"user"`
	UserAgent string    `json:"userAgent,omitempty"`
	Received  time.Time `json:"received"`
	Completed time.Time `json:"completed"`
}

// CreationOf returns the creation an event records, if it records one.
func CreationOf(ev *Event) (Creation, bool) {
	ref := ev.ObjectRef
	if ev.Stage != auditv1.StageResponseComplete || ev.ResponseStatus == nil || ev.ResponseStatus.Code != 201 ||
		ref == nil || ref.Resource == "" || ref.Subresource != "" {
		return Creation{}, false
	}
	switch ev.Verb {
	case "create", "update", "patch":
	default:
		return Creation{}, false
	}
	res := ref.Resource
	if ref.APIGroup != "" {
		res += "." + ref.APIGroup
	}
	return Creation{Resource: res, Namespace: ref.Namespace, Name: ref.Name, User: ev.User.Username, UserAgent: ev.UserAgent,
		Received: ev.RequestReceivedTimestamp.Time, Completed: ev.StageTimestamp.Time}, true
}

// Creations returns every creation in the log at path since a time.
func Creations(path string, since time.Time) ([]Creation, Stats, error) {
	var out []Creation
	st, err := Read(path, since, func(ev *Event) error {
		if c, ok := CreationOf(ev); ok {
			out = append(out, c)
		}
		return nil
	})
	return out, st, err
}
