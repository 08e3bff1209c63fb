package op2_test

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// checkMesh is a small mesh for the check-mode tests: x lives on nodes,
// y on edges, and each edge reaches two nodes through m.
type checkMesh struct {
	edges, nodes *op2.Set
	m            *op2.Map
	x            *op2.Dat[float64]
	y            *op2.Dat[float64] // on edges
	yn           *op2.Dat[float64] // on nodes
	z            *op2.Dat[float64] // on nodes, declared without values
	g            *op2.Global[float64]
}

func newCheckMesh() *checkMesh {
	const n = 300 // several blocks
	c := &checkMesh{}
	c.edges = must(op2.NewSet(n, "edges"))
	c.nodes = must(op2.NewSet(n, "nodes"))
	v := make([]int32, 2*n)
	for e := 0; e < n; e++ {
		v[2*e], v[2*e+1] = int32(e), int32((e+1)%n)
	}
	c.m = must(op2.NewMap(c.edges, c.nodes, 2, v, "m"))
	c.x = must(op2.NewDat(c.nodes, 2, iota32[float64](2*n), "x"))
	c.y = must(op2.NewDat[float64](c.edges, 1, nil, "y"))
	c.yn = must(op2.NewDat[float64](c.nodes, 1, nil, "yn"))
	c.z = must(op2.NewDat[float64](c.nodes, 1, nil, "z"))
	c.g = must(op2.NewGlobal(2, []float64{3, 4}, "g"))
	return c
}

// TestCheckModeFindsWritesToReadArguments: with Config.Check, a kernel
// writing through a READ argument (directly, through a map, as a vector,
// a Global), which it can only do by casting away the const of its
// parameter, makes the loop fail with a *LoopError naming the argument
// and the value, on every backend; the READ data keeps its values in
// every copy while the loop's other effects stay. Kernels that only read
// pass.
func TestCheckModeFindsWritesToReadArguments(t *testing.T) {
	cases := []struct {
		name   string
		src    string
		read   func(c *checkMesh) op2.Arg
		direct bool // a loop over nodes, else over edges
		wrote  bool
		errHas []string
	}{
		{"direct", "void ck_direct(double *x, double *y) { *y = x[1]; if (y[0] == 21) ((double *)x)[1] = -1; }",
			func(c *checkMesh) op2.Arg { return c.x.Arg(op2.Read) }, true, true,
			[]string{`READ dat "x"`, "element 10, component 1", "changed from 21 to -1"}},
		{"map", "void ck_map(double *x, double *y) { *y = x[1]; if (*y == 15) ((double *)x)[0] = -1; }",
			func(c *checkMesh) op2.Arg { return c.x.ArgMap(op2.Read, c.m, 1) }, false, true,
			[]string{`READ dat "x"`, "element 7, component 0", "changed from 14 to -1"}},
		{"vector", "void ck_vec(double **x, double *y) { *y = x[0][0] + x[1][0]; if (*y == 2) ((double *)x[1])[1] = -1; }",
			func(c *checkMesh) op2.Arg { return c.x.ArgVec(op2.Read, c.m) }, false, true,
			[]string{`READ dat "x"`, "element 1, component 1", "changed from 3 to -1"}},
		{"global", "void ck_glob(double *g, double *y) { *y = g[1]; ((double *)g)[1] = 9; }",
			func(c *checkMesh) op2.Arg { return c.g.Arg(op2.Read) }, false, true,
			[]string{`READ global "g"`, "value 1", "changed from 4 to 9"}},
		{"map, helper", "static void clobber(double *p) { p[0] = -1; }\nvoid ck_maph(double *x, double *y) { *y = x[1]; if (*y == 15) clobber((double *)x); }",
			func(c *checkMesh) op2.Arg { return c.x.ArgMap(op2.Read, c.m, 1) }, false, true,
			[]string{`READ dat "x"`, "element 7, component 0", "changed from 14 to -1"}},
		{"global, helper", "static void clobber(double *p) { p[0] = -1; }\nvoid ck_globh(double *g, double *y) { *y = g[1]; clobber((double *)g); }",
			func(c *checkMesh) op2.Arg { return c.g.Arg(op2.Read) }, false, true,
			[]string{`READ global "g"`, "value 0", "changed from 3 to -1"}},
		{"never set", "void ck_zero(double *z, double *y) { *y = *z + 1; *(double *)z = 2; }",
			func(c *checkMesh) op2.Arg { return c.z.Arg(op2.Read) }, true, true,
			[]string{`READ dat "z"`, "element 0, component 0", "changed from 0 to 2"}},
		{"reads only", "void ck_clean(const double **x, double *y) { *y = x[0][0] + x[1][1]; }",
			func(c *checkMesh) op2.Arg { return c.x.ArgVec(op2.Read, c.m) }, false, false, nil},
		{"global read and reduced", "void ck_red(const double *g, double *y, double *h) { *y = g[0]; h[1] += 1; }",
			func(c *checkMesh) op2.Arg { return c.g.Arg(op2.Read) }, false, false, nil},
	}
	cache := os.Getenv("OP2_CACHE_DIR")
	defer func() { check(t, op2.Configure(op2.Config{CacheDir: cache, PlanCheck: true})) }()
	for _, b := range allBackends {
		t.Run(b, func(t *testing.T) {
			check(t, op2.Configure(op2.Config{Backend: b, Check: true, CacheDir: cache, PlanCheck: true}))
			for _, tc := range cases {
				c := newCheckMesh()
				xBefore, gBefore := c.x.DataRO(), c.g.DataRO()
				k := op2.NewKernel(tc.src, "ck_"+map[string]string{"direct": "direct", "map": "map", "vector": "vec", "global": "glob", "map, helper": "maph", "global, helper": "globh", "never set": "zero", "reads only": "clean", "global read and reduced": "red"}[tc.name])
				set, y := c.edges, c.y
				if tc.direct {
					set, y = c.nodes, c.yn
				}
				args := []op2.Arg{tc.read(c), y.Arg(op2.Write)}
				if tc.name == "global read and reduced" {
					args = append(args, c.g.Arg(op2.Inc))
				}
				err := op2.ParLoop(k, set, args...)
				if !tc.wrote {
					check(t, err)
					continue
				}
				var le *op2.LoopError
				if !errors.As(err, &le) || le.Arg != 0 {
					t.Fatalf("%s: error %v, want a *LoopError about argument 0", tc.name, err)
				}
				wantErr(t, err, append([]string{"check mode", "restored"}, tc.errHas...)...)
				if y := y.DataRO(); y[0] == 0 && y[1] == 0 {
					t.Errorf("%s: the loop's WRITE argument was not kept: y = %v...", tc.name, y[:2])
				}
				// The READ data has its old values, on the host and in the
				// copy the next loop reads.
				assertEqual(t, tc.name+": x after the loop", c.x.DataRO(), xBefore)
				assertEqual(t, tc.name+": g after the loop", c.g.DataRO(), gBefore)
				assertEqual(t, tc.name+": z after the loop", c.z.DataRO(), make([]float64, 300))
				copyBack := op2.NewKernel("void ck_copy(const double *x, const double *g, double *out) { out[0] = x[0] + g[0]; out[1] = x[1] + g[1]; }", "ck_copy")
				out := must(op2.NewDat[float64](c.nodes, 2, nil, "out"))
				check(t, op2.ParLoop(copyBack, c.nodes, c.x.Arg(op2.Read), c.g.Arg(op2.Read), out.Arg(op2.Write)))
				want := make([]float64, len(xBefore))
				for i := range want {
					want[i] = xBefore[i] + gBefore[i%2]
				}
				assertEqual(t, tc.name+": x+g read by the next loop", out.DataRO(), want)
			}
		})
	}
}

// TestCheckModeFromEnvironment: OP2_CHECK turns check mode on; a value
// that is not a boolean is refused.
func TestCheckModeFromEnvironment(t *testing.T) {
	cache := os.Getenv("OP2_CACHE_DIR")
	// Registered before Setenv, so it runs after the variable is restored.
	t.Cleanup(func() { check(t, op2.Configure(op2.Config{CacheDir: cache, PlanCheck: true})) })
	t.Setenv("OP2_CHECK", "maybe")
	wantErr(t, op2.Configure(op2.Config{CacheDir: cache}), "OP2_CHECK", "maybe")
	t.Setenv("OP2_CHECK", "1")
	check(t, op2.Configure(op2.Config{CacheDir: cache}))
	c := newCheckMesh()
	k := op2.NewKernel("void ck_env(double *x, double *y) { *y = *x; *(double *)x = 0; }", "ck_env")
	wantErr(t, op2.ParLoop(k, c.nodes, c.x.Arg(op2.Read), c.yn.Arg(op2.Write)), "check mode", `READ dat "x"`)
}

// TestDataROIsACopy: writing into the slice DataRO returns changes
// nothing, on every backend, for Dats and Globals alike.
func TestDataROIsACopy(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		c := newCheckMesh()
		k := op2.NewKernel("void ro_init(double *x, double *g) { x[0] += 1; x[1] += 1; g[0] += 1; }", "ro_init")
		check(t, op2.ParLoop(k, c.nodes, c.x.Arg(op2.RW), c.g.Arg(op2.Inc)))
		x, g := c.x.DataRO(), c.g.DataRO()
		xs, gs := append([]float64(nil), x...), append([]float64(nil), g...)
		for i := range x {
			x[i] = -7
		}
		g[0], g[1] = -7, -7
		assertEqual(t, "x after writing its DataRO copy", c.x.DataRO(), xs)
		assertEqual(t, "g after writing its DataRO copy", c.g.DataRO(), gs)
		sum := must(op2.NewGlobal[float64](1, nil, "sum"))
		add := op2.NewKernel("void ro_sum(const double *x, double *s) { *s += x[0] + x[1]; }", "ro_sum")
		check(t, op2.ParLoop(add, c.nodes, c.x.Arg(op2.Read), sum.Arg(op2.Inc)))
		if got, want := sum.DataRO()[0], sumOf(xs); got != want {
			t.Errorf("a loop after writing the DataRO copy sums %v, want %v", got, want)
		}
	})
}

func sumOf(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s
}

func assertEqual(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d values, want %d", what, len(got), len(want))
		return
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s: value %d is %v, want %v", what, i, got[i], want[i])
			return
		}
	}
}

// TestCheckModeFindsUnwrittenWrites: with Config.Check, a kernel that
// leaves values of a floating-point WRITE argument unwritten (directly,
// through a map, in float64 and float32), which is undefined (the devices
// would write back what their private copies held), makes the loop fail
// with a *LoopError naming the argument and the first such value, on
// every backend and in SIMD lanes; those values keep what they held
// before the loop, and the values written stay. A kernel writing every
// value passes.
func TestCheckModeFindsUnwrittenWrites(t *testing.T) {
	const n = 300
	cases := []struct {
		name, src string
		mapped    bool // y through the map's column 0, else directly
		f32       bool
		skips     bool
	}{
		{"direct", "void cw_direct(const double *x, double *y) { if (x[0] >= 100 && x[0] < 110) return; y[0] = x[0] * 2; }", false, false, true},
		{"map", "void cw_map(const double *x, double *y) { if (x[0] >= 100 && x[0] < 110) return; y[0] = x[0] * 2; }", true, false, true},
		{"float32", "void cw_f32(const double *x, float *y) { if (x[0] >= 100 && x[0] < 110) return; y[0] = (float)(x[0] * 2); }", false, true, true},
		{"writes every value", "void cw_all(const double *x, double *y) { y[0] = x[0] >= 100 && x[0] < 110 ? 0.5 : x[0] * 2; }", false, false, false},
	}
	cache := os.Getenv("OP2_CACHE_DIR")
	defer func() { check(t, op2.Configure(op2.Config{CacheDir: cache, PlanCheck: true})) }()
	for _, b := range allBackends {
		for _, simd := range []string{"", "8"} {
			if simd != "" && isDevice(b) {
				continue
			}
			t.Run(b+"/simd"+simd, func(t *testing.T) {
				check(t, op2.Configure(op2.Config{Backend: b, Check: true, CacheDir: cache, PlanCheck: true, SIMD: simd}))
				for _, tc := range cases {
					c := newCheckMesh()
					// x[2e] = 2e: elements 50 to 54 (x 100 to 108) skip.
					old := make([]float64, n)
					for i := range old {
						old[i] = -float64(i) - 1
					}
					k := op2.NewKernel(tc.src, "cw_"+map[string]string{"direct": "direct", "map": "map", "float32": "f32", "writes every value": "all"}[tc.name])
					var y op2.Arg
					var values func() []float64
					if tc.f32 {
						old32 := make([]float32, n)
						for i := range old32 {
							old32[i] = float32(old[i])
						}
						d := must(op2.NewDat(c.nodes, 1, old32, "y"))
						y = d.Arg(op2.Write)
						values = func() []float64 {
							var out []float64
							for _, v := range d.DataRO() {
								out = append(out, float64(v))
							}
							return out
						}
					} else {
						d := must(op2.NewDat(c.nodes, 1, old, "y"))
						y = d.Arg(op2.Write)
						if tc.mapped {
							y = d.ArgMap(op2.Write, c.m, 0)
						}
						values = func() []float64 { return d.DataRO() }
					}
					set, x := c.nodes, c.x.Arg(op2.Read)
					if tc.mapped {
						set, x = c.edges, c.x.ArgMap(op2.Read, c.m, 0) // edge e reads and writes node e
					}
					err := op2.ParLoop(k, set, x, y)
					want := make([]float64, n)
					for e := range want {
						want[e] = 4 * float64(e)
						if e >= 50 && e < 55 {
							want[e] = 0.5
							if tc.skips {
								want[e] = old[e]
							}
						}
					}
					assertEqual(t, tc.name+": y after the loop", values(), want)
					if !tc.skips {
						check(t, err)
						continue
					}
					var le *op2.LoopError
					if !errors.As(err, &le) || le.Arg != 1 {
						t.Fatalf("%s: error %v, want a *LoopError about argument 1", tc.name, err)
					}
					wantErr(t, err, "check mode", `did not write element 50, component 0 of WRITE dat "y"`, "(5 values in all)", "before the loop")
				}
			})
		}
	}
}

// TestCheckFindingErrorTypes: check mode's finding is the loop's own
// *LoopError, outside a chain and as a ChainError's Err; in one process a
// chain drops the loops after it.
func TestCheckFindingErrorTypes(t *testing.T) {
	r := must(op2.NewRuntime(op2.Config{Check: true}))
	defer r.Close()
	set := must(op2.NewSet(4, "cells"))
	x := must(op2.NewDat(set, 1, []float64{1, 2, 3, 4}, "x"))
	y := must(op2.NewDat[float64](set, 1, nil, "y"))
	bad := op2.NewKernel("void cf_bad(const double *x, double *y) { y[0] = *x; ((double *)x)[0] = -1; }", "cf_bad")
	inc := op2.NewKernel("void cf_inc(double *y) { y[0] += 10; }", "cf_inc")
	if _, ok := r.ParLoop(bad, set, x.Arg(op2.Read), y.Arg(op2.Write)).(*op2.LoopError); !ok {
		t.Error("outside a chain: the finding is no *LoopError")
	}
	err := r.Chain(func() error {
		check(t, r.ParLoop(bad, set, x.Arg(op2.Read), y.Arg(op2.Write)))
		check(t, r.ParLoop(inc, set, y.Arg(op2.RW)))
		return nil
	})
	ce, ok := err.(*op2.ChainError)
	if !ok {
		t.Fatalf("in a chain: %v, want a *ChainError", err)
	}
	if _, ok := ce.Err.(*op2.LoopError); !ok || ce.RanAfter || !strings.Contains(err.Error(), "dropped") {
		t.Errorf("in a chain: %v (Err %T, RanAfter %v), want the loop's *LoopError, the loop after it dropped", err, ce.Err, ce.RanAfter)
	}
	if got := y.DataRO(); !slices.Equal(got, []float64{1, 2, 3, 4}) {
		t.Errorf("y = %v, want [1 2 3 4] (cf_inc dropped)", got)
	}
}
