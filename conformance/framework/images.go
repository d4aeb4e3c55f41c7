package framework

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/distribution/reference"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/etcdproof/etcdproof/conformance/cluster"
)

// pullFailures are the kubelet's waiting reasons that mean an image is
// neither on the node nor obtainable.
var pullFailures = []string{"ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName"}

// EnsureImages makes sure the cluster can run every image in refs. Images
// no node reports holding are test-pulled by one throwaway pod; an image that
// cannot be pulled fails the run up front, naming the image and how to load
// it, instead of surfacing minutes later as a pod that never starts.
func (e *Env) EnsureImages(ctx context.Context, refs []string, timeout time.Duration) error {
	nodes, err := e.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	if len(nodes.Items) == 0 {
		// Nothing could pull an image, so a probe pod would only wait out its
		// timeout; the checks report the pods that never start.
		fmt.Fprintln(os.Stderr, "etcdproof: the cluster has no nodes; skipping the image preflight")
		return nil
	}
	missing := imagesNotOnNodes(nodes.Items, refs)
	if len(missing) == 0 {
		return nil
	}
	failed, err := e.probePulls(ctx, missing, timeout)
	if err != nil {
		return fmt.Errorf("checking that images %s can be pulled: %w", strings.Join(missing, ", "), err)
	}
	if len(failed) == 0 {
		return nil
	}
	return missingImagesError(e.Profile.Name, kindClusterName(e.Opts.Context), failed)
}

// kindClusterName guesses the kind cluster behind a kubeconfig context
// (kind names them kind-<cluster>), for a copy-pasteable hint.
func kindClusterName(context string) string {
	if name, ok := cluster.NameOfContext(context); ok {
		return name
	}
	return "<cluster>"
}

// loadHint is the command that copies images from the local Docker daemon
// into a kind cluster's nodes. It names etcdproof's own `cluster load`: the
// substrate drives kind through its Go API and installs no kind binary.
func loadHint(cluster string, refs ...string) string {
	return fmt.Sprintf("bin/etcdproof cluster load --name %s %s", cluster, strings.Join(refs, " "))
}

func missingImagesError(profileName, cluster string, failed map[string]string) error {
	refs := slices.Sorted(func(yield func(string) bool) {
		for r := range failed {
			if !yield(r) {
				return
			}
		}
	})
	var b strings.Builder
	fmt.Fprintf(&b, "profile %s needs images that the cluster's nodes neither hold nor can pull:\n", profileName)
	for _, r := range refs {
		fmt.Fprintf(&b, "  %s (%s)\n", r, failed[r])
	}
	b.WriteString("Pull or build them where you can and load them into every node, e.g. for kind:\n")
	fmt.Fprintf(&b, "  %s\n", loadHint(cluster, refs...))
	b.WriteString("(this repository builds the images its profiles need: make run-images IMAGES_FOR=<profile name or file>)")
	return errors.New(b.String())
}

// imagesNotOnNodes returns the refs no node lists in its status. Kubelets
// report at most 50 images per node, so a ref missing here may still be
// present: the pull probe settles it.
func imagesNotOnNodes(nodes []corev1.Node, refs []string) []string {
	have := map[string]bool{}
	for _, n := range nodes {
		for _, img := range n.Status.Images {
			for _, name := range img.Names {
				have[NormalizeImage(name)] = true
			}
		}
	}
	var missing []string
	for _, r := range refs {
		if !have[NormalizeImage(r)] && !slices.Contains(missing, r) {
			missing = append(missing, r)
		}
	}
	sort.Strings(missing)
	return missing
}

// NormalizeImage spells a reference the way container runtimes report it:
// registry host and tag explicit (busybox:1.28 is docker.io/library/busybox:1.28),
// as github.com/distribution/reference normalises it. A reference that does
// not parse is returned as it is.
func NormalizeImage(ref string) string {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return ref
	}
	return reference.TagNameOnly(named).String()
}

// imageRepository is the normalised repository of a reference, without tag
// or digest (quay.io/coreos/etcd:v3.5.21 is quay.io/coreos/etcd, busybox is
// docker.io/library/busybox); "" when it does not parse.
func imageRepository(ref string) string {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return ""
	}
	return named.Name()
}

// probePulls runs one pod with a container per image, and reports the images
// whose pull failed with the kubelet's message. The containers' command does
// not exist: only the pull matters, and nothing of the image runs.
func (e *Env) probePulls(ctx context.Context, refs []string, timeout time.Duration) (map[string]string, error) {
	ns, err := e.CreateNamespace(ctx, "etcdproof-images")
	if err != nil {
		return nil, err
	}
	defer func() {
		_ = e.Kube.CoreV1().Namespaces().Delete(context.WithoutCancel(ctx), ns, metav1.DeleteOptions{})
	}()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "image-probe"}, Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever}}
	for i, r := range refs {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{
			Name: fmt.Sprintf("image-%d", i), Image: r, ImagePullPolicy: corev1.PullIfNotPresent,
			Command: []string{"/etcdproof-image-probe"},
		})
	}
	if _, err := e.Kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	failed := map[string]string{}
	err = wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		p, err := e.Kube.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		decided := 0
		for _, cs := range p.Status.ContainerStatuses {
			ref := refs[slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == cs.Name })]
			switch w := cs.State.Waiting; {
			case w != nil && slices.Contains(pullFailures, w.Reason):
				failed[ref] = strings.TrimSpace(w.Reason + ": " + firstLine(w.Message))
				decided++
			case w != nil && w.Reason == "ContainerCreating", w != nil && w.Reason == "":
			default:
				// Pulled: the container ran, failed to start, or is about to.
				decided++
			}
		}
		return decided == len(refs), nil
	})
	if err != nil {
		return nil, fmt.Errorf("the probe pod did not settle within %s: %w", timeout, err)
	}
	return failed, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// imagePullProblem describes the first container in namespace whose image
// cannot be pulled, or returns "".
func (e *Env) imagePullProblem(ctx context.Context, namespace string) string {
	pods, err := e.Kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return ""
	}
	for _, p := range pods.Items {
		for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			if w := cs.State.Waiting; w != nil && slices.Contains(pullFailures, w.Reason) {
				return fmt.Sprintf("pod %s: image %s: %s (load it into the nodes, e.g. %s)", p.Name, cs.Image, w.Reason, loadHint(kindClusterName(e.Opts.Context), cs.Image))
			}
		}
	}
	return ""
}
