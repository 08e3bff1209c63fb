package engine

import (
	"fmt"
	"math/bits"
	"testing"

	"github.com/goop2/op2/internal/core"
)

// grows is the number of times a queue first growing to depth n makes a
// block of slots: slotBlock slots, then doubling.
func grows(n int) int {
	g, have := 0, 0
	for have < n {
		have += max(have, slotBlock)
		g++
	}
	return g
}

// TestQueueGrowsInBlocks: a queue first growing to depth n allocates
// O(log n) times (blocks of slots and of their argument lists), not once
// per slot; refilled to that depth it allocates nothing.
func TestQueueGrowsInBlocks(t *testing.T) {
	s := &core.Storage{Name: "s"}
	for _, n := range []int{1, slotBlock, slotBlock + 1, 40, 1000, MaxRecordedLoops} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var p *Process
			fill := func() {
				for range n {
					record(p, s, nil)
				}
			}
			// Averaged over 10 growths: one run also counted what other
			// goroutines allocated meanwhile (21 once, for 17).
			first := testing.AllocsPerRun(10, func() {
				p = NewProcess(testAPI{})
				fill()
			})
			t.Logf("growing to %d slots: %v allocations", n, first)
			if raceEnabled {
				return // the detector allocates for itself: the full pass counts
			}
			// Each block (its slots with their argument lists) and
			// the longer slice of pointers; and the Process.
			if want := 2*grows(n) + 1; first > float64(want) {
				t.Errorf("growing to %d slots: %v allocations, want at most %d", n, first, want)
			}
			if limit := 2*(bits.Len(uint(n))+1) + 1; first > float64(limit) {
				t.Errorf("growing to %d slots: %v allocations, more than O(log n) (%d)", n, first, limit)
			}
			again := testing.AllocsPerRun(5, func() {
				for _, e := range p.queue.slots[:p.queue.n] {
					e.Release()
				}
				p.queue.n = 0
				fill()
			})
			if again != 0 {
				t.Errorf("refilling %d slots: %v allocations, want 0", n, again)
			}
		})
	}
}

// TestQueueSlotsKeepTheirPlace: a slot keeps its address as the queue
// grows (callers hold it while they fill it), and a slot whose loop
// passes more arguments than its room leaves its neighbour's alone.
func TestQueueSlotsKeepTheirPlace(t *testing.T) {
	a, b := &core.Storage{Name: "a"}, &core.Storage{Name: "b"}
	p := NewProcess(testAPI{})
	first := p.Slot()
	record(p, a, nil)
	record(p, b, nil)
	for range 3 * slotBlock {
		record(p, b, nil)
	}
	if p.queue.slots[0] != first {
		t.Fatalf("the first slot moved as the queue grew")
	}
	for range slotArgs + 3 {
		first.Loop.Args = append(first.Loop.Args, core.Arg{Data: a})
	}
	if got := p.queue.slots[1].Loop.Args; len(got) != 1 || got[0].Data != b {
		t.Errorf("the second slot's arguments became %v after the first's grew", got)
	}
	for i, e := range p.queue.slots[:p.queue.n] {
		if c := cap(e.Loop.Args); i > 0 && c != slotArgs {
			t.Errorf("slot %d has room for %d arguments, want %d", i, c, slotArgs)
		}
	}
}

// TestReleasedSlotKeepsNoData: a slot whose loop had more arguments than
// its room (slotArgs) keeps none of them once released, neither in the
// list append made nor in the room the first ones were bound into before
// they moved; a loop that fits the room is cleared there too.
func TestReleasedSlotKeepsNoData(t *testing.T) {
	for _, n := range []int{slotArgs - 1, slotArgs + 1, 2*slotArgs + 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			p := NewProcess(testAPI{})
			e := p.queue.slot()
			room := e.inline
			for k := range n {
				e.Loop.Args = append(e.Loop.Args, core.Arg{Data: &core.Storage{Name: fmt.Sprint("d", k)}})
			}
			p.queue.n++
			e.Release()
			for i, a := range room {
				if a.Data != nil {
					t.Errorf("the slot's room still holds argument %d (%s)", i, a.Data.Name)
				}
			}
			for i, a := range e.Loop.Args[:cap(e.Loop.Args)] {
				if a.Data != nil {
					t.Errorf("the slot's list still holds argument %d (%s)", i, a.Data.Name)
				}
			}
		})
	}
}
