package backup

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.uber.org/zap"
)

// Subcommand is the operator binary's subcommand that runs a backup.
const Subcommand = "backup"

// Flag names of the subcommand (Args.Command writes them, ParseFlags reads them).
const (
	FlagEndpoints        = "endpoints"
	FlagTimeout          = "timeout"
	FlagS3Path           = "s3-path"
	FlagS3Endpoint       = "s3-endpoint"
	FlagS3ForcePathStyle = "s3-force-path-style"
	FlagAWSDir           = "aws-dir"
	FlagFile             = "file"
	FlagPeriodic         = "periodic"
	FlagMaxBackups       = "max-backups"
	FlagResultFile       = "result-file"
	FlagEtcdTLSDir       = "etcd-tls-dir"
	FlagScratchDir       = "scratch-dir"
)

// Defaults of the subcommand's flags.
const (
	// DefaultAWSDir is where the backup pod mounts the awsSecret.
	DefaultAWSDir = "/etc/etcd-backup/aws"
	// DefaultResultFile is the container's termination message file: the
	// operator reads the result from the pod's status.
	DefaultResultFile = "/dev/termination-log"
	DefaultTimeout    = 60 * time.Second
)

// Files of an EtcdBackup's clientTLSSecret (coreos' key names), mounted in
// the directory --etcd-tls-dir names.
const (
	EtcdClientCertFile = "etcd-client.crt"
	EtcdClientKeyFile  = "etcd-client.key"
	EtcdClientCAFile   = "etcd-client-ca.crt"
)

// Args are the subcommand's flags.
type Args struct {
	// Endpoints are the members' client URLs.
	Endpoints []string
	// Timeout bounds the whole backup, retention included.
	Timeout time.Duration
	// S3Path ("<bucket>/<key>") or File (a path in a mounted volume) is
	// where the backup goes; exactly one is set.
	S3Path           string
	S3Endpoint       string
	S3ForcePathStyle bool
	// AWSDir holds the awsSecret's files (LoadAWSDir).
	AWSDir string
	File   string
	// Periodic and MaxBackups: see Config.
	Periodic   bool
	MaxBackups int
	// ResultFile receives the result's JSON line, or the error.
	ResultFile string
	// EtcdTLSDir, when set, holds the client certificate, key and CA
	// (EtcdClientCertFile, EtcdClientKeyFile, EtcdClientCAFile).
	EtcdTLSDir string
	// ScratchDir: see Config.ScratchDir.
	ScratchDir string
}

// ParseFlags reads the subcommand's flags.
func ParseFlags(args []string) (Args, error) {
	a := Args{}
	var endpoints string
	fs := flag.NewFlagSet("etcd-operator "+Subcommand, flag.ContinueOnError)
	fs.StringVar(&endpoints, FlagEndpoints, "", "Comma-separated client URLs of the cluster's members (required); the backup is taken from the one with the highest revision.")
	fs.DurationVar(&a.Timeout, FlagTimeout, DefaultTimeout, "How long the backup may take.")
	fs.StringVar(&a.S3Path, FlagS3Path, "", "Store the backup in S3 as <bucket>/<key>.")
	fs.StringVar(&a.S3Endpoint, FlagS3Endpoint, "", "URL of an S3-compatible store (default AWS S3); http://host:port for one without TLS.")
	fs.BoolVar(&a.S3ForcePathStyle, FlagS3ForcePathStyle, false, "Address buckets as <endpoint>/<bucket>.")
	fs.StringVar(&a.AWSDir, FlagAWSDir, DefaultAWSDir, "Directory holding the AWS shared files credentials and config (profile default).")
	fs.StringVar(&a.File, FlagFile, "", "Store the backup as this file (for example on a mounted volume).")
	fs.BoolVar(&a.Periodic, FlagPeriodic, false, "Append _v<revision>_<UTC time> to the key, as periodic backups do.")
	fs.IntVar(&a.MaxBackups, FlagMaxBackups, 0, "With --periodic, keep this many backups of the key and delete older ones (0 keeps all).")
	fs.StringVar(&a.ResultFile, FlagResultFile, DefaultResultFile, "File to write the result (one JSON line) or the error to.")
	fs.StringVar(&a.EtcdTLSDir, FlagEtcdTLSDir, "", "Directory holding "+EtcdClientCertFile+", "+EtcdClientKeyFile+" and "+EtcdClientCAFile+" for members that require client TLS.")
	fs.StringVar(&a.ScratchDir, FlagScratchDir, "", "Directory to hold the snapshot before it is stored, so the revision recorded is the snapshot's own (default: stream it, recording the member's revision just before).")
	if err := fs.Parse(args); err != nil {
		return a, err
	}
	if fs.NArg() > 0 {
		return a, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for _, ep := range strings.Split(endpoints, ",") {
		if ep = strings.TrimSpace(ep); ep != "" {
			a.Endpoints = append(a.Endpoints, ep)
		}
	}
	return a, a.validate()
}

func (a Args) validate() error {
	switch {
	case len(a.Endpoints) == 0:
		return fmt.Errorf("--%s is required", FlagEndpoints)
	case (a.S3Path == "") == (a.File == ""):
		return fmt.Errorf("exactly one of --%s and --%s is required", FlagS3Path, FlagFile)
	case a.MaxBackups < 0:
		return fmt.Errorf("--%s must not be negative", FlagMaxBackups)
	case a.MaxBackups > 0 && !a.Periodic:
		return fmt.Errorf("--%s applies to periodic backups only (--%s)", FlagMaxBackups, FlagPeriodic)
	case a.Timeout <= 0:
		return fmt.Errorf("--%s must be positive", FlagTimeout)
	}
	if a.S3Path != "" {
		if _, _, err := SplitS3Path(a.S3Path); err != nil {
			return err
		}
	} else if _, _, err := NewFileStore(a.File); err != nil {
		return err
	}
	return nil
}

// Command is the command line of a backup pod's container: binary (the
// operator's, on the image's PATH) and the subcommand with a's flags. Flags
// left at their zero value are left out (ParseFlags' defaults apply).
func (a Args) Command(binary string) []string {
	cmd := []string{binary, Subcommand, "--" + FlagEndpoints + "=" + strings.Join(a.Endpoints, ",")}
	add := func(name, value string) {
		if value != "" {
			cmd = append(cmd, "--"+name+"="+value)
		}
	}
	if a.Timeout > 0 {
		add(FlagTimeout, a.Timeout.String())
	}
	add(FlagS3Path, a.S3Path)
	add(FlagS3Endpoint, a.S3Endpoint)
	if a.S3ForcePathStyle {
		add(FlagS3ForcePathStyle, "true")
	}
	add(FlagAWSDir, a.AWSDir)
	add(FlagFile, a.File)
	if a.Periodic {
		add(FlagPeriodic, "true")
	}
	if a.MaxBackups > 0 {
		add(FlagMaxBackups, strconv.Itoa(a.MaxBackups))
	}
	add(FlagResultFile, a.ResultFile)
	add(FlagEtcdTLSDir, a.EtcdTLSDir)
	add(FlagScratchDir, a.ScratchDir)
	return cmd
}

// Run takes the backup a describes.
func Run(ctx context.Context, lg *zap.Logger, a Args) (Result, error) {
	if err := a.validate(); err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, a.Timeout)
	defer cancel()
	c := Config{Endpoints: a.Endpoints, Periodic: a.Periodic, MaxBackups: a.MaxBackups, Logger: lg, ScratchDir: a.ScratchDir}
	var err error
	if a.S3Path != "" {
		c.Store, c.Key, err = OpenS3(a.S3Path, a.S3Endpoint, a.S3ForcePathStyle, a.AWSDir)
	} else {
		c.Store, c.Key, err = NewFileStore(a.File)
	}
	if err != nil {
		return Result{}, err
	}
	if a.EtcdTLSDir != "" {
		if c.TLS, err = ClientTLS(a.EtcdTLSDir); err != nil {
			return Result{}, err
		}
	}
	res, err := Take(ctx, c)
	if err != nil && ctx.Err() != nil {
		return res, fmt.Errorf("backup did not finish within %s: %w", a.Timeout, err)
	}
	return res, err
}

// ClientTLS reads the client certificate, key and CA in dir.
func ClientTLS(dir string) (*tls.Config, error) {
	info := transport.TLSInfo{
		CertFile:      filepath.Join(dir, EtcdClientCertFile),
		KeyFile:       filepath.Join(dir, EtcdClientKeyFile),
		TrustedCAFile: filepath.Join(dir, EtcdClientCAFile),
	}
	c, err := info.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("etcd client TLS in %s: %w", dir, err)
	}
	return c, nil
}
