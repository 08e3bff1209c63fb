package op2_test

import (
	"errors"
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

// shortViewVariants are the variants TestDatViewConformance runs with
// -short: the conformance suite (internal/backendtest) runs DatViews on
// every backend, scheme and layout already.
var shortViewVariants = []string{"sequential", "openmp-colour", "opencl-staged-soa", "cuda-staged-soa"}

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
		name := variantName(cfg)
		if testing.Short() && !slices.Contains(shortViewVariants, name) {
			continue // the conformance suite's DatViews runs the others
		}
		t.Run(name, func(t *testing.T) {
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

// TestDatViewErrors: a component out of range is refused by View, and
// loops passing views in combinations whose result would depend on the
// backend are refused with a *LoopError naming both arguments, before
// anything runs; views of different components of one Dat may be
// modified together, and a view and its whole Dat may be read together.
func TestDatViewErrors(t *testing.T) {
	edges, nodes, m := scatteredEdges(40, 20, 3, 2)
	q := must(op2.NewDat(nodes, 3, iota32[float64](60), "q"))
	for _, c := range []int{-1, 3} {
		_, err := q.View(c)
		wantErr(t, err, fmt.Sprintf("component %d is out of range [0, 3)", c), `dat "q"`)
	}
	_, err := (*op2.Dat[float64])(nil).View(0)
	wantErr(t, err, "the dat is nil")
	v0, v1 := must(q.View(0)), must(q.View(1))
	if v1.Name() != "q[1]" || v1.Dim() != 1 || v1.Component() != 1 || v1.Dat() != q || v1.Set() != nodes {
		t.Errorf("view: name %q dim %d component %d", v1.Name(), v1.Dim(), v1.Component())
	}
	k1 := op2.NewKernel("void ve_one(double *a) { *a += 1; }", "ve_one")
	k2 := op2.NewKernel("void ve_two(double *a, double *b) { *a += 1; *b += 2; }", "ve_two")
	kr := op2.NewKernel("void ve_read(const double *a, double *b) { *b = *a; }", "ve_read")
	ki := op2.NewKernel("void ve_int(int *a) { *a = 1; }", "ve_int")
	cases := []struct {
		name string
		k    *op2.Kernel
		set  *op2.Set
		args []op2.Arg
		err  []string // nil: allowed
	}{
		{"view and whole written", k2, nodes, []op2.Arg{v0.Arg(op2.Write), q.Arg(op2.Read)},
			[]string{"argument 1", `component 0 of dat "q"`, "the whole Dat may be passed to one loop only when neither is modified"}},
		{"view and whole incremented", k2, edges, []op2.Arg{v1.ArgMap(op2.Inc, m, 0), q.ArgMap(op2.Inc, m, 1)},
			[]string{"the whole Dat may be passed"}},
		{"one component read and incremented", k2, edges, []op2.Arg{v1.ArgMap(op2.Read, m, 0), v1.ArgMap(op2.Inc, m, 1)},
			[]string{"a loop may not read a Dat through one argument and modify it through another"}},
		{"one component written through two columns", k2, edges, []op2.Arg{v1.ArgMap(op2.Write, m, 0), v1.ArgMap(op2.Write, m, 1)},
			[]string{"not through both column 0 and column 1"}},
		{"min directly", k1, nodes, []op2.Arg{v0.Arg(op2.Min)}, []string{"access MIN applies to a Dat only through a map"}},
		{"wrong type", ki, nodes, []op2.Arg{v0.Arg(op2.Write)}, []string{`component 0 of dat "q"`, "element type int32"}},
		{"map to another set", k1, edges, []op2.Arg{must(must(op2.NewDat[float64](edges, 2, nil, "e2")).View(1)).ArgMap(op2.Inc, m, 0)}, []string{`goes to set "nodes"`}},
		{"view and whole read", kr, nodes, []op2.Arg{v0.Arg(op2.Read), must(op2.NewDat[float64](nodes, 1, nil, "o")).Arg(op2.Write)}, nil},
		{"two components written directly", k2, nodes, []op2.Arg{v0.Arg(op2.Write), v1.Arg(op2.RW)}, nil},
		{"two components through two columns", k2, edges, []op2.Arg{v0.ArgMap(op2.RW, m, 0), v1.ArgMap(op2.Write, m, 1)}, nil},
		{"one component incremented twice", k2, edges, []op2.Arg{v1.ArgMap(op2.Inc, m, 0), v1.ArgMap(op2.Inc, m, 1)}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := q.DataRO()
			err := op2.ParLoop(c.k, c.set, c.args...)
			if c.err == nil {
				check(t, err)
				return
			}
			wantErr(t, err, c.err...)
			var le *op2.LoopError
			if !errors.As(err, &le) {
				t.Errorf("error %T, want *op2.LoopError", err)
			}
			if !slices.Equal(q.DataRO(), before) {
				t.Errorf("a refused loop changed q")
			}
		})
	}
}

// TestDatViewPrograms: the component is part of a loop's shape: a loop
// over a view of another component compiles a program of its own, the
// same component of another Dat of the same dim reuses the program, and
// the kernel sees the right values either way.
func TestDatViewPrograms(t *testing.T) {
	nodes := must(op2.NewSet(10, "nodes"))
	k := op2.NewKernel("void vp_add(double *a) { *a += 10; }", "vp_add")
	run := func(d *op2.Dat[float64], c int) int {
		before := op2.ReadStats().Compiles
		check(t, op2.ParLoop(k, nodes, must(d.View(c)).Arg(op2.RW)))
		return int(op2.ReadStats().Compiles - before)
	}
	a := must(op2.NewDat(nodes, 2, iota32[float64](20), "a"))
	b := must(op2.NewDat(nodes, 2, iota32[float64](20), "b"))
	for _, step := range []struct {
		d        *op2.Dat[float64]
		c, wantN int
	}{{a, 0, 1}, {b, 0, 0}, {a, 1, 1}, {b, 1, 0}, {a, 0, 0}} {
		if n := run(step.d, step.c); n != step.wantN {
			t.Errorf("view %s[%d]: %d compiles, want %d", step.d.Name(), step.c, n, step.wantN)
		}
	}
	want := iota32[float64](20)
	for i := range want {
		want[i] += 10 * float64(1+1-i%2) // component 0 twice, component 1 once
	}
	if got := a.DataRO(); !slices.Equal(got, want) {
		t.Errorf("a = %v, want %v", got, want)
	}
}

// TestDatViewCheckMode: in check mode a kernel writing through a READ view
// is found (and the component's values restored) while its writes to
// another component of the same Dat, passed as a view, stay; a kernel
// that only reads the view passes.
func TestDatViewCheckMode(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		defer func() { check(t, op2.Configure(op2.Config{Backend: "sequential"})) }()
		check(t, op2.Configure(op2.Config{Backend: op2.Backend(), Check: true}))
		nodes := must(op2.NewSet(100, "nodes"))
		q := must(op2.NewDat(nodes, 3, iota32[float64](300), "q"))
		v0, v2 := must(q.View(0)), must(q.View(2))
		good := op2.NewKernel("void vc_good(const double *a, double *b) { *b = 2 * *a; }", "vc_good")
		bad := op2.NewKernel("void vc_bad(const double *a, double *b) { *b = 2 * *a; if (*a == 30) *(double *)a = -1; }", "vc_bad")
		check(t, op2.ParLoop(good, nodes, v0.Arg(op2.Read), v2.Arg(op2.Write)))
		err := op2.ParLoop(bad, nodes, v0.Arg(op2.Read), v2.Arg(op2.Write))
		wantErr(t, err, `READ dat "q"`, "element 10, component 0", "changed from 30 to -1")
		want := iota32[float64](300)
		for e := 0; e < 100; e++ {
			want[3*e+2] = 2 * want[3*e]
		}
		if got := q.DataRO(); !slices.Equal(got, want) {
			t.Errorf("q after the check = %v..., want %v...", got[:9], want[:9])
		}
	})
}

// TestDatViewSubset: a view passed to a loop over a subset changes its
// component of the subset's elements only, on every backend.
func TestDatViewSubset(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		nodes := must(op2.NewSet(50, "nodes"))
		even := make([]int32, 25)
		for i := range even {
			even[i] = int32(2 * i)
		}
		sub := must(op2.NewSubset(nodes, even))
		q := must(op2.NewDat(nodes, 2, iota32[float64](100), "q"))
		k := op2.NewKernel("void vs_bump(double *a) { *a += 0.5; }", "vs_bump")
		check(t, op2.ParLoop(k, sub, must(q.View(1)).Arg(op2.RW)))
		want := iota32[float64](100)
		for _, n := range even {
			want[2*n+1] += 0.5
		}
		if got := q.Data(); !slices.Equal(got, want) {
			t.Errorf("q = %v..., want %v...", got[:8], want[:8])
		}
	})
}

// TestDatViewOfExtrudedDat: dats on extruded sets have no views.
func TestDatViewOfExtrudedDat(t *testing.T) {
	base := must(op2.NewSet(2, "tris"))
	prisms := must(op2.NewExtrudedSet(base, 3, "prisms"))
	d := must(op2.NewExtrudedDat[float64](prisms, 2, nil, "d"))
	if _, err := d.View(1); err == nil || !strings.Contains(err.Error(), `extruded set "prisms"`) {
		t.Fatalf("view of an extruded dat: %v", err)
	}
}
