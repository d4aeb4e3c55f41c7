package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"go.uber.org/zap"

	"github.com/etcdproof/etcdproof/operator/internal/backup"
)

// maxResultLen keeps what is written to the result file within the 4096
// bytes the kubelet keeps of a termination message.
const maxResultLen = 4000

// runBackup is `etcd-operator backup`: the container of an EtcdBackup's pod.
// It writes the result (one JSON line, backup.ParseResult reads it) to
// --result-file and stdout, or the error to --result-file and stderr, and
// returns the exit code: 0 stored, 1 failed, 2 bad flags.
func runBackup(args []string, stdout io.Writer) int {
	a, err := backup.ParseFlags(args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(os.Stderr, "etcd-operator backup:", err)
		_ = writeResult(a.ResultFile, "bad flags: "+err.Error())
		return 2
	}
	lg, err := zap.NewProduction(zap.AddStacktrace(zap.DPanicLevel))
	if err != nil {
		fmt.Fprintln(os.Stderr, "etcd-operator backup:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := backup.Run(ctx, lg, a)
	if err != nil {
		lg.Error("backup failed", zap.Error(err))
		_ = writeResult(a.ResultFile, err.Error())
		return 1
	}
	line := res.String()
	fmt.Fprintln(stdout, line)
	if err := writeResult(a.ResultFile, line); err != nil {
		lg.Error("the backup is stored but its result could not be written", zap.String("result-file", a.ResultFile), zap.Error(err))
		return 1
	}
	return 0
}

// writeResult replaces file's content with msg (cut to maxResultLen).
func writeResult(file, msg string) error {
	if file == "" {
		return nil
	}
	if len(msg) > maxResultLen {
		msg = msg[:maxResultLen]
	}
	err := os.WriteFile(file, []byte(msg+"\n"), 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "etcd-operator backup: writing the result:", err)
	}
	return err
}
