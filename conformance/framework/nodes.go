package framework

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/exec"
)

// KindNodes reaches the container runtime of a kind cluster's nodes, for
// the faults the Kubernetes API cannot make: a process killed with SIGKILL
// gets no graceful stop, which a pod deletion (even --grace-period=0
// --force: the kubelet still sends SIGTERM first) always gives.
type KindNodes struct {
	cluster string
	nodes   []nodes.Node
}

// KindNodes finds the kind cluster behind the run's kubeconfig context
// (kind names its contexts kind-<cluster>). The error says why there is no
// node access, for a check to report as incomplete.
func (e *Env) KindNodes() (*KindNodes, error) {
	context := e.Opts.Context
	if context == "" {
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		if e.Opts.Kubeconfig != "" {
			rules.ExplicitPath = e.Opts.Kubeconfig
		}
		raw, err := rules.Load()
		if err != nil {
			return nil, fmt.Errorf("reading the kubeconfig: %w", err)
		}
		context = raw.CurrentContext
	}
	name, ok := kindClusterOf(context)
	if !ok {
		return nil, fmt.Errorf("context %q is not a kind cluster's (kind-<name>): the suite reaches nodes only through kind", context)
	}
	list, err := cluster.NewProvider().ListNodes(name)
	if err != nil {
		return nil, fmt.Errorf("listing the nodes of kind cluster %s: %w", name, err)
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("kind cluster %s has no nodes here (is it on another Docker host?)", name)
	}
	return &KindNodes{cluster: name, nodes: list}, nil
}

func (k *KindNodes) node(name string) (nodes.Node, error) {
	for _, n := range k.nodes {
		if n.String() == name {
			return n, nil
		}
	}
	return nil, fmt.Errorf("node %s is not a node of kind cluster %s", name, k.cluster)
}

// KillContainer sends SIGKILL to the main process of a container of pod, as
// a crash or the kernel's OOM killer does; the kubelet then restarts it or
// not, as the pod's restartPolicy says. It returns when the signal is sent.
func (k *KindNodes) KillContainer(ctx context.Context, pod *corev1.Pod, container string) error {
	var id string
	for _, st := range pod.Status.ContainerStatuses {
		if st.Name == container && st.State.Running != nil {
			_, id, _ = strings.Cut(st.ContainerID, "://")
		}
	}
	if id == "" {
		return fmt.Errorf("pod %s: container %s does not run", pod.Name, container)
	}
	node, err := k.node(pod.Spec.NodeName)
	if err != nil {
		return err
	}
	pid, err := containerPID(ctx, node, id)
	if err != nil {
		return fmt.Errorf("pod %s: %w", pod.Name, err)
	}
	if err := run(node.CommandContext(ctx, "kill", "-KILL", strconv.Itoa(pid)), nil); err != nil {
		return fmt.Errorf("pod %s: killing process %d on node %s: %w", pod.Name, pid, node, err)
	}
	return nil
}

// containerPID asks the node's CRI (crictl inspect, whose JSON every crictl
// release has) for the host PID of a container's main process.
func containerPID(ctx context.Context, node nodes.Node, id string) (int, error) {
	var out bytes.Buffer
	if err := run(node.CommandContext(ctx, "crictl", "inspect", id), &out); err != nil {
		return 0, fmt.Errorf("crictl inspect %s on node %s: %w", id, node, err)
	}
	var inspect struct {
		Info struct {
			Pid int `json:"pid"`
		} `json:"info"`
	}
	if err := json.Unmarshal(out.Bytes(), &inspect); err != nil {
		return 0, fmt.Errorf("crictl inspect %s: %w", id, err)
	}
	if inspect.Info.Pid <= 1 {
		return 0, fmt.Errorf("crictl inspect %s: no process id (container not running?)", id)
	}
	return inspect.Info.Pid, nil
}

func run(cmd exec.Cmd, out *bytes.Buffer) error {
	var stderr bytes.Buffer
	if out != nil {
		cmd.SetStdout(out)
	}
	cmd.SetStderr(&stderr)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// RestartCount is the restart count of a pod's container, -1 if it has none.
func RestartCount(pod *corev1.Pod, container string) int32 {
	for _, st := range pod.Status.ContainerStatuses {
		if st.Name == container {
			return st.RestartCount
		}
	}
	return -1
}
