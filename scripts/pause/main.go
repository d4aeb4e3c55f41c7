// Command pause is the pod sandbox process of the offline kind node image:
// it holds the pod's namespaces open, reaps orphaned children, and exits
// cleanly on SIGINT or SIGTERM. Kubernetes' own pause is C, so it cannot be
// built from the Go module proxy.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range signals {
		if sig == syscall.SIGCHLD {
			reapChildren()
			continue
		}
		os.Exit(0)
	}
}

// reapChildren collects every exited child so none stays a zombie when the
// pod shares its PID namespace.
func reapChildren() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
