package controller_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/etcdproof/etcdproof/operator/internal/backup"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
	"github.com/etcdproof/etcdproof/operator/internal/seed"
)

// runBackupPod plays the kubelet for a backup pod (desired.BackupPod): it
// runs the operator's `backup` subcommand in-process with the pod's own
// command line, its mounts pointed at test directories (the claim's, or the
// Secret's files), then reports the pod Succeeded or Failed with the
// result file as the container's termination message, as the kubelet does
// with /dev/termination-log.
func (k *etcdKubelet) runBackupPod(ctx context.Context, pod *corev1.Pod) {
	k.runToCompletion(ctx, pod, desired.BackupContainerName, k.backupPodRun)
}

// runVerifyPod plays the kubelet for a restore's backup check
// (desired.RestoreVerifyPod): the operator's `seed --verify-only` run
// in-process, as runBackupPod runs the backup.
func (k *etcdKubelet) runVerifyPod(ctx context.Context, pod *corev1.Pod) {
	k.runToCompletion(ctx, pod, desired.RestoreVerifyContainerName, k.verifyPodRun)
}

// runToCompletion runs a restartPolicy Never pod's one container, named
// name, once with run, and reports the pod Succeeded or Failed with what
// run returned as the container's termination message.
func (k *etcdKubelet) runToCompletion(ctx context.Context, pod *corev1.Pod, name string, run func(context.Context, *corev1.Pod) (string, int32)) {
	k.mu.Lock()
	if k.backups == nil {
		k.backups = map[types.UID]bool{}
	}
	started := k.backups[pod.UID]
	k.backups[pod.UID] = true
	k.mu.Unlock()
	if started || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return
	}
	go func() {
		msg, code := run(ctx, pod)
		phase := corev1.PodSucceeded
		if code != 0 {
			phase = corev1.PodFailed
		}
		pod := pod.DeepCopy()
		pod.Status.Phase = phase
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name: name,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: code, Message: msg, Reason: string(phase), FinishedAt: metav1.Now()}},
		}}
		if err := k8s.Status().Update(ctx, pod); err != nil {
			k.t.Logf("kubelet: backup pod %s: %v", pod.Name, err)
		}
	}()
}

// backupPodRun runs the backup pod's container; it returns the termination
// message and exit code.
func (k *etcdKubelet) backupPodRun(ctx context.Context, pod *corev1.Pod) (string, int32) {
	ctr := pod.Spec.Containers[0]
	if len(ctr.Command) < 2 || ctr.Command[1] != backup.Subcommand {
		return fmt.Sprintf("container runs %v, not the backup subcommand", ctr.Command), 2
	}
	args, err := backup.ParseFlags(ctr.Command[2:])
	if err != nil {
		return err.Error(), 2
	}
	mounts, err := k.mountDirs(ctx, pod, ctr)
	if err != nil {
		return err.Error(), 1
	}
	for _, p := range []*string{&args.File, &args.AWSDir, &args.EtcdTLSDir, &args.ScratchDir} {
		for path, dir := range mounts {
			if *p == path || strings.HasPrefix(*p, path+"/") {
				*p = dir + strings.TrimPrefix(*p, path)
			}
		}
	}
	res, err := backup.Run(ctx, zap.NewNop(), args)
	if err != nil {
		return err.Error(), 1
	}
	return res.String(), 0 // what the subcommand writes to its result file
}

// verifyPodRun runs the verify pod's container; it returns the error (its
// log's last line) and exit code.
func (k *etcdKubelet) verifyPodRun(ctx context.Context, pod *corev1.Pod) (string, int32) {
	ctr := pod.Spec.Containers[0]
	if len(ctr.Command) < 2 || ctr.Command[1] != seed.Subcommand {
		return fmt.Sprintf("container runs %v, not the seed subcommand", ctr.Command), 2
	}
	cfg, err := seed.ParseFlags(ctr.Command[2:])
	if err != nil {
		return err.Error(), 2
	}
	if !cfg.VerifyOnly {
		return "the backup check runs a seed that is not --verify-only", 2
	}
	mounts, err := k.mountDirs(ctx, pod, ctr)
	if err != nil {
		return err.Error(), 1
	}
	for _, p := range []*string{&cfg.FromFile, &cfg.AWSDir, &cfg.DataDir} {
		for path, dir := range mounts {
			if *p == path || strings.HasPrefix(*p, path+"/") {
				*p = dir + strings.TrimPrefix(*p, path)
			}
		}
	}
	if err := seed.Run(ctx, zap.NewNop(), cfg); err != nil {
		return err.Error(), 1
	}
	return "", 0
}

// mountDirs maps each mount path of ctr to a test directory: a claim's
// (claimDir), or a fresh one holding a Secret's keys as files.
func (k *etcdKubelet) mountDirs(ctx context.Context, pod *corev1.Pod, ctr corev1.Container) (map[string]string, error) {
	dirs := map[string]string{}
	for _, m := range ctr.VolumeMounts {
		for _, v := range pod.Spec.Volumes {
			if v.Name != m.Name {
				continue
			}
			switch {
			case v.EmptyDir != nil:
				dirs[m.MountPath] = k.t.TempDir()
			case v.PersistentVolumeClaim != nil:
				dir, err := k.claimDir(ctx, pod.Namespace, v.PersistentVolumeClaim.ClaimName)
				if err != nil {
					return nil, err
				}
				dirs[m.MountPath] = dir
			case v.Secret != nil:
				var secret corev1.Secret
				if err := k8s.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: v.Secret.SecretName}, &secret); err != nil {
					return nil, fmt.Errorf("volume %s: %w", m.Name, err)
				}
				dir := k.t.TempDir()
				for key, value := range secret.Data {
					if err := os.WriteFile(filepath.Join(dir, key), value, 0o600); err != nil {
						return nil, err
					}
				}
				dirs[m.MountPath] = dir
			}
		}
	}
	return dirs, nil
}
