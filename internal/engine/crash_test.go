package engine

import (
	"testing"

	_ "github.com/goop2/op2/internal/backend/sequential" // the backend opened
	"github.com/goop2/op2/internal/core"
)

// BenchmarkCrashHook measures what publishing a repeated loop to the crash
// handler adds to every loop run.
func BenchmarkCrashHook(b *testing.B) {
	p := NewProcess(nil)
	ob, err := NewRuntime(p).CurrentBackend()
	if err != nil {
		b.Fatal(err)
	}
	l := &core.Loop{Kernel: &core.Kernel{Name: "k"}, Set: &core.Set{Name: "s"}}
	b.ReportAllocs()
	for b.Loop() {
		func() {
			p.beginCrashReport(ob, l)
			defer p.endCrashReport()
		}()
	}
}

// TestCrashHookAllocatesNothing: publishing a repeated loop, or one of two
// alternating loops, allocates nothing.
func TestCrashHookAllocatesNothing(t *testing.T) {
	p := NewProcess(nil)
	ob, err := NewRuntime(p).CurrentBackend()
	if err != nil {
		t.Fatal(err)
	}
	l1 := &core.Loop{Kernel: &core.Kernel{Name: "k1"}, Set: &core.Set{Name: "edges"}}
	l2 := &core.Loop{Kernel: &core.Kernel{Name: "k2"}, Set: &core.Set{Name: "nodes"}}
	run := func() {
		for _, l := range []*core.Loop{l1, l2} {
			p.beginCrashReport(ob, l)
			p.endCrashReport()
		}
	}
	run()
	if a := testing.AllocsPerRun(100, run); a != 0 {
		t.Errorf("publishing two known loops allocates %v times", a)
	}
}

// TestTiledCrashNames: a tiled schedule names its loops' kernels and sets
// for a crash report, for each chain that shares it, and a repeated or
// alternating chain allocates nothing.
func TestTiledCrashNames(t *testing.T) {
	cells, edges := &core.Set{Name: "cells"}, &core.Set{Name: "edges"}
	mk := func(names ...string) (ls []*core.Loop) {
		for i, n := range names {
			set := cells
			if i == 1 {
				set = edges
			}
			ls = append(ls, &core.Loop{Kernel: &core.Kernel{Name: n, ID: core.NewID()}, Set: set})
		}
		return ls
	}
	a, b := mk("a1", "a2", "a3"), mk("b1", "b2")
	ts := &tiledSchedule{}
	for _, c := range []struct {
		loops         []*core.Loop
		kernels, sets string
	}{
		{a, "a1, a2 or a3 (a chain run in tiles)", "cells, edges"},
		{b, "b1 or b2 (a chain run in tiles)", "cells, edges"},
		{a, "a1, a2 or a3 (a chain run in tiles)", "cells, edges"},
	} {
		if k, s := ts.crashNames(c.loops); k != c.kernels || s != c.sets {
			t.Errorf("crashNames = %q, %q; want %q, %q", k, s, c.kernels, c.sets)
		}
	}
	if n := testing.AllocsPerRun(100, func() { ts.crashNames(a); ts.crashNames(b) }); n != 0 {
		t.Errorf("alternating chains allocate %v times a pair of runs, want 0", n)
	}
}
