// Package seed starts a new one-member etcd cluster on a snapshot: streamed
// from another member (Maintenance.Snapshot, which a member serves from its
// own backend, so it works without quorum), or a backup fetched from S3 or a
// file. It restores the snapshot into a data dir as the only member of a new
// cluster. The operator's `seed` subcommand runs it in the init container of
// the member pod that recovers an emptyDir cluster from its survivor (see
// plan.LostQuorum), or that starts a cluster from an EtcdRestore's backup.
package seed

import (
	"context"
	"crypto/tls"
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

	"github.com/etcdproof/etcdproof/operator/internal/backup"
	"github.com/etcdproof/etcdproof/operator/internal/etcdadmin"
)

// Config says whose data to copy and which member to make of it.
type Config struct {
	// Exactly one source is set. From is the client URL of the member whose
	// data is copied.
	From string
	// EtcdTLSDir, for an https From, holds the client certificate, key and
	// CA (backup.EtcdClientCertFile and the others: a TLS cluster's
	// operatorSecret). From is a pod IP, which the member's certificate does
	// not name: it must name EtcdServerName instead (desired.ServerName).
	EtcdTLSDir     string
	EtcdServerName string
	// FromS3Path is a backup in S3, "<bucket>/<key>", reached at S3Endpoint
	// (empty: AWS S3) with the AWS shared files in AWSDir (backup.LoadAWSDir).
	FromS3Path       string
	S3Endpoint       string
	S3ForcePathStyle bool
	AWSDir           string
	// FromFile is a backup file, for example on a mounted volume.
	FromFile string
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
	// VerifyOnly fetches the snapshot and restores it into a scratch
	// directory beside DataDir, then throws both away: a check that the
	// backup can be read and restored, made before any member is touched
	// (desired.RestoreVerifyPod). DataDir is left as it is.
	VerifyOnly bool
}

// Flag names of the subcommand (desired.SeedCommand and
// desired.RestoreSeedCommand write them; Config.Command too).
const (
	FlagFrom             = "from"
	FlagEtcdTLSDir       = "etcd-tls-dir"
	FlagEtcdServerName   = "etcd-server-name"
	FlagFromS3Path       = "from-s3-path"
	FlagS3Endpoint       = "s3-endpoint"
	FlagS3ForcePathStyle = "s3-force-path-style"
	FlagAWSDir           = "aws-dir"
	FlagFromFile         = "from-file"
	FlagDataDir          = "data-dir"
	FlagName             = "name"
	FlagPeerURL          = "initial-advertise-peer-urls"
	FlagToken            = "initial-cluster-token"
	FlagTimeout          = "timeout"
	FlagVerifyOnly       = "verify-only"
)

// Subcommand is the operator binary's subcommand that seeds a member.
const Subcommand = "seed"

// DefaultAWSDir is where a restored member's seed container reads the
// EtcdRestore's awsSecret.
const DefaultAWSDir = "/etc/etcd-restore/aws"

// DefaultTimeout bounds the copy when --timeout is not given.
const DefaultTimeout = 10 * time.Minute

// ParseFlags reads the subcommand's flags.
func ParseFlags(args []string) (Config, error) {
	var c Config
	fs := flag.NewFlagSet("etcd-operator seed", flag.ContinueOnError)
	fs.StringVar(&c.From, FlagFrom, "", "Client URL of the member whose data is copied.")
	fs.StringVar(&c.EtcdTLSDir, FlagEtcdTLSDir, "", "Directory holding "+backup.EtcdClientCertFile+", "+backup.EtcdClientKeyFile+" and "+backup.EtcdClientCAFile+" to reach an https --from.")
	fs.StringVar(&c.EtcdServerName, FlagEtcdServerName, "", "Name the certificate of an https --from must have (required with --etcd-tls-dir).")
	fs.StringVar(&c.FromS3Path, FlagFromS3Path, "", "Backup to restore, in S3: <bucket>/<key>.")
	fs.StringVar(&c.S3Endpoint, FlagS3Endpoint, "", "URL of an S3-compatible store (default AWS S3); http://host:port for one without TLS.")
	fs.BoolVar(&c.S3ForcePathStyle, FlagS3ForcePathStyle, false, "Address buckets as <endpoint>/<bucket>.")
	fs.StringVar(&c.AWSDir, FlagAWSDir, DefaultAWSDir, "Directory holding the AWS shared files credentials and config (profile default).")
	fs.StringVar(&c.FromFile, FlagFromFile, "", "Backup file to restore.")
	fs.StringVar(&c.DataDir, FlagDataDir, "", "Data dir of the new member (required); left alone when it holds a member already.")
	fs.StringVar(&c.Name, FlagName, "", "Name of the new member (required).")
	fs.StringVar(&c.PeerURL, FlagPeerURL, "", "Peer URL of the new member (required).")
	fs.StringVar(&c.Token, FlagToken, "", "Initial cluster token of the new cluster (required).")
	fs.DurationVar(&c.Timeout, FlagTimeout, DefaultTimeout, "How long the copy may take.")
	fs.BoolVar(&c.VerifyOnly, FlagVerifyOnly, false, "Fetch the snapshot and restore it into a scratch directory beside --data-dir, then discard it: checks that the backup can be restored; --data-dir is left as it is.")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return c, c.validate()
}

func (c Config) validate() error {
	sources := 0
	for _, s := range []string{c.From, c.FromS3Path, c.FromFile} {
		if s != "" {
			sources++
		}
	}
	if sources != 1 {
		return fmt.Errorf("exactly one of --%s, --%s and --%s is required", FlagFrom, FlagFromS3Path, FlagFromFile)
	}
	if c.EtcdTLSDir != "" && c.EtcdServerName == "" {
		return fmt.Errorf("--%s needs --%s", FlagEtcdTLSDir, FlagEtcdServerName)
	}
	if c.FromS3Path != "" {
		if _, _, err := backup.SplitS3Path(c.FromS3Path); err != nil {
			return err
		}
	}
	for _, f := range []struct{ name, value string }{
		{FlagDataDir, c.DataDir}, {FlagName, c.Name}, {FlagPeerURL, c.PeerURL}, {FlagToken, c.Token},
	} {
		if f.value == "" {
			return fmt.Errorf("--%s is required", f.name)
		}
	}
	return nil
}

// Command is the seed container's command line: binary (the operator's, on
// the image's PATH) and the subcommand with c's flags; ParseFlags reads it
// back. Flags left at their zero value are left out (defaults apply).
func (c Config) Command(binary string) []string {
	cmd := []string{binary, Subcommand}
	add := func(name, value string) {
		if value != "" {
			cmd = append(cmd, "--"+name+"="+value)
		}
	}
	add(FlagFrom, c.From)
	add(FlagEtcdTLSDir, c.EtcdTLSDir)
	add(FlagEtcdServerName, c.EtcdServerName)
	add(FlagFromS3Path, c.FromS3Path)
	add(FlagS3Endpoint, c.S3Endpoint)
	if c.S3ForcePathStyle {
		add(FlagS3ForcePathStyle, "true")
	}
	add(FlagAWSDir, c.AWSDir)
	add(FlagFromFile, c.FromFile)
	add(FlagDataDir, c.DataDir)
	add(FlagName, c.Name)
	add(FlagPeerURL, c.PeerURL)
	add(FlagToken, c.Token)
	if c.Timeout > 0 {
		add(FlagTimeout, c.Timeout.String())
	}
	if c.VerifyOnly {
		add(FlagVerifyOnly, "true")
	}
	return cmd
}

// source names where the snapshot comes from, for messages.
func (c Config) source() string {
	switch {
	case c.FromS3Path != "":
		return "s3 " + c.FromS3Path
	case c.FromFile != "":
		return "file " + c.FromFile
	}
	return c.From
}

// Run copies and restores. It is re-entrant: a data dir that holds a member
// already is the outcome of an earlier run (the kubelet runs init containers
// again when a pod's sandbox is recreated), and the member may have written
// since, so it is left as it is. Work happens in a sibling directory and
// lands with one rename, so a run stopped halfway leaves no partial member.
func Run(ctx context.Context, lg *zap.Logger, c Config) error {
	if err := c.validate(); err != nil {
		return err
	}
	member := filepath.Join(c.DataDir, "member")
	if _, err := os.Stat(member); err == nil && !c.VerifyOnly {
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
	if err := fetch(ctx, lg, c, db); err != nil {
		return err
	}
	manager := snapshot.NewV3(lg)
	revision, err := backup.SnapshotRevision(db)
	if err != nil {
		return fmt.Errorf("reading the snapshot of %s: %w", c.source(), err)
	}
	lg.Info("snapshot copied", zap.String("from", c.source()), zap.Int64("revision", revision))
	restored := filepath.Join(work, "data")
	err = manager.Restore(snapshot.RestoreConfig{
		SnapshotPath:        db,
		Name:                c.Name,
		OutputDataDir:       restored,
		PeerURLs:            []string{c.PeerURL},
		InitialCluster:      c.Name + "=" + c.PeerURL,
		InitialClusterToken: c.Token,
	})
	if err != nil {
		return fmt.Errorf("restoring the snapshot of %s: %w", c.source(), err)
	}
	if c.VerifyOnly {
		lg.Info("backup verified: it restores", zap.String("from", c.source()), zap.Int64("revision", revision))
		return nil
	}
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(restored, "member"), member); err != nil {
		return fmt.Errorf("moving the restored member into %s: %w", c.DataDir, err)
	}
	lg.Info("member seeded", zap.String("name", c.Name), zap.String("from", c.source()), zap.String("data-dir", c.DataDir),
		zap.Int64("revision", revision))
	return nil
}

// fetch copies the snapshot from c's source into the file db.
func fetch(ctx context.Context, lg *zap.Logger, c Config, db string) error {
	switch {
	case c.FromS3Path != "":
		store, key, err := backup.OpenS3(c.FromS3Path, c.S3Endpoint, c.S3ForcePathStyle, c.AWSDir)
		if err != nil {
			return err
		}
		return backup.Fetch(ctx, store, key, db)
	case c.FromFile != "":
		store, key, err := backup.NewFileStore(c.FromFile)
		if err != nil {
			return err
		}
		return backup.Fetch(ctx, store, key, db)
	}
	tlsConfig, err := c.clientTLS()
	if err != nil {
		return err
	}
	if _, err := clientsnapshot.SaveWithVersion(ctx, lg, clientv3.Config{Endpoints: []string{c.From}, DialTimeout: 5 * time.Second, TLS: tlsConfig}, db); err != nil {
		return fmt.Errorf("copying a snapshot from %s: %w", c.From, err)
	}
	return nil
}

// clientTLS reaches an https From with the certificate in EtcdTLSDir; nil
// without one.
func (c Config) clientTLS() (*tls.Config, error) {
	if c.EtcdTLSDir == "" {
		return nil, nil
	}
	var pems [3][]byte
	for i, name := range []string{backup.EtcdClientCertFile, backup.EtcdClientKeyFile, backup.EtcdClientCAFile} {
		var err error
		if pems[i], err = os.ReadFile(filepath.Join(c.EtcdTLSDir, name)); err != nil {
			return nil, err
		}
	}
	cfg, err := etcdadmin.ClientTLS(pems[0], pems[1], pems[2], c.EtcdServerName)
	if err != nil {
		return nil, fmt.Errorf("etcd client TLS in %s: %w", c.EtcdTLSDir, err)
	}
	return cfg, nil
}
