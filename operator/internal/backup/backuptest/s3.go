// Package backuptest starts an S3-compatible store for tests: SeaweedFS's
// all-in-one `weed mini`, the binary named by ETCDPROOF_WEED. Tests that
// need it skip when the variable is unset.
package backuptest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/etcdproof/etcdproof/operator/internal/backup"
)

// EnvWeed names the weed binary.
const EnvWeed = "ETCDPROOF_WEED"

// S3 is a running store with one empty bucket.
type S3 struct {
	// Endpoint is http://127.0.0.1:<port>.
	Endpoint string
	Bucket   string
	// AWSDir holds the files of a coreos awsSecret (credentials and config)
	// with the store's credentials.
	AWSDir string
	// Config reaches the store (path style).
	Config backup.S3Config
}

// Store is a store on the bucket.
func (s *S3) Store(t testing.TB) *backup.S3Store {
	t.Helper()
	st, err := backup.NewS3Store(s.Config, s.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Enabled reports whether ETCDPROOF_WEED is set, so StartS3 runs a store.
func Enabled() bool { return os.Getenv(EnvWeed) != "" }

// StartS3 runs `weed mini` on loopback until the test ends, with a bucket
// "backups"; it skips the test when ETCDPROOF_WEED is unset.
func StartS3(t testing.TB) *S3 {
	t.Helper()
	bin := os.Getenv(EnvWeed)
	if bin == "" {
		t.Skipf("%s is unset: no S3 store to test against (scripts build SeaweedFS's weed)", EnvWeed)
	}
	const access, secret, bucket, region = "etcdproof", "etcdproof-secret", "backups", "us-east-1"
	dir := t.TempDir()
	ports := freePorts(t, 5)
	log, err := os.Create(filepath.Join(dir, "weed.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = log.Close() }()
	cmd := exec.Command(bin, "mini", "-dir="+filepath.Join(dir, "data"),
		"-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-master.port="+ports[0], "-volume.port="+ports[1], "-filer.port="+ports[2], "-s3.port="+ports[3],
		"-admin.port="+ports[4], "-admin.port.legacy=0", "-admin.ui=false", "-webdav=false",
		"-s3.port.iceberg=0", "-s3.port.lance=0", "-master.telemetry=false")
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+access, "AWS_SECRET_ACCESS_KEY="+secret, "S3_BUCKET="+bucket)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})

	s := &S3{Endpoint: "http://127.0.0.1:" + ports[3], Bucket: bucket, AWSDir: filepath.Join(dir, "aws")}
	s.Config = backup.S3Config{Endpoint: s.Endpoint, ForcePathStyle: true,
		AWSConfig: backup.AWSConfig{AccessKeyID: access, SecretAccessKey: secret, Region: region}}
	if err := os.MkdirAll(s.AWSDir, 0o700); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		backup.AWSCredentialsFile: fmt.Sprintf("[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n", access, secret),
		backup.AWSConfigFile:      fmt.Sprintf("[default]\nregion = %s\n", region),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(s.AWSDir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	client, err := minio.New("127.0.0.1:"+ports[3], &minio.Options{Creds: credentials.NewStaticV4(access, secret, ""),
		Region: region, BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		ok, err := client.BucketExists(ctx, bucket)
		cancel()
		if ok {
			return s
		}
		select {
		case <-exited:
			t.Fatalf("weed mini exited; its log: %s", tail(log.Name()))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("weed mini's bucket %s not there within 2 minutes (%v); its log: %s", bucket, err, tail(log.Name()))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// freePorts finds n ports p, each with p+10000 free as well (weed serves
// gRPC there), all below the kernel's ephemeral range (32768 and up by
// default): a free port in that range can be handed to any outgoing
// connection before weed binds it (CI saw the filer's bind fail so).
func freePorts(t testing.TB, n int) []string {
	t.Helper()
	var ports []string
	var held []net.Listener
	defer func() {
		for _, l := range held {
			_ = l.Close()
		}
	}()
	for tries := 0; len(ports) < n; tries++ {
		if tries > 1000 {
			t.Fatal("no free pair of ports")
		}
		p := 10000 + rand.IntN(ephemeralFloor-10000-10000)
		a, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		b, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000))
		if err != nil {
			_ = a.Close()
			continue
		}
		held = append(held, a, b)
		ports = append(ports, strconv.Itoa(p))
	}
	return ports
}

// ephemeralFloor is where Linux's default ephemeral port range begins.
const ephemeralFloor = 32768

func tail(file string) string {
	b, _ := os.ReadFile(file)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
