package runner

import (
	"flag"
	"fmt"
	"io"
	"os"

	"k8s.io/klog/v2"
)

// ClientGoLog is the file in the report folder that keeps client-go's own
// log lines.
const ClientGoLog = "client-go.log"

// routeClientGoLogs sends klog (client-go's logger) to path instead of the
// terminal. Port forwards log an error each time the pod behind one goes
// away ("Error copying from local connection to remote stream"), which every
// fault check causes on purpose: the person reading the run needs Ginkgo's
// steps, and the log keeps the rest. The returned func restores stderr.
func routeClientGoLogs(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := setKlogFlags("false", "FATAL"); err != nil {
		_ = f.Close()
		return nil, err
	}
	klog.SetOutput(f)
	return func() {
		klog.Flush()
		klog.SetOutput(io.Discard)
		_ = setKlogFlags("true", "ERROR")
		_ = f.Close()
	}, nil
}

// setKlogFlags sets klog's logtostderr and stderrthreshold: with the
// threshold at its default (ERROR), errors reach stderr even when klog writes
// to a file.
func setKlogFlags(toStderr, threshold string) error {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	for name, value := range map[string]string{"logtostderr": toStderr, "alsologtostderr": "false", "stderrthreshold": threshold} {
		if err := fs.Set(name, value); err != nil {
			return fmt.Errorf("klog flag %s: %w", name, err)
		}
	}
	return nil
}
