// Package kubecompat adapts the operator to the API server it finds, so one
// binary runs on the current era and on the 1.16 era, and under its own Role
// or under the narrower one coreos etcd-operator documented (access.go).
package kubecompat

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/features"
	"k8s.io/client-go/rest"
)

// WatchListMinMinor is the first Kubernetes minor whose API server answers
// watches with sendInitialEvents (streaming lists, 1.27).
const WatchListMinMinor = 27

// DryRunMinMinor is the first Kubernetes minor whose API server does
// server-side dry runs by default (beta in 1.13; alpha and off in 1.12).
// Before 1.12 the dryRun parameter is unknown, and a "dry-run" create
// would create the object for real: no dry run is ever sent there.
const DryRunMinMinor = 13

// Gates are client-go's feature gates, with WatchListClient switched off for
// API servers that predate it: they ignore sendInitialEvents and never send
// the bookmark that ends the initial list, so informers would never sync.
type Gates struct {
	base      features.Gates
	watchList atomic.Bool
}

// Install puts Gates in front of client-go's own; call it before any client
// is built (client-go reads its gates lazily).
func Install() *Gates {
	g := &Gates{base: features.FeatureGates()}
	g.watchList.Store(true)
	features.ReplaceFeatureGates(g)
	return g
}

// Enabled implements features.Gates.
func (g *Gates) Enabled(f features.Feature) bool {
	if f == features.WatchListClient && !g.watchList.Load() {
		return false
	}
	return g.base.Enabled(f)
}

// Server is what the operator needs to know about the API server.
type Server struct {
	Major, Minor int
	GitVersion   string
}

// AdaptTo reads the server version and switches off what it cannot serve.
// It returns the version and a description of each adaptation made.
func (g *Gates) AdaptTo(cfg *rest.Config) (Server, []string, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return Server{}, nil, err
	}
	info, err := dc.ServerVersion()
	if err != nil {
		return Server{}, nil, fmt.Errorf("reading the API server's version: %w", err)
	}
	s, err := ParseServer(info.Major, info.Minor)
	if err != nil {
		return Server{}, nil, err
	}
	s.GitVersion = info.GitVersion
	var notes []string
	if s.Major == 1 && s.Minor < WatchListMinMinor {
		g.watchList.Store(false)
		notes = append(notes, fmt.Sprintf("streaming lists (WatchListClient) off: Kubernetes %s predates them (1.%d)", s.GitVersion, WatchListMinMinor))
	}
	return s, notes, nil
}

// NoDryRun says why the server cannot be sent a server-side dry run, ""
// when it can.
func (s Server) NoDryRun() string {
	if s.Major == 1 && s.Minor < DryRunMinMinor {
		return fmt.Sprintf("Kubernetes %d.%d has no server-side dry run (1.%d and later)", s.Major, s.Minor, DryRunMinMinor)
	}
	return ""
}

// ParseServer reads version.Info's major and minor ("1", "16+").
func ParseServer(major, minor string) (Server, error) {
	ma, err1 := strconv.Atoi(strings.TrimRight(major, "+"))
	mi, err2 := strconv.Atoi(strings.TrimRight(minor, "+"))
	if err1 != nil || err2 != nil {
		return Server{}, fmt.Errorf("unreadable API server version %q.%q", major, minor)
	}
	return Server{Major: ma, Minor: mi}, nil
}
