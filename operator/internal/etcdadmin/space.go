package etcdadmin

import (
	"context"
	"fmt"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
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
