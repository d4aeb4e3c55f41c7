package framework

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A long wait says what it waits for and how much of its budget is gone,
// and says nothing more once it ended.
func TestALongWaitPrintsProgressUntilItEnds(t *testing.T) {
	var out lockedBuffer
	stop := startProgress(&out, time.Millisecond, "cluster ns/example to be healthy with 3 members", 4*time.Minute)
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(out.String(), "\n") < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	stop()
	printed := out.String()
	first, _, _ := strings.Cut(printed, "\n")
	if want := "  … waiting for cluster ns/example to be healthy with 3 members: 0s of 4m0s"; first != want {
		t.Fatalf("first progress line %q, want %q", first, want)
	}
	time.Sleep(10 * time.Millisecond) // ten periods: a leftover ticker would print
	if after := out.String(); after != printed {
		t.Errorf("printed after the wait ended: %q", strings.TrimPrefix(after, printed))
	}
}
