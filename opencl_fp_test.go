package op2_test

import (
	"math"
	"math/rand/v2"
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
