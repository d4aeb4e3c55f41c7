// Package seed starts a new one-member etcd cluster on a copy of another
// member's data: it streams a snapshot from that member (Maintenance.Snapshot,
// which a member serves from its own backend, so it works without quorum) and
// restores it into a data dir as the only member of a new cluster. The
// operator's `seed` subcommand runs it in the init container of the member pod
// that recovers an emptyDir cluster from its survivor (see plan.LostQuorum).
package seed

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	clientsnapshot "go.etcd.io/etcd/client/v3/snapshot"
	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"
)

// Config says whose data to copy and which member to make of it.
type Config struct {
	// From is the client URL of the member whose data is copied.
	From string
	// DataDir is the new member's data dir (etcd's --data-dir).
	DataDir string
	// Name, PeerURL and Token are the new member's --name,
	// --initial-advertise-peer-urls and --initial-cluster-token: its member ID
	// and the new cluster's ID are derived from them.
	Name    string
	PeerURL string
	Token   string
	// Timeout bounds the whole copy.
	Timeout time.Duration
}

// Flag names of the subcommand (desired.SeedCommand writes them).
const (
	FlagFrom    = "from"
	FlagDataDir = "data-dir"
	FlagName    = "name"
	FlagPeerURL = "initial-advertise-peer-urls"
	FlagToken   = "initial-cluster-token"
	FlagTimeout = "timeout"
)

// ParseFlags reads the subcommand's flags.
func ParseFlags(args []string) (Config, error) {
	var c Config
	fs := flag.NewFlagSet("etcd-operator seed", flag.ContinueOnError)
	fs.StringVar(&c.From, FlagFrom, "", "Client URL of the member whose data is copied (required).")
	fs.StringVar(&c.DataDir, FlagDataDir, "", "Data dir of the new member (required); left alone when it holds a member already.")
	fs.StringVar(&c.Name, FlagName, "", "Name of the new member (required).")
	fs.StringVar(&c.PeerURL, FlagPeerURL, "", "Peer URL of the new member (required).")
	fs.StringVar(&c.Token, FlagToken, "", "Initial cluster token of the new cluster (required).")
	fs.DurationVar(&c.Timeout, FlagTimeout, 10*time.Minute, "How long the copy may take.")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	for _, f := range []struct{ name, value string }{
		{FlagFrom, c.From}, {FlagDataDir, c.DataDir}, {FlagName, c.Name}, {FlagPeerURL, c.PeerURL}, {FlagToken, c.Token},
	} {
		if f.value == "" {
			return c, fmt.Errorf("--%s is required", f.name)
		}
	}
	return c, nil
}

// Run copies and restores. It is re-entrant: a data dir that holds a member
// already is the outcome of an earlier run (the kubelet runs init containers
// again when a pod's sandbox is recreated), and the member may have written
// since, so it is left as it is. Work happens in a sibling directory and
// lands with one rename, so a run stopped halfway leaves no partial member.
func Run(ctx context.Context, lg *zap.Logger, c Config) error {
	member := filepath.Join(c.DataDir, "member")
	if _, err := os.Stat(member); err == nil {
		lg.Info("data dir holds a member already: nothing to copy", zap.String("data-dir", c.DataDir))
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	work := filepath.Clean(c.DataDir) + ".seed"
	if err := os.RemoveAll(work); err != nil {
		return err
	}
	if err := os.MkdirAll(work, 0o700); err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(work) }()

	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	db := filepath.Join(work, "snapshot.db")
	version, err := clientsnapshot.SaveWithVersion(ctx, lg, clientv3.Config{Endpoints: []string{c.From}, DialTimeout: 5 * time.Second}, db)
	if err != nil {
		return fmt.Errorf("copying a snapshot from %s: %w", c.From, err)
	}
	lg.Info("snapshot copied", zap.String("from", c.From), zap.String("storage-version", version))
	restored := filepath.Join(work, "data")
	err = snapshot.NewV3(lg).Restore(snapshot.RestoreConfig{
		SnapshotPath:        db,
		Name:                c.Name,
		OutputDataDir:       restored,
		PeerURLs:            []string{c.PeerURL},
		InitialCluster:      c.Name + "=" + c.PeerURL,
		InitialClusterToken: c.Token,
	})
	if err != nil {
		return fmt.Errorf("restoring the snapshot of %s: %w", c.From, err)
	}
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(restored, "member"), member); err != nil {
		return fmt.Errorf("moving the restored member into %s: %w", c.DataDir, err)
	}
	lg.Info("member seeded", zap.String("name", c.Name), zap.String("from", c.From), zap.String("data-dir", c.DataDir))
	return nil
}
