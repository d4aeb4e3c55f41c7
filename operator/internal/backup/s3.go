package backup

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3PartSize is the size of the parts a snapshot is uploaded in: its
// length is unknown while it streams, so the client holds one part in memory
// at a time. 8 MiB parts carry objects up to 78 GiB (10,000 parts).
const S3PartSize = 8 << 20

// S3Config says how to reach an S3-compatible store.
type S3Config struct {
	// Endpoint is the store's URL: empty means AWS S3 over HTTPS,
	// "http://host:port" a store without TLS. A bare host means HTTPS.
	Endpoint string
	// ForcePathStyle addresses buckets as <endpoint>/<bucket>; otherwise
	// the client picks (virtual-hosted on AWS, path style elsewhere).
	ForcePathStyle bool
	AWSConfig
}

// S3Store keeps snapshots as objects of one bucket.
type S3Store struct {
	client *minio.Client
	bucket string
}

var _ Store = (*S3Store)(nil)

// SplitS3Path splits "<bucket>/<key>" (coreos' spec.s3.path).
func SplitS3Path(path string) (bucket, key string, err error) {
	bucket, key, ok := strings.Cut(path, "/")
	if !ok || bucket == "" || key == "" || strings.HasSuffix(key, "/") {
		return "", "", fmt.Errorf("S3 path %q: want <bucket>/<object key>, for example mybucket/etcd.backup", path)
	}
	return bucket, key, nil
}

// NewS3Store connects to bucket (no request is made yet).
func NewS3Store(c S3Config, bucket string) (*S3Store, error) {
	host, secure, err := s3Endpoint(c.Endpoint)
	if err != nil {
		return nil, err
	}
	lookup := minio.BucketLookupAuto
	if c.ForcePathStyle {
		lookup = minio.BucketLookupPath
	}
	client, err := minio.New(host, &minio.Options{
		Creds:        credentials.NewStaticV4(c.AccessKeyID, c.SecretAccessKey, c.SessionToken),
		Secure:       secure,
		Region:       c.Region,
		BucketLookup: lookup,
	})
	if err != nil {
		return nil, fmt.Errorf("S3 endpoint %q: %w", c.Endpoint, err)
	}
	return &S3Store{client: client, bucket: bucket}, nil
}

// s3Endpoint is the host[:port] minio-go wants, and whether to use TLS.
func s3Endpoint(endpoint string) (host string, secure bool, err error) {
	if endpoint == "" {
		return "s3.amazonaws.com", true, nil
	}
	if !strings.Contains(endpoint, "://") {
		endpoint = "https://" + endpoint
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", false, fmt.Errorf("S3 endpoint %q: %w", endpoint, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return "", false, fmt.Errorf("S3 endpoint %q: want http(s)://host[:port] without a path", endpoint)
	}
	return u.Host, u.Scheme == "https", nil
}

// Path is "<bucket>/<key>".
func (s *S3Store) Path(key string) string { return s.bucket + "/" + key }

// Put uploads r in parts of S3PartSize without knowing its length.
func (s *S3Store) Put(ctx context.Context, key string, r io.Reader) error {
	_, err := s.client.PutObject(ctx, s.bucket, key, r, -1, minio.PutObjectOptions{
		PartSize:    S3PartSize,
		ContentType: "application/octet-stream",
	})
	if err != nil {
		return fmt.Errorf("uploading s3 %s: %w", s.Path(key), err)
	}
	return nil
}

// Get opens key; an absent key or bucket fails here rather than on the
// first read.
func (s *S3Store) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	obj, err := s.client.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err == nil {
		_, err = obj.Stat()
	}
	if err != nil {
		if obj != nil {
			_ = obj.Close()
		}
		if code := minio.ToErrorResponse(err).Code; code == minio.NoSuchKey || code == minio.NoSuchBucket {
			return nil, fmt.Errorf("s3 %s: %w (%v)", s.Path(key), ErrNotFound, err)
		}
		return nil, fmt.Errorf("downloading s3 %s: %w", s.Path(key), err)
	}
	return obj, nil
}

// List returns the objects whose key starts with prefix.
func (s *S3Store) List(ctx context.Context, prefix string) ([]Object, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the listing goroutine when an error ends the loop
	var objects []Object
	for o := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			return nil, fmt.Errorf("listing s3 %s*: %w", s.Path(prefix), o.Err)
		}
		objects = append(objects, Object{Key: o.Key, LastModified: o.LastModified, Size: o.Size})
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return objects, nil
}

// Delete removes key.
func (s *S3Store) Delete(ctx context.Context, key string) error {
	err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{})
	if err != nil && minio.ToErrorResponse(err).Code != minio.NoSuchKey {
		return fmt.Errorf("deleting s3 %s: %w", s.Path(key), err)
	}
	return nil
}

// OpenS3 opens "<bucket>/<key>" with the credentials in awsDir (LoadAWSDir)
// and returns the store and the key.
func OpenS3(path, endpoint string, forcePathStyle bool, awsDir string) (*S3Store, string, error) {
	bucket, key, err := SplitS3Path(path)
	if err != nil {
		return nil, "", err
	}
	aws, err := LoadAWSDir(awsDir)
	if err != nil {
		return nil, "", err
	}
	s, err := NewS3Store(S3Config{Endpoint: endpoint, ForcePathStyle: forcePathStyle, AWSConfig: aws}, bucket)
	if err != nil {
		return nil, "", err
	}
	return s, key, nil
}
