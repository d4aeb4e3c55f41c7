package framework

import (
	"context"
	"fmt"
	"maps"
	"slices"
)

// WriteMarker writes a key through a member pod so later steps can check
// it survived.
func (c *EtcdCluster) WriteMarker(ctx context.Context, key, value string) error {
	return c.WriteMarkers(ctx, map[string]string{key: value})
}

// WriteMarkers writes each key through one ready member pod; each write is
// acknowledged when it returns.
func (c *EtcdCluster) WriteMarkers(ctx context.Context, data map[string]string) error {
	pods, err := c.MemberPods(ctx)
	if err != nil {
		return err
	}
	for _, p := range pods {
		if !podReady(p) {
			continue
		}
		cli, closeClient, err := c.memberClient(p.Name)
		if err != nil {
			continue
		}
		defer closeClient()
		for _, k := range slices.Sorted(maps.Keys(data)) {
			pctx, cancel := context.WithTimeout(ctx, probeTimeout)
			_, err = cli.Put(pctx, k, data[k])
			cancel()
			if err != nil {
				return fmt.Errorf("write %s through %s: %w", k, p.Name, err)
			}
		}
		return nil
	}
	return fmt.Errorf("no ready member pod to write %d keys through", len(data))
}
