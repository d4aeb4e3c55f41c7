package framework

import (
	"fmt"
	"io"
	"net/http"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

// Forward opens a port-forward to a pod port and returns the local port
// and a function that closes it. Pod IPs are not reachable from the host.
func (e *Env) Forward(namespace, pod string, port int) (int, func(), error) {
	transport, upgrader, err := spdy.RoundTripperFor(e.REST)
	if err != nil {
		return 0, nil, err
	}
	url := e.Kube.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("portforward").URL()
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, url)
	stop, ready := make(chan struct{}), make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", port)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		return 0, nil, err
	}
	errCh := make(chan error, 1)
	go func() { errCh <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-errCh:
		return 0, nil, fmt.Errorf("port-forward %s/%s:%d: %w", namespace, pod, port, err)
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) == 0 {
		close(stop)
		return 0, nil, fmt.Errorf("port-forward %s/%s:%d: no local port: %v", namespace, pod, port, err)
	}
	return int(ports[0].Local), func() { close(stop) }, nil
}

// forwardToMember opens a port-forward to a member pod's client port.
func (c *EtcdCluster) forwardToMember(pod string) (int, func(), error) {
	if c.forward != nil {
		return c.forward(pod)
	}
	return c.env.Forward(c.Namespace, pod, c.env.Profile.Cluster.ClientPort)
}

// memberClient is an etcd client of member pod through a port-forward;
// closeClient closes the client, then the port-forward.
func (c *EtcdCluster) memberClient(pod string) (cli *clientv3.Client, closeClient func(), err error) {
	local, stop, err := c.forwardToMember(pod)
	if err != nil {
		return nil, nil, err
	}
	cli, err = clientv3.New(c.ClientConfig(local))
	if err != nil {
		stop()
		return nil, nil, err
	}
	return cli, func() { _ = cli.Close(); stop() }, nil
}
