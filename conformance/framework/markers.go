package framework

import (
	"context"
	"fmt"
	"maps"
	"slices"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// WriteMarker writes a key through a member pod so later steps can check
// it survived.
func (c *EtcdCluster) WriteMarker(ctx context.Context, key, value string) error {
	return c.WriteMarkers(ctx, map[string]string{key: value})
}

// WriteMarkers writes each key through one ready member pod; each write is
// acknowledged when it returns.
func (c *EtcdCluster) WriteMarkers(ctx context.Context, data map[string]string) error {
	err := c.withReadyMember(ctx, func(cli *clientv3.Client, pod string) error {
		for _, k := range slices.Sorted(maps.Keys(data)) {
			pctx, cancel := context.WithTimeout(ctx, probeTimeout)
			_, err := cli.Put(pctx, k, data[k])
			cancel()
			if err != nil {
				return fmt.Errorf("write %s through %s: %w", k, pod, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("writing %d keys: %w", len(data), err)
	}
	return nil
}
