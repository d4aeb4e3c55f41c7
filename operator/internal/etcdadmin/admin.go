// Package etcdadmin is the operator's narrow view of etcd's cluster API:
// membership (add as learner, promote, remove), leadership transfer, status.
package etcdadmin

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Member is one entry of etcd's membership.
type Member struct {
	ID         uint64
	Name       string // empty until the member has started once
	PeerURLs   []string
	ClientURLs []string
	IsLearner  bool
}

// Membership is etcd's member list with the ID of the cluster that answered.
type Membership struct {
	ClusterID uint64
	Members   []Member
}

// Status is what one endpoint says about itself.
type Status struct {
	Endpoint string
	// ClusterID is the cluster the answering member belongs to.
	ClusterID uint64
	MemberID  uint64
	LeaderID  uint64
	Version   string
	RaftIndex uint64
	IsLearner bool
	Errors    []string
	// Alarms are the cluster's active alarms as this member lists them
	// ("memberID:… alarm:NOSPACE"): every member lists every alarm, whoever
	// raised it. They are not errors of the member: under NOSPACE a member
	// still serves reads, deletes and compaction, and is needed for the
	// cluster to recover.
	Alarms []string
	// DBSize is the size of the member's backend file, DBSizeInUse the part
	// of it that holds data (3.4+); the rest are free pages, which etcd
	// reuses but gives back only when defragmented. etcd's quota counts the
	// file. DBSizeQuota is the member's quota (3.6+; 0 before).
	DBSize, DBSizeInUse, DBSizeQuota int64
	// Revision is the key-value store's revision as the member has it.
	Revision int64
}

// Healthy means the endpoint answered without errors and knows a leader.
// An alarm does not make a member unhealthy: taken for member death, a
// NOSPACE alarm (which every member lists) made every member look dead, so
// none was replaced, and scale and upgrade stopped.
func (s Status) Healthy() bool { return len(s.Errors) == 0 && s.LeaderID != 0 }

// Admin is the interface the reconciler uses; Client implements it.
type Admin interface {
	Members(ctx context.Context) ([]Member, error)
	Membership(ctx context.Context) (Membership, error)
	Statuses(ctx context.Context) []Status
	AddLearner(ctx context.Context, peerURL string) (Member, []Member, error)
	Promote(ctx context.Context, id uint64) error
	Remove(ctx context.Context, id uint64) error
	MoveLeader(ctx context.Context, to uint64) error
	Alarms(ctx context.Context) ([]Alarm, error)
	Defragment(ctx context.Context, endpoint string) error
	HistoryKept(ctx context.Context, revision int64) (bool, error)
	CompactHistory(ctx context.Context, revision int64) error
	DisarmNoSpace(ctx context.Context) (int, error)
	Locals(ctx context.Context) []Local
	Close() error
}

// Dialer opens an Admin over the given client endpoints; tlsConfig is nil
// for members that serve plain HTTP.
type Dialer func(endpoints []string, tlsConfig *tls.Config) (Admin, error)

// Client talks to a cluster through a set of client endpoints.
type Client struct {
	endpoints   []string
	tls         *tls.Config
	dialTimeout time.Duration
	c           *clientv3.Client
	// clusterID is the cluster of the last member list read (Membership):
	// Remove and MoveLeader send their requests only to endpoints of that
	// cluster, never to a member of another one that an endpoint reaches.
	clusterID atomic.Uint64
}

// DefaultDialTimeout bounds how long a dead endpoint can delay a reconcile pass.
const DefaultDialTimeout = 2 * time.Second

// Dial returns a Client over endpoints (http://host:port, or https://
// with tlsConfig).
func Dial(endpoints []string, tlsConfig *tls.Config) (Admin, error) {
	return New(endpoints, tlsConfig, DefaultDialTimeout)
}

// New returns a Client over endpoints.
func New(endpoints []string, tlsConfig *tls.Config, dialTimeout time.Duration) (*Client, error) {
	if len(endpoints) == 0 {
		return nil, errors.New("no etcd endpoints")
	}
	c, err := newClient(endpoints, tlsConfig, dialTimeout)
	if err != nil {
		return nil, err
	}
	return &Client{endpoints: endpoints, tls: tlsConfig, dialTimeout: dialTimeout, c: c}, nil
}

func newClient(endpoints []string, tlsConfig *tls.Config, dialTimeout time.Duration) (*clientv3.Client, error) {
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		TLS:         tlsConfig,
		DialTimeout: dialTimeout,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("connecting to etcd at %v: %w", endpoints, err)
	}
	return c, nil
}

// Close releases the connection.
func (c *Client) Close() error { return c.c.Close() }

func toMembers(in []*etcdMember) []Member {
	out := make([]Member, 0, len(in))
	for _, m := range in {
		out = append(out, Member{ID: m.ID, Name: m.Name, PeerURLs: m.PeerURLs, ClientURLs: m.ClientURLs, IsLearner: m.IsLearner})
	}
	return out
}

// Members lists the membership.
func (c *Client) Members(ctx context.Context) ([]Member, error) {
	m, err := c.Membership(ctx)
	return m.Members, err
}

// Membership lists the membership with the ID of the cluster whose member
// answered, so the caller can refuse an answer from another cluster.
func (c *Client) Membership(ctx context.Context) (Membership, error) {
	resp, err := c.c.MemberList(ctx)
	if err != nil {
		return Membership{}, fmt.Errorf("listing members: %w", err)
	}
	c.clusterID.Store(resp.Header.ClusterId)
	return Membership{ClusterID: resp.Header.ClusterId, Members: toMembers(resp.Members)}, nil
}

// Statuses asks every endpoint for its status in parallel; an endpoint that
// does not answer gets a Status with its error. Once a member list was read
// (Membership), an endpoint that answers for another cluster is left out of
// the client's balanced requests (member add, promote, list) from then on.
func (c *Client) Statuses(ctx context.Context) []Status {
	out := make([]Status, len(c.endpoints))
	var wg sync.WaitGroup
	for i, ep := range c.endpoints {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = c.status(ctx, ep)
		}()
	}
	wg.Wait()
	var same []string
	for _, s := range out {
		if c.sameCluster(s) {
			same = append(same, s.Endpoint)
		}
	}
	if len(same) > 0 && len(same) < len(out) {
		c.c.SetEndpoints(same...)
	}
	return out
}

func (c *Client) status(ctx context.Context, endpoint string) Status {
	resp, err := c.c.Status(ctx, endpoint)
	if err != nil {
		return Status{Endpoint: endpoint, Errors: []string{err.Error()}}
	}
	s := Status{
		Endpoint:  endpoint,
		ClusterID: resp.Header.ClusterId,
		MemberID:  resp.Header.MemberId,
		LeaderID:  resp.Leader,
		Version:   resp.Version,
		RaftIndex: resp.RaftIndex,
		IsLearner: resp.IsLearner,

		DBSize:      resp.DbSize,
		DBSizeInUse: resp.DbSizeInUse,
		DBSizeQuota: resp.DbSizeQuota,
	}
	if resp.Header != nil {
		s.Revision = resp.Header.Revision
	}
	// etcd's Status lists "etcdserver: no leader" and, for each active
	// alarm, the AlarmMember in protobuf text ("memberID:… alarm:NOSPACE").
	for _, e := range resp.Errors {
		if strings.Contains(e, "alarm:") {
			s.Alarms = append(s.Alarms, strings.TrimSpace(e))
		} else {
			s.Errors = append(s.Errors, e)
		}
	}
	return s
}

// AddLearner adds a non-voting member; it returns the new member and the
// membership after the change (needed for the new member's --initial-cluster).
func (c *Client) AddLearner(ctx context.Context, peerURL string) (Member, []Member, error) {
	resp, err := c.c.MemberAddAsLearner(ctx, []string{peerURL})
	if err != nil {
		return Member{}, nil, fmt.Errorf("adding learner %s: %w", peerURL, err)
	}
	added := toMembers([]*etcdMember{resp.Member})[0]
	return added, toMembers(resp.Members), nil
}

// Promote makes a learner a voter. etcd refuses while the learner lags the
// leader; IsLearnerNotReady tells that case apart.
func (c *Client) Promote(ctx context.Context, id uint64) error {
	if _, err := c.c.MemberPromote(ctx, id); err != nil {
		return fmt.Errorf("promoting member %x: %w", id, err)
	}
	return nil
}

// IsLearnerNotReady is true when a promotion failed only because the learner
// has not caught up yet.
func IsLearnerNotReady(err error) bool {
	return err != nil && (errors.Is(err, rpctypes.ErrMemberLearnerNotReady) ||
		strings.Contains(err.Error(), rpctypes.ErrorDesc(rpctypes.ErrGRPCLearnerNotReady)))
}

// momentaryRefusals are etcd's refusals of a membership change that pass
// within seconds by themselves: a member (re)connected less than five
// seconds ago ("unhealthy cluster"), or leadership is changing.
var momentaryRefusals = []error{rpctypes.ErrUnhealthy, rpctypes.ErrLeaderChanged, rpctypes.ErrNoLeader, rpctypes.ErrTimeoutDueToLeaderFail}

// IsMomentary is true when a membership change failed only for a reason
// that passes within seconds by itself (momentaryRefusals).
func IsMomentary(err error) bool {
	if err == nil {
		return false
	}
	for _, m := range momentaryRefusals {
		if errors.Is(err, m) || strings.Contains(err.Error(), m.Error()) {
			return true
		}
	}
	return false
}

// Remove removes a member from the membership. The request goes only to the
// other members: a member that applies its own removal stops at once and
// would never answer. A member that is already gone counts as removed, so a
// retry after a lost answer succeeds.
//
// The members are asked for at most the dial timeout: the endpoints may
// include the dead member's (the operator still asks a member whose node
// stopped reporting), whose status call waits for a connection until its
// context ends, and with ctx that left no time for the removal itself.
func (c *Client) Remove(ctx context.Context, id uint64) error {
	probe, cancel := context.WithTimeout(ctx, c.dialTimeout)
	statuses := c.Statuses(probe)
	cancel()
	var others []string
	for _, s := range statuses {
		if len(s.Errors) == 0 && s.MemberID != 0 && s.MemberID != id && c.sameCluster(s) {
			others = append(others, s.Endpoint)
		}
	}
	if len(others) == 0 {
		return fmt.Errorf("removing member %x: no other member answers", id)
	}
	via, err := newClient(others, c.tls, c.dialTimeout)
	if err != nil {
		return err
	}
	defer func() { _ = via.Close() }()
	if _, err := via.MemberRemove(ctx, id); err != nil && !errors.Is(err, rpctypes.ErrMemberNotFound) {
		return fmt.Errorf("removing member %x: %w", id, err)
	}
	return nil
}

// sameCluster reports whether s comes from a member of the cluster whose
// member list was read last (any cluster before one was read).
func (c *Client) sameCluster(s Status) bool {
	id := c.clusterID.Load()
	return id == 0 || s.ClusterID == id
}

// MoveLeader transfers leadership to member to. The request must reach the
// current leader, so it finds the leader's endpoint first.
func (c *Client) MoveLeader(ctx context.Context, to uint64) error {
	for _, s := range c.Statuses(ctx) {
		if len(s.Errors) > 0 || s.MemberID == 0 || s.MemberID != s.LeaderID || !c.sameCluster(s) {
			continue
		}
		if s.LeaderID == to {
			return nil
		}
		leader, err := newClient([]string{s.Endpoint}, c.tls, c.dialTimeout)
		if err != nil {
			return err
		}
		defer func() { _ = leader.Close() }()
		if _, err := leader.MoveLeader(ctx, to); err != nil {
			return fmt.Errorf("moving leadership from %x to %x: %w", s.LeaderID, to, err)
		}
		return nil
	}
	return errors.New("moving leadership: no endpoint is the leader")
}
