package framework

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/etcdproof/etcdproof/conformance/cluster"
)

// KindNodes is the node access of the kind cluster a run is on.
type KindNodes = cluster.Nodes

// KindNodes finds the kind cluster behind the run's kubeconfig context
// (kind names its contexts kind-<cluster>). The error says why there is no
// node access, for a check to report as incomplete.
func (e *Env) KindNodes() (*cluster.Nodes, error) {
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
	name, ok := cluster.NameOfContext(context)
	if !ok {
		return nil, fmt.Errorf("context %q is not a kind cluster's (kind-<name>): the suite reaches nodes only through kind", context)
	}
	return cluster.NodesOf(name)
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
