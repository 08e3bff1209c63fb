package op2_test

import (
	"testing"

	"github.com/goop2/op2"
)

// BenchmarkParLoopOverhead measures the host cost of one cached par_loop on
// a one-element set: validation, cache lookup, argument binding and the call
// into the compiled wrapper (on opencl: the kernel launch, and reading back
// the reduction's partial result).
func BenchmarkParLoopOverhead(b *testing.B) {
	for _, backend := range allBackends {
		b.Run(backend, func(b *testing.B) {
			check(b, op2.Use(backend))
			defer op2.Use("sequential")
			set := must(op2.NewSet(1, "one"))
			x := must(op2.NewDat[float64](set, 1, nil, "x"))
			g := must(op2.NewGlobal[float64](1, nil, "g"))
			k := op2.NewKernel("void k(double *x, double *g) { *x += 1; *g += *x; }", "k")
			check(b, op2.ParLoop(k, set, x.Arg(op2.RW), g.Arg(op2.Inc)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := op2.ParLoop(k, set, x.Arg(op2.RW), g.Arg(op2.Inc)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
