package op2_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// runOn runs kernel src (named name) over a set of len(in)/dimIn
// elements on backend, reading a Dat of dimIn values of in per element
// and writing one of dimOut, and returns what it wrote.
func runOn[T float32 | float64](t *testing.T, backend, src, name string, in []T, dimIn, dimOut int) []T {
	t.Helper()
	check(t, op2.Use(backend))
	defer op2.Use("sequential")
	set := must(op2.NewSet(len(in)/dimIn, "points"))
	x := must(op2.NewDat(set, dimIn, in, "x"))
	y := must(op2.NewDat[T](set, dimOut, nil, "y"))
	check(t, op2.ParLoop(op2.NewKernel(src, name), set, x.Arg(op2.Read), y.Arg(op2.Write)))
	return y.Data()
}

// TestDevicesDoNotContract: OpenCL C and CUDA may contract a*b+c into a
// fused multiply-add, which rounds once where C rounds twice; the device
// programs turn contraction off (OpenCL: FP_CONTRACT OFF; NVRTC:
// --fmad=false), as the host backends' flags do (-ffp-contract=off), so a
// product plus a term gives sequential's bits.
func TestDevicesDoNotContract(t *testing.T) {
	const n = 1000
	rng := rand.New(rand.NewPCG(1, 2))
	in := make([]float64, 3*n)
	for i := range in {
		in[i] = rng.Float64()*2 - 1
	}
	const src = "void muladd(const double *x, double *y) { y[0] = x[0]*x[1] + x[2]; }"
	want := runOn(t, "sequential", src, "muladd", in, 3, 1)
	for _, backend := range deviceBackends {
		t.Run(backend, func(t *testing.T) {
			needBackend(t, backend)
			got := runOn(t, backend, src, "muladd", in, 3, 1)
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("element %d: %s %v, sequential %v (a*b+c contracted?)", i, backend, got[i], want[i])
				}
			}
		})
	}
}

// minMaxGlobals runs *lo = MIN(*lo, *c), *hi = MAX(*hi, *c) over the
// values c on backend, with lo and hi starting at lo0 and hi0, and
// returns them.
func minMaxGlobals(t *testing.T, backend string, c []float64, lo0, hi0 float64) (float64, float64) {
	t.Helper()
	check(t, op2.Use(backend))
	defer op2.Use("sequential")
	set := must(op2.NewSet(len(c), "s"))
	cd := must(op2.NewDat(set, 1, c, "c"))
	lo := must(op2.NewGlobal(1, []float64{lo0}, "lo"))
	hi := must(op2.NewGlobal(1, []float64{hi0}, "hi"))
	k := op2.NewKernel("void minmax(const double *c, double *lo, double *hi) { *lo = MIN(*lo, *c); *hi = MAX(*hi, *c); }", "minmax")
	check(t, op2.ParLoop(k, set, cd.Arg(op2.Read), lo.Arg(op2.Min), hi.Arg(op2.Max)))
	return lo.Value(), hi.Value()
}

// TestDeviceMinMaxCombinesAsHost: the devices combine the partial
// results of a Global MIN or MAX as the host backends do (if (v < g) g =
// v), in their work groups and on the host: a NaN partial result leaves
// the Global as it was, and of -0 and +0 the one already there stays.
func TestDeviceMinMaxCombinesAsHost(t *testing.T) {
	nan, negz := math.NaN(), math.Copysign(0, -1)
	fill := func(n int, v float64) []float64 {
		c := make([]float64, n)
		for i := range c {
			c[i] = v
		}
		return c
	}
	cases := []struct {
		name     string
		c        []float64
		lo0, hi0 float64
	}{
		{"NaN candidates", fill(1000, nan), 1, 1},
		{"-0 into +0", fill(1000, negz), 0, 0},
		{"+0 into -0", fill(1000, 0), negz, negz},
		// Each element has its own work item: the first item's NaN
		// must not hide the second's value in the work group's combine.
		{"NaN then a value", []float64{nan, 0.5}, 1, 1},
	}
	same := func(a, b float64) bool {
		return math.IsNaN(a) && math.IsNaN(b) || math.Float64bits(a) == math.Float64bits(b)
	}
	for _, backend := range deviceBackends {
		t.Run(backend, func(t *testing.T) {
			needBackend(t, backend)
			for _, c := range cases {
				wantLo, wantHi := minMaxGlobals(t, "sequential", c.c, c.lo0, c.hi0)
				lo, hi := minMaxGlobals(t, backend, c.c, c.lo0, c.hi0)
				if !same(lo, wantLo) || !same(hi, wantHi) {
					t.Errorf("%s: %s gives (%v, %v), sequential (%v, %v)", c.name, backend, lo, hi, wantLo, wantHi)
				}
			}
		})
	}
}

// floatMath are calls of math.h's and stdlib.h's float (and other)
// forms that OpenCL C lacks under their C names, with a in [0.05, 0.95)
// and b in [1.05, 1.95): exact ones, whose result is one rounding of
// the exact value (or none), and others, within a few float ulps.
var floatMath = []struct {
	c     string
	exact bool
}{
	{"sqrtf(b)", true}, {"fabsf(-a)", true}, {"floorf(b * 3)", true}, {"ceilf(b * 3)", true},
	{"roundf(b * 3)", true}, {"truncf(-b * 3)", true}, {"rintf(b * 3)", true}, {"nearbyintf(b * 3)", true},
	{"nearbyint(b * 3)", true}, {"fminf(a, b)", true}, {"fmaxf(a, b)", true}, {"fmodf(b, a)", true},
	{"copysignf(a, -b)", true}, {"fdimf(b, a)", true}, {"fmaf(a, b, -a)", true}, {"ldexpf(a, 3)", true},
	{"remainderf(b, a)", true}, {"lroundf(b * 3)", true}, {"lround(b * 3)", true}, {"llroundf(b * 3)", true},
	{"lrintf(b * 3)", true}, {"labs(-7L)", true}, {"llabs(-7LL)", true}, {"abs(2) - abs(5)", true},
	{"labs(2L) - labs(5L)", true}, {"nextafterf(a, b)", true},
	{"expf(a)", false}, {"powf(b, a)", false}, {"sinf(a)", false}, {"cosf(a)", false}, {"tanf(a)", false},
	{"logf(b)", false}, {"log10f(b)", false}, {"log2f(b)", false}, {"exp2f(a)", false}, {"hypotf(a, b)", false},
	{"atan2f(a, b)", false}, {"atanf(a)", false}, {"asinf(a)", false}, {"acosf(a)", false}, {"sinhf(a)", false},
	{"coshf(a)", false}, {"tanhf(a)", false}, {"cbrtf(b)", false}, {"erff(a)", false}, {"erfcf(a)", false},
	{"tgammaf(b)", false}, {"lgammaf(b)", false}, {"expm1f(a)", false}, {"log1pf(a)", false},
}

// TestOpenCLFloatMath: the float forms of the math.h functions (and
// nearbyint, lround, labs, llabs) run on opencl, where OpenCL C has them
// only as built-ins overloaded for float, and give sequential's values
// on float32 Dats: the exact ones bit for bit, the others within 4 ulps;
// abs, labs and llabs return signed values, as in C.
func TestOpenCLFloatMath(t *testing.T) {
	needBackend(t, "opencl")
	var body strings.Builder
	for i, f := range floatMath {
		fmt.Fprintf(&body, "  y[%d] = (float)(%s);\n", i, f.c)
	}
	src := "#include <math.h>\n#include <stdlib.h>\nvoid fmath(const float *x, float *y) {\n  const float a = x[0], b = x[1];\n" + body.String() + "}"
	const n = 10
	in := make([]float32, 2*n)
	for i := 0; i < n; i++ {
		in[2*i], in[2*i+1] = 0.05+0.09*float32(i), 1.05+0.09*float32(i)
	}
	want := runOn(t, "sequential", src, "fmath", in, 2, len(floatMath))
	got := runOn(t, "opencl", src, "fmath", in, 2, len(floatMath))
	for i := 0; i < n; i++ {
		for j, f := range floatMath {
			g, w := got[i*len(floatMath)+j], want[i*len(floatMath)+j]
			ulps := math.Abs(float64(math.Float32bits(g)) - float64(math.Float32bits(w)))
			if f.exact && math.Float32bits(g) != math.Float32bits(w) || !f.exact && (math.Signbit(float64(g)) != math.Signbit(float64(w)) || ulps > 4) {
				t.Errorf("%s with a=%g b=%g: opencl %v, sequential %v", f.c, in[2*i], in[2*i+1], g, w)
			}
		}
	}
}

// TestOpenCLOwnFunctionNamedLikeFloatMath: a kernel that defines its own
// function named like a float math function keeps it on opencl.
func TestOpenCLOwnFunctionNamedLikeFloatMath(t *testing.T) {
	requireDevice(t)
	set := must(op2.NewSet(4, "s"))
	x := must(op2.NewDat(set, 1, []float32{1, 2, 3, 4}, "x"))
	src := "static float fdimf(float a, float b) { return a * b; }\n#define TWICE(v) fdimf(v, 2)\nvoid k(float *x) { *x = TWICE(*x) + fdimf(*x, 1); }"
	check(t, op2.ParLoop(op2.NewKernel(src, "k"), set, x.Arg(op2.RW)))
	if got := x.Data(); !slices.Equal(got, []float32{3, 6, 9, 12}) {
		t.Errorf("x = %v, want [3 6 9 12]", got)
	}
}

// TestOpenCLFloatMathUnderLocals: a kernel's local named like the
// built-in a mapped function calls (round for lround, sqrt for sqrtf,
// rint for nearbyint) does not hide it: the mapping calls it at file
// scope. Results equal sequential's.
func TestOpenCLFloatMathUnderLocals(t *testing.T) {
	requireDevice(t)
	for _, src := range []string{
		"void mm(const double *x, double *y) { double round = x[0]*2; y[0] = (double)lround(x[0]) + round; }",
		"void mm(const double *x, double *y) { float sqrt = 2; y[0] = sqrtf(x[0]) + sqrt; }",
		"void mm(const double *x, double *y) { double rint = 1; y[0] = nearbyint(x[0]) + rint; }",
	} {
		run := func(backend string) []float64 {
			check(t, op2.Use(backend))
			s := must(op2.NewSet(4, "s"))
			x := must(op2.NewDat(s, 1, []float64{0.5, 1.5, 2.25, 7.75}, "x"))
			y := must(op2.NewDat[float64](s, 1, nil, "y"))
			check(t, op2.ParLoop(op2.NewKernel(src, "mm"), s, x.Arg(op2.Read), y.Arg(op2.Write)))
			return y.DataRO()
		}
		want, got := run("sequential"), run("opencl")
		if !slices.Equal(got, want) {
			t.Errorf("%s\nopencl %v, sequential %v", src, got, want)
		}
	}
}
