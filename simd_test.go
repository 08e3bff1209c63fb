package op2_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/testreq"
)

// simdOutcome is what the loops of runSIMDLoops leave behind.
type simdOutcome struct {
	res, r3, r5, direct []float64
	mat                 []float64
	rw, wr              []float64
	mth                 []float64
	f, mf               []float32
	n                   []int32
	lo                  []float64
	sum                 float64
	minmax              [2]float64
}

// runSIMDLoops runs, on a mesh of ne edges joining nn cells that
// consecutive edges share, loops of every shape SIMD lanes take:
// increments through a map of dims 4, 3 (rows of 2 and 1) and 5 (4 and
// 1), direct RW, WRITE and INC, float and int data, a view, Globals read
// and reduced (INC, MIN, MAX), MIN through a map, an early return,
// vector arguments (READ, INC, MIN), helper functions, math functions
// called through SIMD clones, a matrix
// argument, RW and WRITE through a map (one map entry and a vector
// argument; WRITE leaving a component as it was), whose chunks conflict
// where consecutive edges share a cell, and a C++ kernel.
func runSIMDLoops(t *testing.T, ne, nn int) simdOutcome {
	edges, cells, ecell := scatteredEdges(ne, nn, 3, 5)
	vals := func(n int, seed float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = 1 + math.Sin(seed*float64(i+1))/3
		}
		return v
	}
	q := must(op2.NewDat(cells, 4, vals(4*nn, 0.7), "q"))
	res := must(op2.NewDat[float64](cells, 4, nil, "res"))
	x3 := must(op2.NewDat(cells, 3, vals(3*nn, 1.3), "x3"))
	r3 := must(op2.NewDat[float64](cells, 3, nil, "r3"))
	r5 := must(op2.NewDat(cells, 5, vals(5*nn, 0.1), "r5"))
	w := must(op2.NewDat(edges, 1, vals(ne, 2.9), "w"))
	direct := must(op2.NewDat(edges, 3, vals(3*ne, 0.3), "direct"))
	f := must(op2.NewDat(edges, 2, make([]float32, 2*ne), "f"))
	n := must(op2.NewDat(edges, 1, make([]int32, ne), "n"))
	lo := must(op2.NewDat(cells, 2, slices.Repeat([]float64{9}, 2*nn), "lo"))
	eps := must(op2.NewGlobal(2, []float64{0.25, -1}, "eps"))
	sum := must(op2.NewGlobal(1, []float64{0.5}, "sum"))
	mn := must(op2.NewGlobal(1, []float64{math.Inf(1)}, "mn"))
	mx := must(op2.NewGlobal(1, []float64{math.Inf(-1)}, "mx"))
	view := must(direct.View(1))

	flux := op2.NewKernel(`void flux(const double *q1, const double *q2, const double *x1, const double *x2, const double *w,
    const double *eps, double *r1, double *r2, double *s1, double *s2) {
  double ri = 1.0 / q1[0], rj = 1.0 / q2[0];
  double mu = 0.5 * ((*w) + x1[2] * x2[1]) * eps[0];
  for (int k = 0; k < 4; k++) {
    double g = 0.5 * (ri * q1[k] + rj * q2[k]) + mu * (q1[k] - q2[k]);
    r1[k] += g; r2[k] -= g;
  }
  for (int k = 0; k < 3; k++) { s1[k] += sqrt(fabs(x1[k] - x2[k])) * ri; s2[k] -= x1[k] * rj; }
}`, "flux")
	check(t, op2.ParLoop(flux, edges, q.ArgMap(op2.Read, ecell, 0), q.ArgMap(op2.Read, ecell, 1),
		x3.ArgMap(op2.Read, ecell, 0), x3.ArgMap(op2.Read, ecell, 1), w.Arg(op2.Read), eps.Arg(op2.Read),
		res.ArgMap(op2.Inc, ecell, 0), res.ArgMap(op2.Inc, ecell, 1), r3.ArgMap(op2.Inc, ecell, 0), r3.ArgMap(op2.Inc, ecell, 1)))
	five := op2.NewKernel(`void five(const double *w, double *a, double *b, double *d, double *s, double *mn, double *mx) {
  for (int k = 0; k < 5; k++) { a[k] += (*w) * k; b[k] += a[k] * 0.5; }
  d[0] = d[0] * (*w) + 1; d[2] += d[1];
  *s += d[0]; *s += d[2] * 1e-3;
  if (*w < *mn) *mn = *w;
  if (d[0] > mx[0]) mx[0] = d[0];
}`, "five")
	check(t, op2.ParLoop(five, edges, w.Arg(op2.Read), r5.ArgMap(op2.Inc, ecell, 1), r5.ArgMap(op2.Inc, ecell, 0),
		direct.Arg(op2.RW), sum.Arg(op2.Inc), mn.Arg(op2.Min), mx.Arg(op2.Max)))
	typed := op2.NewKernel(`void typed(const double *v, float *f, int *n, double *lo1, double *lo2) {
  f[0] = (float)(*v) * 2.0f; f[1] = f[0] - 1.0f;
  *n = (int)(v[0] * 100.0) & 7;
  if (*n > 3) return;
  lo1[0] = *v; lo2[1] = -(*v);
}`, "typed")
	check(t, op2.ParLoop(typed, edges, view.Arg(op2.Read), f.Arg(op2.Write), n.Arg(op2.Write),
		lo.ArgMap(op2.Min, ecell, 0), lo.ArgMap(op2.Min, ecell, 1)))
	vec := op2.NewKernel(`void vec(const double **q, const double *w, double **acc, double **lo) {
  for (int c = 0; c < 2; c++) {
    for (int k = 0; k < 3; k++) acc[c][k] += q[1 - c][k] * (*w) - q[c][k + 1];
    *lo[c] = q[c][2] * (*w);
  }
}`, "vec")
	check(t, op2.ParLoop(vec, edges, q.ArgVec(op2.Read, ecell), w.Arg(op2.Read), r3.ArgVec(op2.Inc, ecell), lo.ArgVec(op2.Min, ecell)))
	// Helpers the kernel passes its parameters and a vector argument's
	// row to.
	helped := op2.NewKernel(`static void hdiff(const double *a[2], double d[3]) { for (int k = 0; k < 3; k++) d[k] = a[1][k] - a[0][k]; }
static double hfirst(const double *v) { return v[0]; }
void helped(const double **x, const double *w, double **acc) {
  double d[3];
  hdiff(x, d);
  for (int c = 0; c < 2; c++)
    for (int k = 0; k < 3; k++) acc[c][k] += d[k] / (1.0 + hfirst(w)) - hfirst(x[c]);
}`, "helped")
	check(t, op2.ParLoop(helped, edges, x3.ArgVec(op2.Read, ecell), w.Arg(op2.Read), r3.ArgVec(op2.Inc, ecell)))
	// An element matrix of 2×2 blocks of 2×2 values added through the
	// edges' cells (no a*b+c, which either form may contract).
	sp := must(op2.NewSparsity(cells, 2, cells, 2, []op2.MapPair{{Row: ecell, Col: ecell}}, "sp"))
	K := must(op2.NewMat[float64](sp, "K"))
	emat := op2.NewKernel(`void emat(const double *w, const double *q1, const double *q2, double *K) {
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) K[i * 4 + j] = (*w) * (i < 2 ? q1[i] : q2[i - 2]) / (j < 2 ? q2[j + 1] : q1[j]);
}`, "emat")
	check(t, op2.ParLoop(emat, edges, w.Arg(op2.Read), q.ArgMap(op2.Read, ecell, 0), q.ArgMap(op2.Read, ecell, 1), K.Arg(op2.Inc, ecell, ecell)))
	_, _, mat, err := K.Values()
	check(t, err)
	rw := must(op2.NewDat(cells, 3, vals(3*nn, 2.3), "rw"))
	wr := must(op2.NewDat(cells, 2, vals(2*nn, 0.9), "wr"))
	relax := op2.NewKernel(`void relax(const double *w, double *a, double *c) {
  a[0] = a[0] * 0.5 + a[1] * (*w);
  a[2] += a[0] * 0.25;
  c[1] = (*w) * 3.0 - a[1];
}`, "relax")
	check(t, op2.ParLoop(relax, edges, w.Arg(op2.Read), rw.ArgMap(op2.RW, ecell, 0), wr.ArgMap(op2.Write, ecell, 1)))
	swap := op2.NewKernel(`void swap(const double *w, double **v) {
  for (int k = 0; k < 3; k++) { double t = v[0][k]; v[0][k] = v[1][k] * (*w); v[1][k] = t - (*w); }
}`, "swap")
	check(t, op2.ParLoop(swap, edges, w.Arg(op2.Read), rw.ArgVec(op2.RW, ecell)))
	// Math functions the compiler cannot vectorise, which the lanes call
	// through SIMD clones, a float form and a helper's among them; the calls with a
	// constant argument stay the functions' own, which GCC folds (cbrt)
	// or simplifies (pow(a, 2.0) is a*a, -sin(-x) sin(x), hypot(x, 0.0)
	// fabs(x)) as in the scalar code. (GCC folds cbrt correctly rounded;
	// glibc's cbrt of 1.0001262785705265 is 1 ulp below that.)
	mth := must(op2.NewDat[float64](edges, 3, nil, "mth"))
	mf := must(op2.NewDat[float32](edges, 1, nil, "mf"))
	mathk := op2.NewKernel(`#include <math.h>
static double mh(double v) { return tanh(v) / 3; }
void mathk(const double *w, const double *q1, double *m, float *f) {
  double a = fabs(*w) + 0.5;
  m[0] = cbrt(a) / q1[0] + pow(a, 2.0) / q1[1] + cbrt(1.0001262785705265) / a;
  m[1] = exp(-a / q1[2]) + atan2(q1[3], a) / q1[0] + sin(-a) / q1[1] - sin(-q1[2]) + pow(q1[2], 0.5) + hypot(q1[1], 0.0);
  m[2] = pow(q1[1], a) / sqrt(a) + log1p(a) / q1[2] + fmod(q1[3] * 100, 7.5) + mh(q1[0] - a);
  f[0] = expf((float)a / 4.0f) / (float)q1[0];
}`, "mathk")
	check(t, op2.ParLoop(mathk, edges, w.Arg(op2.Read), q.ArgMap(op2.Read, ecell, 0), mth.Arg(op2.Write), mf.Arg(op2.Write)))
	// A C++ kernel: a template, a namespace, std:: math, auto.
	cxx := op2.NewKernel(`#include <cmath>
template <typename T> static inline T half(T a) { return a / 2; }
namespace phys { inline double mu(double w, double x) { return w * x; } }
void cxxflux(const double *q1, const double *q2, const double *w, double *r1, double *r2) {
  const auto ri = 1.0 / q1[0];
  for (int k = 0; k < 4; ++k) {
    const double g = half(ri * q1[k] + q2[k]) + phys::mu(*w, std::fabs(q1[k] - q2[k]));
    r1[k] += g; r2[k] -= g;
  }
}`, "cxxflux").CXX()
	check(t, op2.ParLoop(cxx, edges, q.ArgMap(op2.Read, ecell, 0), q.ArgMap(op2.Read, ecell, 1), w.Arg(op2.Read),
		res.ArgMap(op2.Inc, ecell, 0), res.ArgMap(op2.Inc, ecell, 1)))
	return simdOutcome{res: res.Data(), r3: r3.Data(), r5: r5.Data(), direct: direct.Data(), mat: mat, rw: rw.Data(), wr: wr.Data(), mth: mth.Data(), f: f.Data(), mf: mf.Data(), n: n.Data(),
		lo: lo.Data(), sum: sum.Value(), minmax: [2]float64{mn.Value(), mx.Value()}}
}

// TestSIMDLanesMatchScalar: with SIMD lanes (4 and 8, and the tuner
// choosing) the host backends give the scalar sequential code's results
// bit for bit on meshes whose consecutive edges share cells, with set
// sizes that leave chunks unfilled; only the Global sum may differ in its
// last bits (each element's contributions are summed in its lane first).
func TestSIMDLanesMatchScalar(t *testing.T) {
	defer func() { check(t, op2.Configure(op2.Config{})) }()
	sizes := [][2]int{{0, 3}, {3, 4}, {13, 7}, {1001, 301}}
	if !testing.Short() {
		sizes = append(sizes, [2]int{20011, 3001})
	}
	type setting struct {
		backend, simd, scheme string
		threads               int
		tune                  bool
	}
	settings := []setting{{"sequential", "4", "", 1, false}, {"sequential", "8", "", 1, false}, {"openmp", "8", "owner", 2, false},
		{"openmp", "4", "colour", 3, false}, {"sequential", "auto", "", 1, true}, {"openmp", "auto", "owner", 2, true}}
	for _, sz := range sizes {
		check(t, op2.Configure(op2.Config{Backend: "sequential", SIMD: "off"}))
		want := runSIMDLoops(t, sz[0], sz[1])
		for _, s := range settings {
			what := fmt.Sprintf("%d edges, %d cells, %s SIMD=%s %s %d threads tune=%v", sz[0], sz[1], s.backend, s.simd, s.scheme, s.threads, s.tune)
			check(t, op2.Configure(op2.Config{Backend: s.backend, SIMD: s.simd, OpenMPScheme: s.scheme, Threads: s.threads, Tune: s.tune}))
			// Tuned settings measure a few calls per setting: run enough.
			runs := 1
			if s.tune {
				runs = 12
			}
			for range runs {
				got := runSIMDLoops(t, sz[0], sz[1])
				if s.backend == "openmp" {
					// Increments from different threads meet in another
					// order than the sequential one, and the plan's
					// colours order RW and WRITE through maps: those
					// are compared with the scalar code's run in the
					// same order below.
					sameWithin(t, what, want, got, 1e-12, false)
					continue
				}
				sameWithin(t, what, want, got, 0, true)
			}
			if s.backend == "openmp" && !s.tune {
				got := runSIMDLoops(t, sz[0], sz[1])
				check(t, op2.Configure(op2.Config{Backend: s.backend, SIMD: "off", OpenMPScheme: s.scheme, Threads: s.threads}))
				ref := runSIMDLoops(t, sz[0], sz[1])
				if !slices.Equal(got.rw, ref.rw) || !slices.Equal(got.wr, ref.wr) {
					t.Fatalf("%s: RW or WRITE through a map differs from the scalar code's in the same order", what)
				}
			}
		}
	}
}

// sameWithin compares two outcomes of runSIMDLoops, the values that
// depend on the order of conflicting RW and WRITE through maps only when
// ordered (both ran the elements in the same order).
func sameWithin(t *testing.T, what string, want, got simdOutcome, tol float64, ordered bool) {
	t.Helper()
	near := func(a, b float64) bool { return a == b || math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }
	type cmp struct {
		name string
		w, g []float64
	}
	cmps := []cmp{{"res", want.res, got.res}, {"r3", want.r3, got.r3}, {"r5", want.r5, got.r5}, {"direct", want.direct, got.direct}, {"lo", want.lo, got.lo},
		{"matrix", want.mat, got.mat}, {"mth", want.mth, got.mth}}
	if ordered {
		cmps = append(cmps, cmp{"rw", want.rw, got.rw}, cmp{"wr", want.wr, got.wr})
	}
	for _, c := range cmps {
		for i := range c.w {
			if !near(c.g[i], c.w[i]) {
				t.Fatalf("%s: %s[%d] = %v, scalar sequential gives %v", what, c.name, i, c.g[i], c.w[i])
			}
		}
	}
	if !slices.Equal(want.f, got.f) || !slices.Equal(want.mf, got.mf) || !slices.Equal(want.n, got.n) || want.minmax != got.minmax {
		t.Fatalf("%s: float, int or min/max results differ from the scalar code's", what)
	}
	if math.Abs(want.sum-got.sum) > 1e-12*math.Abs(want.sum) {
		t.Fatalf("%s: sum = %v, scalar sequential gives %v", what, got.sum, want.sum)
	}
}

// TestSIMDSettingRefused: an unknown SIMD setting, from the
// configuration or the environment, is an error naming it and what is
// accepted, on both host backends.
func TestSIMDSettingRefused(t *testing.T) {
	for _, backend := range hostBackends {
		_, err := op2.NewRuntime(op2.Config{Backend: backend, SIMD: "16"})
		wantErr(t, err, `Config.SIMD: unknown SIMD setting "16": want auto, scalar, off, or a lane count (4, 8)`)
		t.Setenv("OP2_SIMD", "wide")
		_, err = op2.NewRuntime(op2.Config{Backend: backend})
		wantErr(t, err, `OP2_SIMD="wide": unknown SIMD setting "wide"`)
		t.Setenv("OP2_SIMD", "simd8")
		if r := must(op2.NewRuntime(op2.Config{Backend: backend})); r.Backend() != backend {
			t.Errorf("runtime with OP2_SIMD=simd8 runs on %s, want %s", r.Backend(), backend)
		}
	}
}

// TestSIMDFallsBackToScalar: with lanes configured and a compiler that
// cannot build them (here one that refuses any source with a lane form,
// as GCC before 12 refuses __builtin_shufflevector), a loop runs the
// scalar code and gives its results; the tuner marks the lane variants
// failed and keeps the scalar code.
func TestSIMDFallsBackToScalar(t *testing.T) {
	gcc := testreq.Command(t, "cc", "gcc")
	script := filepath.Join(t.TempDir(), "cc-without-lanes")
	body := "#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in *.c) if grep -q op2_lanes_ \"$a\"; then echo 'no lanes here' >&2; exit 1; fi;; esac; done\nexec " + gcc + " \"$@\"\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	defer func() { check(t, op2.Configure(op2.Config{})) }()
	// The scalar code of the compiler the script runs (not $CC's: Clang
	// and GCC may differ in the last bit, folding math calls).
	check(t, op2.Configure(op2.Config{Backend: "sequential", SIMD: "off", CC: gcc}))
	want := runSIMDLoops(t, 101, 37)
	for _, backend := range hostBackends {
		var log bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&log, nil))
		for _, cfg := range []op2.Config{{SIMD: "8"}, {SIMD: "auto", Tune: true, Logger: logger}} {
			cfg.Backend, cfg.CC, cfg.CacheDir, cfg.Threads = backend, script, t.TempDir(), 1
			check(t, op2.Configure(cfg))
			// Enough calls for the tuner to measure every variant
			// (3 calls each) and then the block sizes.
			for range 25 {
				sameWithin(t, backend+" with a compiler refusing lanes", want, runSIMDLoops(t, 101, 37), 0, backend == "sequential")
			}
		}
		if !strings.Contains(log.String(), "simd8: failed to build") {
			t.Errorf("%s: the tuner did not mark the lane variants failed:\n%s", backend, log.String())
		}
	}
}

// TestCXXKernelBuildsLanes: a C++ kernel's loop is compiled with its lane
// form by the C++ compiler (here a g++ that notes each lane form it
// compiles) under SIMD 8 and the defaults, and gives the scalar code's
// results.
func TestCXXKernelBuildsLanes(t *testing.T) {
	gxx := testreq.Command(t, "cc", "g++")
	dir := t.TempDir()
	marker := filepath.Join(dir, "built-lanes")
	script := filepath.Join(dir, "gxx-noting-lanes")
	body := "#!/bin/sh\n" + gxx + " \"$@\" || exit $?\nfor a in \"$@\"; do case \"$a\" in *.c|*.cc) if grep -q op2_lanes_ \"$a\"; then touch " + marker + "; fi;; esac; done\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	defer func() { check(t, op2.Configure(op2.Config{})) }()
	run := func() []float64 {
		edges, _, ecell := scatteredEdges(203, 50, 3, 5)
		q := must(op2.NewDat(ecell.To(), 4, iota32[float64](200), "q"))
		r := must(op2.NewDat[float64](ecell.To(), 4, nil, "r"))
		k := op2.NewKernel(`#include <cmath>
namespace op { template <typename T> inline T twice(T a) { return a + a; } }
void cxxk(const double *a, const double *b, double *ra, double *rb) {
  for (int k = 0; k < 4; ++k) { const double d = op::twice(std::sqrt(a[k] + 1.0) - b[k] / (a[k] + 2.0)); ra[k] += d; rb[k] -= d; }
}`, "cxxk").CXX()
		check(t, op2.ParLoop(k, edges, q.ArgMap(op2.Read, ecell, 0), q.ArgMap(op2.Read, ecell, 1), r.ArgMap(op2.Inc, ecell, 0), r.ArgMap(op2.Inc, ecell, 1)))
		return r.Data()
	}
	check(t, op2.Configure(op2.Config{Backend: "sequential", SIMD: "off"}))
	want := run()
	for _, backend := range hostBackends {
		for _, simd := range []string{"8", ""} {
			os.Remove(marker)
			check(t, op2.Configure(op2.Config{Backend: backend, SIMD: simd, CXX: script, CacheDir: t.TempDir(), Threads: 1}))
			if got := run(); !slices.Equal(got, want) {
				t.Errorf("%s SIMD=%q: results differ from the scalar code's", backend, simd)
			}
			if _, err := os.Stat(marker); err != nil {
				t.Errorf("%s SIMD=%q: the C++ compiler built no lane form", backend, simd)
			}
		}
	}
}

// TestExtrudedLanesMatchScalar: loops over extruded sets, with fixed and
// variable layers, run each column's layers in SIMD lanes (the lane form
// is generated) and give the scalar code's results bit for bit: the
// column's points reached through an extruded map of two layers per
// element (READ and INC, so that consecutive layers increment one point),
// a per-layer WRITE, the layer, a Dat on the base set read every layer,
// and Global reductions; layer counts leave chunks unfilled.
func TestExtrudedLanesMatchScalar(t *testing.T) {
	defer func() { check(t, op2.Configure(op2.Config{})) }()
	const ncol = 37
	src := `void seg(const double *zb, const double *zt, const double *w, const int *layer, double *len, double **p, double *sum, double *hi) {
  double d = (zt[0] - zb[0]) * (*w) + 0.125 * (*layer);
  len[0] = d; len[1] = d * zb[1];
  for (int i = 0; i < 2; i++) { p[i][0] += d * (i + 1); p[i][1] -= zt[1] * 0.5; }
  *sum += d;
  if (d > *hi) *hi = d;
}`
	run := func(nz int, variable bool) [][]float64 {
		cols := must(op2.NewSet(ncol, "cols"))
		var segs *op2.ExtrudedSet
		if variable {
			ranges := make([]int32, 2*ncol)
			for c := range ncol {
				lo := (c * 7) % (nz / 2)
				ranges[2*c], ranges[2*c+1] = int32(lo), int32(nz-(c*3)%(nz/2))
			}
			segs = must(op2.NewVariableExtrudedSet(cols, nz, ranges, "segs"))
		} else {
			segs = must(op2.NewExtrudedSet(cols, nz, "segs"))
		}
		pts := must(op2.NewExtrudedSet(cols, nz+1, "pts"))
		id := make([]int32, 2*ncol)
		for c := range ncol {
			id[2*c], id[2*c+1] = int32(c), int32(c)
		}
		two := must(op2.NewMap(cols, cols, 2, id, "two"))
		m := must(op2.NewExtrudedMap(segs, pts, two, []int{0, 1}, []int{1, 1}, "m"))
		z := make([]float64, 2*ncol*(nz+1))
		for i := range z {
			z[i] = 1 + math.Sin(float64(i)*0.37)
		}
		zd := must(op2.NewExtrudedDat(pts, 2, z, "z"))
		w := must(op2.NewDat(cols, 1, z[:ncol], "w"))
		length := must(op2.NewExtrudedDat(segs, 2, slices.Repeat([]float64{-7}, 2*ncol*nz), "len"))
		acc := must(op2.NewExtrudedDat(pts, 2, slices.Repeat([]float64{0.25}, 2*ncol*(nz+1)), "acc"))
		sum := must(op2.NewGlobal(1, []float64{0}, "sum"))
		hi := must(op2.NewGlobal(1, []float64{math.Inf(-1)}, "hi"))
		check(t, op2.ParLoop(op2.NewKernel(src, "seg"), segs, zd.ArgExtMap(op2.Read, m, 0), zd.ArgExtMap(op2.Read, m, 1), w.Arg(op2.Read),
			op2.ArgLayer(), length.Arg(op2.Write), acc.ArgExtVec(op2.Inc, m), sum.Arg(op2.Inc), hi.Arg(op2.Max)))
		gen, err := op2.Generate("sequential", op2.NewKernel(src, "seg"), segs, zd.ArgExtMap(op2.Read, m, 0), zd.ArgExtMap(op2.Read, m, 1), w.Arg(op2.Read),
			op2.ArgLayer(), length.Arg(op2.Write), acc.ArgExtVec(op2.Inc, m), sum.Arg(op2.Inc), hi.Arg(op2.Max))
		check(t, err)
		if !strings.Contains(gen, "op2_lanes_seg(") {
			t.Fatalf("%d layers, variable %v: the generated source has no lane form", nz, variable)
		}
		return [][]float64{length.Data(), acc.Data(), {sum.Value(), hi.Value()}}
	}
	for _, nz := range []int{5, 21} {
		for _, variable := range []bool{false, true} {
			check(t, op2.Configure(op2.Config{Backend: "sequential", SIMD: "off"}))
			want := run(nz, variable)
			for _, s := range []struct {
				backend, simd string
				threads       int
			}{{"sequential", "4", 1}, {"sequential", "8", 1}, {"sequential", "", 1}, {"openmp", "8", 2}} {
				check(t, op2.Configure(op2.Config{Backend: s.backend, SIMD: s.simd, Threads: s.threads}))
				got := run(nz, variable)
				for k, name := range []string{"len", "acc"} {
					if !slices.Equal(got[k], want[k]) {
						t.Fatalf("%d layers, variable %v, %s SIMD=%q: %s differs from the scalar code's", nz, variable, s.backend, s.simd, name)
					}
				}
				if got[2][1] != want[2][1] || math.Abs(got[2][0]-want[2][0]) > 1e-12*math.Abs(want[2][0]) {
					t.Fatalf("%d layers, variable %v, %s SIMD=%q: sum, max = %v, want %v", nz, variable, s.backend, s.simd, got[2], want[2])
				}
			}
		}
	}
}

// TestLanesKeepTheKernelsSource: a kernel's lane form is the kernel as
// written: its string and character literals (and a helper's, and a C++
// raw string holding code-like text), the macros in force at its
// definition (not those the source defines after it) while it sees what
// a helper defined after it sees, and its __func__. Each loop is built with its lanes (a compiler that refuses
// code without them) and gives the scalar code's results.
func TestLanesKeepTheKernelsSource(t *testing.T) {
	gcc := testreq.Command(t, "cc", "gcc")
	gxx := testreq.Command(t, "cc", "g++")
	dir := t.TempDir()
	withLanes := func(compiler string) string {
		script := filepath.Join(dir, "lanes-only-"+filepath.Base(compiler))
		body := "#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in *.c|*.cc) if ! grep -q op2_lanes_ \"$a\"; then echo 'lanes only' >&2; exit 1; fi;; esac; done\nexec " + compiler + " \"$@\"\n"
		if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return script
	}
	cc, cxx := withLanes(gcc), withLanes(gxx)
	defer func() { check(t, op2.Configure(op2.Config{})) }()
	for _, c := range []struct {
		name, src string
		cxx       bool
	}{
		{"character literal", `void lk_char(const double *x, double *y) { y[0] = x[0] / x[1] + ('A' - '0'); }`, false},
		{"string literal", `void lk_string(const double *x, double *y) { const char *n = "2"; y[0] = x[0] / x[1] + (n[0] - '0'); }`, false},
		{"a helper's literal", `static double lk_first(const double *v) { return v[0] * ("ab"[1] - 'a'); }
void lk_helper(const double *x, double *y) { y[0] = lk_first(x) / x[1]; }`, false},
		{"a macro defined after it", `static inline double sq(double v) { return v * v; }
void lk_macro(const double *x, double *y) { y[0] = sq(x[0] / x[1]); }
#define sq(v) ((float)(v) * (float)(v))`, false},
		{"a helper and a constant after it", `static double lk_h(const double *v);
void lk_after(const double *x, double *y) { y[0] = lk_h(x) / x[1]; } static const double lk_c = 3.0;
static double lk_g(double v) { return v / lk_c; }
static double lk_h(const double *v) { return lk_g(v[0]) * lk_c; }`, false},
		{"a macro between it and a helper after it", `static double lk_h2(const double *v);
static inline double sq(double v) { return v * v; }
void lk_mac2(const double *x, double *y) { y[0] = sq(x[0] / x[1]) + lk_h2(x); }
#define sq(v) ((float)(v) * (float)(v))
static double lk_h2(const double *v) { return v[0]; }`, false},
		{"an overload between it and a helper after it", `static double lk_h3(const double *v);
static double f(double v) { return v * 2; }
void lk_ovl(const double *x, double *y) { y[0] = f(1) * x[0] / x[1] + lk_h3(x); }
static double f(int v) { return v * 3; }
static double lk_h3(const double *v) { return v[0]; }`, true},
		{"helpers after it calling one another", `static double lk_h4(const double *v);
void lk_nest(const double *x, double *y) { y[0] = lk_h4(x) / x[1]; }
static double lk_h5(const double *v) { return v[1] * 3; }
static double lk_h4(const double *v) { return v[0] + lk_h5(v); }`, false},
		{"helpers before it, a typedef between them", `static double lk_h6(const double *v) { return v[0] * 2; }
typedef double lk_real;
static lk_real lk_h7(const double *v) { return v[1] * 3; }
void lk_types(const double *x, double *y) { y[0] = (lk_h6(x) + lk_h7(x)) / x[1]; }`, false},
		{"a helper after it taking a struct declared before it", `struct lk_p;
static double lk_h9(const double *v, const struct lk_p *p);
void lk_fwd(const double *x, double *y) { y[0] = lk_h9(x, 0) / x[1]; }
struct lk_p { double s; };
static double lk_h9(const double *v, const struct lk_p *p) { return p ? v[0] * p->s : v[0] * 2; }`, false},
		{"a C++ helper after it with a default argument, called with all", `static double lk_hd(const double *v, double s);
void lk_defarg(const double *x, double *y) { y[0] = lk_hd(x, 3.0) / x[1]; }
static double lk_hd(const double *v, double s = 2.0) { return v[0] * s; }`, true},
		{"a declaration after it on its line", `void lk_line(const double *x, double *y) { y[0] = x[0] / x[1] * 2; } static const double lk_d = 2.0;
double lk_twice(void) { return lk_d * 2; }`, false},
		{"__func__", `#include <string.h>
void lk_func(const double *x, double *y) { y[0] = x[0] / x[1] + (double)strlen(__func__) + sizeof(__FUNCTION__); }`, false},
		{"raw string", `#include <cstring>
void lk_raw(const double *x, double *y) { const char *s = R"q(x[0] = y[0]; "q" /* c */)q"; y[0] = x[0] / x[1] + (double)std::strlen(s); }`, true},
	} {
		name := c.src[strings.Index(c.src, "void lk_")+5 : strings.Index(c.src, "(const double *x")]
		run := func(cfg op2.Config) []float64 {
			cfg.CacheDir, cfg.Threads = t.TempDir(), 2
			check(t, op2.Configure(cfg))
			s := must(op2.NewSet(37, "s"))
			xv := make([]float64, 74)
			for i := range xv {
				xv[i] = 1 + float64(i%7)/8
			}
			x := must(op2.NewDat(s, 2, xv, "x"))
			y := must(op2.NewDat[float64](s, 1, nil, "y"))
			k := op2.NewKernel(c.src, name)
			if c.cxx {
				k = k.CXX()
			}
			if err := op2.ParLoop(k, s, x.Arg(op2.Read), y.Arg(op2.Write)); err != nil {
				t.Fatalf("%s (%s): %v", c.name, cfg.SIMD, err)
			}
			return y.Data()
		}
		want := run(op2.Config{Backend: "sequential", SIMD: "off", CC: gcc, CXX: gxx})
		for _, backend := range hostBackends {
			if got := run(op2.Config{Backend: backend, SIMD: "8", CC: cc, CXX: cxx}); !slices.Equal(got, want) {
				t.Errorf("%s, %s: lanes give y[0] = %v, the scalar code %v", c.name, backend, got[0], want[0])
			}
		}
	}
}

// TestSIMDLanesKeepHeaderMacros: a kernel whose source defines a fallback
// for a macro the generated code's headers define (#ifndef M_PI) gets the
// header's value in its SIMD lane form, as in its scalar code: the lane
// form, built from the kernel's body with its macros expanded, took the
// fallback (y = 3x where the scalar code gives πx).
func TestSIMDLanesKeepHeaderMacros(t *testing.T) {
	src := "#ifndef M_PI\n#define M_PI 3.0\n#endif\n#if !defined(INT32_MAX)\n#define INT32_MAX 7\n#endif\n" +
		"void hm_k(const double *x, double *y) { y[0] = x[0] * M_PI + (INT32_MAX > 7); }"
	var want []float64
	for _, simd := range []string{"off", "4", "8"} {
		r := closeAtEnd(t, must(op2.NewRuntime(op2.Config{Lazy: false, SIMD: simd}.Explicit("Lazy"))))
		set := must(op2.NewSet(64, "hm_set"))
		x := must(op2.NewDat(set, 1, iota32[float64](64), "x"))
		y := must(op2.NewDat[float64](set, 1, nil, "y"))
		check(t, r.ParLoop(op2.NewKernel(src, "hm_k"), set, x.Arg(op2.Read), y.Arg(op2.Write)))
		got := y.DataRO()
		if want == nil {
			want = slices.Clone(got)
			if want[1] != math.Pi+1 {
				t.Fatalf("scalar: y[1] = %v, want π+1", want[1])
			}
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("SIMD %s: y[1] = %v, scalar %v", simd, got[1], want[1])
		}
	}
}

// TestKernelOnHeaderFunctionMacro: a kernel whose definition depends on
// whether the headers define isnan as a macro (C's <math.h> does, C++'s
// <cmath> makes it a function) is refused in C++ as undecidable, rather
// than read as the definition the compiler does not compile.
func TestKernelOnHeaderFunctionMacro(t *testing.T) {
	src := "#include <cmath>\n#ifdef isnan\nvoid hf_k(const double *x, double *y) { y[0] = x[0] + 1; }\n#else\nvoid hf_k(const double *x, double *y) { y[0] = x[0] + 2; }\n#endif"
	set := must(op2.NewSet(4, "hf_set"))
	x := must(op2.NewDat[float64](set, 1, nil, "x"))
	y := must(op2.NewDat[float64](set, 1, nil, "y"))
	err := op2.ParLoop(op2.NewKernel(src, "hf_k").CXX(), set, x.Arg(op2.Read), y.Arg(op2.Write))
	if err == nil || !strings.Contains(err.Error(), "isnan") {
		t.Errorf("a kernel defined under #ifdef isnan in C++: %v, want it refused naming isnan", err)
	}
}

// TestSIMDLanesRefusedForms: kernels whose lane form would change their
// meaning (the address of an element, through parentheses or *; a
// static variable, which a lane form, a copy, would keep apart) run the
// scalar code under SIMD 8 and the defaults, with its results: the
// address of &(y[0]) moved to the next lane's value.
func TestSIMDLanesRefusedForms(t *testing.T) {
	defer func() { check(t, op2.Configure(op2.Config{})) }()
	for _, src := range []string{
		"static void put2(double *p, double a, double b) { p[0] = a; p[1] = b; }\nvoid k(const double *x, double *y) { put2(&(y[0]), 2*x[0] + 1, x[1] - x[0]); y[0] /= 3; y[1] /= 7; }",
		"void k(const double *x, double *y) { double *p = &*y; p[0] = x[0] / 3; p[1] = x[1] / 7; }",
		"static double sub(const double *a) { return a[1] - a[0]; }\nvoid k(const double *x, double *y) { y[0] = x[0] / 3 / 7; y[1] = sub(&(*x)); }",
		"void k(const double *x, double *y) { static int n = 0; n++; y[0] = n; y[1] = x[1] / 3 / 7; }",
		"void k(const double *x, double *y) { double *p = (double *)&y[0]; p[0] = x[0] / 3; p[1] = x[1] / 7; }",
		"typedef double *dptr, real2;\nvoid k(const double *x, double *y) { dptr p = (dptr)&y[0]; p[0] = x[0] / 3; p[1] = x[1] / 7; }",
		"void k(const double *x, double *y) { typedef double *dp; dp p = (dp)&y[0]; p[0] = x[0] / 3; p[1] = x[1] / 7; }",
	} {
		run := func(cfg op2.Config) []float64 {
			check(t, op2.Configure(cfg))
			s := must(op2.NewSet(37, "s"))
			x := must(op2.NewDat(s, 2, iota32[float64](74), "x"))
			y := must(op2.NewDat[float64](s, 2, nil, "y"))
			check(t, op2.ParLoop(op2.NewKernel(src, "k"), s, x.Arg(op2.Read), y.Arg(op2.RW)))
			return y.DataRO()
		}
		want := run(op2.Config{Backend: "sequential", SIMD: "off"})
		for _, backend := range hostBackends {
			for _, simd := range []string{"8", "auto"} {
				if got := run(op2.Config{Backend: backend, SIMD: simd, Threads: 1}); !slices.Equal(got, want) {
					t.Errorf("%s SIMD %s: %v\nwant %v (the scalar code's)\nkernel: %s", backend, simd, got, want, src)
				}
			}
		}
	}
}

// TestSIMDLanesShadowedHelpers: a parameter, a local function pointer
// (after a comma too), a C++ lambda, binding or using-declaration named
// as a function the source defines hides it; the lane form called the
// function's lane copy instead (wrong results under the defaults). Such
// kernels run their scalar code; a function passed as a value still runs
// in lanes, with the scalar code's results.
func TestSIMDLanesShadowedHelpers(t *testing.T) {
	defer func() { check(t, op2.Configure(op2.Config{})) }()
	for _, c := range []struct {
		name, src string
		cxx       bool
	}{
		{"parameter", `static double pick(const double *p) { return 1e6; }
static double first(const double *p) { return p[0]; }
static double apply(double (*pick)(const double *), const double *p) { return pick(p); }
void k(const double *x, double *y) { y[0] = apply(first, x) / x[1] / 3.0; y[1] = x[1] / 7; }`, false},
		{"local pointer", `static double pick(const double *p) { return 1e6; }
static double first(const double *p) { return p[0]; }
void k(const double *x, double *y) { double (*pick)(const double *) = first; y[0] = pick(x) / x[1] / 3.0; y[1] = x[1] / 7; }`, false},
		{"lambda", `static inline double pick(const double *p) { return 1e6; }
void k(const double *x, double *y) {
  auto pick = [](const double *p) { return p[0]; };
  y[0] = pick(x) / x[1] / 3.0; y[1] = x[1] / 7;
}`, true},
		{"declarator after a comma", `typedef double (*fn)(const double *);
static double pick(const double *p) { return 1e6; }
static double first(const double *p) { return p[0]; }
void k(const double *x, double *y) { fn a = first, pick = first; (void)a; y[0] = pick(x) / x[1] / 3.0; y[1] = x[1] / 7; }`, false},
		{"using-declaration", `static inline double pick(const double *p) { return 1e6; }
namespace ns { inline double pick(const double *p) { return p[0]; } }
void k(const double *x, double *y) { using ns::pick; y[0] = pick(x) / x[1] / 3.0; y[1] = x[1] / 7; }`, true},
		{"structured binding", `#include <utility>
static inline double pick(const double *p) { return 1e6; }
static inline double first(const double *p) { return p[0]; }
void k(const double *x, double *y) { auto [pick, b] = std::pair<double(*)(const double*), int>(first, 1); y[0] = pick(x) / x[1] / 3.0 + b; y[1] = x[1] / 7; }`, true},
		{"function-type parameter", `static double pick(const double *p) { return 1e6; }
static double first(const double *p) { return p[0]; }
static double apply(double pick(const double *), const double *p) { return pick(p); }
void k(const double *x, double *y) { y[0] = apply(first, x) / x[1] / 3.0; y[1] = x[1] / 7; }`, false},
		{"direct initialisation", `static inline double pick(const double *p) { return 1e6; }
static inline double first(const double *p) { return p[0]; }
void k(const double *x, double *y) { auto pick(first); y[0] = pick(x) / x[1] / 3.0; y[1] = x[1] / 7; }`, true},
		{"value", `static double first(double v) { return v + 1; }
static double apply(double (*f)(double), double v) { return f(v); }
void k(const double *x, double *y) { y[0] = apply(first, x[0]) / x[1] / 3.0; y[1] = x[1] / 7; }`, false},
	} {
		run := func(cfg op2.Config) []float64 {
			check(t, op2.Configure(cfg))
			s := must(op2.NewSet(37, "s"))
			x := must(op2.NewDat(s, 2, iota32[float64](74), "x"))
			y := must(op2.NewDat[float64](s, 2, nil, "y"))
			k := op2.NewKernel(c.src, "k")
			if c.cxx {
				k = k.CXX()
			}
			check(t, op2.ParLoop(k, s, x.Arg(op2.Read), y.Arg(op2.RW)))
			return y.DataRO()
		}
		want := run(op2.Config{Backend: "sequential", SIMD: "off"})
		for _, backend := range hostBackends {
			for _, simd := range []string{"8", "auto"} {
				if got := run(op2.Config{Backend: backend, SIMD: simd, Threads: 1}); !slices.Equal(got, want) {
					t.Errorf("%s: %s SIMD %s: %v\nwant %v (the scalar code's)", c.name, backend, simd, got, want)
				}
			}
		}
	}
}
