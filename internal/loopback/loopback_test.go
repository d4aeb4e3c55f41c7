package loopback_test

import (
	"net"
	"testing"

	"github.com/etcdproof/etcdproof/internal/loopback"
)

// TestAddrsCanAllBeListenedOnAtOnce: servers started on the addresses handed
// out, one after another, all bind, as the members of one etcd cluster do.
func TestAddrsCanAllBeListenedOnAtOnce(t *testing.T) {
	seen := map[string]bool{}
	for range 50 {
		addr := loopback.Addr(t)
		if seen[addr] {
			t.Fatalf("%s handed out twice", addr)
		}
		seen[addr] = true
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("listening on %s: %v", addr, err)
		}
		defer func() { _ = l.Close() }()
	}
}
