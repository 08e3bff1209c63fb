package engine

import (
	"errors"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/core"
)

// TestLockPanicKeepsEarlierFailure: a Go panic while recorded entries
// run releases the lock, and the next call that forces gets both the
// failure a ForStatus call kept before and the panic's error.
func TestLockPanicKeepsEarlierFailure(t *testing.T) {
	p := NewProcess(testAPI{})
	kept := errors.New("an earlier recorded loop failed")
	p.queue.failed = kept
	g := &core.Storage{Name: "g"} // no host memory: the assignment panics
	record(p, g, nil)
	p.queue.slots[0].Loop.Kernel = &core.Kernel{Name: "k"}
	p.queue.slots[0].Loop.Set = &core.Set{Name: "s"}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("running the entry did not panic")
			}
		}()
		_ = p.Lock(ForData, "test")
		p.Unlock()
	}()
	if !p.mu.TryLock() {
		t.Fatal("the lock was left held")
	}
	p.mu.Unlock()
	err := p.Lock(ForData, "test")
	p.Unlock()
	if !errors.Is(err, kept) || err == nil || !strings.Contains(err.Error(), "a Go panic while the recorded loops ran") {
		t.Errorf("the next forcing: %v, want the kept failure and the panic's", err)
	}
}

// TestLockFastPathStillRefuses: with a chain's loops recorded on several
// ranks, Lock still refuses accessors (ForStorage, ForData), and
// ForStatus leaves the queue as it is.
func TestLockFastPathStillRefuses(t *testing.T) {
	p := NewProcess(testAPI{})
	g := &core.Storage{Name: "g"}
	record(p, g, nil)
	p.distQueued = 1
	for _, m := range []Mode{ForStorage(g), ForData} {
		err := p.Lock(m, "Dat.Data")
		p.Unlock()
		if err == nil {
			t.Errorf("mode %v: not refused", m.kind)
		}
	}
	if err := p.Lock(ForStatus, "State"); err != nil {
		t.Error(err)
	}
	p.Unlock()
	if p.queue.n != 1 || p.queue.failed != nil {
		t.Errorf("after ForStatus: %d recorded, failed %v; want 1 and none", p.queue.n, p.queue.failed)
	}
}
