package engine

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/goop2/op2/internal/core"
)

// testAPI makes plain errors in place of the op2 package's.
type testAPI struct{}

func (testAPI) Loop(kernel, set string, arg int, msg string) error {
	return fmt.Errorf("loop %s over %s, argument %d: %s", kernel, set, arg, msg)
}

func (testAPI) Chain(kernel, set string, index, recorded int, _ bool, err error) error {
	return fmt.Errorf("recorded loop %s (%d of %d): %w", kernel, index+1, recorded, err)
}

func (testAPI) ChainAccess(accessor, data string, rank, ranks, recorded int) error {
	return fmt.Errorf("%s of %s on rank %d of %d with %d recorded", accessor, data, rank, ranks, recorded)
}

func (testAPI) Internal(err error) error                { return err }
func (testAPI) IndexData(*core.Set) *core.Storage       { return nil }
func (testAPI) LayerData(*core.Extrusion) *core.Storage { return nil }
func (testAPI) RefillIndex(*core.Set)                   {}

// record puts a loop passing storage s and using constant c (either may
// be nil) in p's queue, as Runtime.Commit would.
func record(p *Process, s *core.Storage, c *core.Const) {
	e := p.queue.slot()
	e.Loop.Args = append(e.Loop.Args[:0], core.Arg{Data: s})
	if c != nil {
		e.Loop.Consts = []*core.Const{c}
	}
	p.queue.n++
}

// TestAssignments: an assignment is made at once when no recorded loop
// uses the value, recorded after them when one does, and left to the
// caller to force when the queue is empty, full or keeps a failure.
func TestAssignments(t *testing.T) {
	g1, g2 := &core.Storage{Name: "g1"}, &core.Storage{Name: "g2"}
	c1, c2 := &core.Const{Name: "c1"}, &core.Const{Name: "c2"}
	var mu sync.Mutex
	pending := 0
	p := NewProcess(testAPI{})
	if got := p.RecordGlobal(g1, []byte{1}); got != AssignForced {
		t.Errorf("empty queue: RecordGlobal = %v, want AssignForced", got)
	}
	if got := p.RecordConst(c1, &mu, &pending, []byte{1}); got != AssignForced {
		t.Errorf("empty queue: RecordConst = %v, want AssignForced", got)
	}
	record(p, g1, c1)
	if got := p.RecordGlobal(g2, []byte{1}); got != AssignNow {
		t.Errorf("a Global no loop passes: %v, want AssignNow", got)
	}
	if got := p.RecordConst(c2, &mu, &pending, []byte{1}); got != AssignNow {
		t.Errorf("a constant no loop uses: %v, want AssignNow", got)
	}
	if got := p.RecordGlobal(g1, []byte{7}); got != AssignRecorded || p.Recorded() != 2 {
		t.Errorf("a Global a loop passes: %v with %d recorded, want AssignRecorded with 2", got, p.Recorded())
	}
	if got := p.RecordConst(c1, &mu, &pending, []byte{7}); got != AssignRecorded || p.Recorded() != 3 {
		t.Errorf("a constant a loop uses: %v with %d recorded, want AssignRecorded with 3", got, p.Recorded())
	}
	for p.Recorded() < MaxRecordedLoops {
		record(p, g1, c1)
	}
	if got := p.RecordGlobal(g1, []byte{1}); got != AssignForced {
		t.Errorf("full queue: RecordGlobal = %v, want AssignForced", got)
	}
	if got := p.RecordGlobal(g2, []byte{1}); got != AssignNow {
		t.Errorf("full queue, a Global no loop passes: %v, want AssignNow", got)
	}
	p.queue.failed = errors.New("kept")
	if got := p.RecordConst(c1, &mu, &pending, []byte{1}); got != AssignForced {
		t.Errorf("a kept failure: RecordConst = %v, want AssignForced", got)
	}
}

// TestLockKeepsAFailureForStatus: a failure ForStatus meets is kept and
// returned by the next forcing Lock, once.
func TestLockKeepsAFailureForStatus(t *testing.T) {
	p := NewProcess(testAPI{})
	kept := errors.New("a recorded loop failed")
	p.queue.failed = kept
	if err := p.Lock(ForStatus, "test"); err != nil {
		t.Errorf("Lock(ForStatus) = %v, want nil", err)
	}
	p.Unlock()
	if p.queue.failed != kept {
		t.Fatalf("ForStatus lost the failure: %v", p.queue.failed)
	}
	if err := p.Lock(ForNoData, "test"); err != nil {
		t.Errorf("Lock(ForNoData) = %v, want nil", err)
	}
	p.Unlock()
	if err := p.Lock(ForData, "test"); !errors.Is(err, kept) {
		t.Errorf("Lock(ForData) = %v, want the kept failure", err)
	}
	p.Unlock()
	if err := p.Lock(ForCollective, "test"); err != nil {
		t.Errorf("second forcing Lock = %v, want nil: the failure is returned once", err)
	}
	p.Unlock()
}
