package etcdadmin

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Alarm is one active etcd alarm: which member raised it, and its type.
type Alarm struct {
	MemberID uint64
	Type     string
}

// The alarm types etcd raises.
const (
	// AlarmNoSpace: a member's backend file reached its quota; the cluster
	// refuses writes (deletes and compaction still work) until disarmed.
	AlarmNoSpace = "NOSPACE"
	// AlarmCorrupt: members' data differ. Never disarmed by the operator.
	AlarmCorrupt = "CORRUPT"
)

// Alarms lists the cluster's active alarms.
func (c *Client) Alarms(ctx context.Context) ([]Alarm, error) {
	resp, err := c.c.AlarmList(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing alarms: %w", err)
	}
	out := make([]Alarm, 0, len(resp.Alarms))
	for _, a := range resp.Alarms {
		out = append(out, Alarm{MemberID: a.MemberID, Type: a.Alarm.String()})
	}
	return out, nil
}

// Defragment gives the member at endpoint its free pages back: it rewrites
// the backend file with only the data in use. The member serves no request
// until it is done (seconds per GiB), so the caller picks when.
func (c *Client) Defragment(ctx context.Context, endpoint string) error {
	if _, err := c.c.Defragment(ctx, endpoint); err != nil {
		return fmt.Errorf("defragmenting %s: %w", endpoint, err)
	}
	return nil
}

// DisarmNoSpace disarms every NOSPACE alarm (one per member that raised
// it), and only those; it returns how many it disarmed. An alarm is
// disarmed by the member that raised it and its type: etcd matches both.
func (c *Client) DisarmNoSpace(ctx context.Context) (int, error) {
	alarms, err := c.Alarms(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, a := range alarms {
		if a.Type != AlarmNoSpace {
			continue
		}
		if _, err := c.c.AlarmDisarm(ctx, &etcdMemberAlarm{MemberID: a.MemberID, Alarm: etcdserverpb.AlarmType_NOSPACE}); err != nil {
			return n, fmt.Errorf("disarming NOSPACE of member %x: %w", a.MemberID, err)
		}
		n++
	}
	return n, nil
}

// HistoryKept reports whether etcd still keeps revisions older than
// revision: a read one revision before it is refused once a compaction
// reached it. The read counts one key that never exists, so it costs next
// to nothing.
func (c *Client) HistoryKept(ctx context.Context, revision int64) (bool, error) {
	if revision <= 1 {
		return false, nil
	}
	_, err := c.c.Get(ctx, "\x00", clientv3.WithRev(revision-1), clientv3.WithCountOnly())
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, rpctypes.ErrCompacted):
		return false, nil
	}
	return false, fmt.Errorf("reading at revision %d: %w", revision-1, err)
}

// CompactHistory compacts the key-value store to revision, physically,
// through every member's own endpoint in turn, twice each. Physical matters
// beyond waiting for the deletes: the member that serves it then commits
// its backend (etcd does so even for a revision already compacted). bbolt
// hands the pages a commit freed back to the free list only at a later
// write transaction that no older reader overlaps, and etcd's status
// reports them as in use until then. Under NOSPACE nothing else commits,
// so without these commits a member would go on reporting the freed pages
// as in use; one commit was not always enough on a busy member (a reader
// still open), hence the second. A revision already compacted is no
// error; every endpoint is tried, the first error returned.
func (c *Client) CompactHistory(ctx context.Context, revision int64) error {
	var first error
	for _, ep := range c.endpoints {
		for range 2 {
			if err := c.compactVia(ctx, ep, revision); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

func (c *Client) compactVia(ctx context.Context, endpoint string, revision int64) error {
	one, err := newClient([]string{endpoint}, c.tls, c.dialTimeout)
	if err != nil {
		return err
	}
	defer func() { _ = one.Close() }()
	if _, err := one.Compact(ctx, revision, clientv3.WithCompactPhysical()); err != nil && !errors.Is(err, rpctypes.ErrCompacted) {
		return fmt.Errorf("compacting to revision %d through %s: %w", revision, endpoint, err)
	}
	return nil
}
