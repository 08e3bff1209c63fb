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

// TestDeviceLayoutPerDat: with the soa layout, a loop that cannot read a
// Dat structure-of-arrays (here a vector argument of 2 × 80 doubles, above
// the 1 KiB of a private copy) is not refused: that Dat is stored element
// by element from then on, its values carried over from its
// structure-of-arrays copy, while a Dat of the same shape that no such loop
// reads stays structure-of-arrays. Loops of the same shape on either, and
// CopyTo between them, give the sequential backend's values.
func TestDeviceLayoutPerDat(t *testing.T) {
	needBackend(t, "opencl")
	defer func() { check(t, op2.Configure(op2.Config{Backend: "sequential"})) }()
	const dim = 80
	edges, nodes, m := scatteredEdges(300, 100, 37, 5)
	scale := op2.NewKernel("void pd_scale(double *x) { for (int k = 0; k < 80; k++) x[k] = 0.5 * x[k] + k; }", "pd_scale")
	gather := op2.NewKernel(`void pd_gather(const double **x, double *r0, double *r1) {
	for (int k = 0; k < 80; k++) { *r0 += x[1][k] - x[0][k]; *r1 += x[0][k] * 1e-3; } }`, "pd_gather")
	type result struct {
		big, twin, r, cp, cp2 []float64
		srcBig, srcTwin       string
	}
	run := func(backend string) result {
		check(t, op2.Configure(op2.Config{Backend: backend, DeviceLayout: "soa", DeviceScheme: "atomics"}))
		big := must(op2.NewDat(nodes, dim, iota32[float64](dim*100), "big"))
		twin := must(op2.NewDat(nodes, dim, iota32[float64](dim*100), "twin"))
		r := must(op2.NewDat[float64](nodes, 1, nil, "r"))
		for _, d := range []*op2.Dat[float64]{big, twin} {
			check(t, op2.ParLoop(scale, nodes, d.Arg(op2.RW)))
		}
		check(t, op2.ParLoop(gather, edges, big.ArgVec(op2.Read, m), r.ArgMap(op2.Inc, m, 0), r.ArgMap(op2.Inc, m, 1)))
		for _, d := range []*op2.Dat[float64]{big, twin} {
			check(t, op2.ParLoop(scale, nodes, d.Arg(op2.RW)))
		}
		cp := must(op2.NewDat[float64](nodes, dim, nil, "cp"))
		check(t, big.CopyTo(cp))
		cp2 := must(op2.NewDat[float64](nodes, dim, nil, "cp2"))
		check(t, twin.CopyTo(cp2))
		check(t, op2.ParLoop(scale, nodes, cp.Arg(op2.RW)))
		check(t, cp2.CopyTo(big))
		res := result{big: big.Data(), twin: twin.Data(), r: r.Data(), cp: cp.Data(), cp2: cp2.Data()}
		res.srcBig = must(must(op2.NewLoop(scale, nodes, big.Arg(op2.RW))).Generate())
		res.srcTwin = must(must(op2.NewLoop(scale, nodes, twin.Arg(op2.RW))).Generate())
		return res
	}
	want := run("sequential")
	got := run("opencl")
	if strings.Contains(got.srcBig, "op2_stride") || !strings.Contains(got.srcTwin, "op2_stride") {
		t.Errorf("the same loop on big should read it element by element, on twin structure-of-arrays:\n%s\n%s", got.srcBig, got.srcTwin)
	}
	for _, c := range []struct {
		name      string
		got, want []float64
	}{{"big", got.big, want.big}, {"twin", got.twin, want.twin}, {"cp", got.cp, want.cp}, {"cp2", got.cp2, want.cp2}} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s differs from sequential", c.name)
		}
	}
	for i := range want.r {
		if d := got.r[i] - want.r[i]; d > 1e-9 || d < -1e-9 {
			t.Fatalf("r[%d] = %g, sequential %g", i, got.r[i], want.r[i])
		}
	}
}
