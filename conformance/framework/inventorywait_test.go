package framework

import (
	"context"
	"testing"
	"time"

	"github.com/etcdproof/etcdproof/conformance/inventory"
)

func TestWaitForCleanInventoryReturnsTheLastVerdictWithoutFailing(t *testing.T) {
	left := inventory.Snapshot{Objects: []inventory.Object{{Resource: "persistentvolumeclaims", Namespace: "a", Name: "data", UID: "pvc"}}}
	polls, saved := 0, 0
	in := func(cleanAfter int) WaitForCleanInventoryInput {
		polls, saved = 0, 0
		return WaitForCleanInventoryInput{
			Take: func(context.Context) (inventory.Snapshot, error) {
				polls++
				if cleanAfter > 0 && polls > cleanAfter {
					return inventory.Snapshot{}, nil
				}
				return left, nil
			},
			Judge: func(s inventory.Snapshot) inventory.Verdict {
				return inventory.InNamespace(inventory.Snapshot{}, s, nil, inventory.Rules{})
			},
			Saved: func(inventory.Verdict) { saved++ },
		}
	}
	// Garbage collection catches up.
	v, err := WaitForCleanInventory(context.Background(), in(2), time.Second, time.Millisecond)
	if err != nil || !v.Clean() || polls != 3 || saved != 3 {
		t.Errorf("verdict = %+v, err = %v after %d polls (%d saved); want clean on the third", v, err, polls, saved)
	}
	// It never does: the leftover is the verdict, not a test failure.
	v, err = WaitForCleanInventory(context.Background(), in(0), 30*time.Millisecond, time.Millisecond)
	if err != nil || len(v.Leftovers) != 1 {
		t.Errorf("verdict = %+v, err = %v; want the claim left", v, err)
	}
}
