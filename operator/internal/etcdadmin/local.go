package etcdadmin

import (
	"context"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Local is what one endpoint says on its own: its status, and the membership
// as it knows it (a serializable read, which needs no leader). This is all
// there is to read once quorum is lost.
type Local struct {
	Status  Status
	Members []Member
}

// Locals asks each endpoint on its own, in parallel; those that do not answer
// are left out.
func (c *Client) Locals(ctx context.Context) []Local {
	out := make([]*Local, len(c.endpoints))
	var wg sync.WaitGroup
	for i, ep := range c.endpoints {
		wg.Go(func() {
			s := c.status(ctx, ep)
			if s.MemberID == 0 {
				return // no answer (an error in the status itself still has the member's ID)
			}
			one, err := newClient([]string{ep}, c.tls, c.dialTimeout)
			if err != nil {
				return
			}
			defer func() { _ = one.Close() }()
			resp, err := one.MemberList(ctx, clientv3.WithSerializable())
			if err != nil {
				return
			}
			out[i] = &Local{Status: s, Members: toMembers(resp.Members)}
		})
	}
	wg.Wait()
	var answered []Local
	for _, l := range out {
		if l != nil {
			answered = append(answered, *l)
		}
	}
	return answered
}
