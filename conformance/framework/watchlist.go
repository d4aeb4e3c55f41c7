package framework

import (
	"sync"
	"sync/atomic"

	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/features"
)

// streamingListsFrom is the first Kubernetes release whose API server answers
// a watch with sendInitialEvents (streaming lists, 1.27). Older ones ignore
// it and never send the bookmark that ends the initial list, so an informer
// with client-go's WatchListClient on never syncs: on 1.13–1.16 the suite's
// event recording gave up on every check ("not listed before context
// deadline exceeded") after waiting out its timeout. The reference operator
// does the same for its own clients (operator/internal/kubecompat); the suite
// keeps its own copy, sharing no code with an operator it judges.
var streamingListsFrom = utilversion.MajorMinor(1, 27)

// watchListGate is client-go's feature gates with WatchListClient switched
// off once an API server that predates streaming lists was met; a process
// talks to one cluster, so it stays off.
type watchListGate struct {
	base features.Gates
	off  atomic.Bool
}

func (g *watchListGate) Enabled(f features.Feature) bool {
	if f == features.WatchListClient && g.off.Load() {
		return false
	}
	return g.base.Enabled(f)
}

var (
	installWatchListGate sync.Once
	watchListGates       *watchListGate
)

// fitListsTo switches streaming lists off for every client of the process
// when serverVersion predates them.
func fitListsTo(serverVersion string) {
	v, err := utilversion.ParseGeneric(serverVersion)
	if err != nil || v.AtLeast(streamingListsFrom) {
		return
	}
	installWatchListGate.Do(func() {
		watchListGates = &watchListGate{base: features.FeatureGates()}
		features.ReplaceFeatureGates(watchListGates)
	})
	watchListGates.off.Store(true)
}
