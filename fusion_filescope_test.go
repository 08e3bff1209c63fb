package op2_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// TestFusionKeepsFileScope: what one kernel's source sets for the code
// after it (a pragma, wherever it stands, a header that turns calls into
// macros, a macro a header reads, compiler options, a file-scope static
// of the same name) does not reach another kernel when their loops are
// fused, __func__ names each kernel with its type, and a fallback
// #define of a header's macro is not taken: fused chains give eager
// execution's bits (scalar). Fused into one file, each case changed the
// second kernel's results.
func TestFusionKeepsFileScope(t *testing.T) {
	for _, c := range []struct {
		name, a, b string
		fuses      bool // the loops still fuse (else they run apart)
	}{
		{"pragma pack",
			"#pragma pack(1)\nvoid %[1]s(double *x) { x[0] = x[0] + 0.0; }",
			"typedef struct { float a; double b; } %[1]s_pair;\nvoid %[1]s(const double *x, double *y) { y[0] = (double)sizeof(%[1]s_pair) + x[0]; }", false},
		{"optimize pragma",
			"#pragma GCC optimize(\"fast-math\")\nvoid %[1]s(double *x) { x[0] = x[0] * 1.0; }",
			"void %[1]s(const double *x, double *y) { y[0] = (x[0] + 1e16) - 1e16; }", false},
		{"tgmath",
			"#include <tgmath.h>\nvoid %[1]s(double *x) { x[0] = fabs(x[0]); }",
			"#include <math.h>\nvoid %[1]s(const double *x, double *y) { float f = (float)x[0]; y[0] = cos(f); }", false},
		{"NDEBUG",
			"#include <assert.h>\nvoid %[1]s(double *x) { assert((x[0] = x[0] + 1) > -1e300); }",
			"#define NDEBUG\n#include <assert.h>\nvoid %[1]s(const double *x, double *y) { assert(x[0] > 1e300); y[0] = x[0]; }", false},
		{"__func__",
			"void %[1]s(double *x) { x[0] = x[0] + 0.0; }",
			"void %[1]s(const double *x, double *y) { y[0] = x[0] + sizeof(__func__) + sizeof(__FUNCTION__) + _Generic(__func__, const char *: 1, char *: 2, default: 3); }", true},
		{"pragma after a struct",
			"#pragma pack(1)\nvoid %[1]s(double *x) { x[0] = x[0] + 0.0; }",
			"typedef struct { float a; double b; } %[1]s_pair;\n#pragma pack(1)\nvoid %[1]s(const double *x, double *y) { y[0] = (double)sizeof(%[1]s_pair) + x[0]; }", false},
		{"static of one name",
			"static double fs_acc;\nvoid %[1]s(double *x) { fs_acc = x[0]; x[0] = x[0] + 0.0; }",
			"static double fs_acc;\nvoid %[1]s(const double *x, double *y) { y[0] = x[0] + fs_acc; }", false},
		{"a static helper and a prototype of its name",
			"static int isalpha(int c) { return 7; }\nvoid %[1]s(double *x) { x[0] = x[0] + 0*isalpha(1); }",
			"int isalpha(int);\nvoid %[1]s(const double *x, double *y) { y[0] = x[0] + isalpha(65); }", false},
		{"members of one name",
			"struct fs_pa { double v; };\nvoid %[1]s(double *x) { struct fs_pa p = {x[0]}; x[0] = p.v; }",
			"struct fs_pb { double v; };\nvoid %[1]s(const double *x, double *y) { struct fs_pb p = {x[0]}; y[0] = p.v; }", true},
		{"tables of one type",
			"static const int32_t fs_ta[2] = {1, 2};\nvoid %[1]s(double *x) { x[0] = x[0] * fs_ta[0]; }",
			"static const int32_t fs_tb[2] = {1, 2};\nvoid %[1]s(const double *x, double *y) { y[0] = x[0] * fs_tb[1]; }", true},
		{"fallback of a header's macro",
			"void %[1]s(double *x) { x[0] = x[0] + 0.0; }",
			"#ifndef M_PI\n#define M_PI 3.0\n#endif\nvoid %[1]s(const double *x, double *y) { y[0] = x[0] * M_PI; }", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var want []float64
			for _, cfg := range []op2.Config{op2.Config{Lazy: false, SIMD: "off"}.Explicit("Lazy"), {Fusion: "on", Timing: true}} {
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
				fused := false
				for _, lt := range r.Timings() {
					fused = fused || strings.HasPrefix(lt.Kernel, "fused_")
				}
				if cfg.Timing && fused != c.fuses {
					t.Errorf("fused: %v, want %v", fused, c.fuses)
				}
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
