package framework

// The backup-restore check's object store: SeaweedFS's `weed mini` (an S3
// gateway with SigV4 credentials, over its own master, volume server and
// filer) in one pod of the check's namespace, a Service in front, and the
// credentials in coreos v0.9.4's awsSecret format.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"time"

	. "github.com/onsi/gomega" //nolint:revive // Gomega's DSL reads best dot-imported.

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// Object store names and credentials: a throwaway store of one check.
const (
	objectStoreName   = "etcdproof-s3"
	objectStorePort   = 8333
	objectStoreBucket = "backups"
	objectStoreRegion = "us-east-1"
	objectStoreKey    = "etcdproof"
	objectStoreSecret = "etcdproof-not-a-secret"
)

// ObjectStore is a running S3-compatible store in a namespace.
type ObjectStore struct {
	env       *Env
	Namespace string
	// Endpoint is its URL inside the cluster, Bucket its one bucket.
	Endpoint string
	Bucket   string
	// AWSSecret names the Secret with its credentials in coreos' format
	// (keys "credentials" and "config", profile default).
	AWSSecret string
	pod       string
}

// StartObjectStore runs the store in namespace from image, and waits until
// its bucket answers through a port-forward.
func (e *Env) StartObjectStore(ctx context.Context, namespace, image string, intervals ...any) (*ObjectStore, error) {
	labels := map[string]string{"app.kubernetes.io/name": objectStoreName}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: objectStoreName, Namespace: namespace},
		StringData: map[string]string{
			"credentials": fmt.Sprintf("[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n", objectStoreKey, objectStoreSecret),
			"config":      fmt.Sprintf("[default]\nregion = %s\n", objectStoreRegion),
		},
	}
	if _, err := e.Kube.CoreV1().Secrets(namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating the store's Secret: %w", err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: objectStoreName, Namespace: namespace, Labels: labels},
		Spec: corev1.PodSpec{
			// Pod Security "restricted": namespaces of some profiles enforce it.
			SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](1000),
				FSGroup: ptr.To[int64](1000), RunAsNonRoot: ptr.To(true),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{
				Name:            "weed",
				Image:           image,
				ImagePullPolicy: corev1.PullIfNotPresent,
				SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false),
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
				// One process: master, volume server and filer on loopback,
				// the S3 gateway on every address. S3_BUCKET makes the bucket.
				Command: []string{"weed", "mini", "-dir=/data", "-ip=127.0.0.1", "-ip.bind=0.0.0.0",
					fmt.Sprintf("-s3.port=%d", objectStorePort), "-admin.ui=false", "-admin.port.legacy=0", "-webdav=false",
					"-s3.port.iceberg=0", "-s3.port.lance=0", "-master.telemetry=false"},
				Env: []corev1.EnvVar{
					{Name: "AWS_ACCESS_KEY_ID", Value: objectStoreKey},
					{Name: "AWS_SECRET_ACCESS_KEY", Value: objectStoreSecret},
					{Name: "S3_BUCKET", Value: objectStoreBucket},
				},
				Ports:          []corev1.ContainerPort{{Name: "s3", ContainerPort: objectStorePort}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(objectStorePort)}}, PeriodSeconds: 2},
				VolumeMounts:   []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
	if _, err := e.Kube.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating the store's pod: %w", err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: objectStoreName, Namespace: namespace},
		Spec:       corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Name: "s3", Port: objectStorePort, TargetPort: intstr.FromInt32(objectStorePort)}}},
	}
	if _, err := e.Kube.CoreV1().Services(namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating the store's Service: %w", err)
	}
	s := &ObjectStore{env: e, Namespace: namespace, Endpoint: fmt.Sprintf("http://%s.%s.svc:%d", objectStoreName, namespace, objectStorePort),
		Bucket: objectStoreBucket, AWSSecret: objectStoreName, pod: objectStoreName}
	var err error
	Eventually(ctx, func(g Gomega) {
		err = s.use(ctx, func(cli *minio.Client) error {
			ok, err := cli.BucketExists(ctx, s.Bucket)
			if err == nil && !ok {
				err = fmt.Errorf("bucket %s does not exist yet", s.Bucket)
			}
			return err
		})
		g.Expect(err).NotTo(HaveOccurred(), "the object store's bucket")
	}).WithTimeout(intervals[0].(time.Duration)).WithPolling(intervals[1].(time.Duration)).Should(Succeed())
	return s, nil
}

// Download copies object key of the bucket to file.
func (s *ObjectStore) Download(ctx context.Context, key, file string) error {
	return s.use(ctx, func(cli *minio.Client) error {
		obj, err := cli.GetObject(ctx, s.Bucket, key, minio.GetObjectOptions{})
		if err != nil {
			return err
		}
		defer func() { _ = obj.Close() }()
		f, err := os.Create(file)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, obj); err != nil {
			_ = f.Close()
			return fmt.Errorf("downloading %s/%s: %w", s.Bucket, key, err)
		}
		return f.Close()
	})
}

// Upload stores data as object key of the bucket.
func (s *ObjectStore) Upload(ctx context.Context, key string, data []byte) error {
	return s.use(ctx, func(cli *minio.Client) error {
		_, err := cli.PutObject(ctx, s.Bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{})
		if err != nil {
			return fmt.Errorf("uploading %s/%s: %w", s.Bucket, key, err)
		}
		return nil
	})
}

// use reaches the store through a port-forward to its pod.
func (s *ObjectStore) use(ctx context.Context, fn func(*minio.Client) error) error {
	local, stop, err := s.env.Forward(s.Namespace, s.pod, objectStorePort)
	if err != nil {
		return err
	}
	defer stop()
	cli, err := minio.New(fmt.Sprintf("127.0.0.1:%d", local), &minio.Options{
		Creds: credentials.NewStaticV4(objectStoreKey, objectStoreSecret, ""), Region: objectStoreRegion, BucketLookup: minio.BucketLookupPath})
	if err != nil {
		return err
	}
	return fn(cli)
}

// Delete removes the store's pod, Service and Secret (where the check's
// namespace outlives it: a profile that pins the namespace).
func (s *ObjectStore) Delete(ctx context.Context) error {
	now := metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}
	for _, del := range []func() error{
		func() error { return s.env.Kube.CoreV1().Pods(s.Namespace).Delete(ctx, s.pod, now) },
		func() error {
			return s.env.Kube.CoreV1().Services(s.Namespace).Delete(ctx, objectStoreName, metav1.DeleteOptions{})
		},
		func() error {
			return s.env.Kube.CoreV1().Secrets(s.Namespace).Delete(ctx, s.AWSSecret, metav1.DeleteOptions{})
		},
	} {
		if err := del(); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}
