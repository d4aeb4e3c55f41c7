package kubecompat

import (
	"testing"

	"k8s.io/client-go/features"
)

type fixedGates map[features.Feature]bool

func (f fixedGates) Enabled(k features.Feature) bool { return f[k] }

func TestWatchListOffOnlyWhenSwitchedOff(t *testing.T) {
	g := &Gates{base: fixedGates{features.WatchListClient: true, features.InformerResourceVersion: true}}
	g.watchList.Store(true)
	if !g.Enabled(features.WatchListClient) {
		t.Error("WatchListClient off although the server supports it")
	}
	g.watchList.Store(false)
	if g.Enabled(features.WatchListClient) {
		t.Error("WatchListClient on for an old server")
	}
	if !g.Enabled(features.InformerResourceVersion) {
		t.Error("another gate changed")
	}
}

func TestParseServer(t *testing.T) {
	for _, tt := range []struct{ major, minor string }{{"1", "16"}, {"1", "16+"}} {
		s, err := ParseServer(tt.major, tt.minor)
		if err != nil || s.Major != 1 || s.Minor != 16 {
			t.Errorf("ParseServer(%q, %q) = %+v, %v", tt.major, tt.minor, s, err)
		}
	}
	if _, err := ParseServer("1", "x"); err == nil {
		t.Error("unreadable minor accepted")
	}
}

func TestNoDryRunBefore113(t *testing.T) {
	for _, tt := range []struct {
		minor int
		want  bool
	}{{11, false}, {12, false}, {13, true}, {16, true}, {34, true}} {
		if got := (Server{Major: 1, Minor: tt.minor}).NoDryRun() == ""; got != tt.want {
			t.Errorf("1.%d: dry run %v, want %v", tt.minor, got, tt.want)
		}
	}
}
