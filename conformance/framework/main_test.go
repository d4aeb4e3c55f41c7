package framework

import (
	"os"
	"testing"

	"github.com/etcdproof/etcdproof/internal/testparallel"
)

// TestMain runs the tests that start their own API server and etcd members
// side by side: they mostly wait on them.
func TestMain(m *testing.M) {
	testparallel.Default(8)
	os.Exit(m.Run())
}
