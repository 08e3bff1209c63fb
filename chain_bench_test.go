package op2_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/goop2/op2"
)

// BenchmarkChainOverhead measures the host cost per loop of the loop of
// BenchmarkParLoopOverhead run at once ("eager"), recorded in lazy mode
// and run by Wait one at a time ("lazy-1"), and recorded in batches of 16
// before Wait runs them ("lazy-16"): what recording and forcing add to a
// loop (ns/op is per loop). "fused-16" alternates it with a second loop
// over the set that fuses with it (Config.Fusion "on"): 8 fused loops per
// batch, so the checks and the fused loop's lookup are counted too.
func BenchmarkChainOverhead(b *testing.B) {
	for _, backend := range hostBackends {
		for _, batch := range []int{0, 1, 16, -16} {
			name := backend + "/eager"
			switch {
			case batch > 0:
				name = fmt.Sprintf("%s/lazy-%d", backend, batch)
			case batch < 0:
				name = fmt.Sprintf("%s/fused-%d", backend, -batch)
			}
			b.Run(name, func(b *testing.B) {
				fusion := "off"
				if batch < 0 {
					fusion, batch = "on", -batch
				}
				r := must(op2.NewRuntime(op2.Config{Backend: backend, Lazy: batch > 0, Fusion: fusion}.Explicit("Lazy")))
				set := must(op2.NewSet(1, "one"))
				x := must(op2.NewDat[float64](set, 1, nil, "x"))
				y := must(op2.NewDat[float64](set, 1, nil, "y"))
				g := must(op2.NewGlobal[float64](1, nil, "g"))
				k := op2.NewKernel("void k(double *x, double *g) { *x += 1; *g += *x; }", "k")
				// k2 only reads what k modifies: the pair fuses (fuse.Check).
				k2 := op2.NewKernel("void k2(const double *x, double *y) { *y = *x * 0.5; }", "k2")
				r.EnableTiming(fusion == "on")
				check(b, r.ParLoop(k, set, x.Arg(op2.RW), g.Arg(op2.Inc)))
				check(b, r.ParLoop(k2, set, x.Arg(op2.Read), y.Arg(op2.Write)))
				check(b, r.Wait())
				if fusion == "on" && !slices.ContainsFunc(r.Timings(), func(lt op2.LoopTiming) bool { return lt.Kernel == "fused_k_k2" }) {
					b.Fatalf("the loops did not fuse: %+v", r.Timings())
				}
				r.EnableTiming(false)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					var err error
					if fusion == "on" && i%2 == 1 {
						err = r.ParLoop(k2, set, x.Arg(op2.Read), y.Arg(op2.Write))
					} else {
						err = r.ParLoop(k, set, x.Arg(op2.RW), g.Arg(op2.Inc))
					}
					if err != nil {
						b.Fatal(err)
					}
					if batch > 0 && (i+1)%batch == 0 {
						if err := r.Wait(); err != nil {
							b.Fatal(err)
						}
					}
				}
				check(b, r.Wait())
			})
		}
	}
}
