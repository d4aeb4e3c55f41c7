package cluster

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
)

// Partition is a pod cut off the network by Partition; Heal joins it again.
type Partition struct {
	node  nodes.Node
	pid   int
	rules [][]string
}

// Partition blackholes a pod's network, as a network partition or a
// switch failure does: every packet in or out of its interface is dropped,
// but for its own node (the pod's default gateway, which the kubelet's
// probes and the node's port-forwards come from), which a real partition
// between nodes leaves alone. Peers, clients and other pods on the node
// lose it; nothing is told, no connection is reset. The rules live in the
// pod's network namespace (kept across container restarts, gone with the
// pod), set with the node's own nsenter and iptables: a kind node image
// has both.
func (k *Nodes) Partition(ctx context.Context, pod *corev1.Pod, container string) (*Partition, error) {
	id := runningContainerID(pod, container)
	if id == "" {
		return nil, fmt.Errorf("pod %s: container %s does not run", pod.Name, container)
	}
	node, err := k.node(pod.Spec.NodeName)
	if err != nil {
		return nil, err
	}
	pid, err := containerPID(ctx, node, id)
	if err != nil {
		return nil, fmt.Errorf("pod %s: %w", pod.Name, err)
	}
	p := &Partition{node: node, pid: pid}
	var route bytes.Buffer
	if err := run(p.inNetns(ctx, "ip", "-4", "route", "show", "default"), &route); err != nil {
		return nil, fmt.Errorf("pod %s: its default route: %w", pod.Name, err)
	}
	gateway, dev, err := defaultRoute(route.String())
	if err != nil {
		return nil, fmt.Errorf("pod %s: %w", pod.Name, err)
	}
	p.rules = [][]string{
		{"INPUT", "-i", dev, "!", "-s", gateway, "-j", "DROP"},
		{"OUTPUT", "-o", dev, "!", "-d", gateway, "-j", "DROP"},
	}
	for _, r := range p.rules {
		if err := run(p.inNetns(ctx, append([]string{"iptables", "-w", "-I"}, r...)...), nil); err != nil {
			_ = p.Heal(ctx)
			return nil, fmt.Errorf("pod %s: cutting it off (iptables -I %s): %w", pod.Name, strings.Join(r, " "), err)
		}
	}
	return p, nil
}

// Heal removes the partition's rules; rules already gone are no error.
func (p *Partition) Heal(ctx context.Context) error {
	var errs []string
	for _, r := range p.rules {
		check := p.inNetns(ctx, append([]string{"iptables", "-w", "-C"}, r...)...)
		if run(check, nil) != nil {
			continue
		}
		if err := run(p.inNetns(ctx, append([]string{"iptables", "-w", "-D"}, r...)...), nil); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("healing the partition: %s", strings.Join(errs, "; "))
	}
	return nil
}

func (p *Partition) inNetns(ctx context.Context, args ...string) execCmd {
	return p.node.CommandContext(ctx, "nsenter", append([]string{"-t", strconv.Itoa(p.pid), "-n", "--"}, args...)...)
}

// defaultRoute reads `ip -4 route show default`: "default via GW dev DEV".
func defaultRoute(out string) (gateway, dev string, err error) {
	f := strings.Fields(out)
	for i := 0; i+1 < len(f); i++ {
		switch f[i] {
		case "via":
			gateway = f[i+1]
		case "dev":
			dev = f[i+1]
		}
	}
	if gateway == "" || dev == "" {
		return "", "", fmt.Errorf("no default route with a gateway in %q", strings.TrimSpace(out))
	}
	return gateway, dev, nil
}

// runningContainerID is the runtime's id of a pod's running container.
func runningContainerID(pod *corev1.Pod, container string) string {
	for _, st := range pod.Status.ContainerStatuses {
		if st.Name == container && st.State.Running != nil {
			_, id, _ := strings.Cut(st.ContainerID, "://")
			return id
		}
	}
	return ""
}
