package traffic

import (
	"context"
	"errors"
	"sync/atomic"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"go.etcd.io/raft/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/etcdproof/etcdproof/conformance/history"
)

// classify says what a failed request's error proves about its effect.
//
// Definite: the request cannot have taken effect, because
//   - no attempt handed the request message to a connection (sent is false:
//     dial failures, no endpoint, waiting for a connection until the
//     deadline), so no server saw it; or
//   - etcd refused it before proposing it to raft, or raft dropped the
//     proposal before appending it to any log: no leader, too many
//     requests (applied index too far behind), request too large, no space
//     (the NOSPACE alarm refuses puts), not capable, learners refusing the
//     request, and "raft proposal dropped" (no known leader, or a leader
//     transfer in progress).
//
// Everything else is indeterminate: deadline exceeded and etcd's own
// "request timed out" errors (the proposal may have been forwarded and
// committed), a connection lost after the request was sent, "server
// stopped", unknown errors.
func classify(err error, sent bool) history.ErrorClass {
	if !sent {
		return history.Definite
	}
	for _, refused := range refusedBeforeProposal {
		if errors.Is(err, refused) {
			return history.Definite
		}
	}
	// etcd sends raft's error with code Unknown and raft's message: over
	// gRPC the message is the only thing that identifies it.
	if s, ok := status.FromError(err); ok && s.Code() == codes.Unknown && s.Message() == raft.ErrProposalDropped.Error() {
		return history.Definite
	}
	return history.Indeterminate
}

// refusedBeforeProposal are etcd's errors (as clientv3 returns them) for
// requests rejected before they were proposed to raft.
var refusedBeforeProposal = []error{
	rpctypes.ErrNoLeader,
	rpctypes.ErrTooManyRequests,
	rpctypes.ErrRequestTooLarge,
	rpctypes.ErrNoSpace,
	rpctypes.ErrNotCapable,
	rpctypes.Error(rpctypes.ErrGRPCNotSupportedForLearner),
}

// sentTracker is a gRPC stats handler: for a request whose context came
// from trackSent, it records whether any attempt (clientv3 and gRPC retry
// some internally) handed the request message to a connection. gRPC
// reports OutPayload only once the message was queued on a live
// transport stream, synchronously, before the call returns.
type sentTracker struct{}

type sentKey struct{}

// trackSent returns a context whose requests report into the flag.
func trackSent(ctx context.Context) (context.Context, *atomic.Bool) {
	sent := &atomic.Bool{}
	return context.WithValue(ctx, sentKey{}, sent), sent
}

func (sentTracker) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }

func (sentTracker) HandleRPC(ctx context.Context, s stats.RPCStats) {
	if _, ok := s.(*stats.OutPayload); !ok {
		return
	}
	if sent, ok := ctx.Value(sentKey{}).(*atomic.Bool); ok {
		sent.Store(true)
	}
}

func (sentTracker) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }

func (sentTracker) HandleConn(context.Context, stats.ConnStats) {}
