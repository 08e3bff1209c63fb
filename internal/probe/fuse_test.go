package probe_test

// Probe of loop fusion (Config.Fusion, package internal/fuse) and of the
// recorded assignments (Global.SetValue, Const.Set in a chain): every case
// issues the same loops eagerly, in a Chain with Fusion "on" and in lazy
// mode with Fusion "on", from the same data, and the results must agree
// bit for bit; where the case says so, a fused loop must (or must not)
// have run.

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// fuseBackend is a configuration the fusion probe runs on.
type fuseBackend struct {
	name  string
	cfg   op2.Config
	short bool // also under -short
}

var fuseBackends = []fuseBackend{
	{"sequential", op2.Config{Backend: "sequential"}, true},
	{"sequential-simd8", op2.Config{Backend: "sequential", SIMD: "8"}, false},
	{"openmp-owner", op2.Config{Backend: "openmp", Threads: 2, OpenMPScheme: "owner"}, false},
	{"openmp-colour", op2.Config{Backend: "openmp", Threads: 3, OpenMPScheme: "colour"}, false},
	{"openmp-simd8", op2.Config{Backend: "openmp", Threads: 2, SIMD: "8"}, false},
	{"opencl", op2.Config{Backend: "opencl"}, false},
	{"opencl-atomics", op2.Config{Backend: "opencl", DeviceScheme: "atomics"}, false},
	{"opencl-soa", op2.Config{Backend: "opencl", DeviceLayout: "soa"}, false},
}

// fuseWant is what a case expects of fusion.
type fuseWant int

const (
	fuseAny  fuseWant = iota // either (the combiner may refuse: the loops then run apart)
	fuseYes                  // a fused loop runs
	fuseNone                 // no fused loop runs
)

// fuseMesh is the mesh the cases run on: cells, edges to cells.
type fuseMesh struct {
	cells, edges *op2.Set
	e2c          *op2.Map
	ncell, nedge int
}

func newFuseMesh() fuseMesh {
	const nc, ne = 37, 53 // not multiples of 8: SIMD remainders
	cells := must(op2.NewSet(nc, "fz_cells"))
	edges := must(op2.NewSet(ne, "fz_edges"))
	m := make([]int32, 2*ne)
	for e := 0; e < ne; e++ {
		m[2*e], m[2*e+1] = int32(e*7%nc), int32((e*11+3)%nc)
	}
	return fuseMesh{cells, edges, must(op2.NewMap(edges, cells, 2, m, "fz_e2c")), nc, ne}
}

// shiftMap maps each edge to the edge 5 further on.
func shiftMap(m fuseMesh) *op2.Map {
	v := make([]int32, m.nedge)
	for i := range v {
		v[i] = int32((i + 5) % m.nedge)
	}
	return must(op2.NewMap(m.edges, m.edges, 1, v, "fz_e2e"))
}

// vals returns n values with full mantissas, differing per seed.
func vals(n, seed int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 1 + math.Sin(float64(i*7+seed*13+1))*0.7 + float64(seed)*1e-3
	}
	return v
}

// fuseCase is one probe: run issues the loops on r over fresh data (the
// same every call) and returns a function that reads the results.
type fuseCase struct {
	name  string
	want  fuseWant
	short bool              // also under -short
	skip  map[string]bool   // backends (by name) the case does not run on
	cfg   func(*op2.Config) // changes the backend's configuration
	run   func(r *op2.Runtime, m fuseMesh) (issue func() error, result func() []float64)
}

func kf(name, src string) *op2.Kernel { return op2.NewKernel(src, name) }

// datOf makes a Dat of dim values per cell.
func datOf(m fuseMesh, set *op2.Set, dim, seed int, name string) *op2.Dat[float64] {
	n := m.ncell
	if set == m.edges {
		n = m.nedge
	}
	return must(op2.NewDat(set, dim, vals(n*dim, seed), name))
}

func results(ds ...*op2.Dat[float64]) func() []float64 {
	return func() []float64 {
		var out []float64
		for _, d := range ds {
			out = append(out, d.DataRO()...)
		}
		return out
	}
}

// Kernels of the cases.
var (
	fzMul    = kf("fz_mul", "void fz_mul(const double *a, const double *b, double *q) { q[0] = a[0] * b[0]; }")
	fzAddC   = kf("fz_addc", "void fz_addc(const double *c, double *q) { q[0] = q[0] + c[0]; }")
	fzIdxW   = kf("fz_idxw", "void fz_idxw(const int *i, double *x) { ((int *)i)[0] += 100; x[0] = i[0]; }")
	fzIdxR   = kf("fz_idxr", "void fz_idxr(const int *i, double *y) { y[0] = i[0]; }")
	fzGather = kf("fz_gather", "void fz_gather(const double *a, const double *b, double *y) { y[0] += a[0] * 2 - b[0]; }")
	fzScale  = kf("fz_scale", "void fz_scale(double *x) { x[0] = x[0] * 0.75 + 1; }")
	fzStep   = kf("fz_step", "void fz_step(const double *a, double *b) { b[0] = a[0] * 0.75 + 1; }")
	fzCopy   = kf("fz_copy", "void fz_copy(const double *x, double *y) { y[0] = x[0] * 3; }")
	fzIncE   = kf("fz_ince", "void fz_ince(const double *w, double *a, double *b) { a[0] += w[0]; b[0] -= w[0] * 0.5; }")
	fzVec    = kf("fz_vec", "void fz_vec(const double **v, double *y) { y[0] = v[0][0] - 2 * v[1][0]; }")
	fzVec2   = kf("fz_vec2", "void fz_vec2(const double **u, double *z) { z[0] = u[1][0] * u[0][0]; }")
	fzView01 = kf("fz_v01", "void fz_v01(double *p, const double *s) { p[0] = p[0] * s[0] + 1; }")
	fzGlob   = kf("fz_glob", "void fz_glob(const double *x, const double *g, double *s, double *mn, double *mx) { *s += x[0] * g[0]; if (x[0] < *mn) *mn = x[0]; if (x[0] > *mx) *mx = x[0]; }")
	fzGlob2  = kf("fz_glob2", "void fz_glob2(double *x, const double *g, double *s2) { x[0] += g[0]; *s2 += x[0]; }")
	fzOpt    = kf("fz_opt", "void fz_opt(double *x, const double *o) { x[0] = o ? x[0] + o[0] : x[0] - 1; }")
	fzSum    = kf("fz_sum", "void fz_sum(const double *x, double *s) { *s += x[0]; }")
	fzUseG   = kf("fz_useg", "void fz_useg(double *x, const double *g) { x[0] = x[0] * g[0] + 0.25; }")
	fzConst  = kf("fz_const", "void fz_const(double *x) { x[0] = x[0] * fz_k[0] + fz_k[1]; }")
	fzConst2 = kf("fz_const2", "#define K fz_k[1]\nvoid fz_const2(double *x, double *y) { y[0] = x[0] * K - y[0]; }")
	fzCXX    = kf("fz_cxx", "template <typename T> T fz_tw(T v) { return v * 2; }\nextern \"C\" void fz_cxx(double *x) { x[0] = fz_tw(x[0]) - 1; }").CXX()
	fzGSum   = kf("fz_gsum", "void fz_gsum(const double *x, double *s) { *s += x[0] * 1.1; }")
	fzNoLane = kf("fz_nolane", "void fz_nolane(double *x) { double *p = x; p[0] = p[0] * 0.5 + 0.125; }")
	hostOnly = map[string]bool{"opencl": true, "opencl-atomics": true, "opencl-soa": true}
)

var fuseCases = []fuseCase{
	{name: "write-then-add (both modify q: not fused, else the compiler may contract across kernels)", want: fuseNone, short: true,
		run: func(r *op2.Runtime, m fuseMesh) (func() error, func() []float64) {
			a, b, c := datOf(m, m.cells, 1, 1, "a"), datOf(m, m.cells, 1, 2, "b"), datOf(m, m.cells, 1, 3, "c")
			q := datOf(m, m.cells, 1, 4, "q")
			return func() error {
				if err := r.ParLoop(fzMul, m.cells, a.Arg(op2.Read), b.Arg(op2.Read), q.Arg(op2.Write)); err != nil {
					return err
				}
				return r.ParLoop(fzAddC, m.cells, c.Arg(op2.Read), q.Arg(op2.RW))
			}, results(q)
		}},
	{name: "index argument written by the first kernel", want: fuseAny, short: true,
		run: func(r *op2.Runtime, m fuseMesh) (func() error, func() []float64) {
			x, y := datOf(m, m.cells, 1, 1, "x"), datOf(m, m.cells, 1, 2, "y")
			return func() error {
				if err := r.ParLoop(fzIdxW, m.cells, op2.ArgIdx(), x.Arg(op2.Write)); err != nil {
					return err
				}
				return r.ParLoop(fzIdxR, m.cells, op2.ArgIdx(), y.Arg(op2.Write))
			}, results(x, y)
		}},
	{name: "map index argument written by the first kernel", want: fuseAny, short: true,
		run: func(r *op2.Runtime, m fuseMesh) (func() error, func() []float64) {
			x, y := datOf(m, m.edges, 1, 1, "x"), datOf(m, m.edges, 1, 2, "y")
			return func() error {
				if err := r.ParLoop(fzIdxW, m.edges, m.e2c.ArgIdx(1), x.Arg(op2.Write)); err != nil {
					return err
				}
				return r.ParLoop(fzIdxR, m.edges, m.e2c.ArgIdx(1), y.Arg(op2.Write))
			}, results(x, y)
		}},
	{name: "same Dat read through two columns", want: fuseYes,
		run: func(r *op2.Runtime, m fuseMesh) (func() error, func() []float64) {
			d := datOf(m, m.cells, 1, 1, "d")
			y, z := datOf(m, m.edges, 1, 2, "y"), datOf(m, m.edges, 1, 3, "z")
			return func() error {
				if err := r.ParLoop(fzGather, m.edges, d.ArgMap(op2.Read, m.e2c, 0), d.ArgMap(op2.Read, m.e2c, 1), y.Arg(op2.RW)); err != nil {
					return err
				}
				return r.ParLoop(fzGather, m.edges, d.ArgMap(op2.Read, m.e2c, 1), y.Arg(op2.Read), z.Arg(op2.RW))
			}, results(y, z)
		}},
	{name: "read through a map, then written directly", want: fuseNone, short: true,
		run: func(r *op2.Runtime, m fuseMesh) (func() error, func() []float64) {
			x, y := datOf(m, m.edges, 1, 1, "x"), datOf(m, m.edges, 1, 2, "y")
			e2e := shiftMap(m)
			return func() error {
				if err := r.ParLoop(fzCopy, m.edges, x.ArgMap(op2.Read, e2e, 0), y.Arg(op2.Write)); err != nil {
					return err
				}
				return r.ParLoop(fzScale, m.edges, x.Arg(op2.RW))
			}, results(x, y)
		}},
	{name: "read through a map and directly by both", want: fuseYes,
		run: func(r *op2.Runtime, m fuseMesh) (func() error, func() []float64) {
			d := datOf(m, m.cells, 1, 1, "d")
			y, z := datOf(m, m.edges, 1, 2, "y"), datOf(m, m.edges, 1, 3, "z")
			a, b := datOf(m, m.cells, 1, 4, "a"), datOf(m, m.cells, 1, 5, "b")
			return func() error {
				if err := r.ParLoop(fzGather, m.edges, d.ArgMap(op2.Read, m.e2c, 0), d.ArgMap(op2.Read, m.e2c, 1), y.Arg(op2.RW)); err != nil {
					return err
				}
				if err := r.ParLoop(fzIncE, m.edges, y.Arg(op2.Read), a.ArgMap(op2.Inc, m.e2c, 0), b.ArgMap(op2.Inc, m.e2c, 1)); err != nil {
					return err
				}
				return r.ParLoop(fzCopy, m.edges, y.Arg(op2.Read), z.Arg(op2.Write))
			}, results(y, z, a, b)
		}},
	{name: "incremented through a map, then read through a map", want: fuseNone,
		run: func(r *op2.Runtime, m fuseMesh) (func() error, func() []float64) {
			a, b := datOf(m, m.cells, 1, 4, "a"), datOf(m, m.cells, 1, 5, "b")
			w, y := datOf(m, m.edges, 1, 3, "w"), datOf(m, m.edges, 1, 2, "y")
			return func() error {
				if err := r.ParLoop(fzIncE, m.edges, w.Arg(op2.Read), a.ArgMap(op2.Inc, m.e2c, 0), b.ArgMap(op2.Inc, m.e2c, 1)); err != nil {
					return err
				}
				return r.ParLoop(fzGather, m.edges, a.ArgMap(op2.Read, m.e2c, 1), b.ArgMap(op2.Read, m.e2c, 0), y.Arg(op2.RW))
			}, results(a, b, y)
		}},
	{name: "incremented through a map twice", want: fuseNone,
		run: func(r *op2.Runtime, m fuseMesh) (func() error, func() []float64) {
			a, b := datOf(m, m.cells, 1, 4, "a"), datOf(m, m.cells, 1, 5, "b")
			w := datOf(m, m.edges, 1, 3, "w")
			return func() error {
				if err := r.ParLoop(fzIncE, m.edges, w.Arg(op2.Read), a.ArgMap(op2.Inc, m.e2c, 0), b.ArgMap(op2.Inc, m.e2c, 1)); err != nil {
					return err
				}
				return r.ParLoop(fzIncE, m.edges, w.Arg(op2.Read), b.ArgMap(op2.Inc, m.e2c, 0), a.ArgMap(op2.Inc, m.e2c, 1))
			}, results(a, b)
		}},
	{name: "written directly, then read through a map", want: fuseNone,
		run: func(r *op2.Runtime, m fuseMesh) (func() error, func() []float64) {
			x := datOf(m, m.edges, 1, 1, "x")
			e2e := shiftMap(m)
			y := datOf(m, m.edges, 1, 2, "y")
			return func() error {
				if err := r.ParLoop(fzScale, m.edges, x.Arg(op2.RW)); err != nil {
					return err
				}
				return r.ParLoop(fzCopy, m.edges, x.ArgMap(op2.Read, e2e, 0), y.Arg(op2.Write))
			}, results(x, y)
		}},
	{name: "ArgVec read by both", want: fuseYes,
		run: func(r *op2.Runtime, m fuseMesh) (func() error, func() []float64) {
			d := datOf(m, m.cells, 1, 1, "d")
			y, z := datOf(m, m.edges, 1, 2, "y"), datOf(m, m.edges, 1, 3, "z")
			return func() error {
				if err := r.ParLoop(fzVec, m.edges, d.ArgVec(op2.Read, m.e2c), y.Arg(op2.Write)); err != nil {
					return err
				}
				return r.ParLoop(fzVec2, m.edges, d.ArgVec(op2.Read, m.e2c), z.Arg(op2.Write))
			}, results(y, z)
		}},
	{name: "views of different components", want: fuseYes,
		run: func(r *op2.Runtime, m fuseMesh) (func() error, func() []float64) {
			d := datOf(m, m.cells, 3, 1, "d")
			v0, v1, v2 := must(d.View(0)), must(d.View(1)), must(d.View(2))
			return func() error {
				if err := r.ParLoop(fzView01, m.cells, v0.Arg(op2.RW), v1.Arg(op2.Read)); err != nil {
					return err
				}
				if err := r.ParLoop(fzView01, m.cells, v1.Arg(op2.RW), v0.Arg(op2.Read)); err != nil {
					return err
				}
				return r.ParLoop(fzView01, m.cells, v2.Arg(op2.RW), v0.Arg(op2.Read))
			}, results(d)
		}},
	{name: "a view, then the whole Dat", want: fuseNone,
		run: func(r *op2.Runtime, m fuseMesh) (func() error, func() []float64) {
			d := datOf(m, m.cells, 1, 1, "d")
			v0 := must(d.View(0))
			y := datOf(m, m.cells, 1, 2, "y")
			return func() error {
				if err := r.ParLoop(fzScale, m.cells, v0.Arg(op2.RW)); err != nil {
					return err
				}
				return r.ParLoop(fzCopy, m.cells, d.Arg(op2.Read), y.Arg(op2.Write))
			}, results(d, y)
		}},
	{name: "Globals read by both, reductions to others", want: fuseYes,
		run: func(r *op2.Runtime, m fuseMesh) (func() error, func() []float64) {
			x := datOf(m, m.cells, 1, 1, "x")
			g := must(op2.NewGlobal(1, []float64{1.25}, "g"))
			s := must(op2.NewGlobal(1, []float64{0.5}, "s"))
			mn := must(op2.NewGlobal(1, []float64{math.Inf(1)}, "mn"))
			mx := must(op2.NewGlobal(1, []float64{math.Inf(-1)}, "mx"))
			s2 := must(op2.NewGlobal(1, []float64{0}, "s2"))
			return func() error {
					if err := r.ParLoop(fzGlob, m.cells, x.Arg(op2.Read), g.Arg(op2.Read), s.Arg(op2.Inc), mn.Arg(op2.Min), mx.Arg(op2.Max)); err != nil {
						return err
					}
					return r.ParLoop(fzGlob2, m.cells, x.Arg(op2.RW), g.Arg(op2.Read), s2.Arg(op2.Inc))
				}, func() []float64 {
					return append(x.DataRO(), s.Value(), mn.Value(), mx.Value(), s2.Value())
				}
		}},
	{name: "a Global reduced, then read", want: fuseNone,
		run: func(r *op2.Runtime, m fuseMesh) (func() error, func() []float64) {
			x := datOf(m, m.cells, 1, 1, "x")
			s := must(op2.NewGlobal(1, []float64{0.5}, "s"))
			return func() error {
				if err := r.ParLoop(fzSum, m.cells, x.Arg(op2.Read), s.Arg(op2.Inc)); err != nil {
					return err
				}
				return r.ParLoop(fzUseG, m.cells, x.Arg(op2.RW), s.Arg(op2.Read))
			}, func() []float64 { return append(x.DataRO(), s.Value()) }
		}},
	{name: "optional arguments on and off", want: fuseAny,
		run: func(r *op2.Runtime, m fuseMesh) (func() error, func() []float64) {
			x, o := datOf(m, m.cells, 1, 1, "x"), datOf(m, m.cells, 1, 2, "o")
			return func() error {
				for _, on := range []bool{true, false, false, true, true} {
					if err := r.ParLoop(fzOpt, m.cells, x.Arg(op2.RW), op2.Opt(on, o.Arg(op2.Read))); err != nil {
						return err
					}
				}
				return nil
			}, results(x)
		}},
	{name: "the same subset twice, and two subsets of one set", want: fuseAny,
		run: func(r *op2.Runtime, m fuseMesh) (func() error, func() []float64) {
			x, y := datOf(m, m.cells, 1, 1, "x"), datOf(m, m.cells, 1, 2, "y")
			s1 := must(op2.NewSubset(m.cells, []int32{0, 3, 4, 9, 20, 36}))
			s2 := must(op2.NewSubset(m.cells, []int32{1, 3, 9, 21, 30}))
			return func() error {
				for _, s := range []*op2.Subset{s1, s1, s2, s1} {
					if err := r.ParLoop(fzScale, s, x.Arg(op2.RW)); err != nil {
						return err
					}
					if err := r.ParLoop(fzCopy, s, x.Arg(op2.Read), y.Arg(op2.RW)); err != nil {
						return err
					}
				}
				return nil
			}, results(x, y)
		}},
	{name: "mixed set loops", want: fuseAny,
		run: func(r *op2.Runtime, m fuseMesh) (func() error, func() []float64) {
			ms := must(op2.NewMixedSet([]*op2.Set{m.cells, m.edges}, "fz_ms"))
			md := must(op2.NewMixedDat(ms, []int{1, 1}, vals(m.ncell+m.nedge, 1), "md"))
			me := must(op2.NewMixedDat(ms, []int{1, 1}, vals(m.ncell+m.nedge, 2), "me"))
			return func() error {
					if err := r.ParLoop(fzScale, ms, md.Arg(op2.RW)); err != nil {
						return err
					}
					if err := r.ParLoop(fzCopy, ms, md.Arg(op2.Read), me.Arg(op2.Write)); err != nil {
						return err
					}
					return r.ParLoop(fzScale, ms, md.Arg(op2.RW))
				}, func() []float64 {
					return slices.Concat(slices.Concat(md.DataRO()...), slices.Concat(me.DataRO()...))
				}
		}},
	{name: "Const.Set and Value between loops that use it", want: fuseYes, short: true,
		run: func(r *op2.Runtime, m fuseMesh) (func() error, func() []float64) {
			x, y := datOf(m, m.cells, 1, 1, "x"), datOf(m, m.cells, 1, 2, "y")
			c := must(op2.NewConstIn(r, 2, []float64{1.5, 0.25}, "fz_k"))
			var seen []float64
			return func() error {
					for i, v := range []float64{0.5, 3, -1} {
						if err := r.ParLoop(fzConst, m.cells, x.Arg(op2.RW)); err != nil {
							return err
						}
						if err := r.ParLoop(fzConst2, m.cells, x.Arg(op2.Read), y.Arg(op2.RW)); err != nil {
							return err
						}
						if err := c.Set(v, float64(i)+0.125); err != nil {
							return err
						}
						if i == 1 {
							seen = append(seen, c.Value()...)
						}
					}
					return r.ParLoop(fzConst, m.cells, x.Arg(op2.RW))
				}, func() []float64 {
					defer c.Remove()
					return slices.Concat(x.DataRO(), y.DataRO(), seen, c.Value())
				}
		}},
	{name: "SetValue and Value between loops that read and reduce", want: fuseAny, short: true,
		run: func(r *op2.Runtime, m fuseMesh) (func() error, func() []float64) {
			x := datOf(m, m.cells, 1, 1, "x")
			g := must(op2.NewGlobal(1, []float64{1.25}, "g"))
			s := must(op2.NewGlobal(1, []float64{0}, "s"))
			var seen []float64
			return func() error {
					for i := 0; i < 3; i++ {
						if err := r.ParLoop(fzUseG, m.cells, x.Arg(op2.RW), g.Arg(op2.Read)); err != nil {
							return err
						}
						if err := r.ParLoop(fzUseG, m.cells, x.Arg(op2.RW), g.Arg(op2.Read)); err != nil {
							return err
						}
						g.SetValue(0.5 + float64(i))
						if err := r.ParLoop(fzSum, m.cells, x.Arg(op2.Read), s.Arg(op2.Inc)); err != nil {
							return err
						}
						if i == 1 {
							seen = append(seen, s.Value())
						}
						s.SetValue(float64(i))
						if err := r.ParLoop(fzUseG, m.cells, x.Arg(op2.RW), s.Arg(op2.Read)); err != nil {
							return err
						}
					}
					return nil
				}, func() []float64 {
					return slices.Concat(x.DataRO(), seen, []float64{g.Value(), s.Value()})
				}
		}},
	{name: "check mode", want: fuseNone, short: true, cfg: func(c *op2.Config) { c.Check = true },
		run: func(r *op2.Runtime, m fuseMesh) (func() error, func() []float64) {
			x := datOf(m, m.cells, 1, 1, "x")
			return func() error {
				for i := 0; i < 2; i++ {
					if err := r.ParLoop(fzScale, m.cells, x.Arg(op2.RW)); err != nil {
						return err
					}
				}
				return nil
			}, results(x)
		}},
	{name: "a C++ kernel", want: fuseNone, skip: hostOnly,
		run: func(r *op2.Runtime, m fuseMesh) (func() error, func() []float64) {
			x := datOf(m, m.cells, 1, 1, "x")
			return func() error {
				for _, k := range []*op2.Kernel{fzScale, fzCXX, fzScale} {
					if err := r.ParLoop(k, m.cells, x.Arg(op2.RW)); err != nil {
						return err
					}
				}
				return nil
			}, results(x)
		}},
	{name: "more loops than MaxRecordedLoops, with assignments", want: fuseAny,
		run: func(r *op2.Runtime, m fuseMesh) (func() error, func() []float64) {
			x, y := datOf(m, m.cells, 1, 1, "x"), datOf(m, m.edges, 1, 2, "y")
			g := must(op2.NewGlobal(1, []float64{1}, "g"))
			return func() error {
				for i := 0; i < op2.MaxRecordedLoops+40; i++ {
					var err error
					if i%2 == 0 {
						err = r.ParLoop(fzUseG, m.cells, x.Arg(op2.RW), g.Arg(op2.Read))
					} else {
						err = r.ParLoop(fzScale, m.edges, y.Arg(op2.RW))
					}
					if err != nil {
						return err
					}
					if i%97 == 0 || i == op2.MaxRecordedLoops-2 {
						g.SetValue(1 + float64(i%5)*0.125)
					}
				}
				return nil
			}, func() []float64 { return slices.Concat(x.DataRO(), y.DataRO(), []float64{g.Value()}) }
		}},
	{name: "a Global increment with lanes, then a loop without", want: fuseAny,
		run: func(r *op2.Runtime, m fuseMesh) (func() error, func() []float64) {
			x, y := datOf(m, m.cells, 1, 1, "x"), datOf(m, m.cells, 1, 2, "y")
			s := must(op2.NewGlobal(1, []float64{0.1}, "s"))
			return func() error {
				if err := r.ParLoop(fzGSum, m.cells, x.Arg(op2.Read), s.Arg(op2.Inc)); err != nil {
					return err
				}
				return r.ParLoop(fzNoLane, m.cells, y.Arg(op2.RW))
			}, func() []float64 { return append(y.DataRO(), s.Value()) }
		}},
	{name: "the same kernel three times, each reading what the last wrote", want: fuseYes,
		run: func(r *op2.Runtime, m fuseMesh) (func() error, func() []float64) {
			d := []*op2.Dat[float64]{datOf(m, m.cells, 1, 1, "d0"), datOf(m, m.cells, 1, 2, "d1"), datOf(m, m.cells, 1, 3, "d2"), datOf(m, m.cells, 1, 4, "d3")}
			return func() error {
				for i := 0; i < 3; i++ {
					if err := r.ParLoop(fzStep, m.cells, d[i].Arg(op2.Read), d[i+1].Arg(op2.Write)); err != nil {
						return err
					}
				}
				return nil
			}, results(d...)
		}},
	{name: "the same kernel twice modifying one Dat (not fused)", want: fuseNone,
		run: func(r *op2.Runtime, m fuseMesh) (func() error, func() []float64) {
			x := datOf(m, m.cells, 1, 1, "x")
			return func() error {
				for i := 0; i < 3; i++ {
					if err := r.ParLoop(fzScale, m.cells, x.Arg(op2.RW)); err != nil {
						return err
					}
				}
				return nil
			}, results(x)
		}},
}

// textCase is a probe of the kernel combiner: two kernels over cells, each
// passed (x RW, y READ) or as args says, whose sources stress it.
type textCase struct {
	name   string
	want   fuseWant
	a, b   *op2.Kernel
	opencl bool // runs on opencl too
	short  bool // also under -short
}

var textCases = []textCase{
	{"helpers of the same name, identical", fuseAny,
		kf("ft_h1", "static double ft_h(double v) { return v * 0.5 + 1; }\nvoid ft_h1(double *x, const double *y) { x[0] = ft_h(x[0]) + y[0]; }"),
		kf("ft_h2", "static double ft_h(double v) { return v * 0.5 + 1; }\nvoid ft_h2(double *x, const double *y) { x[0] = ft_h(y[0]) * x[0]; }"), true, false},
	{"one source, two kernels", fuseYes,
		kf("ft_s1", "static double ft_sh(double v) { return v * 0.5 + 1; }\nvoid ft_s1(double *x, const double *y) { x[0] = ft_sh(x[0]) + y[0]; }\nvoid ft_s2(double *x, const double *y) { x[0] = ft_sh(y[0]) * x[0]; }"),
		kf("ft_s2", "static double ft_sh(double v) { return v * 0.5 + 1; }\nvoid ft_s1(double *x, const double *y) { x[0] = ft_sh(x[0]) + y[0]; }\nvoid ft_s2(double *x, const double *y) { x[0] = ft_sh(y[0]) * x[0]; }"), true, false},
	{"same macro names, different meanings", fuseYes,
		kf("ft_m1", "#define S 3.0\n#define F(v) ((v) * S)\nvoid ft_m1(double *x, const double *y) { x[0] = F(x[0]) + y[0]; }"),
		kf("ft_m2", "#define S 5.0\n#define F(v) ((v) - S)\nvoid ft_m2(double *x, const double *y) { x[0] = F(x[0]) * y[0]; }"), true, false},
	{"a macro naming the other kernel's parameter", fuseYes,
		kf("ft_n1", "#define y 2.0\nvoid ft_n1(double *x, const double *w) { x[0] = x[0] * y + w[0]; }"),
		kf("ft_n2", "void ft_n2(double *x, const double *y) { x[0] = x[0] - y[0]; }"), true, false},
	{"a macro using a parameter", fuseYes,
		kf("ft_p1", "#define X0 x[0]\nvoid ft_p1(double *x, const double *y) { X0 = X0 * 2 + y[0]; }"),
		kf("ft_p2", "#define X0 y[0]\nvoid ft_p2(double *y, const double *x) { y[0] = X0 + x[0]; }"), true, false},
	{"parameters named like the other kernel's locals and helpers", fuseYes,
		kf("ft_l1", "static double t(double v) { return v + 0.5; }\nvoid ft_l1(double *x, const double *y) { double b = y[0]; x[0] = t(x[0]) * b; }"),
		kf("ft_l2", "void ft_l2(double *b, const double *t) { double x = t[0] * 3; b[0] += x; }"), true, true},
	{"struct members named like parameters", fuseAny,
		kf("ft_st1", "struct ft_sp { double x, y; };\nvoid ft_st1(double *x, const double *y) { struct ft_sp s; s.x = y[0]; s.y = x[0]; x[0] = s.x * s.y + 1; }"),
		kf("ft_st2", "void ft_st2(double *y, const double *x) { struct { double y; } s = { .y = x[0] }; y[0] = s.y - y[0]; }"), true, false},
	{"comments and literals naming parameters", fuseYes,
		kf("ft_c1", "void ft_c1(double *x, const double *y) { /* y x */ x[0] += y[0] + 'y'; // x\n}"),
		kf("ft_c2", "void ft_c2(double *y, const double *x) { const char *s = \"x y\"; y[0] = x[0] * s[1]; }"), false, false},
	{"array, const, restrict parameters", fuseYes,
		kf("ft_a1", "void ft_a1(double x[1], const double y[1]) { x[0] = x[0] * y[0] - 0.125; }"),
		kf("ft_a2", "void ft_a2(double *restrict y, const double *const restrict x) { y[0] = x[0] / 3; }"), true, false},
	{"typedef'd pointers", fuseAny,
		kf("ft_t1", "typedef double *ft_dp;\nvoid ft_t1(ft_dp x, const double *y) { x[0] += y[0]; }"),
		kf("ft_t2", "typedef const double *ft_cdp;\nvoid ft_t2(double *x, ft_cdp y) { x[0] *= y[0]; }"), true, false},
	{"void pointers cast in the body", fuseAny,
		kf("ft_v1", "void ft_v1(void *x, const void *y) { ((double *)x)[0] += ((const double *)y)[0]; }"),
		kf("ft_v2", "void ft_v2(double *x, const double *y) { x[0] = x[0] * y[0]; }"), false, false},
	{"a declaration after a comma naming a parameter", fuseAny,
		kf("ft_d1", "void ft_d1(double *x, const double *y) { { double q = 2, y = 3; x[0] += q * y; } x[0] += y[0]; }"),
		kf("ft_d2", "void ft_d2(double *y, const double *x) { y[0] = y[0] * 0.5 + x[0]; }"), true, false},
	{"a parameter named like the other kernel's constant", fuseAny,
		kf("ft_k1", "void ft_k1(double *x, const double *y) { x[0] = x[0] * fz_kk + y[0]; }"),
		kf("ft_k2", "void ft_k2(double *fz_kk, const double *x) { fz_kk[0] -= x[0] * 0.5; }"), true, false},
	{"a parameter's size from a macro", fuseAny,
		kf("ft_z1", "#define FT_N 1\nvoid ft_z1(double x[FT_N], const double y[FT_N]) { x[0] += y[0]; }"),
		kf("ft_z2", "#define FT_N 1\nvoid ft_z2(double x[FT_N], const double y[FT_N]) { x[0] *= y[0]; }"), true, false},
	{"a return in the last kernel", fuseYes,
		kf("ft_r1", "void ft_r1(double *x, const double *y) { x[0] = x[0] + y[0]; }"),
		kf("ft_r2", "void ft_r2(double *x, const double *y) { if (x[0] > 2) return; x[0] = -y[0]; }"), true, false},
	{"a return in the first kernel", fuseNone,
		kf("ft_q1", "void ft_q1(double *x, const double *y) { if (x[0] > 2) return; x[0] = -y[0]; }"),
		kf("ft_q2", "void ft_q2(double *x, const double *y) { x[0] = x[0] + y[0]; }"), true, false},
	{"a return from a macro in the first kernel", fuseAny,
		kf("ft_rm1", "#define DONE return\nvoid ft_rm1(double *x, const double *y) { if (x[0] > 2) DONE; x[0] = -y[0]; }"),
		kf("ft_rm2", "void ft_rm2(double *x, const double *y) { x[0] = x[0] + y[0]; }"), true, false},
	{"nested blocks declaring parameters' names", fuseAny,
		kf("ft_b1", "void ft_b1(double *x, const double *y) { { double q = 2, y = 3; x[0] += q * y; } x[0] += y[0]; }"),
		kf("ft_b2", "void ft_b2(double *y, const double *x) { for (int x = 0; x < 2; x++) y[0] += x; { double t, x = 1.5; t = x; y[0] *= t; } }"), true, false},
	{"names in the fused kernel's style", fuseYes,
		kf("ft_f1", "void ft_f1(double *fused_ft_f1_ft_f2, const double *x_2) { fused_ft_f1_ft_f2[0] += x_2[0]; }"),
		kf("ft_f2", "void ft_f2(double *x, const double *fused_ft_f1_ft_f2) { x[0] *= fused_ft_f1_ft_f2[0]; }"), true, false},
}

// fuseRun runs one case's loops on cfg: eagerly, or recorded (in a Chain
// or lazily) with Fusion "on". It returns the results and the kernels of
// the loops that ran.
func fuseRun(t *testing.T, cfg op2.Config, mode string, run func(r *op2.Runtime) (func() error, func() []float64)) ([]float64, []string) {
	t.Helper()
	cfg.CacheDir, cfg.Timing = cacheDir, true
	switch mode {
	case "chain":
		cfg.Fusion = "on"
	case "lazy":
		cfg.Fusion, cfg.Lazy = "on", true
	default:
		cfg.Fusion = "off"
	}
	r, err := op2.NewRuntime(cfg)
	if err != nil {
		t.Fatalf("%s: %v", mode, err)
	}
	issue, result := run(r)
	if mode == "chain" {
		err = r.Chain(issue)
	} else {
		err = issue()
	}
	if err != nil {
		t.Fatalf("%s: %v", mode, err)
	}
	res := result()
	check(t, r.Wait())
	var ran []string
	for _, lt := range r.Timings() {
		ran = append(ran, lt.Kernel)
	}
	return res, ran
}

func sameBits(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// fuseCompare runs run eagerly, chained and lazily on b and compares.
func fuseCompare(t *testing.T, b fuseBackend, want fuseWant, cfg func(*op2.Config), run func(r *op2.Runtime) (func() error, func() []float64)) {
	t.Helper()
	c := b.cfg
	if cfg != nil {
		cfg(&c)
	}
	eager, _ := fuseRun(t, c, "eager", run)
	for _, mode := range []string{"chain", "lazy"} {
		got, ran := fuseRun(t, c, mode, run)
		if !sameBits(got, eager) {
			t.Errorf("%s: results differ from eager ones:\n got  %v\n want %v", mode, got, eager)
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(eager[i]) {
					t.Logf("first difference at %d: %x vs %x", i, math.Float64bits(got[i]), math.Float64bits(eager[i]))
					break
				}
			}
		}
		fused := slices.ContainsFunc(ran, func(k string) bool { return strings.HasPrefix(k, "fused_") })
		if mode == "chain" {
			t.Logf("ran %v", ran)
		}
		switch {
		case want == fuseYes && !fused:
			t.Errorf("%s: no fused loop ran (ran %v)", mode, ran)
		case want == fuseNone && fused:
			t.Errorf("%s: a fused loop ran (ran %v)", mode, ran)
		}
	}
}

func fuseBackendsFor(t *testing.T) []fuseBackend {
	var bs []fuseBackend
	for _, b := range fuseBackends {
		if b.short || !testing.Short() {
			bs = append(bs, b)
		}
	}
	return bs
}

// TestFuseProbe runs the legality and ordering cases on every backend.
func TestFuseProbe(t *testing.T) {
	for _, b := range fuseBackendsFor(t) {
		t.Run(b.name, func(t *testing.T) {
			for _, c := range fuseCases {
				if testing.Short() && !c.short || c.skip[b.name] {
					continue
				}
				t.Run(c.name, func(t *testing.T) {
					fuseCompare(t, b, c.want, c.cfg, func(r *op2.Runtime) (func() error, func() []float64) {
						return c.run(r, newFuseMesh())
					})
				})
			}
		})
	}
}

// TestFuseKernelText runs the combiner cases: kernels a then b over
// cells, each passed x RW and y READ (a constant fz_kk declared).
func TestFuseKernelText(t *testing.T) {
	for _, b := range fuseBackendsFor(t) {
		t.Run(b.name, func(t *testing.T) {
			for _, c := range textCases {
				if strings.HasPrefix(b.name, "opencl") && !c.opencl {
					continue
				}
				if testing.Short() && !c.short {
					continue
				}
				t.Run(c.name, func(t *testing.T) {
					fuseCompare(t, b, c.want, nil, func(r *op2.Runtime) (func() error, func() []float64) {
						m := newFuseMesh()
						x, y, z := datOf(m, m.cells, 1, 1, "x"), datOf(m, m.cells, 1, 2, "y"), datOf(m, m.cells, 1, 3, "z")
						k := must(op2.NewConstIn(r, 1, []float64{1.5}, "fz_kk"))
						// The second kernel modifies z and reads what the
						// first wrote (loops that both modify a Dat do
						// not fuse).
						return func() error {
								if err := r.ParLoop(c.a, m.cells, x.Arg(op2.RW), y.Arg(op2.Read)); err != nil {
									return fmt.Errorf("%s: %w", c.a.Name(), err)
								}
								return r.ParLoop(c.b, m.cells, z.Arg(op2.RW), x.Arg(op2.Read))
							}, func() []float64 {
								defer k.Remove()
								return results(x, y, z)()
							}
					})
				})
			}
		})
	}
}

// TestFuseDeviceVectorArity: loops whose vector arguments each stay within
// MaxDeviceVectorArity, but not together, do not fuse on opencl (the
// fused loop would pass more map entries than ParLoop lets one loop pass:
// fine on PoCL, whose work items have large stacks, but GPUs may fail to
// compile or run it), and give the same results.
func TestFuseDeviceVectorArity(t *testing.T) {
	if testing.Short() {
		t.Skip("opencl, large vector maps: not in -short mode")
	}
	const arity = op2.MaxDeviceVectorArity/2 + 100
	k := kf("fz_bigvec", fmt.Sprintf("void fz_bigvec(const double **v, double *y) { double s = 0; for (int i = 0; i < %d; i++) s += v[i][0]; y[0] = s; }", arity))
	fuseCompare(t, fuseBackends[5], fuseNone, nil, func(r *op2.Runtime) (func() error, func() []float64) {
		m := newFuseMesh()
		vals := make([]int32, m.nedge*arity)
		for i := range vals {
			vals[i] = int32(i * 7 % m.ncell)
		}
		big := must(op2.NewMap(m.edges, m.cells, arity, vals, "fz_big"))
		a, b := datOf(m, m.cells, 1, 1, "a"), datOf(m, m.cells, 1, 2, "b")
		y, z := datOf(m, m.edges, 1, 3, "y"), datOf(m, m.edges, 1, 4, "z")
		return func() error {
			if err := r.ParLoop(k, m.edges, a.ArgVec(op2.Read, big), y.Arg(op2.Write)); err != nil {
				return err
			}
			return r.ParLoop(k, m.edges, b.ArgVec(op2.Read, big), z.Arg(op2.Write))
		}, results(y, z)
	})
}
