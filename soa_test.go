package op2_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// TestDeviceLayoutSoA: with DeviceLayout "soa" the opencl backend stores a
// dim-3 Dat component by component on the device, kernels see the usual
// pointers, and host access (Data, Range, CopyTo) sees the values in
// element order; the results equal the sequential backend's.
func TestDeviceLayoutSoA(t *testing.T) {
	needBackend(t, "opencl")
	defer func() { check(t, op2.Configure(op2.Config{Backend: "sequential"})) }()
	_, err := op2.NewRuntime(op2.Config{Backend: "opencl", DeviceLayout: "columns"})
	wantErr(t, err, `unknown device layout "columns"`)

	edges, nodes, m := scatteredEdges(500, 200, 53, 7)
	x0 := iota32[float64](600)
	scale := op2.NewKernel("void soa_scale(double *x, const double *w) { x[0] *= 2; x[1] += x[2] * *w; x[2] = -x[2]; }", "soa_scale")
	flux := op2.NewKernel(`void soa_flux(const double *a, const double *b, double *ra, double *rb) {
	for (int k = 0; k < 3; k++) { ra[k] += 0.5 * (b[k] - a[k]); rb[k] -= 0.25 * (b[k] - a[k]); } }`, "soa_flux")
	type result struct {
		x, r, rng, cp []float64
		src           string
	}
	run := func(backend, layout string) result {
		check(t, op2.Configure(op2.Config{Backend: backend, DeviceLayout: layout}))
		x := must(op2.NewDat(nodes, 3, x0, "x"))
		w := must(op2.NewDat(nodes, 1, iota32[float64](200), "w"))
		r := must(op2.NewDat[float64](nodes, 3, nil, "r"))
		check(t, op2.ParLoop(scale, nodes, x.Arg(op2.RW), w.Arg(op2.Read)))
		lp := must(op2.NewLoop(flux, edges, x.ArgMap(op2.Read, m, 0), x.ArgMap(op2.Read, m, 1), r.ArgMap(op2.Inc, m, 0), r.ArgMap(op2.Inc, m, 1)))
		check(t, lp.Compute())
		var res result
		res.rng = must(r.Range(10, 5)) // from the device, component by component
		cp := must(op2.NewDat[float64](nodes, 3, nil, "cp"))
		check(t, r.CopyTo(cp))
		res.cp = cp.Data()
		res.x, res.r = x.Data(), r.Data()
		res.src = must(lp.Generate())
		return res
	}
	want := run("sequential", "")
	for _, scheme := range []string{"staged", "atomics"} {
		t.Run(scheme, func(t *testing.T) {
			t.Setenv("OP2_DEVICE_SCHEME", scheme)
			got := run("opencl", "soa")
			if !strings.Contains(got.src, "op2_stride") {
				t.Errorf("no strides in the source:\n%s", got.src)
			}
			if !slices.Equal(got.x, want.x) {
				t.Errorf("x differs from sequential")
			}
			for i := range want.r {
				if d := got.r[i] - want.r[i]; d > 1e-9 || d < -1e-9 {
					t.Fatalf("r[%d] = %g, sequential %g", i, got.r[i], want.r[i])
				}
			}
			if !slices.Equal(got.rng, got.r[30:45]) || !slices.Equal(got.cp, got.r) {
				t.Errorf("Range or CopyTo on the device differ from Data: %v vs %v", got.rng, got.r[30:45])
			}
		})
	}
}
