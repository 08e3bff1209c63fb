package op2

import (
	"testing"

	"github.com/goop2/op2/internal/core"
)

// BenchmarkCrashHook measures what publishing a repeated loop to the crash
// handler adds to every loop run.
func BenchmarkCrashHook(b *testing.B) {
	rt.proc.mu.Lock()
	defer rt.proc.mu.Unlock()
	ob, err := rt.currentBackend()
	if err != nil {
		b.Fatal(err)
	}
	l := &core.Loop{Kernel: &core.Kernel{Name: "k"}, Set: &core.Set{Name: "s"}}
	b.ReportAllocs()
	for b.Loop() {
		func() {
			beginCrashReport(ob, l)
			defer endCrashReport()
		}()
	}
}

// TestCrashHookAllocatesNothing: publishing a repeated loop, or one of two
// alternating loops, allocates nothing.
func TestCrashHookAllocatesNothing(t *testing.T) {
	rt.proc.mu.Lock()
	defer rt.proc.mu.Unlock()
	ob, err := rt.currentBackend()
	if err != nil {
		t.Fatal(err)
	}
	l1 := &core.Loop{Kernel: &core.Kernel{Name: "k1"}, Set: &core.Set{Name: "edges"}}
	l2 := &core.Loop{Kernel: &core.Kernel{Name: "k2"}, Set: &core.Set{Name: "nodes"}}
	run := func() {
		for _, l := range []*core.Loop{l1, l2} {
			beginCrashReport(ob, l)
			endCrashReport()
		}
	}
	run()
	if a := testing.AllocsPerRun(100, run); a != 0 {
		t.Errorf("publishing two known loops allocates %v times", a)
	}
}
