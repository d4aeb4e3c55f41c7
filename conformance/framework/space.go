package framework

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// withReadyMember runs fn with a client of the first ready member pod that
// can be reached.
func (c *EtcdCluster) withReadyMember(ctx context.Context, fn func(cli *clientv3.Client, pod string) error) error {
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
		return fn(cli, p.Name)
	}
	return errors.New("no ready member pod to reach")
}

// FillToQuota writes values of valueBytes under prefix, each to a key of
// its own, until etcd refuses a write for lack of space (NOSPACE), at most
// most writes. It returns how many were acknowledged; an error unless a
// write was refused with NOSPACE.
func (c *EtcdCluster) FillToQuota(ctx context.Context, prefix string, valueBytes, most int) (int, error) {
	written := 0
	value := strings.Repeat("x", valueBytes)
	err := c.withReadyMember(ctx, func(cli *clientv3.Client, pod string) error {
		for i := range most {
			pctx, cancel := context.WithTimeout(ctx, probeTimeout)
			_, err := cli.Put(pctx, fmt.Sprintf("%s%06d", prefix, i), value)
			cancel()
			switch {
			case err == nil:
				written++
			case isNoSpace(err):
				return nil
			default:
				return fmt.Errorf("write %d through %s: %w", i, pod, err)
			}
		}
		return fmt.Errorf("%d writes of %d bytes and no NOSPACE", most, valueBytes)
	})
	return written, err
}

// DeletePrefix deletes every key under prefix: etcd takes deletions under
// NOSPACE, which is how an application frees space.
func (c *EtcdCluster) DeletePrefix(ctx context.Context, prefix string) (int64, error) {
	var deleted int64
	err := c.withReadyMember(ctx, func(cli *clientv3.Client, pod string) error {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		defer cancel()
		resp, err := cli.Delete(pctx, prefix, clientv3.WithPrefix())
		if err != nil {
			return fmt.Errorf("delete %s* through %s: %w", prefix, pod, err)
		}
		deleted = resp.Deleted
		return nil
	})
	return deleted, err
}

// Put writes one key through a ready member.
func (c *EtcdCluster) Put(ctx context.Context, key, value string) error {
	return c.withReadyMember(ctx, func(cli *clientv3.Client, pod string) error {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		defer cancel()
		_, err := cli.Put(pctx, key, value)
		return err
	})
}

// NoSpaceAlarms counts the members with an active NOSPACE alarm.
func (c *EtcdCluster) NoSpaceAlarms(ctx context.Context) (int, error) {
	n := 0
	err := c.withReadyMember(ctx, func(cli *clientv3.Client, pod string) error {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		defer cancel()
		resp, err := cli.AlarmList(pctx)
		if err != nil {
			return fmt.Errorf("alarm list through %s: %w", pod, err)
		}
		for _, a := range resp.Alarms {
			if a.Alarm.String() == "NOSPACE" {
				n++
			}
		}
		return nil
	})
	return n, err
}

func isNoSpace(err error) bool {
	return errors.Is(err, rpctypes.ErrGRPCNoSpace) || errors.Is(err, rpctypes.ErrNoSpace) || strings.Contains(err.Error(), "database space exceeded")
}

// IsNoSpace reports a write refused for lack of space.
func IsNoSpace(err error) bool { return err != nil && isNoSpace(err) }
