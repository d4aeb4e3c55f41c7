package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The sandbox must stay up until the runtime asks it to stop, then exit 0.
func TestPauseRunsUntilSIGTERMAndExitsCleanly(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "pause")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatalf("build pause: %v", err)
	}
	cmd := exec.Command(bin)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start pause: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	select {
	case err := <-exited:
		t.Fatalf("pause exited before any signal: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("signal pause: %v", err)
	}
	if err := <-exited; err != nil {
		t.Fatalf("pause did not exit cleanly on SIGTERM: %v", err)
	}
}
