package op2_test

import (
	"testing"

	"github.com/goop2/op2"
)

// forcedModes are the two ways a loop runs in one process: at once (Lazy
// named off) and by default (on the host backends recorded, lazy mode,
// which a program that reads its data after every loop forces at each
// read). Check mode is named off in both, whatever OP2_CHECK says (it
// copies every READ argument per loop).
var forcedModes = []struct {
	name string
	cfg  func(backend string) op2.Config
}{
	{"eager", func(b string) op2.Config { return op2.Config{Backend: b}.Explicit("Lazy", "Check") }},
	{"default", func(b string) op2.Config { return op2.Config{Backend: b}.Explicit("Check") }},
}

// BenchmarkParLoopOverheadForced is BenchmarkParLoopOverhead for a
// program that reads its data after every loop (the reduction's value),
// eager and with the default configuration (lazy mode:
// each loop is recorded, then run by the read). The two should cost
// about the same per loop, and allocate nothing.
//
//	go test -run '^$' -bench ParLoopOverheadForced -count 5 .
func BenchmarkParLoopOverheadForced(b *testing.B) {
	for _, backend := range allBackends {
		for _, mode := range forcedModes {
			b.Run(backend+"/"+mode.name, func(b *testing.B) {
				r := must(op2.NewRuntime(mode.cfg(backend)))
				set := must(op2.NewSet(1, "one"))
				x := must(op2.NewDat[float64](set, 1, nil, "x"))
				g := must(op2.NewGlobal[float64](1, nil, "g"))
				k := op2.NewKernel("void k(double *x, double *g) { *x += 1; *g += *x; }", "k")
				check(b, r.ParLoop(k, set, x.Arg(op2.RW), g.Arg(op2.Inc)))
				check(b, readValue(g))
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := r.ParLoop(k, set, x.Arg(op2.RW), g.Arg(op2.Inc)); err != nil {
						b.Fatal(err)
					}
					if err := readValue(g); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// readValue reads g's value, which runs the loops recorded before it.
func readValue(g *op2.Global[float64]) error {
	_, err := g.ValueErr()
	return err
}

// TestRepeatedForcedLoopAllocatesNothing is TestRepeatedLoopAllocatesNothing
// for a program that reads its data after every loop, eager and with the
// default configuration (lazy mode: each loop recorded, then run by the
// read): neither allocates.
func TestRepeatedForcedLoopAllocatesNothing(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		edges, m, d, w := allocMesh()
		g := must(op2.NewGlobal[float64](1, nil, "g"))
		k := op2.NewKernel("void alloc_inc_g(const double *w, double *a, double *b, double *g) { *a += *w; *b += *w; *g += *w; }", "alloc_inc_g")
		for _, mode := range forcedModes {
			r := must(op2.NewRuntime(mode.cfg(op2.Backend())))
			run := func() {
				check(t, r.ParLoop(k, edges, w.Arg(op2.Read), d.ArgMap(op2.Inc, m, 0), d.ArgMap(op2.Inc, m, 1), g.Arg(op2.Inc)))
				check(t, readValue(g))
			}
			run()
			if n := op2.RecordedLoops(); n != 0 {
				t.Fatalf("%s: %d loops recorded after a read, want 0", mode.name, n)
			}
			if a := testing.AllocsPerRun(20, run); a != 0 {
				t.Errorf("%s: a repeated loop whose data is read after it allocates %v times per call, want 0", mode.name, a)
			}
		}
	})
}
