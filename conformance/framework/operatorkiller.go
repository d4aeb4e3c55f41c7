package framework

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// KillSchedule says when the operator is killed during one step.
type KillSchedule struct {
	// Kills is how many times the operator is killed.
	Kills int
	// FirstWithin: the first kill comes at a random point this soon after
	// the step starts, while the operator is at work on it.
	FirstWithin time.Duration
	// MaxPause: each next kill comes at a random point this long at most
	// after a new operator pod is ready, so the operator gets to act
	// between kills and is cut off somewhere in the middle.
	MaxPause time.Duration
}

// OperatorKill is one kill of the operator.
type OperatorKill struct {
	// After is the time from the start of the step.
	After time.Duration `json:"after"`
	Pods  []string      `json:"pods"`
}

// OperatorKiller kills the operator in the background on a KillSchedule.
type OperatorKiller struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	kills  []OperatorKill
	err    error
}

// StartOperatorKiller starts killing the operator on schedule; Stop ends it.
func (e *Env) StartOperatorKiller(ctx context.Context, schedule KillSchedule) *OperatorKiller {
	ctx, cancel := context.WithCancel(ctx)
	k := &OperatorKiller{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(k.done)
		if err := e.runKills(ctx, schedule, k); err != nil && ctx.Err() == nil {
			k.mu.Lock()
			k.err = err
			k.mu.Unlock()
		}
	}()
	return k
}

func (e *Env) runKills(ctx context.Context, schedule KillSchedule, k *OperatorKiller) error {
	start := time.Now()
	pause := randomUpTo(schedule.FirstWithin)
	var killed []string
	for kills := 0; kills < schedule.Kills; {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(pause):
		}
		pods, err := e.KillOperator(ctx)
		if err != nil {
			return err
		}
		if len(pods) == 0 {
			pause = time.Second // no operator pod runs right now: look again soon
			continue
		}
		kills++
		killed = append(killed, pods...)
		k.mu.Lock()
		k.kills = append(k.kills, OperatorKill{After: time.Since(start), Pods: pods})
		k.mu.Unlock()
		if kills == schedule.Kills {
			return nil
		}
		if err := e.waitForNewOperatorPod(ctx, killed); err != nil {
			return err
		}
		pause = randomUpTo(schedule.MaxPause)
	}
	return nil
}

// waitForNewOperatorPod waits until an operator pod that was not killed is
// ready.
func (e *Env) waitForNewOperatorPod(ctx context.Context, killed []string) error {
	return wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		pods, err := e.OperatorPods(ctx)
		if err != nil {
			return false, nil
		}
		for _, p := range pods {
			if !slices.Contains(killed, p.Name) && podReady(p) {
				return true, nil
			}
		}
		return false, nil
	})
}

// Stop ends the kills and returns those done, or why killing failed.
func (k *OperatorKiller) Stop() ([]OperatorKill, error) {
	k.cancel()
	<-k.done
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err != nil {
		return k.kills, fmt.Errorf("killing the operator: %w", k.err)
	}
	return k.kills, nil
}

func randomUpTo(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(d))) + 1
}
