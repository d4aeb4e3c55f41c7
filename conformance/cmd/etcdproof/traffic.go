package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"

	"github.com/etcdproof/etcdproof/conformance/runner"
	"github.com/etcdproof/etcdproof/conformance/traffic"
)

func parseTraffic(args []string) (traffic.Config, string, error) {
	fs := flag.NewFlagSet("traffic", flag.ContinueOnError)
	var cfg traffic.Config
	var endpoints, listen string
	var tlsFiles transport.TLSInfo
	fs.StringVar(&endpoints, "endpoints", "", "comma-separated etcd client URLs (required)")
	// etcdctl's names, which coreos' client Secret keys are named after.
	fs.StringVar(&tlsFiles.CertFile, "cert", "", "client certificate file (PEM), for members that require one; with --key")
	fs.StringVar(&tlsFiles.KeyFile, "key", "", "client key file (PEM); with --cert")
	fs.StringVar(&tlsFiles.TrustedCAFile, "cacert", "", "CA certificate file (PEM) the members' certificates must chain to")
	fs.StringVar(&listen, "listen", ":8080", "address of the control API (GET /status, POST /stop)")
	fs.IntVar(&cfg.Clients, "clients", 8, "concurrent clients, one request in flight each")
	fs.IntVar(&cfg.Keys, "keys", 8, "shared keys")
	fs.IntVar(&cfg.Rate, "rate", 200, "operations per second across all clients")
	fs.DurationVar(&cfg.RequestTimeout, "request-timeout", 5*time.Second, "per-request timeout (clientv3 retries inside it)")
	fs.StringVar(&cfg.KeyPrefix, "key-prefix", "etcdproof/traffic/", "key prefix")
	fs.DurationVar(&cfg.RetryBackoff, "retry-backoff", 100*time.Millisecond, "wait before the one retry of a request that failed definitely")
	fs.DurationVar(&cfg.FinalReadBudget, "final-read-budget", 30*time.Second, "how long each key's final read is retried, and the watchers get to see the last acknowledged put; a written key never read back cannot be verified")
	fs.IntVar(&cfg.Watchers, "watchers", 2, "watch clients, each watching every key under --key-prefix as an informer does; their streams are recorded and judged (0: none)")
	fs.DurationVar(&cfg.WatchResumeEvery, "watch-resume-every", 5*time.Second, "how often each watcher ends its stream and resumes from the revision after the last event it got (0: never)")
	if err := fs.Parse(args); err != nil {
		return cfg, "", err
	}
	if endpoints != "" {
		cfg.Endpoints = strings.Split(endpoints, ",")
	}
	var err error
	if cfg.TLS, err = clientTLS(tlsFiles); err != nil {
		return cfg, "", err
	}
	if err := cfg.Validate(); err != nil {
		return cfg, "", err
	}
	if listen == "" {
		return cfg, "", errors.New("--listen must not be empty")
	}
	return cfg, listen, nil
}

// clientTLS is the TLS configuration the flags ask for: nil when none of
// --cert, --key, --cacert is given.
func clientTLS(files transport.TLSInfo) (*tls.Config, error) {
	if files.CertFile == "" && files.KeyFile == "" && files.TrustedCAFile == "" {
		return nil, nil
	}
	if (files.CertFile == "") != (files.KeyFile == "") {
		return nil, errors.New("--cert and --key go together")
	}
	cfg, err := files.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("client TLS: %w", err)
	}
	return cfg, nil
}

func trafficCmd(ctx context.Context, args []string) int {
	cfg, listen, err := parseTraffic(args)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(os.Stderr, "etcdproof traffic: %v\n", err)
		}
		return runner.ExitCouldNot
	}
	srv, err := traffic.Start(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcdproof traffic: %v\n", err)
		return runner.ExitCouldNot
	}
	web := &http.Server{Addr: listen, Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Stop()
		_ = web.Close()
	}()
	fmt.Fprintf(os.Stderr, "etcdproof traffic: %d clients, %d ops/s, %d watchers against %s; control API on %s\n", cfg.Clients, cfg.Rate, cfg.Watchers, strings.Join(cfg.Endpoints, ","), listen)
	if err := web.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(os.Stderr, "etcdproof traffic: %v\n", err)
		return runner.ExitCouldNot
	}
	return 0
}
