package op2_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// Tests of what a kernel's source may contain: helper functions with
// pointer arguments, constants in helpers, standard headers, MIN/MAX, and
// names that must not disturb the generated code.

// helperMesh is a small mesh: n edges, each with two nodes of m nodes.
func helperMesh(n, m int) (*op2.Set, *op2.Set, *op2.Map, []int32) {
	edges := must(op2.NewSet(n, "edges"))
	nodes := must(op2.NewSet(m, "nodes"))
	tab := make([]int32, 2*n)
	for i := 0; i < n; i++ {
		tab[2*i], tab[2*i+1] = int32(i%m), int32((3*i+1)%m)
	}
	return edges, nodes, must(op2.NewMap(edges, nodes, 2, tab, "e2n")), tab
}

func seq(n int, f func(i int) float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = f(i)
	}
	return s
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func wantSlice(t *testing.T, what string, got, want []float64) {
	t.Helper()
	for i := range want {
		if !near(got[i], want[i]) {
			t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

// TestHelperFunctionsWithPointerArguments: a kernel passes each kind of
// argument (direct, through a map READ/RW/INC, vector map READ/INC, Global
// READ and reductions) on to helper functions taking plain C pointers
// (to const values for READ arguments, whose parameters are const).
func TestHelperFunctionsWithPointerArguments(t *testing.T) {
	const helpers = `
static void add2(double *a, const double *b) { a[0] += b[0]; a[1] += b[1]; }
static double first2(const double *a) { return a[0] + 10 * a[1]; }
static void addv(double **a, const double *b) { for (int i = 0; i < 2; i++) add2(a[i], b); }
static double sumv(const double *const *a) { return first2(a[0]) + first2(a[1]); }
static void lower(double *m, double v) { if (v < *m) *m = v; }
`
	onEachBackend(t, func(t *testing.T) {
		const n, m = 300, 40
		edges, nodes, e2n, tab := helperMesh(n, m)
		x := must(op2.NewDat(nodes, 2, seq(2*m, func(i int) float64 { return float64(i) }), "x"))
		inc := must(op2.NewDat[float64](nodes, 2, nil, "inc"))
		vinc := must(op2.NewDat[float64](nodes, 2, nil, "vinc"))
		d := must(op2.NewDat(edges, 2, seq(2*n, func(i int) float64 { return float64(i % 7) }), "d"))
		g := must(op2.NewGlobal(2, []float64{0.5, 2}, "g"))
		gs := must(op2.NewGlobal(2, []float64{1, 1}, "gs"))
		gm := must(op2.NewGlobal(1, []float64{1e9}, "gm"))
		k := op2.NewKernel(helpers+`
void k(const double *x, double *inc, double **v, double **vinc, double *d, const double *g, double *gs, double *gm) {
  add2(d, g);
  add2(d, x);
  add2(inc, g);
  add2(inc, x);
  addv(vinc, g);
  d[0] += sumv(v);
  add2(gs, d);
  lower(gm, first2(d));
}`, "k")
		check(t, op2.ParLoop(k, edges, x.ArgMap(op2.Read, e2n, 0), inc.ArgMap(op2.Inc, e2n, 1), x.ArgVec(op2.Read, e2n),
			vinc.ArgVec(op2.Inc, e2n), d.Arg(op2.RW), g.Arg(op2.Read), gs.Arg(op2.Inc), gm.Arg(op2.Min)))

		xv := seq(2*m, func(i int) float64 { return float64(i) })
		wd := seq(2*n, func(i int) float64 { return float64(i % 7) })
		winc, wvinc := make([]float64, 2*m), make([]float64, 2*m)
		wgs, wgm := []float64{1, 1}, 1e9
		gv := []float64{0.5, 2}
		f2 := func(a []float64) float64 { return a[0] + 10*a[1] }
		for e := 0; e < n; e++ {
			a, b := int(tab[2*e]), int(tab[2*e+1])
			for c := 0; c < 2; c++ {
				wd[2*e+c] += gv[c] + xv[2*a+c]
				winc[2*b+c] += gv[c] + xv[2*a+c]
				wvinc[2*a+c] += gv[c]
				wvinc[2*b+c] += gv[c]
			}
			wd[2*e] += f2(xv[2*a:]) + f2(xv[2*b:])
			wgs[0] += wd[2*e]
			wgs[1] += wd[2*e+1]
			wgm = min(wgm, f2(wd[2*e:]))
		}
		wantSlice(t, "d", d.Data(), wd)
		wantSlice(t, "inc", inc.Data(), winc)
		wantSlice(t, "vinc", vinc.Data(), wvinc)
		wantSlice(t, "gs", gs.Data(), wgs)
		wantSlice(t, "gm", gm.Data(), []float64{wgm})

		// RW through a map (one edge per node, so the order of the
		// updates does not matter) and WRITE through a vector map.
		id := must(op2.NewMap(edges, edges, 1, iota32[int32](n), "id"))
		y := must(op2.NewDat(edges, 2, seq(2*n, func(i int) float64 { return float64(i) }), "y"))
		rw := op2.NewKernel(helpers+"void rw(double *y, const double *g) { double *t = y; add2(t, g); add2(y, y); }", "rw")
		check(t, op2.ParLoop(rw, edges, y.ArgMap(op2.RW, id, 0), g.Arg(op2.Read)))
		wantSlice(t, "y", y.Data(), seq(2*n, func(i int) float64 { return 2 * (float64(i) + gv[i%2]) }))
	})
}

// TestConstantsInHelperFunctions: constants are visible in helper
// functions, also in helpers called from helpers and through macros;
// a constant array may be passed to a helper taking a pointer;
// parameters and locals of a helper may shadow a constant; changing a
// constant's value takes effect in the next loop without a new build.
func TestConstantsInHelperFunctions(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		b := op2.Backend()
		scale := must(op2.NewConst(1, []float64{2}, "hscale_"+b))
		arr := must(op2.NewConst(3, []float64{1, 10, 100}, "harr_"+b))
		defer scale.Remove()
		defer arr.Remove()
		src := `
#define SHIFT (harr_B[2])
static double inner(double v) { return v * hscale_B + harr_B[1]; }
static double at(const double *a, int i) { return a[i]; }
static double outer(double v) { return inner(v) + at(harr_B, 0); }
static double shadow(double hscale_B) { double harr_B = 5; return hscale_B + harr_B; }
void k(double *x, double *y) { *x = outer(*x); *y = shadow(*y) + SHIFT; }`
		src = strings.ReplaceAll(src, "_B", "_"+b)
		set := must(op2.NewSet(16, "s"))
		x := must(op2.NewDat(set, 1, iota32[float64](16), "x"))
		y := must(op2.NewDat(set, 1, iota32[float64](16), "y"))
		k := op2.NewKernel(src, "k")
		check(t, op2.ParLoop(k, set, x.Arg(op2.RW), y.Arg(op2.RW)))
		wantSlice(t, "x", x.Data(), seq(16, func(i int) float64 { return float64(i)*2 + 10 + 1 }))
		wantSlice(t, "y", y.Data(), seq(16, func(i int) float64 { return float64(i) + 5 + 100 }))

		before := op2.ReadStats()
		check(t, scale.Set(3))
		check(t, arr.Set(-1, 0, 1000))
		check(t, op2.ParLoop(k, set, x.Arg(op2.Write), y.Arg(op2.RW)))
		wantSlice(t, "x", x.Data(), seq(16, func(i int) float64 { return (float64(i)*2+11)*3 + 0 - 1 }))
		wantSlice(t, "y", y.Data(), seq(16, func(i int) float64 { return float64(i) + 105 + 5 + 1000 }))
		if after := op2.ReadStats(); after.Compiles != before.Compiles {
			t.Errorf("changing constants recompiled: compiles %d -> %d", before.Compiles, after.Compiles)
		}
	})
}

// TestKernelAssigningConstantFails: constants are read-only in kernels on
// opencl: assigning to one fails the build, and the error shows the
// compiler's message.
func TestKernelAssigningConstantFails(t *testing.T) {
	requireDevice(t)
	sc := must(op2.NewConst(1, []float64{2}, "ro_scalar"))
	ar := must(op2.NewConst(2, []float64{2, 3}, "ro_array"))
	defer sc.Remove()
	defer ar.Remove()
	set := must(op2.NewSet(4, "s"))
	x := must(op2.NewDat[float64](set, 1, nil, "x"))
	for _, c := range []struct{ name, src string }{
		{"scalar", "void k(double *x) { ro_scalar = 5; *x = ro_scalar; }"},
		{"array element", "void k(double *x) { ro_array[0] = 5; *x = ro_array[1]; }"},
		{"scalar in a helper", "static void bump(void) { ro_scalar += 1; }\nvoid k(double *x) { bump(); *x = 1; }"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := c.src
			err := op2.ParLoop(op2.NewKernel(src, "k"), set, x.Arg(op2.Write))
			wantErr(t, err, `loop "k"`, "error")
			if err != nil && !strings.Contains(err.Error(), "ro_") {
				t.Errorf("error does not show the compiler's message about the constant: %v", err)
			}
			if sc.Value()[0] != 2 || ar.Value()[0] != 2 {
				t.Errorf("constants changed: %v %v", sc.Value(), ar.Value())
			}
		})
	}
}

// TestStandardHeadersInKernel: kernels including the C standard headers
// whose content OpenCL C has built in run on every backend.
func TestStandardHeadersInKernel(t *testing.T) {
	cases := []struct {
		header, body string
		want         float64
	}{
		{"math.h", "*x = sqrt(4.0) + floor(M_PI);", 5},
		{"stdio.h", `if (*x < -1) printf("negative %f\n", *x); *x = 1;`, 1},
		{"stdint.h", "int64_t a = INT32_MAX; uint8_t b = 255; *x = (double)(a - INT32_MAX + b);", 255},
		{"stdlib.h", "*x = abs(-3);", 3},
		{"string.h", "double t[2] = {7, 8}; double u[2]; memcpy(u, t, sizeof t); memset(t, 0, sizeof t); *x = u[1] + t[0];", 8},
		{"stdbool.h", "bool b = true; *x = b ? 2 : 0;", 2},
		{"float.h", "*x = DBL_EPSILON < 1e-10 && FLT_MAX > 1e30 ? 4 : 0;", 4},
		{"limits.h", "*x = INT_MAX == 2147483647 && CHAR_BIT == 8 ? 6 : 0;", 6},
	}
	onEachBackend(t, func(t *testing.T) {
		set := must(op2.NewSet(4, "s"))
		x := must(op2.NewDat[float64](set, 1, nil, "x"))
		for _, c := range cases {
			for _, form := range []string{"<%s>", `"%s"`} {
				inc := fmt.Sprintf("#include "+form, c.header)
				src := fmt.Sprintf("%s /* a comment after the directive */\n#include <math.h>\nvoid k(double *x) {\n  %s\n}", inc, c.body)
				if err := op2.ParLoop(op2.NewKernel(src, "k"), set, x.Arg(op2.RW)); err != nil {
					t.Fatalf("%s: %v", inc, err)
				}
				if got := x.Data()[3]; got != c.want {
					t.Fatalf("%s: x = %v, want %v", inc, got, c.want)
				}
			}
		}
	})
}

// TestMinMaxInKernel: kernels may use MIN and MAX without defining them
// on opencl; a kernel's own definition (macro or function) wins.
func TestMinMaxInKernel(t *testing.T) {
	requireDevice(t)
	set := must(op2.NewSet(4, "s"))
	x := must(op2.NewDat(set, 1, []float64{1, 2, 3, 4}, "x"))
	for _, c := range []struct {
		name, src string
		want      []float64
	}{
		{"provided", "void k(double *x) { *x = MAX(*x, 2.5) + MIN(*x, 0.0); }", []float64{2.5, 2.5, 3, 4}},
		{"own macros", "#define MIN(a, b) ((a) + (b))\n#define MAX(a, b) ((a) * (b))\nvoid k(double *x) { *x = MIN(*x, 1.0) + MAX(*x, 0.0); }", []float64{3.5, 3.5, 4, 5}},
		{"own function", "static double MAX(double a, double b) { return a - b; }\nvoid k(double *x) { *x = MAX(*x, 1.0); }", []float64{2.5, 2.5, 3, 4}},
	} {
		if err := op2.ParLoop(op2.NewKernel(c.src, "k"), set, x.Arg(op2.RW)); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		wantSlice(t, c.name, x.Data(), c.want)
	}
}

// TestUserNamesDoNotReachGeneratedCode: kernel macros and functions named
// like identifiers the generated code used to have, or like OpenCL
// built-in functions, change nothing.
func TestUserNamesDoNotReachGeneratedCode(t *testing.T) {
	requireDevice(t)
	src := `#define k 1
#define n 2
#define end 3
#define first 4
#define d0 5
#define red0 6
#define ROUND_UP(x) 0
#define lid 7
#define e 8
#define s0 9
#define barrier(x) x
#define get_local_id(x) 0
#define size_t int
static double d1(double v) { return v + k; }
static double dot(const double *a, const double *b) { return a[0] * b[0] + n - end + first - d0 + red0 + lid - e + s0 - 10; }
static double length(double v) { return v; }
void kern(const double *x, double *y, double *acc, double *sum) {
  *y += d1(*x);
  *acc += dot(x, x) + length(ROUND_UP(1));
  *sum += *x;
}`
	const nn, m = 500, 30
	edges, nodes, e2n, tab := helperMesh(nn, m)
	x := must(op2.NewDat(edges, 1, iota32[float64](nn), "x"))
	y := must(op2.NewDat[float64](edges, 1, nil, "y"))
	acc := must(op2.NewDat[float64](nodes, 1, nil, "acc"))
	sum := must(op2.NewGlobal(1, []float64{0}, "sum"))
	check(t, op2.ParLoop(op2.NewKernel(src, "kern"), edges, x.Arg(op2.Read), y.Arg(op2.RW), acc.ArgMap(op2.Inc, e2n, 1), sum.Arg(op2.Inc)))
	wantAcc := make([]float64, m)
	for i := 0; i < nn; i++ {
		wantAcc[tab[2*i+1]] += float64(i*i) + 2
	}
	wantSlice(t, "y", y.Data(), seq(nn, func(i int) float64 { return float64(i + 1) }))
	wantSlice(t, "acc", acc.Data(), wantAcc)
	wantSlice(t, "sum", sum.Data(), []float64{float64(nn * (nn - 1) / 2)})

	// Functions named like the old generated locals.
	src = `static double first(double v) { return v + 1; }
static double d0(double v) { return first(v) * 2; }
static double lid(const double *v) { return d0(*v); }
void kern(const double *x, double *y, double *acc, double *sum) { *y = lid(x); *acc += first(0); *sum += d0(0); }`
	sum.Data()[0] = 0
	check(t, op2.ParLoop(op2.NewKernel(src, "kern"), edges, x.Arg(op2.Read), y.Arg(op2.Write), acc.ArgMap(op2.Inc, e2n, 1), sum.Arg(op2.Inc)))
	wantSlice(t, "y", y.Data(), seq(nn, func(i int) float64 { return float64(2 * (i + 1)) }))
	wantSlice(t, "sum", sum.Data(), []float64{float64(2 * nn)})
}

// TestLargeDimsOnOpenCL: dats whose elements are too large to stage in
// local memory or to copy into private memory, read, written and
// incremented through maps and directly, and reductions of the largest
// dim a Global may have, give the right results on opencl.
func TestLargeDimsOnOpenCL(t *testing.T) {
	requireDevice(t)
	for _, dim := range []int{200, 1 << 16} {
		t.Run(fmt.Sprint("dim ", dim), func(t *testing.T) {
			const n, m = 12, 5
			edges, nodes, e2n, tab := helperMesh(n, m)
			id := must(op2.NewMap(edges, edges, 1, iota32[int32](n), "id"))
			init := func(size int) []float64 { return seq(size*dim, func(i int) float64 { return float64(i%97) + 0.5 }) }
			x := must(op2.NewDat(nodes, dim, init(m), "x"))
			inc := must(op2.NewDat(nodes, dim, init(m), "inc"))
			vinc := must(op2.NewDat(nodes, dim, init(m), "vinc"))
			rw := must(op2.NewDat(edges, dim, init(n), "rw"))
			d := must(op2.NewDat(edges, dim, init(n), "d"))
			const gdim = op2.MaxReductionDim
			g := must(op2.NewGlobal(gdim, seq(gdim, func(i int) float64 { return float64(i) }), "g"))
			gmax := must(op2.NewGlobal(gdim, seq(gdim, func(i int) float64 { return -1 }), "gmax"))
			src := fmt.Sprintf(`#define D %d
void k(const double *x, double **v, double *inc, double **vinc, double *rw, double *d, double *g, double *gmax) {
  for (int i = 0; i < D; i++) {
    double s = x[i] + v[0][i] * 2 + v[1][(i + 1) %% D];
    inc[i] += s;
    vinc[0][i] += 1; vinc[1][i] += s;
    rw[i] = rw[i] * 0.5 + s;
    d[i] += s;
    g[i %% %d] += s;
    if (s > gmax[i %% %d]) gmax[i %% %d] = s;
  }
}`, dim, gdim, gdim, gdim)
			check(t, op2.ParLoop(op2.NewKernel(src, "k"), edges, x.ArgMap(op2.Read, e2n, 0), x.ArgVec(op2.Read, e2n),
				inc.ArgMap(op2.Inc, e2n, 1), vinc.ArgVec(op2.Inc, e2n), rw.ArgMap(op2.RW, id, 0), d.Arg(op2.RW), g.Arg(op2.Inc), gmax.Arg(op2.Max)))

			// Every value is a multiple of 0.5 well within float64's
			// exact range, so the order of the sums does not matter.
			xv, winc, wvinc, wrw, wd := init(m), init(m), init(m), init(n), init(n)
			wg, wgmax := seq(gdim, func(i int) float64 { return float64(i) }), seq(gdim, func(i int) float64 { return -1 })
			for e := 0; e < n; e++ {
				a, b := int(tab[2*e]), int(tab[2*e+1])
				for i := 0; i < dim; i++ {
					s := xv[a*dim+i] + xv[a*dim+i]*2 + xv[b*dim+(i+1)%dim]
					winc[b*dim+i] += s
					wvinc[a*dim+i]++
					wvinc[b*dim+i] += s
					wrw[e*dim+i] = wrw[e*dim+i]*0.5 + s
					wd[e*dim+i] += s
					wg[i%gdim] += s
					wgmax[i%gdim] = max(wgmax[i%gdim], s)
				}
			}
			wantSlice(t, "inc", inc.Data(), winc)
			wantSlice(t, "vinc", vinc.Data(), wvinc)
			wantSlice(t, "rw", rw.Data(), wrw)
			wantSlice(t, "d", d.Data(), wd)
			wantSlice(t, "g", g.Data(), wg)
			wantSlice(t, "gmax", gmax.Data(), wgmax)

			// A direct loop reading a large Global and reducing into one.
			gr := must(op2.NewGlobal(gdim, seq(gdim, func(i int) float64 { return float64(i) / 2 }), "gr"))
			gmin := must(op2.NewGlobal(gdim, seq(gdim, func(i int) float64 { return 1e9 }), "gmin"))
			src = fmt.Sprintf(`void k2(double *d, const double *gr, double *gmin) {
  for (int i = 0; i < %d; i++) { d[i] += gr[i %% %d]; if (d[i] < gmin[i %% %d]) gmin[i %% %d] = d[i]; }
}`, dim, gdim, gdim, gdim)
			check(t, op2.ParLoop(op2.NewKernel(src, "k2"), edges, d.Arg(op2.RW), gr.Arg(op2.Read), gmin.Arg(op2.Min)))
			wgmin := seq(gdim, func(i int) float64 { return 1e9 })
			for e := 0; e < n; e++ {
				for i := 0; i < dim; i++ {
					wd[e*dim+i] += float64(i%gdim) / 2
					wgmin[i%gdim] = min(wgmin[i%gdim], wd[e*dim+i])
				}
			}
			wantSlice(t, "d after k2", d.Data(), wd)
			wantSlice(t, "gmin", gmin.Data(), wgmin)
		})
	}
}

// TestFileScopeConstTables: const lookup tables at file scope, as C
// kernels declare them, work on every backend.
func TestFileScopeConstTables(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		src := `static const double w[3] = {0.5, 0.25, 0.125};
const int idx[2] = {2, 0}, one = 1;
struct pair { const double a; double b; };
void k(double *x) { struct pair p = {1, 2}; *x = w[idx[0]] + w[idx[one]] + p.a; }`
		set := must(op2.NewSet(4, "s"))
		x := must(op2.NewDat[float64](set, 1, nil, "x"))
		check(t, op2.ParLoop(op2.NewKernel(src, "k"), set, x.Arg(op2.Write)))
		wantSlice(t, "x", x.Data(), []float64{1.625, 1.625, 1.625, 1.625})
	})
}

// TestLargeArgumentToHelperExplained: an argument too large for a private
// copy cannot be passed to a helper on opencl; the build error says why.
func TestLargeArgumentToHelperExplained(t *testing.T) {
	requireDevice(t)
	set := must(op2.NewSet(4, "s"))
	x := must(op2.NewDat[float64](set, 512, nil, "wide"))
	src := "static void zero(double *v) { v[0] = 0; }\nvoid k(double *x) { zero(x); }"
	err := op2.ParLoop(op2.NewKernel(src, "k"), set, x.Arg(op2.RW))
	wantErr(t, err, `loop "k"`, "argument 0", `dat "wide"`, "1024 bytes", "__global pointer", "helper functions")
}

// TestFileScopeConstStrings: file-scope const data reached through
// pointers (const char *msg = "...", an array of such pointers) compiles
// and runs on every backend; on opencl the pointers themselves are put in
// __constant.
func TestFileScopeConstStrings(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		src := `static const char *msg = "AB";
const char *const names[2] = {"xyz", "Q"};
const double *const none = 0;
void k(double *x) { *x = msg[1] + names[1][0] + (none == 0); }`
		set := must(op2.NewSet(4, "s"))
		x := must(op2.NewDat[float64](set, 1, nil, "x"))
		check(t, op2.ParLoop(op2.NewKernel(src, "k"), set, x.Arg(op2.Write)))
		want := float64('B' + 'Q' + 1)
		wantSlice(t, "x", x.Data(), []float64{want, want, want, want})
	})
}

// TestKernelWithByteOrderMark: a kernel read from a file saved with a
// byte order mark builds and runs (the mark was a stray character in the
// generated file).
func TestKernelWithByteOrderMark(t *testing.T) {
	s := must(op2.NewSet(4, "s"))
	x := must(op2.NewDat(s, 1, []float64{1, 2, 3, 4}, "x"))
	check(t, op2.ParLoop(op2.NewKernel("\ufeffvoid bom(double *x) { *x *= 2; }\n", "bom"), s, x.Arg(op2.RW)))
	if got := x.DataRO(); !slices.Equal(got, []float64{2, 4, 6, 8}) {
		t.Errorf("x = %v, want [2 4 6 8]", got)
	}
}

// TestKernelNamesOfLegacyFunctions: a kernel may name its own helpers,
// constants and types as the host headers' legacy functions (index,
// gamma, y1, random: not ISO C, declared by glibc's defaults), which the
// host backends refused as conflicting types; a kernel calling the real
// ones (j0) still gets them.
func TestKernelNamesOfLegacyFunctions(t *testing.T) {
	defer func() { check(t, op2.Configure(op2.Config{})) }()
	for _, c := range []struct {
		src  string
		want func(x0, x1 float64) [2]float64
	}{
		{"static inline int index(int i, int j) { return i*2 + j; }\nvoid k(const double *x, double *y) { y[0] = x[index(0,1)]; y[1] = x[index(0,0)]; }",
			func(x0, x1 float64) [2]float64 { return [2]float64{x1, x0} }},
		{"static const double gamma = 1.5;\nvoid k(const double *x, double *y) { y[0] = gamma * x[0]; y[1] = x[1]; }",
			func(x0, x1 float64) [2]float64 { return [2]float64{1.5 * x0, x1} }},
		{"static double y1(double v) { return v + 1; }\ntypedef double select;\nvoid k(const double *x, double *y) { select s = y1(x[0]); y[0] = s; y[1] = x[1]; }",
			func(x0, x1 float64) [2]float64 { return [2]float64{x0 + 1, x1} }},
		{"static long random(void) { return 4; }\nvoid k(const double *x, double *y) { y[0] = random() * x[0]; y[1] = x[1]; }",
			func(x0, x1 float64) [2]float64 { return [2]float64{4 * x0, x1} }},
		{"void k(const double *x, double *y) { y[0] = j0(x[0]); y[1] = x[1]; }",
			func(x0, x1 float64) [2]float64 { return [2]float64{math.J0(x0), x1} }},
	} {
		for _, backend := range hostBackends {
			check(t, op2.Configure(op2.Config{Backend: backend}))
			s := must(op2.NewSet(5, "s"))
			x := must(op2.NewDat(s, 2, iota32[float64](10), "x"))
			y := must(op2.NewDat[float64](s, 2, nil, "y"))
			if err := op2.ParLoop(op2.NewKernel(c.src, "k"), s, x.Arg(op2.Read), y.Arg(op2.Write)); err != nil {
				t.Errorf("%s: %v\nkernel: %s", backend, err, c.src)
				continue
			}
			got := y.DataRO()
			for e := range 5 {
				w := c.want(float64(2*e), float64(2*e+1))
				if math.Abs(got[2*e]-w[0]) > 1e-15 || got[2*e+1] != w[1] {
					t.Errorf("%s: element %d: %v, want %v\nkernel: %s", backend, e, got[2*e:2*e+2], w, c.src)
					break
				}
			}
		}
	}
}

// TestKernelsOfOldStyle: kernels valid in C17 that the checks of calls
// must not refuse: a helper with an empty list, printf without stdio.h
// (the device compilers have it too), _GNU_SOURCE with a comment over
// two lines, _POSIX_C_SOURCE beside M_PI, legacy functions used as
// values, and a struct tag named as one.
func TestKernelsOfOldStyle(t *testing.T) {
	defer func() { check(t, op2.Configure(op2.Config{})) }()
	for _, c := range []struct {
		src  string
		want float64 // y[0] for x[0] = 1
	}{
		{"static double two() { return 2.0; }\nvoid k(const double *x, double *y) { y[0] = two() * x[0]; }", 2},
		{"void k(const double *x, double *y) { if (x[0] < 0) printf(\"negative\\n\"); y[0] = x[0]; }", 1},
		{"#define _GNU_SOURCE /* for\n sincos */\n#include <math.h>\nvoid k(const double *x, double *y) { double s, c; sincos(x[0], &s, &c); y[0] = s * s + c * c; }", 1},
		{"#define _POSIX_C_SOURCE 200809L\nvoid k(const double *x, double *y) { y[0] = x[0] * (M_PI > 3); }", 1},
		{"static long (*rng)(void) = random;\nstatic double (*const bes[2])(double) = {j0, y1};\nvoid k(const double *x, double *y) { y[0] = x[0] + 0 * (rng != 0) + 0 * bes[0](0.0); }", 1},
		{"struct index { int i; };\nvoid k(const double *x, double *y) { y[0] = x[0] * (index(\"ab\", 'b') != 0); }", 1},
		{"struct P { double y1; };\nvoid k(const double *x, double *y) { struct P p = {y1(1.0)}; y[0] = x[0] + 0 * p.y1; }", 1},
		{"static double gamma, y1v;\nstatic int (*select)(int);\nenum { y0 = 2 };\nvoid k(const double *x, double *y) { gamma = y0; y[0] = x[0] * gamma / 2 + 0 * (select != 0); }", 1},
		{"#include <stdlib.h>\nstatic int cmp();\nvoid k(const double *x, double *y) { double v[2] = {x[0], -x[0]}; qsort(v, 2, sizeof(double), cmp); y[0] = v[1]; }\nstatic int cmp(const void *a, const void *b) { double d = *(const double *)a - *(const double *)b; return d < 0 ? -1 : d > 0; }", 1},
		{"static double scale();\nvoid k(const double *x, double *y) { y[0] = scale(x[0], 3); }\nstatic double scale(double v, double s) { return v * s; }", 3},
		{"static double one(void) { return 1.0; }\nstatic double apply(double (*f)(), double v) { return f() * v; }\nvoid k(const double *x, double *y) { double (*fp)() = one; y[0] = apply(fp, x[0]) * fp(); }", 1},
		{"static double two_(void) { return 2.0; }\nstatic double twice(double (*f)(), double v);\nvoid k(const double *x, double *y) { y[0] = twice(two_, x[0]); }\nstatic double twice(double (*f)(), double v) { return f() * v; }", 2},
		{"#define DECL_HELPER() static double helper(double)\nDECL_HELPER();\nvoid k(const double *x, double *y) { y[0] = helper(x[0]); }\nstatic double helper(double v) { return v; }", 1},
	} {
		for _, backend := range hostBackends {
			check(t, op2.Configure(op2.Config{Backend: backend}))
			s := must(op2.NewSet(3, "s"))
			x := must(op2.NewDat(s, 1, []float64{1, 1, 1}, "x"))
			y := must(op2.NewDat[float64](s, 1, nil, "y"))
			if err := op2.ParLoop(op2.NewKernel(c.src, "k"), s, x.Arg(op2.Read), y.Arg(op2.Write)); err != nil {
				t.Errorf("%s: %v\nkernel: %s", backend, err, c.src)
				continue
			}
			if got := y.DataRO()[0]; math.Abs(got-c.want) > 1e-15 {
				t.Errorf("%s: y = %v, want %v\nkernel: %s", backend, got, c.want, c.src)
			}
		}
	}
}

// TestKernelWithFunctionPointerTypedef: a typedef of a pointer to a
// function of several parameters (a flux function table) names that
// type only: its parameters' types were read as typedef names, and the
// kernel's own double parameters refused.
func TestKernelWithFunctionPointerTypedef(t *testing.T) {
	s := must(op2.NewSet(3, "s"))
	x := must(op2.NewDat(s, 1, []float64{1, 2, 3}, "x"))
	y := must(op2.NewDat[float64](s, 1, nil, "y"))
	src := `typedef double (*flux_fn)(double, double);
static double upwind(double a, double b) { return a > b ? a : b; }
static const flux_fn fluxes[1] = {upwind};
void fpt(const double *x, double *y) { y[0] = fluxes[0](x[0], 2.0); }`
	check(t, op2.ParLoop(op2.NewKernel(src, "fpt"), s, x.Arg(op2.Read), y.Arg(op2.Write)))
	if got := y.DataRO(); !slices.Equal(got, []float64{2, 2, 3}) {
		t.Errorf("y = %v, want [2 2 3]", got)
	}
}
