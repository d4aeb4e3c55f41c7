package history

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A history with watchers keeps its watch records through a file, each
// on a line of its own beside the operations, and the put's revision.
func TestWatchRecordsSurviveTheFile(t *testing.T) {
	want := History{
		Operations: []Operation{{Client: 0, Kind: Put, Key: "p/k0", Value: "c0-1", Call: 5, Return: 9, Term: 2, Revision: 7}},
		Watches: []WatchRecord{
			{Watcher: 0, At: 1, Start: &WatchStart{Prefix: "p/", Revision: 6}},
			{Watcher: 0, At: 10, Response: &WatchResponse{Revision: 7, Events: []WatchEvent{{Type: EventPut, Key: "p/k0", Value: "c0-1", ModRevision: 7, CreateRevision: 7}}}},
			{Watcher: 0, At: 11, Response: &WatchResponse{Revision: 7, Progress: true}},
			{Watcher: 1, At: 12, Response: &WatchResponse{Canceled: true, CompactRevision: 9, Error: "etcdserver: mvcc: required revision has been compacted"}},
			{Watcher: 1, At: 13, Start: &WatchStart{Prefix: "p/", Revision: 9, Resume: true}},
		},
	}
	path := filepath.Join(t.TempDir(), "h.jsonl")
	if err := WriteFile(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, want)
	}
}

// Histories written before watchers were recorded (the validation
// testdata, some written by hand) load as before, without watch records,
// and read back the same once written.
func TestHistoriesWithoutWatchersAreUnchanged(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "validate", "testdata", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata histories: %v", err)
	}
	for _, file := range files {
		before, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(before, []byte(`"watch"`)) {
			continue // recorded with watchers
		}
		h, err := ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Watches) != 0 || len(h.Operations) == 0 {
			t.Errorf("%s: %d operations, %d watch records", file, len(h.Operations), len(h.Watches))
		}
		rewritten := filepath.Join(t.TempDir(), filepath.Base(file))
		if err := WriteFile(rewritten, h); err != nil {
			t.Fatal(err)
		}
		if again, err := ReadFile(rewritten); err != nil || !reflect.DeepEqual(again, h) {
			t.Errorf("%s changed when written back", file)
		}
	}
}

// A watch line holds a start or a response, not both nor neither, and no
// field the format does not know.
func TestMalformedWatchRecordsAreRefused(t *testing.T) {
	for _, line := range []string{
		`{"watch":null}`,
		`{"watch":{"watcher":0,"at":1}}`,
		`{"watch":{"watcher":0,"at":1,"start":{"prefix":"p/","revision":3},"response":{"revision":3}}}`,
		`{"watch":{"watcher":0,"at":1,"start":{"prefix":"p/","revision":3,"colour":"red"}}}`,
		`{"watch":{"watcher":0,"at":1,"start":{"prefix":"p/","revision":3}},"client":1}`,
	} {
		if _, err := Read(strings.NewReader(line + "\n")); err == nil || !strings.Contains(err.Error(), "history record 1") {
			t.Errorf("%s: error %v, want one naming record 1", line, err)
		}
	}
}
