package history

import (
	"slices"
	"strings"
	"testing"
)

// Histories written before errors were classified still parse; their
// failures read as indeterminate, the cautious reading.
func TestReadOlderAndNewerRecords(t *testing.T) {
	h, err := Read(strings.NewReader(`{"client":0,"kind":"put","key":"k0","value":"a","call":0,"return":10}
{"client":1,"kind":"put","key":"k0","value":"b","call":20,"return":30,"error":"context deadline exceeded"}
{"client":1,"kind":"put","key":"k0","value":"c","call":40,"return":50,"error":"etcdserver: no leader","errorClass":"definite"}
{"client":1,"kind":"put","key":"k0","value":"d","call":60,"return":70,"retry":true}
`))
	if err != nil {
		t.Fatal(err)
	}
	var classes []ErrorClass
	for _, op := range h.Operations {
		classes = append(classes, op.Class())
	}
	if want := []ErrorClass{"", Indeterminate, Definite, ""}; !slices.Equal(classes, want) {
		t.Errorf("classes = %q, want %q", classes, want)
	}
	if !h.Operations[3].Retry {
		t.Error("retry flag lost")
	}
	if _, err := Read(strings.NewReader(`{"client":0,"kind":"put","key":"k","colour":"red"}`)); err == nil {
		t.Error("an unknown field parsed")
	}
}
