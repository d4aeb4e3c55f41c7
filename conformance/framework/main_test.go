package framework

import (
	"os"
	"testing"

	"github.com/etcdproof/etcdproof/internal/testparallel"
)

// TestMain runs the tests that start their own API server and etcd members
// side by side: they mostly wait on them. Four at once: each brings up a
// kube-apiserver, which is the busiest part of such a test.
func TestMain(m *testing.M) {
	testparallel.Default(4)
	os.Exit(m.Run())
}
