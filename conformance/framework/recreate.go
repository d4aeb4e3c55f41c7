package framework

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
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

// ObjectSamples is what SampleObjects saw: claims that were not there when
// it started, and the most member pods at once.
type ObjectSamples struct {
	NewClaims     []string
	MostPods      int
	MostPodsNames []string
	Samples       int
}

// SampleObjects lists the namespace's claims and the cluster's member pods
// every period until stop is called, recording claims that are not in
// known and the largest set of member pods seen at once: what an operator
// that starts a second cluster beside the first leaves, even if it later
// deletes it again. A sample that could not list is skipped. stop may be
// called more than once (a deferred call after the one that read the
// samples); each returns the same samples.
func (c *EtcdCluster) SampleObjects(ctx context.Context, known map[types.UID]string, period time.Duration) (stop func() ObjectSamples) {
	ctx, cancel := context.WithCancel(ctx)
	var s ObjectSamples
	seen := map[types.UID]bool{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = wait.PollUntilContextCancel(ctx, period, true, func(ctx context.Context) (bool, error) {
			claims, err := c.NamespaceClaims(ctx)
			pods, podErr := c.MemberPods(ctx)
			if err != nil || podErr != nil {
				return false, nil
			}
			s.Samples++
			for uid, name := range claims {
				if _, ok := known[uid]; !ok && !seen[uid] {
					seen[uid] = true
					s.NewClaims = append(s.NewClaims, name)
				}
			}
			if len(pods) > s.MostPods {
				s.MostPods, s.MostPodsNames = len(pods), nil
				for _, p := range pods {
					s.MostPodsNames = append(s.MostPodsNames, p.Name)
				}
			}
			return false, nil
		})
	}()
	var once sync.Once
	return func() ObjectSamples {
		once.Do(func() {
			cancel()
			<-done
			slices.Sort(s.NewClaims)
		})
		return s
	}
}
