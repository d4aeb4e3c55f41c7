package runner

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// TestClientGoErrorsGoToTheLogNotTheTerminal: client-go's port-forward
// reports a copy error through HandleError when the pod behind it goes; the
// terminal must not show it, the report folder's log must.
func TestClientGoErrorsGoToTheLogNotTheTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	defer func() { os.Stderr = stderr }()

	path := filepath.Join(t.TempDir(), ClientGoLog)
	restore, err := routeClientGoLogs(path)
	if err != nil {
		t.Fatal(err)
	}
	utilruntime.HandleError(io.ErrClosedPipe) // what portforward.go does
	restore()
	os.Stderr = stderr
	_ = w.Close()
	terminal, _ := io.ReadAll(r)
	logged, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(terminal), io.ErrClosedPipe.Error()) {
		t.Errorf("the terminal shows client-go's error: %q", terminal)
	}
	if !strings.Contains(string(logged), io.ErrClosedPipe.Error()) {
		t.Errorf("%s lacks client-go's error: %q", ClientGoLog, logged)
	}
}
