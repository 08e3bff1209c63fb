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
