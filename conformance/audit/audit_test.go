package audit

import (
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// event is one audit log line, as the API server writes it (microsecond
// timestamps): user u got resource r at time t.
func event(t time.Time, u, r string) string {
	return fmt.Sprintf(`{"kind":"Event","apiVersion":"audit.k8s.io/v1","stage":"ResponseComplete","verb":"get","user":{"username":%q},"objectRef":{"resource":%q,"namespace":"a"},"requestReceivedTimestamp":%q,"stageTimestamp":%q,"responseStatus":{"code":200}}`+"\n",
		u, r, t.UTC().Format(metav1.RFC3339Micro), t.UTC().Format(metav1.RFC3339Micro))
}

func write(t *testing.T, path string, lines ...string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeGzip(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	if _, err := zw.Write([]byte(strings.Join(lines, ""))); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func resources(t *testing.T, path string, since time.Time) ([]string, Stats) {
	t.Helper()
	var got []string
	st, err := Read(path, since, func(ev *Event) error {
		got = append(got, ev.ObjectRef.Resource)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, st
}

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// kube-apiserver rotates audit.log to audit-<time>.log (lumberjack); a
// reader of audit.log alone missed every event rotated out during the run.
func TestReadFollowsRotatedFilesInTimeOrder(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "audit.log")
	// Written in this order: b1 (rotated at 10:01), b2 (10:02, compressed),
	// then the live file. Directory order (b2 sorts before b1 by name here
	// only through the .gz) must not matter.
	write(t, filepath.Join(dir, "audit-2026-12-01T10-01-00.000.log"), event(t0, "u", "first"), event(t0.Add(30*time.Second), "u", "second"))
	writeGzip(t, filepath.Join(dir, "audit-2026-12-01T10-02-00.000.log.gz"), event(t0.Add(90*time.Second), "u", "third"))
	write(t, live, event(t0.Add(150*time.Second), "u", "fourth"))
	// Not this log's backups.
	write(t, filepath.Join(dir, "other-2026-12-01T10-01-30.000.log"), "garbage\n")
	write(t, filepath.Join(dir, "audit-policy.log"), "garbage\n")

	got, st := resources(t, live, time.Time{})
	if strings.Join(got, ",") != "first,second,third,fourth" || len(st.Files) != 3 {
		t.Errorf("events = %v from %v, want first..fourth from 3 files", got, st.Files)
	}
	// A backup rotated before the run started holds nothing of the run: it is not read.
	got, st = resources(t, live, t0.Add(80*time.Second))
	if strings.Join(got, ",") != "third,fourth" || len(st.Files) != 2 {
		t.Errorf("events since 10:01:20 = %v from %v, want third,fourth from 2 files", got, st.Files)
	}
}

// The API server appends while the suite reads: the last line of the live
// file may be half written. That used to fail the whole check.
func TestReadIgnoresAndCountsATornLastLineOfTheLiveFile(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "audit.log")
	whole := event(t0, "u", "pods")
	write(t, live, whole, whole[:len(whole)/2])
	got, st := resources(t, live, time.Time{})
	if len(got) != 1 || st.TornLines != 1 {
		t.Errorf("events = %v, torn = %d; want one event and one torn line", got, st.TornLines)
	}
}

func TestReadRejectsCorruptLines(t *testing.T) {
	whole := event(t0, "u", "pods")
	for name, c := range map[string]struct {
		file  string
		lines []string
	}{
		"in the middle of the live file":          {"audit.log", []string{whole, whole[:20] + "\n", whole}},
		"a complete last line of the live file":   {"audit.log", []string{whole, "not json\n"}},
		"a half-written last line of a backup":    {"audit-2026-12-01T10-01-00.000.log", []string{whole, whole[:20]}},
		"in the middle of a backup, live is fine": {"audit-2026-12-01T10-01-00.000.log", []string{"{\n", whole}},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			live := filepath.Join(dir, "audit.log")
			write(t, live, whole)
			write(t, filepath.Join(dir, c.file), c.lines...)
			_, err := Read(live, time.Time{}, func(*Event) error { return nil })
			if err == nil || !strings.Contains(err.Error(), c.file+" line ") {
				t.Errorf("error = %v, want one naming %s and the line", err, c.file)
			}
		})
	}
}

func TestReadNeedsTheLiveFile(t *testing.T) {
	if _, err := Read(filepath.Join(t.TempDir(), "audit.log"), time.Time{}, func(*Event) error { return nil }); err == nil {
		t.Error("a missing log read without error")
	}
}

func TestCreations(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "audit.log")
	line := func(verb, user, ref string, code int) string {
		return fmt.Sprintf(`{"kind":"Event","stage":"ResponseComplete","verb":%q,"user":{"username":%q},"userAgent":"kubectl/v1.34.4","objectRef":%s,"requestReceivedTimestamp":"2026-12-01T10:00:00.100000Z","stageTimestamp":"2026-12-01T10:00:00.200000Z","responseStatus":{"code":%d}}`+"\n", verb, user, ref, code)
	}
	write(t, live,
		line("create", "admin", `{"resource":"persistentvolumeclaims","namespace":"a","name":"data"}`, 201),
		// Server-side apply creates with a patch.
		line("patch", "admin", `{"resource":"customresourcedefinitions","apiGroup":"apiextensions.k8s.io","name":"x.y"}`, 201),
		// generateName: the name is not known at the Metadata level.
		line("create", "system:serviceaccount:kube-system:replicaset-controller", `{"resource":"pods","namespace":"a"}`, 201),
		line("create", "admin", `{"resource":"pods","namespace":"a","name":"p"}`, 409),
		line("create", "admin", `{"resource":"pods","subresource":"eviction","namespace":"a","name":"p"}`, 201),
		line("update", "admin", `{"resource":"pods","namespace":"a","name":"p"}`, 200),
	)
	cs, _, err := Creations(live, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cs {
		got = append(got, c.User+" "+c.Resource+" "+c.Namespace+"/"+c.Name)
	}
	want := "admin persistentvolumeclaims a/data;admin customresourcedefinitions.apiextensions.k8s.io /x.y;system:serviceaccount:kube-system:replicaset-controller pods a/"
	if strings.Join(got, ";") != want {
		t.Errorf("creations:\n%s\nwant:\n%s", strings.Join(got, ";"), want)
	}
	if !cs[0].Received.Equal(time.Date(2026, 12, 1, 10, 0, 0, 100000000, time.UTC)) || cs[0].UserAgent != "kubectl/v1.34.4" {
		t.Errorf("creation = %+v", cs[0])
	}
}
