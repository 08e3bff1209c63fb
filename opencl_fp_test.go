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
