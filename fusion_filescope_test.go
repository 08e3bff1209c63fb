package op2_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/goop2/op2"
)

// TestFusionKeepsFileScope: what one kernel's source sets for the code
// after it (a pragma, a header that turns calls into macros, a macro a
// header reads, compiler options) does not reach another kernel when
// their loops are fused, and __func__ names each kernel: fused chains
// give eager execution's bits. Fused into one file, each case changed
// the second kernel's results.
func TestFusionKeepsFileScope(t *testing.T) {
	for _, c := range []struct{ name, a, b string }{
		{"pragma pack",
			"#pragma pack(1)\nvoid %[1]s(double *x) { x[0] = x[0] + 0.0; }",
			"typedef struct { float a; double b; } %[1]s_pair;\nvoid %[1]s(const double *x, double *y) { y[0] = (double)sizeof(%[1]s_pair) + x[0]; }"},
		{"optimize pragma",
			"#pragma GCC optimize(\"fast-math\")\nvoid %[1]s(double *x) { x[0] = x[0] * 1.0; }",
			"void %[1]s(const double *x, double *y) { y[0] = (x[0] + 1e16) - 1e16; }"},
		{"tgmath",
			"#include <tgmath.h>\nvoid %[1]s(double *x) { x[0] = fabs(x[0]); }",
			"#include <math.h>\nvoid %[1]s(const double *x, double *y) { float f = (float)x[0]; y[0] = cos(f); }"},
		{"NDEBUG",
			"#include <assert.h>\nvoid %[1]s(double *x) { assert((x[0] = x[0] + 1) > -1e300); }",
			"#define NDEBUG\n#include <assert.h>\nvoid %[1]s(const double *x, double *y) { assert(x[0] > 1e300); y[0] = x[0]; }"},
		{"__func__",
			"void %[1]s(double *x) { x[0] = x[0] + 0.0; }",
			"void %[1]s(const double *x, double *y) { y[0] = x[0] + sizeof(__func__) + sizeof(__FUNCTION__); }"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var want []float64
			for _, cfg := range []op2.Config{op2.Config{Lazy: false}.Explicit("Lazy"), {Fusion: "on"}} {
				r := closeAtEnd(t, must(op2.NewRuntime(cfg)))
				set := must(op2.NewSet(16, "fs_cells"))
				x := must(op2.NewDat(set, 1, iota32[float64](16), "x"))
				y := must(op2.NewDat[float64](set, 1, nil, "y"))
				ka := op2.NewKernel(fmt.Sprintf(c.a, "fs_a"), "fs_a")
				kb := op2.NewKernel(fmt.Sprintf(c.b, "fs_b"), "fs_b")
				check(t, r.Chain(func() error {
					check(t, r.ParLoop(ka, set, x.Arg(op2.RW)))
					return r.ParLoop(kb, set, x.Arg(op2.Read), y.Arg(op2.Write))
				}))
				got := y.DataRO()
				if want == nil {
					want = append([]float64(nil), got...)
					continue
				}
				for i := range want {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("fused: y[%d] = %v, eager %v", i, got[i], want[i])
					}
				}
			}
		})
	}
}
