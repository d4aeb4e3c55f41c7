package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	kind "sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/constants"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/exec"
)

// Nodes reaches the container runtime of a kind cluster's nodes, for
// the faults the Kubernetes API cannot make: a process killed with SIGKILL
// gets no graceful stop, which a pod deletion (even --grace-period=0
// --force: the kubelet still sends SIGTERM first) always gives.
type Nodes struct {
	cluster string
	nodes   []nodes.Node
}

func (k *Nodes) node(name string) (nodes.Node, error) {
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
func (k *Nodes) KillContainer(ctx context.Context, pod *corev1.Pod, container string) error {
	id := runningContainerID(pod, container)
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

// execCmd is a command run inside a node.
type execCmd = exec.Cmd

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

// NodesOf finds the nodes of kind cluster name on the local Docker host.
func NodesOf(name string) (*Nodes, error) {
	list, err := kind.NewProvider().ListNodes(name)
	if err != nil {
		return nil, fmt.Errorf("listing the nodes of kind cluster %s: %w", name, err)
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("kind cluster %s has no nodes here (is it on another Docker host?)", name)
	}
	return &Nodes{cluster: name, nodes: list}, nil
}

// NameOfContext is the kind cluster a kubeconfig context names (kind calls
// its contexts kind-<cluster>).
func NameOfContext(context string) (string, bool) {
	name, ok := strings.CutPrefix(context, "kind-")
	return name, ok && name != ""
}

// Workers names the kind cluster's worker nodes (kind's role label), the
// nodes member pods can run on (kind taints its control plane).
func (k *Nodes) Workers() ([]string, error) {
	var out []string
	for _, n := range k.nodes {
		role, err := n.Role()
		if err != nil {
			return nil, fmt.Errorf("role of kind node %s: %w", n, err)
		}
		if role == constants.WorkerNodeRoleValue {
			out = append(out, n.String())
		}
	}
	slices.Sort(out)
	return out, nil
}

// StopNode stops a node's container with no grace (docker stop --time=0
// sends SIGKILL to its init at once): the node's kubelet, container runtime
// and every pod on it stop together, with nothing told, as when a machine
// loses power. kind's node interface can only exec inside a node, and kind
// itself shells out to the container runtime's CLI to manage node
// containers, so this does too (docker, kind's default provider).
func (k *Nodes) StopNode(ctx context.Context, name string) error {
	if _, err := k.node(name); err != nil {
		return err
	}
	if err := run(exec.CommandContext(ctx, "docker", "stop", "--time=0", name), nil); err != nil {
		return fmt.Errorf("stopping node %s: %w", name, err)
	}
	return nil
}

// StartNode starts a stopped node's container again (a no-op on a node that
// runs); its kubelet then rejoins and finishes the deletions it missed.
func (k *Nodes) StartNode(ctx context.Context, name string) error {
	if _, err := k.node(name); err != nil {
		return err
	}
	if err := run(exec.CommandContext(ctx, "docker", "start", name), nil); err != nil {
		return fmt.Errorf("starting node %s: %w", name, err)
	}
	return nil
}
