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

// BenchmarkParLoopOverheadConsts is BenchmarkParLoopOverhead for a kernel
// that uses a few constants (a scalar and two arrays): every loop starts
// from their declared values, and a cached loop still allocates nothing.
func BenchmarkParLoopOverheadConsts(b *testing.B) {
	dt := must(op2.NewConst(1, []float64{0.5}, "bench_dt"))
	gam := must(op2.NewConst(3, []float64{1.4, 0.4, 2.5}, "bench_gam"))
	idx := must(op2.NewConst(4, []int32{0, 1, 2, 3}, "bench_idx"))
	defer dt.Remove()
	defer gam.Remove()
	defer idx.Remove()
	for _, backend := range allBackends {
		b.Run(backend, func(b *testing.B) {
			check(b, op2.Use(backend))
			defer op2.Use("sequential")
			set := must(op2.NewSet(1, "one"))
			x := must(op2.NewDat[float64](set, 1, nil, "x"))
			g := must(op2.NewGlobal[float64](1, nil, "g"))
			k := op2.NewKernel("void kc(double *x, double *g) { *x += bench_dt * bench_gam[bench_idx[1]]; *g += *x; }", "kc")
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
