package framework

import (
	"context"
	"fmt"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// DeleteOrphaning deletes the CR as `kubectl delete --cascade=orphan`
// does: the garbage collector removes the owner references of what the CR
// owned (pods, claims, Services) and deletes none of it.
func (c *EtcdCluster) DeleteOrphaning(ctx context.Context) error {
	orphan := metav1.DeletePropagationOrphan
	return c.env.crResource().Namespace(c.Namespace).Delete(ctx, c.Name, metav1.DeleteOptions{PropagationPolicy: &orphan})
}

// CreateAgain creates the CR once more from the profile's template, with
// what it was first created with (the extra objects and TLS Secrets made
// for it are still there).
func (c *EtcdCluster) CreateAgain(ctx context.Context) error {
	if _, err := c.env.createRendered(ctx, c.env.Profile.Cluster.Template, c.data); err != nil {
		return fmt.Errorf("cluster CR: %w", err)
	}
	return nil
}

// NamespaceClaims lists the PersistentVolumeClaims of the cluster's
// namespace by UID (a claim deleted and made again under its name is
// another claim).
func (c *EtcdCluster) NamespaceClaims(ctx context.Context) (map[types.UID]string, error) {
	list, err := c.env.Kube.CoreV1().PersistentVolumeClaims(c.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing claims in %s: %w", c.Namespace, err)
	}
	claims := map[types.UID]string{}
	for _, pvc := range list.Items {
		if pvc.DeletionTimestamp == nil {
			claims[pvc.UID] = pvc.Name
		}
	}
	return claims, nil
}

// MissingClaims names the claims of want that are gone (or being deleted).
func (c *EtcdCluster) MissingClaims(ctx context.Context, want map[types.UID]string) ([]string, error) {
	now, err := c.NamespaceClaims(ctx)
	if err != nil {
		return nil, err
	}
	var missing []string
	for uid, name := range want {
		if _, ok := now[uid]; !ok {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	return missing, nil
}

// ClaimNames are the names of claims, sorted.
func ClaimNames(claims map[types.UID]string) []string {
	return slices.Sorted(maps.Values(claims))
}
