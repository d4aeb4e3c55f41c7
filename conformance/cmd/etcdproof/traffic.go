package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/etcdproof/etcdproof/conformance/runner"
	"github.com/etcdproof/etcdproof/conformance/traffic"
)

func parseTraffic(args []string) (traffic.Config, string, error) {
	fs := flag.NewFlagSet("traffic", flag.ContinueOnError)
	var cfg traffic.Config
	var endpoints, listen string
	fs.StringVar(&endpoints, "endpoints", "", "comma-separated etcd client URLs (required)")
	fs.StringVar(&listen, "listen", ":8080", "address of the control API (GET /status, POST /stop)")
	fs.IntVar(&cfg.Clients, "clients", 8, "concurrent clients, one request in flight each")
	fs.IntVar(&cfg.Keys, "keys", 8, "shared keys")
	fs.IntVar(&cfg.Rate, "rate", 200, "operations per second across all clients")
	fs.DurationVar(&cfg.RequestTimeout, "request-timeout", 5*time.Second, "per-request timeout (clientv3 retries inside it)")
	fs.StringVar(&cfg.KeyPrefix, "key-prefix", "etcdproof/traffic/", "key prefix")
	fs.DurationVar(&cfg.RetryBackoff, "retry-backoff", 100*time.Millisecond, "wait before the one retry of a request that failed definitely")
	fs.DurationVar(&cfg.FinalReadBudget, "final-read-budget", 30*time.Second, "how long each key's final read is retried; a written key never read back cannot be verified")
	if err := fs.Parse(args); err != nil {
		return cfg, "", err
	}
	if endpoints != "" {
		cfg.Endpoints = strings.Split(endpoints, ",")
	}
	if err := cfg.Validate(); err != nil {
		return cfg, "", err
	}
	if listen == "" {
		return cfg, "", errors.New("--listen must not be empty")
	}
	return cfg, listen, nil
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
	fmt.Fprintf(os.Stderr, "etcdproof traffic: %d clients, %d ops/s against %s; control API on %s\n", cfg.Clients, cfg.Rate, strings.Join(cfg.Endpoints, ","), listen)
	if err := web.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(os.Stderr, "etcdproof traffic: %v\n", err)
		return runner.ExitCouldNot
	}
	return 0
}
