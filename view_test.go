package op2_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// viewVariants are the ways of running loops the DatView tests compare:
// every backend here, the openmp schemes, and the opencl and cuda
// schemes and device layouts.
func viewVariants() []op2.Config {
	var out []op2.Config
	for _, b := range allBackends {
		switch b {
		case "openmp":
			out = append(out, op2.Config{Backend: b, OpenMPScheme: "owner"}, op2.Config{Backend: b, OpenMPScheme: "colour"})
		case "opencl", "cuda":
			for _, scheme := range []string{"staged", "atomics"} {
				for _, layout := range []string{"aos", "soa"} {
					out = append(out, op2.Config{Backend: b, DeviceScheme: scheme, DeviceLayout: layout})
				}
			}
		default:
			out = append(out, op2.Config{Backend: b})
		}
	}
	return out
}

func variantName(c op2.Config) string {
	parts := slices.DeleteFunc([]string{c.Backend, c.OpenMPScheme, c.DeviceScheme, c.DeviceLayout}, func(s string) bool { return s == "" })
	return strings.Join(parts, "-")
}

// viewKernels are the loops of the DatView conformance test, each run
// once on views of a dim-3 Dat and once on three Dats of dim 1 holding
// the same values. Every value stays a small multiple of 1/4, so sums
// are exact in any order.
var viewKernels = struct {
	scale, copyc, flux, gather, minmax, relax *op2.Kernel
}{
	scale:  op2.NewKernel("void v_scale(double *x, const double *w) { x[0] = 2 * x[0] + *w; }", "v_scale"),
	copyc:  op2.NewKernel("void v_copy(const double *a, double *b) { *b = 3 * *a - 1; }", "v_copy"),
	flux:   op2.NewKernel("void v_flux(const double *w, const double *a, const double *b, double *ra, double *rb) { *ra += *w + *b; *rb -= 0.5 * *a; }", "v_flux"),
	gather: op2.NewKernel("void v_gather(const double **x, double *r, double **s) { *r = x[0][0] - x[1][0]; s[0][0] += 0.25; s[1][0] += *r; }", "v_gather"),
	minmax: op2.NewKernel("void v_minmax(const double *w, double *lo, double *hi) { if (*w < *lo) *lo = *w; if (*w > *hi) *hi = *w; }", "v_minmax"),
	relax:  op2.NewKernel("void v_relax(double *t) { *t = 0.5 * *t + 1; }", "v_relax"),
}

// TestDatViewConformance: loops passing single components of a Dat of
// dim 3 (DatView) directly, through a map column and through a whole map,
// with READ, WRITE, RW, INC, MIN and MAX, two components of one Dat in
// one loop (one read, one modified), give on every backend, scheme and
// layout the values the same loops give on three Dats of dim 1; the
// components a loop does not pass keep their values.
func TestDatViewConformance(t *testing.T) {
	defer func() { check(t, op2.Configure(op2.Config{Backend: "sequential"})) }()
	ne, nn := 600, 200
	if testing.Short() {
		ne, nn = 240, 80
	}
	edges, nodes, m := scatteredEdges(ne, nn, 37, 5)
	q0 := make([]float64, 3*nn)
	for i := range q0 {
		q0[i] = float64((i*7)%23) / 4
	}
	we := make([]float64, ne)
	for i := range we {
		we[i] = float64(i%11) / 2
	}
	// run applies the loops to the three components, reached by
	// arg(c) (an argument maker for component c).
	type comps interface {
		arg(c int, acc op2.Access) op2.Arg
		argMap(c int, acc op2.Access, m *op2.Map, idx int) op2.Arg
		argVec(c int, acc op2.Access, m *op2.Map) op2.Arg
	}
	run := func(t *testing.T, q comps) {
		w := must(op2.NewDat(edges, 1, we, "w"))
		wn := must(op2.NewDat(nodes, 1, q0[:nn], "wn"))
		check(t, op2.ParLoop(viewKernels.scale, nodes, q.arg(1, op2.RW), wn.Arg(op2.Read)))
		check(t, op2.ParLoop(viewKernels.copyc, nodes, q.arg(0, op2.Read), q.arg(2, op2.Write)))
		check(t, op2.ParLoop(viewKernels.flux, edges, w.Arg(op2.Read), q.argMap(0, op2.Read, m, 0), q.argMap(2, op2.Read, m, 1),
			q.argMap(1, op2.Inc, m, 0), q.argMap(1, op2.Inc, m, 1)))
		check(t, op2.ParLoop(viewKernels.gather, edges, q.argVec(1, op2.Read, m), w.Arg(op2.Write), q.argVec(0, op2.Inc, m)))
		check(t, op2.ParLoop(viewKernels.minmax, edges, w.Arg(op2.Read), q.argMap(2, op2.Min, m, 0), q.argMap(1, op2.Max, m, 1)))
		check(t, op2.ParLoop(viewKernels.relax, edges, q.argMap(0, op2.RW, m, 1)))
	}
	// The reference: three Dats of dim 1 on the sequential backend.
	check(t, op2.Configure(op2.Config{Backend: "sequential"}))
	sep := splitDats(nodes, q0, 3)
	run(t, sep)
	want := sep.joined()

	for _, cfg := range viewVariants() {
		t.Run(variantName(cfg), func(t *testing.T) {
			check(t, op2.Configure(cfg))
			q := must(op2.NewDat(nodes, 3, q0, "q"))
			run(t, viewsOf(q))
			if got := q.Data(); !slices.Equal(got, want) {
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("q[%d] (node %d, component %d) = %g, %g on Dats of dim 1", i, i/3, i%3, got[i], want[i])
					}
				}
			}
			if !testing.Short() {
				// The same loops on Dats of dim 1, on this backend.
				other := splitDats(nodes, q0, 3)
				run(t, other)
				if got := other.joined(); !slices.Equal(got, want) {
					t.Fatalf("Dats of dim 1 on %s differ from sequential", variantName(cfg))
				}
			}
			v := must(q.View(2))
			if got := v.DataRO(); !slices.Equal(got, column(want, 3, 2)) {
				t.Errorf("View(2).DataRO = %v, want %v", got[:5], column(want, 3, 2)[:5])
			}
		})
	}
}

// viewSet passes the components of one Dat through its views.
type viewSet []*op2.DatView[float64]

func viewsOf(d *op2.Dat[float64]) viewSet {
	var vs viewSet
	for c := range d.Dim() {
		vs = append(vs, must(d.View(c)))
	}
	return vs
}

func (vs viewSet) arg(c int, acc op2.Access) op2.Arg { return vs[c].Arg(acc) }
func (vs viewSet) argMap(c int, acc op2.Access, m *op2.Map, idx int) op2.Arg {
	return vs[c].ArgMap(acc, m, idx)
}
func (vs viewSet) argVec(c int, acc op2.Access, m *op2.Map) op2.Arg { return vs[c].ArgVec(acc, m) }

// datSet passes the components as Dats of dim 1.
type datSet []*op2.Dat[float64]

func splitDats(set *op2.Set, values []float64, dim int) datSet {
	var ds datSet
	for c := range dim {
		ds = append(ds, must(op2.NewDat(set, 1, column(values, dim, c), fmt.Sprintf("q%d", c))))
	}
	return ds
}

func (ds datSet) arg(c int, acc op2.Access) op2.Arg { return ds[c].Arg(acc) }
func (ds datSet) argMap(c int, acc op2.Access, m *op2.Map, idx int) op2.Arg {
	return ds[c].ArgMap(acc, m, idx)
}
func (ds datSet) argVec(c int, acc op2.Access, m *op2.Map) op2.Arg { return ds[c].ArgVec(acc, m) }

func (ds datSet) joined() []float64 {
	var cols [][]float64
	for _, d := range ds {
		cols = append(cols, d.Data())
	}
	out := make([]float64, len(cols[0])*len(ds))
	for e := range cols[0] {
		for c := range ds {
			out[e*len(ds)+c] = cols[c][e]
		}
	}
	return out
}

// column is component c of values of dim dim.
func column(values []float64, dim, c int) []float64 {
	out := make([]float64, len(values)/dim)
	for e := range out {
		out[e] = values[e*dim+c]
	}
	return out
}
