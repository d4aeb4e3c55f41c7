package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/etcdproof/etcdproof/operator/internal/seed"
)

// runSeed is `etcd-operator seed`: the init container of a member pod started
// on a copy of a survivor's data (desired.SeedPod) or on a backup
// (desired.RestoreSeedPod). It returns the exit code.
func runSeed(args []string) int {
	cfg, err := seed.ParseFlags(args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(os.Stderr, "etcd-operator seed:", err)
		return 2
	}
	lg, err := zap.NewProduction()
	if err != nil {
		fmt.Fprintln(os.Stderr, "etcd-operator seed:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := seed.Run(ctx, lg, cfg); err != nil {
		lg.Error("seeding failed", zap.Error(err))
		writeTerminationMessage(err.Error())
		return 1
	}
	return 0
}

// writeTerminationMessage leaves msg where the kubelet reads a container's
// termination message, so the operator reports the error in words rather
// than the end of a JSON log; outside a pod there is no such file.
func writeTerminationMessage(msg string) {
	const file = "/dev/termination-log"
	if _, err := os.Stat(file); err != nil {
		return
	}
	if len(msg) > maxResultLen {
		msg = msg[:maxResultLen]
	}
	_ = os.WriteFile(file, []byte(msg), 0o644)
}

// seedImage is the image a seeded member's init container runs: --seed-image,
// else the image of the operator's own pod (read once, at start). "" when
// neither is known; clusters that ask to recover from a survivor then say so
// in their status instead.
func seedImage(ctx context.Context, restCfg *rest.Config, o options, log logr.Logger) string {
	if o.seedImage != "" {
		return o.seedImage
	}
	namespace := firstEnv("POD_NAMESPACE", envCoreosNamespace)
	if o.podName == "" || namespace == "" {
		log.Info("the operator's own image is unknown (no POD_NAME/MY_POD_NAME and POD_NAMESPACE/MY_POD_NAMESPACE): recovering a cluster from a survivor needs --seed-image")
		return ""
	}
	c, err := client.New(restCfg, client.Options{})
	if err == nil {
		var pod corev1.Pod
		if err = c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: o.podName}, &pod); err == nil {
			return imageOf(&pod)
		}
	}
	log.Info("reading the operator's own pod failed: recovering a cluster from a survivor needs --seed-image", "error", err.Error())
	return ""
}

// imageOf is the image of the pod's container named etcd-operator, else of its first.
func imageOf(pod *corev1.Pod) string {
	for _, ctr := range pod.Spec.Containers {
		if ctr.Name == "etcd-operator" {
			return ctr.Image
		}
	}
	if len(pod.Spec.Containers) > 0 {
		return pod.Spec.Containers[0].Image
	}
	return ""
}
