package framework

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// Events lists the Kubernetes Events whose involved object (an
// events.k8s.io Event's regarding object, which the core/v1 API shows
// the same way) is the cluster's CR: what the operator said it did to
// the cluster.
func (c *EtcdCluster) Events(ctx context.Context) ([]corev1.Event, error) {
	about := fields.Set{"involvedObject.kind": c.env.Profile.Cluster.Kind, "involvedObject.name": c.Name}
	list, err := c.env.Kube.CoreV1().Events(c.Namespace).List(ctx, metav1.ListOptions{FieldSelector: about.AsSelector().String()})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// EventTime is when an Event last happened, by its own account (the
// API's times are whole seconds but for an events.k8s.io Event's).
func EventTime(ev corev1.Event) time.Time {
	return eventTime(&ev)
}
