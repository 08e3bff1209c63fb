package hostc

import (
	"crypto/md5"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/cfront"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/testreq"
)

// laneMesh is a small mesh for loops built by hand: edges, cells, a map
// from edges to 2 cells and Dats of several dims and types.
type laneMesh struct {
	edges, cells *core.Set
	ecell        *core.Map
}

func newLaneMesh() *laneMesh {
	edges := &core.Set{Name: "edges", Core: 10, Owned: 10, Exec: 10, Total: 10, ID: core.NewID()}
	cells := &core.Set{Name: "cells", Core: 6, Owned: 6, Exec: 6, Total: 6, ID: core.NewID()}
	return &laneMesh{edges: edges, cells: cells,
		ecell: &core.Map{Name: "ecell", From: edges, To: cells, Arity: 2, Table: make([]int32, 20), ID: core.NewID()}}
}

func (m *laneMesh) dat(name string, set *core.Set, t core.ScalarType, dim int) *core.Storage {
	return &core.Storage{Name: name, Type: t, Dim: dim, Set: set, Len: set.Total * dim, ID: core.NewID()}
}

func laneLoop(t *testing.T, m *laneMesh, src, name string, args ...core.Arg) *core.Loop {
	t.Helper()
	info, err := cfront.ParseKernel(src, name)
	if err != nil {
		t.Fatal(err)
	}
	l := &core.Loop{Kernel: &core.Kernel{Name: name, Source: src, Info: info, ID: core.NewID(), Sum: md5.Sum([]byte(src))}, Set: m.edges, Args: args}
	l.Sig = core.Analyse(l)
	return l
}

// TestLaneKernelRewrites: kernels whose parameters are used only as p[e]
// and *p get lanes, with every such use indexed by lane; each translation
// unit, the tile forms' too, compiles (gcc -fsyntax-only, -Werror) with 4
// and 8 lanes.
func TestLaneKernelRewrites(t *testing.T) {
	m := newLaneMesh()
	q := m.dat("q", m.cells, core.Float64, 4)
	res := m.dat("res", m.cells, core.Float64, 4)
	x3 := m.dat("x3", m.cells, core.Float64, 3)
	v5 := m.dat("v5", m.cells, core.Float64, 5)
	w := m.dat("w", m.edges, core.Float64, 1)
	fl := m.dat("fl", m.edges, core.Float32, 2)
	id := m.dat("id", m.edges, core.Int32, 1)
	g := &core.Storage{Name: "g", Type: core.Float64, Dim: 2, Len: 2, ID: core.NewID()}
	ind := func(d *core.Storage, idx int, acc core.Access) core.Arg {
		return core.Arg{Data: d, Map: m.ecell, Idx: idx, Access: acc, Kind: core.ArgIndirect}
	}
	dir := func(d *core.Storage, acc core.Access) core.Arg {
		return core.Arg{Data: d, Access: acc, Kind: core.ArgDirect}
	}
	glob := func(acc core.Access) core.Arg { return core.Arg{Data: g, Access: acc, Kind: core.ArgGlobal} }
	vec := func(d *core.Storage, acc core.Access) core.Arg {
		return core.Arg{Data: d, Map: m.ecell, Access: acc, Kind: core.ArgVector}
	}
	for _, c := range []struct {
		name, src string
		args      []core.Arg
		want      []string // in the lane form
	}{
		{"flux", `void flux(const double *q1, const double *q2, const double *w, double *r1, double *r2) {
  double f = 0.5 * (q1[0] + q2[0]) * (*w);
  for (int k = 0; k < 4; k++) { r1[k] += f * q1[k]; r2[k] -= f * q2[k]; }
}`, []core.Arg{ind(q, 0, core.Read), ind(q, 1, core.Read), dir(w, core.Read), ind(res, 0, core.Inc), ind(res, 1, core.Inc)},
			[]string{"q1[0][op2_lane]", "(w[0][op2_lane])", "r1[k][op2_lane] +=", "const double q1[][L]", "double r1[][L]"}},
		{"nested", `void nested(const int *i, const double *x, double *y) { y[(*i) % 3] = x[(int)x[i[0] % 3] % 3] + sizeof *x; }`,
			[]core.Arg{dir(id, core.Read), ind(x3, 0, core.Read), ind(m.dat("y3", m.cells, core.Float64, 3), 1, core.Inc)},
			[]string{"y[(i[0][op2_lane]) % 3][op2_lane]", "x[(int)x[i[0][op2_lane] % 3][op2_lane] % 3][op2_lane]", "sizeof x[0][op2_lane]"}},
		{"members", `struct pt { double x; };
void members(const double *x, double *y, double *g) { struct pt p = {x[1]}; y[0] = p.x; if (p.x > 0) return; g[1] += x[4] * y[3]; }`,
			[]core.Arg{dir(m.dat("v5e", m.edges, core.Float64, 5), core.Read), ind(v5, 1, core.Min), glob(core.Inc)},
			[]string{"{x[1][op2_lane]}", "= p.x;", "g[1][op2_lane] +="}},
		{"mixed", `void mixed(const float *f, const double *g, int *n, double *o) { *n = (int)f[1] & 3; o[0] = g[0] * f[0]; }`,
			[]core.Arg{dir(fl, core.Read), glob(core.Read), dir(id, core.RW), dir(w, core.Write)},
			[]string{"n[0][op2_lane] = (int)f[1][op2_lane] & 3", "o[0][op2_lane] = g[0] * f[0][op2_lane]", "const double *g"}},
		{"vector", `void vector(const double **x, double **acc, const double *w) {
  for (int c = 0; c < 2; c++) for (int k = 0; k < 4; k++) acc[c][k] += x[1 - c][k] * (*w) + *x[c];
}`, []core.Arg{vec(q, core.Read), vec(res, core.Inc), dir(w, core.Read)},
			[]string{"acc[c][k][op2_lane] += x[1 - c][k][op2_lane] * (w[0][op2_lane]) + x[c][0][op2_lane]", "const double x[][4][L]", "double acc[][4][L]"}},
		{"matrix", `void matrix(const double *w, const double *q1, double *K) {
  for (int i = 0; i < 8; i++) for (int j = 0; j < 8; j++) K[i * 8 + j] = (*w) * q1[i % 4] * j;
}`, []core.Arg{dir(w, core.Read), ind(q, 0, core.Read), {Data: m.dat("Kv", m.cells, core.Float64, 4), Map: m.ecell, Access: core.Inc, Kind: core.ArgMat,
			Mat: &core.MatArg{Col: m.ecell, RDim: 2, CDim: 2}}},
			[]string{"K[i * 8 + j][op2_lane] = (w[0][op2_lane]) * q1[i % 4][op2_lane] * j", "double K[][L]"}},
		{"helpers", `static void grad(const double *x[2], double b[2], double *len) {
  double d = x[1][0] - x[0][0];
  *len = d * d + x[1][1] * x[0][1];
  b[0] = d; b[1] = -d;
}
static double first(const double *v) { return v[0]; }
static double twice(const double *v, double s) { return s * first(v) + first(v); }
void helpers(const double **x, const double *w, double **acc) {
  double b[2], len;
  grad(x, b, &len);
  for (int c = 0; c < 2; c++) acc[c][0] += b[c] * len * twice(w, first(w)) + first(x[c]);
}`, []core.Arg{vec(x3, core.Read), dir(w, core.Read), vec(res, core.Inc)},
			[]string{"grad_0(const double x[][3][L], double b[2], double *len, int op2_lane)", "*len = d * d + x[1][1][op2_lane] * x[0][1][op2_lane]",
				"double op2_lanes_helpers_first_2(const double v[][L], int op2_lane)", "return v[0][op2_lane];",
				"op2_lanes_helpers_twice_1(const double v[][L], double s, int op2_lane)", "grad_0(x, b, &len, op2_lane);", "(w, op2_lanes_helpers_first_2(w, op2_lane), op2_lane)", "op2_lanes_helpers_first_2(x[c], op2_lane)"}},
		{"rwmap", `void rwmap(const double *w, double *a, double *b, double **v) {
  a[0] = a[1] * (*w); b[2] = a[0]; v[0][1] = v[1][0] - b[0];
}`, []core.Arg{dir(w, core.Read), ind(q, 0, core.RW), ind(res, 1, core.Write), vec(x3, core.RW)},
			[]string{"a[0][op2_lane] = a[1][op2_lane] * (w[0][op2_lane])", "double a[][L]", "double v[][3][L]"}},
		{"macros", `#define FIRST q1[0]
#define STATE(V, r, u) double r = (V)[0], u = (V)[1] / r;
void macros(const double *q1, const double *q2, const double *w, double *r1, double *r2) {
  STATE(q2, rb, ub)
  STATE(q1, ra, ua)
  r1[0] += FIRST * (*w) + ra * ub; r2[1] -= rb * ua;
}`, []core.Arg{ind(q, 0, core.Read), ind(q, 1, core.Read), dir(w, core.Read), ind(res, 0, core.Inc), ind(res, 1, core.Inc)},
			[]string{"double rb =  q2[0][op2_lane]", "q1[1][op2_lane] / ra", "r1[0][op2_lane] += q1[0][op2_lane] * (w[0][op2_lane])"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := laneLoop(t, m, c.src, c.name, c.args...)
			if err := SIMDCheck(l); err != nil {
				t.Fatalf("SIMDCheck: %v", err)
			}
			for _, lanes := range LaneWidths {
				form, err := LaneKernel(l, lanes)
				if err != nil {
					t.Fatal(err)
				}
				var text strings.Builder
				for _, p := range form.Parts {
					text.WriteString(p.Source)
				}
				k := text.String()
				for _, w := range c.want {
					w = strings.ReplaceAll(w, "[L]", "["+string(rune('0'+lanes))+"]")
					if !strings.Contains(k, w) {
						t.Errorf("%d lanes: lane form lacks %q:\n%s", lanes, w, k)
					}
				}
				for name, gen := range map[string]func(*core.Loop, int) (string, error){"sequential": SequentialLanes, "openmp": OpenMPLanes,
					"sequential tiles": SequentialTilesLanes, "openmp tiles": OpenMPTilesLanes} {
					src, err := gen(l, lanes)
					if err != nil {
						t.Fatal(err)
					}
					compiles(t, name, src)
					// A chunk whose elements reach one target of RW or
					// WRITE through a map runs the scalar code.
					if clash := strings.Contains(src, "op2_clash"); clash != (c.name == "rwmap") {
						t.Errorf("%s, %d lanes: the chunks' clash test is there: %v", name, lanes, clash)
					}
				}
			}
		})
	}
}

// compiles checks that src compiles without a warning, as the host
// backends compile it.
func compiles(t *testing.T, what, src string) {
	t.Helper()
	cc, f := cSource(t, src)
	out, err := exec.Command(cc, "-fsyntax-only", "-Wall", "-Werror", "-Wno-unused-variable", "-O3", "-march=native", "-fopenmp", f).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", what, err, out)
	}
}

// cSource returns gcc's path and a file holding C source src; the test
// skips where there is no gcc.
func cSource(t *testing.T, src string) (cc, file string) {
	t.Helper()
	cc = testreq.Command(t, "cc", "gcc")
	file = filepath.Join(t.TempDir(), "lanes.c")
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return cc, file
}

// TestLaneKernelRefuses: loops whose elements could see each other's
// writes when run W at a time, and kernels using a parameter other than
// as p[e] or *p, run the scalar code, with a reason.
func TestLaneKernelRefuses(t *testing.T) {
	m := newLaneMesh()
	q := m.dat("q", m.cells, core.Float64, 4)
	w := m.dat("w", m.edges, core.Float64, 1)
	ind := func(d *core.Storage, idx int, acc core.Access) core.Arg {
		return core.Arg{Data: d, Map: m.ecell, Idx: idx, Access: acc, Kind: core.ArgIndirect}
	}
	dir := func(d *core.Storage, acc core.Access) core.Arg {
		return core.Arg{Data: d, Access: acc, Kind: core.ArgDirect}
	}
	two := []core.Arg{dir(w, core.Read), ind(q, 0, core.Inc)}
	vtwo := []core.Arg{dir(w, core.Read), {Data: q, Map: m.ecell, Access: core.Inc, Kind: core.ArgVector}}
	for _, c := range []struct {
		name, src string
		args      []core.Arg
		why       string
	}{
		{"helper", `void helper(const double *w, double *q) { q[0] += fabs(*w); __builtin_memcpy(q, w, 8); }`, two, "other than as q[i]"},
		{"untyped", `static double h(const void *a) { return *(const double *)a; } void untyped(const double *w, double *q) { q[0] += h(w); }`, two, "not a plain pointer to double"},
		{"deeper", `static double h(const double *a) { return a[0]; } void deeper(const double *w, double **q) { q[0][0] += h(w) + h(q[1]); h(q); }`, vtwo, "not a plain pointer to double pointers"},
		{"recursive", `static double h(const double *a, int n) { return n ? h(a, n - 1) : a[0]; } void recursive(const double *w, double *q) { q[0] += h(w, 3); }`, two, "calls itself"},
		{"helpermacro", `#define TWICE(v) (2 * (v))
static double h(const double *a) { return TWICE(a[0]); } void helpermacro(const double *w, double *q) { q[0] += h(w); }`, two, "uses macro TWICE"},
		{"helperptr", `static double h(const double *a) { const double *b = a + 1; return *b; } void helperptr(const double *w, double *q) { q[0] += h(w); }`, two, "uses a other than as a[i]"},
		{"address", `void address(const double *w, double *q) { double *p = &q[1]; *p += w[0]; }`, two, "address of an element of q"},
		{"addressparen", `void addressparen(const double *w, double *q) { double *p = &(q[1]); *p += w[0]; }`, two, "address of an element of q"},
		{"addressderef", `void addressderef(const double *w, double *q) { double *p = &*q; p[1] += w[0]; }`, two, "address of an element of q"},
		{"addressparenderef", `void addressparenderef(const double *w, double *q) { double *p = &((*q)); p[1] += w[0]; }`, two, "address of an element of q"},
		{"addressvec", `void addressvec(const double *w, double **q) { double *p = &(q[0][1]); *p += w[0]; }`, vtwo, "address of an element of q"},
		{"addressvecderef", `void addressvecderef(const double *w, double **q) { double *p = &*q[1]; *p += w[0]; }`, vtwo, "address of an element of q"},
		{"addresscast", `void addresscast(const double *w, double *q) { double *p = (double *)&q[0]; p[1] += w[0]; }`, two, "address of an element of q"},
		{"addresscastparen", `void addresscastparen(const double *w, double *q) { double *p = (double *)&(q[0]); p[1] += w[0]; }`, two, "address of an element of q"},
		{"staticlocal", `void staticlocal(const double *w, double *q) { static int n = 0; n++; q[0] += w[0] * n; }`, two, "keeps a static variable (n)"},
		{"statichelper", `static double sh_h(const double *a) { static double last; last = a[0]; return last; } void statichelper(const double *w, double *q) { q[0] += sh_h(w); }`, two, "keeps a static variable (last)"},
		{"arith", `void arith(const double *w, double *q) { *(q + 1) += w[0]; }`, two, "other than as q[i]"},
		{"shadow", `void shadow(const double *w, double *q) { { double q[2] = {0}; q[0] = w[0]; } }`, two, "declares q"},
		{"shadowptr", `void shadowptr(const double *w, double *q) { { double *q = 0; (void)q; } q[0] += w[0]; }`, two, "declares q"},
		{"moves", `void moves(const double *w, double *q) { *q++ += w[0]; }`, two, "moves pointer q"},
		{"macro", `#define NEXT(p) (p + 1)
void macro(const double *w, double *q) { *NEXT(q) += w[0]; }`, two, "uses q other than"},
		{"directive", `void directive(const double *w, double *q) {
#ifdef X
  q[1] += 1;
#endif
  q[0] += w[0]; }`, two, "preprocessor directive"},
		{"uncertain", `#ifdef __FAST_MATH__
#define SCALE 2
#endif
void uncertain(const double *w, double *q) { q[0] += SCALE * w[0]; }`, two, "cannot evaluate"},
		{"twice", `void twice(const double *w, double *q) { q[0][0] += w[0]; }`, two, "indexes q 2 times"},
		{"vecrow", `void vecrow(const double *w, double **q) { double *r = q[1]; r[0] += w[0]; }`, vtwo, "other than as q[i][j] or *q[i]"},
		{"vecderef", `void vecderef(const double *w, double **q) { (*q)[0] += w[0]; }`, vtwo, "other than as q[i][j]"},
		{"rwtwice", `void rwtwice(const double *w, double *a, double *b) { a[0] = w[0]; b[1] = a[0]; }`, []core.Arg{dir(w, core.Read), ind(q, 0, core.RW), ind(q, 0, core.RW)}, "pass the same data"},
		{"writetwice", `void writetwice(const double *w, double *a, double *b) { a[0] = w[0]; b[0] = 1; }`, []core.Arg{dir(w, core.Read), ind(q, 1, core.Write), ind(q, 1, core.Write)}, "pass the same data"},
		{"readinc", `void readinc(const double *a, double *b) { b[0] += a[0]; }`, []core.Arg{ind(q, 0, core.Read), ind(q, 1, core.Inc)}, "pass the same data"},
		// GCC's options set in the source: the kernel, the code calling
		// it and a lane form may not share them.
		{"pragmaafter", "void pragmaafter(const double *w, double *q) { q[0] += w[0] / 3.0; }\n#pragma GCC optimize (\"fast-math\")", two, "sets the compiler's options"},
		{"pragmatarget", "# pragma GCC target(\"arch=haswell\")\nvoid pragmatarget(const double *w, double *q) { q[0] += w[0] / 3.0; }", two, "sets the compiler's options"},
		{"pragmaop", "_Pragma(\"GCC push_options\") void pragmaop(const double *w, double *q) { q[0] += w[0] / 3.0; }", two, "sets the compiler's options"},
		{"attribute", "__attribute__((optimize(\"O2\"))) void attribute(const double *w, double *q) { q[0] += w[0] / 3.0; }", two, "sets the compiler's options"},
		{"laterhead", "static double laterhead_h(const double *a);\nvoid laterhead(const double *w, double *q) { q[0] += laterhead_h(w); }\n#define REAL double\nstatic REAL laterhead_h(const double *a) { return a[0] / 3; }", two, "needs REAL, which the source declares after the call"},
		{"laterenum", "static double laterenum_h(const double *v, const double c[3]);\nvoid laterenum(const double *w, double *q) { const double c[3] = {1, 2, 3}; q[0] += laterenum_h(w, c); }\nenum { LN = 3 };\nstatic double laterenum_h(const double *v, const double c[LN]) { return v[0] * c[2]; }", two, "needs LN, which the source declares after the call"},
		{"redefmacro", "#define RR int\nstatic double redefmacro_h(const double *v, float s);\nvoid redefmacro(const double *w, double *q) { q[0] += redefmacro_h(w, 2.5f); }\n#undef RR\n#define RR float\nstatic double redefmacro_h(const double *v, RR s) { return v[0] * s; }", two, "needs RR"},
		{"defaultarg", "static double defaultarg_h(const double *v, double s = 2.0);\nvoid defaultarg(const double *w, double *q) { q[0] += defaultarg_h(w); }\nstatic double defaultarg_h(const double *v, double s) { return v[0] * s; }", two, "with 1 arguments for its 2 parameters"},
		{"tagthentypedef", "struct vec;\nstatic double tt_h(const double *v, const struct vec *p);\nvoid tagthentypedef(const double *w, double *q) { q[0] += tt_h(w, 0); }\ntypedef struct vec { double s; } vec;\nstatic double tt_h(const double *v, const vec *p) { return p ? v[0] * p->s : v[0]; }", two, "needs vec, which the source declares after the call"},
		{"varthentypedef", "static double vt_h(const double *v, double s);\nvoid varthentypedef(const double *w, double *q) { double real = 2; q[0] += vt_h(w, real); }\ntypedef double real;\nstatic double vt_h(const double *v, real s) { return v[0] * s; }", two, "needs real, which the source declares after the call"},
		{"variadic", "static double va_h(const double *v, int n, ...) { return v[0] * n; }\nvoid variadic(const double *w, double *q) { q[0] += va_h(w, 1, 2.0); }", two, "takes a variable number of arguments"},
		{"pragmawords", "#define DO_PRAGMA(x) _Pragma (#x)\n#define OPTIMIZE(x) DO_PRAGMA(GCC optimize (x))\nOPTIMIZE(\"fast-math\")\nvoid pragmawords(const double *w, double *q) { q[0] += w[0] / 3.0; }", two, "sets the compiler's options"},
		{"splitpragma", "#pragma \\\nGCC optimize(\"fast-math\")\nvoid splitpragma(const double *w, double *q) { q[0] += w[0] / 3.0; }", two, "sets the compiler's options"},
		{"macropragma", "#define S(x) #x\n#define P(x) _Pragma(S(GCC optimize(x)))\nP(\"fast-math\")\nvoid macropragma(const double *w, double *q) { q[0] += w[0] / 3.0; }", two, "sets the compiler's options"},
		{"macroattribute", "#define FM \"fast-math\"\n__attribute__ ((__optimize__ (FM))) void macroattribute(const double *w, double *q) { q[0] += w[0] / 3.0; }", two, "sets the compiler's options"},
		{"stdattribute", "[[gnu::target(\"avx2\")]] void stdattribute(const double *w, double *q) { q[0] += w[0] / 3.0; }", two, "sets the compiler's options"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := laneLoop(t, m, c.src, c.name, c.args...)
			err := SIMDCheck(l)
			if err == nil || !strings.Contains(err.Error(), c.why) {
				t.Fatalf("SIMDCheck = %v, want an error containing %q", err, c.why)
			}
			for name, gen := range map[string]func(*core.Loop, int) (string, error){"SequentialLanes": SequentialLanes, "SequentialTilesLanes": SequentialTilesLanes, "OpenMPTilesLanes": OpenMPTilesLanes} {
				if _, err := gen(l, 4); err == nil {
					t.Fatalf("%s built lanes", name)
				}
			}
		})
	}
}

// TestTileFormsLanes: the tile forms with lanes run each run of a tile in
// whole chunks of lanes elements, then its remainder with the scalar
// code; without lanes they are the scalar tile forms.
func TestTileFormsLanes(t *testing.T) {
	m := newLaneMesh()
	q := m.dat("q", m.cells, core.Float64, 4)
	w := m.dat("w", m.edges, core.Float64, 1)
	g := &core.Storage{Name: "g", Type: core.Float64, Dim: 1, Len: 1, ID: core.NewID()}
	l := laneLoop(t, m, `void tl(const double *w, double *q, double *g) { q[0] += w[0]; *g += w[0]; }`, "tl",
		core.Arg{Data: w, Access: core.Read, Kind: core.ArgDirect},
		core.Arg{Data: q, Map: m.ecell, Idx: 1, Access: core.Inc, Kind: core.ArgIndirect},
		core.Arg{Data: g, Access: core.Inc, Kind: core.ArgGlobal})
	forms := []struct {
		name   string
		scalar func(*core.Loop) (string, error)
		gen    func(*core.Loop, int) (string, error)
		want   []string // besides the runs' lanes
	}{
		{"sequential", SequentialTiles, SequentialTilesLanes, []string{TileBegin, TileRun + "(", TileEnd}},
		{"openmp", OpenMPTiles, OpenMPTilesLanes, []string{TileBegin, TileRun + "(", TileEnd}},
	}
	for _, f := range forms {
		scalar, err := f.scalar(l)
		if err != nil {
			t.Fatal(err)
		}
		if zero, err := f.gen(l, 0); err != nil || zero != scalar {
			t.Errorf("%s: 0 lanes is not the scalar tile form (%v)", f.name, err)
		}
		if strings.Contains(scalar, LaneName("tl")) {
			t.Errorf("%s: the scalar tile form has lanes", f.name)
		}
		for _, lanes := range LaneWidths {
			src, err := f.gen(l, lanes)
			if err != nil {
				t.Fatal(err)
			}
			want := append([]string{
				"const int *restrict op2_ru",
				"for (long long op2_q = op2_first; op2_q < op2_last; op2_q++) {",
				"long long op2_n = op2_ru[2 * op2_q];",
				"const long long op2_e = op2_ru[2 * op2_q + 1];",
				fmt.Sprintf("for (; op2_n + %d <= op2_e; op2_n += %d) {", lanes, lanes),
				"for (; op2_n < op2_e; op2_n++) {",
				LaneName("tl") + "(op2_x0, op2_x1, op2_x2, op2_lane);",
			}, f.want...)
			for _, w := range want {
				if !strings.Contains(src, w) {
					t.Errorf("%s, %d lanes: the tile form lacks %q", f.name, lanes, w)
				}
			}
			compiles(t, f.name, src)
		}
	}
}

// TestAutoLanes: under SIMD "auto" a loop gets as many lanes as the
// machine's vectors hold of its widest values (within LaneWidths), and
// the scalar code when its kernel, or a helper it calls, calls a math
// function the compiler cannot vectorise (float forms too), or when it
// does too little work lanes speed up (fewer than two divisions and
// square roots, no sum into a Global and no matrix argument).
func TestAutoLanes(t *testing.T) {
	m := newLaneMesh()
	d := m.dat("d", m.edges, core.Float64, 1)
	f := m.dat("f", m.edges, core.Float32, 1)
	f2 := m.dat("f2", m.edges, core.Float32, 1)
	g := &core.Storage{Name: "g", Type: core.Float64, Dim: 1, Len: 1, ID: core.NewID()}
	matArg := core.Arg{Data: m.dat("Kv", m.cells, core.Float64, 1), Map: m.ecell, Access: core.Inc, Kind: core.ArgMat, Mat: &core.MatArg{Col: m.ecell, RDim: 1, CDim: 1}}
	// The cases whose lanes call math functions through SIMD clones:
	// scalar code where GCC makes none (clonesHere) or the compiler calls
	// none (AutoLanes' clones).
	cloned := map[string]bool{"cbrt_with_work": true, "expf_with_work": true, "matrix_exp": true, "cbrt_and_helper": true,
		"exp_in_helper_with_work": true, "cbrt_after_for": true}
	for _, c := range []struct {
		name, src   string
		args        []core.Arg
		vectorBytes int
		want        int
	}{
		{"double_avx512", "void k(double *x) { *x = sqrt(fabs(*x)) / (1 + floor(*x)); }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 8},
		{"double_avx", "void k(double *x) { *x = 1 / *x / 3; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 32, 4},
		{"double_sse", "void k(double *x) { *x /= 3; *x /= 5; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 16, 4},
		{"float_avx", "void k(float *x, float *y) { *x += sqrtf(*y) / 2; }", []core.Arg{{Data: f, Access: core.RW, Kind: core.ArgDirect}, {Data: f2, Access: core.Read, Kind: core.ArgDirect}}, 32, 8},
		{"mixed_avx", "void k(float *x, double *y) { *x += *y / 2 / *y; }", []core.Arg{{Data: f, Access: core.RW, Kind: core.ArgDirect}, {Data: d, Access: core.Read, Kind: core.ArgDirect}}, 32, 4},
		{"one_division", "void k(double *x) { *x = 1 / *x; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 0},
		{"one_sqrt", "void k(double *x) { *x = sqrt(*x) + 1; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 0},
		{"no_work", "void k(const double *y, double *x) { for (int i = 0; i < 1; i++) *x = *y * 2 + 1; }", []core.Arg{{Data: d, Access: core.Read, Kind: core.ArgDirect}, {Data: f, Access: core.Write, Kind: core.ArgDirect}}, 64, 0},
		{"sum", "void k(const double *y, double *s) { *s += *y * *y; }", []core.Arg{{Data: d, Access: core.Read, Kind: core.ArgDirect}, {Data: g, Access: core.Inc, Kind: core.ArgGlobal}}, 64, 8},
		{"min", "void k(const double *y, double *s) { if (*y < *s) *s = *y; }", []core.Arg{{Data: d, Access: core.Read, Kind: core.ArgDirect}, {Data: g, Access: core.Min, Kind: core.ArgGlobal}}, 64, 0},
		{"divide_in_helper", "static double h(double v) { return v / 3; }\nvoid k(double *x) { *x = h(*x) / 2; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 8},
		{"divide_in_macro", "#define H(v) ((v) / 3)\nvoid k(double *x) { *x = H(H(*x)); }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 8},
		{"expf", "void k(float *x) { *x = expf(*x) / 2; }", []core.Arg{{Data: f, Access: core.RW, Kind: core.ArgDirect}}, 64, 0},
		{"std_exp", "void k(double *x) { *x = std::exp(*x) / 2; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 0},
		{"std_sqrt", "void k(double *x) { *x = std::sqrt(*x) / 2; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 8},
		{"own_exp", "static double exp(double v) { return v + 1; }\nvoid k(double *x) { *x = exp(*x) / 2 / 3; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 8},
		{"cbrt", "void k(double *x) { *x = 0.5 * cbrt(*x); }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 0},
		// A math function the kernel calls, in its body or a helper,
		// outside any branch, is called through its SIMD clones
		// (mathClones): the loop's other work decides, as MG-CFD's
		// mg_calc_dt. A branch anywhere the kernel reaches, a function
		// without clones, a call in a for statement, or a mention of the
		// name other than a call in a function body with no constant
		// expression GCC might fold it into (a member, a parameter, a
		// static initializer, an array size or subscript, a directive) keep the
		// scalar code.
		{"cbrt_with_work", "void k(double *x) { *x = 0.5 * cbrt(*x) / (1 + *x) / 3; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 8},
		{"expf_with_work", "void k(float *x) { *x = expf(*x) / 2 / *x; }", []core.Arg{{Data: f, Access: core.RW, Kind: core.ArgDirect}}, 64, 8},
		{"cbrt_in_branch", "void k(double *x) { if (*x > 0) *x = cbrt(*x) / (1 + *x) / 3; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 0},
		{"cbrt_conditional", "void k(double *x) { *x = *x > 0 ? cbrt(*x) / (1 + *x) / 3 : 0; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 0},
		{"cbrt_and_helper", "static double g(double v) { return cbrt(v); }\nvoid k(double *x) { *x = cbrt(*x) / g(*x) / 3; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 8},
		{"cbrt_in_helper_branch", "static double g(double v) { return v > 0 ? cbrt(v) : 0; }\nvoid k(double *x) { *x = *x / g(*x) / 3; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 0},
		{"branch_in_helper", "static double g(double v) { if (v > 0) return v; return -v; }\nvoid k(double *x) { *x = cbrt(*x) / g(*x) / 3; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 0},
		{"exp_member", "struct ops { double (*exp)(double); };\nstatic double g(struct ops *o, double v) { return o->exp(v); }\nvoid k(double *x) { *x = exp(*x) / 3 / *x; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 0},
		{"lgamma_with_work", "void k(double *x) { *x = lgamma(*x) / (1 + *x) / 3; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 0},
		{"exp_in_helper", "static double g(double v) { return exp(v); }\nvoid k(double *x) { *x = g(*x); }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 0},
		{"exp_in_helper_with_work", "static double g(double v) { return exp(v); }\nvoid k(double *x) { *x = g(*x) / 3 / *x; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 8},
		{"sin_in_macro", "#define F(v) (2 * sin(v))\nvoid k(double *x) { *x = F(*x); }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 0},
		{"sin_in_macro_with_work", "#define F(v) (2 * sin(v))\nvoid k(double *x) { *x = F(*x) / 3 / *x; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 0},
		{"cbrt_in_for", "void k(double *x) { double s = 0; for (int q = 0; q < 17; q++) s += cbrt(0.7 * (q + 1)); *x = s / 3 / *x; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 0},
		{"cbrt_after_for", "void k(double *x) { double s = 0; for (int q = 0; q < 5; q++) s += q / *x; *x = cbrt(s) / 3; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 8},
		{"exp_parameter", "static double apply(double (*exp)(double), double v) { return exp(v); }\nstatic double twice(double v) { return 2 * v; }\nvoid k(double *x) { *x = exp(*x) / 3 / apply(twice, *x); }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 0},
		{"exp_member_of_header_struct", "#include \"ops.h\"\nstatic double g(struct ops o, double v) { return o.exp(v) + o.f.exp; }\nvoid k(double *x) { *x = exp(*x) / 3 / *x; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 0},
		{"exp_static", "void k(double *x) { static const double e = exp(1.0); *x = exp(*x) / 3 / e; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 0},
		{"cbrt_file_static", "static const double c = 2 * cbrt(3.0), e = 1;\nvoid k(double *x) { *x = cbrt(*x) / 3 / (c + e + *x); }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 0},
		{"pow_in_brackets", "void k(double *x) { double t[(int)pow(2.0, 3.0)] = {0}; *x = pow(*x, 3.5) / 3 / (1 + t[0]); }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 0},
		{"ifdef_cbrt", "#ifdef cbrt\n#endif\nvoid k(double *x) { *x = cbrt(*x) / 3 / *x; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 0},
		{"sqrt_in_macro", "#define F(v) (2 * sqrt(v))\nvoid k(double *x) { *x = F(*x) / 3; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 8},
		{"pow", "void k(double *x) { *x = pow(*x, 3); }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 0},
		{"ldexp", "void k(double *x) { *x = ldexp(*x / 3, 2) / 5; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 0},
		{"lround", "void k(double *x) { *x = (double)lround(*x / 3) / 5; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 0},
		// A matrix argument gets lanes however little the kernel
		// computes: internal/poisson's P1 mass matrix (one division)
		// ran faster in lanes, as its 2-D and 3-D stiffness matrices
		// (BenchmarkMass, BenchmarkStiffness, BenchmarkTetStiffness;
		// docs/perf.md); a math function lanes would call lane by lane
		// (in a branch) still keeps the scalar code.
		{"matrix", "void k(const double *x, double *K) { K[0] = *x; }", []core.Arg{{Data: d, Access: core.Read, Kind: core.ArgDirect}, matArg}, 64, 8},
		{"matrix_avx", "void k(const double *x, double *K) { K[0] = *x / 2; }", []core.Arg{{Data: d, Access: core.Read, Kind: core.ArgDirect}, matArg}, 32, 4},
		{"matrix_exp", "void k(const double *x, double *K) { K[0] = exp(*x); }", []core.Arg{{Data: d, Access: core.Read, Kind: core.ArgDirect}, matArg}, 64, 8},
		{"matrix_exp_in_branch", "void k(const double *x, double *K) { K[0] = *x > 0 ? exp(*x) : 1; }", []core.Arg{{Data: d, Access: core.Read, Kind: core.ArgDirect}, matArg}, 64, 0},
		// Only the functions the kernel calls count: another kernel of
		// the source calling exp, or a macro calling sin that only
		// another function uses, leaves lanes; a helper the kernel
		// calls whose macro calls sin does not (no clones for a function a
		// directive names).
		{"exp_elsewhere", "static double e(double v) { return exp(v); }\nvoid other(double *x) { *x = e(*x); }\nvoid k(double *x) { *x = 1 / *x / 3; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 8},
		{"sin_macro_elsewhere", "#define U(v) sin(v)\nstatic double u(double v) { return U(v); }\nstatic double h(double v) { return v / 3; }\nvoid k(double *x) { *x = h(*x) / 2; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 8},
		{"sin_macro_in_helper", "#define U(v) sin(v)\nstatic double u(double v) { return U(v) / 3; }\nstatic double h(double v) { return u(v) / 3; }\nvoid k(double *x) { *x = h(*x) / 2; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 0},
		{"lgamma_macro_in_helper", "#define U(v) lgamma(v)\nstatic double u(double v) { return U(v) / 3; }\nstatic double h(double v) { return u(v) / 3; }\nvoid k(double *x) { *x = h(*x) / 2; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 0},
		{"divisions_elsewhere", "static double h(double v) { return v / 3 / 5; }\nvoid k(double *x) { *x = *x * 2; }", []core.Arg{{Data: d, Access: core.RW, Kind: core.ArgDirect}}, 64, 0},
	} {
		l := laneLoop(t, m, "#include <math.h>\n"+c.src, "k", c.args...)
		v := Vectors{Loops: c.vectorBytes, Matrix: c.vectorBytes}
		yes := func() bool { return true }
		want := c.want
		if cloned[c.name] && !clonesHere {
			want = 0
		}
		if got := AutoLanes(l, v, yes); got != want {
			t.Errorf("%s: AutoLanes(%+v) = %d, want %d", c.name, v, got, want)
		}
		// A compiler that calls no clones (Clang) keeps such a loop's
		// scalar code.
		if cloned[c.name] {
			want = 0
		}
		if got := AutoLanes(l, v, nil); got != want {
			t.Errorf("%s: AutoLanes(%+v, no clones) = %d, want %d", c.name, v, got, want)
		}
	}
	// Intel's cores with AVX-512 (host.LaneBytes): 256-bit vectors for
	// loops, 512-bit for matrix assembly.
	intel := Vectors{Loops: 32, Matrix: 64}
	if got := AutoLanes(laneLoop(t, m, "#include <math.h>\nvoid k(const double *x, double *K) { K[0] = *x / 2; }", "k", core.Arg{Data: d, Access: core.Read, Kind: core.ArgDirect}, matArg), intel, nil); got != 8 {
		t.Errorf("matrix on Intel: AutoLanes = %d, want 8", got)
	}
	if got := AutoLanes(laneLoop(t, m, "#include <math.h>\nvoid k(double *x) { *x = sqrt(fabs(*x)) / (1 + floor(*x)); }", "k", core.Arg{Data: d, Access: core.RW, Kind: core.ArgDirect}), intel, nil); got != 4 {
		t.Errorf("loop on Intel: AutoLanes = %d, want 4", got)
	}
}

// TestCXXKernelLanes: a C++ kernel (a template, a namespace, std:: math,
// auto, a reference in a helper) gets lanes, and its translation units
// compile with the C++ compiler (g++ -fsyntax-only, -Werror), with 4 and
// 8 lanes; a C++ kernel taking a reference parameter stays scalar.
func TestCXXKernelLanes(t *testing.T) {
	cxx := testreq.Command(t, "cc", "g++")
	m := newLaneMesh()
	q := m.dat("q", m.cells, core.Float64, 4)
	res := m.dat("res", m.cells, core.Float64, 4)
	w := m.dat("w", m.edges, core.Float64, 1)
	src := `#include <cmath>
template <typename T> static inline T half(T a) { return a / 2; }
namespace phys { inline double mu(double w, const double &x) { return w * x; } }
void cxxflux(const double *q1, const double *q2, const double *w, double *r1, double *r2) {
  const auto ri = 1.0 / q1[0];
  for (int k = 0; k < 4; ++k) {
    const double g = half(ri * q1[k] + q2[k]) + phys::mu(*w, std::fabs(q1[k] - q2[k]));
    r1[k] += g; r2[k] -= g;
  }
}`
	l := laneLoop(t, m, src, "cxxflux",
		core.Arg{Data: q, Map: m.ecell, Idx: 0, Access: core.Read, Kind: core.ArgIndirect},
		core.Arg{Data: q, Map: m.ecell, Idx: 1, Access: core.Read, Kind: core.ArgIndirect},
		core.Arg{Data: w, Access: core.Read, Kind: core.ArgDirect},
		core.Arg{Data: res, Map: m.ecell, Idx: 0, Access: core.Inc, Kind: core.ArgIndirect},
		core.Arg{Data: res, Map: m.ecell, Idx: 1, Access: core.Inc, Kind: core.ArgIndirect})
	l.Kernel.CXX = true
	if err := SIMDCheck(l); err != nil {
		t.Fatalf("SIMDCheck: %v", err)
	}
	for _, lanes := range LaneWidths {
		for name, gen := range map[string]func(*core.Loop, int) (string, error){"sequential": SequentialLanes, "openmp": OpenMPLanes,
			"sequential tiles": SequentialTilesLanes, "openmp tiles": OpenMPTilesLanes} {
			src, err := gen(l, lanes)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(src, LaneName("cxxflux")+"(") {
				t.Fatalf("%s, %d lanes: no lane form", name, lanes)
			}
			f := filepath.Join(t.TempDir(), "lanes.cc")
			if err := os.WriteFile(f, []byte(src), 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(cxx, "-fsyntax-only", "-Wall", "-Werror", "-Wno-unused-variable", "-O3", "-march=native", "-fopenmp", f).CombinedOutput()
			if err != nil {
				t.Fatalf("%s, %d lanes: %v\n%s", name, lanes, err, out)
			}
		}
	}
	ref := laneLoop(t, m, `void cxxref(const double &w, double *r) { r[0] += w; }`, "cxxref",
		core.Arg{Data: w, Access: core.Read, Kind: core.ArgDirect},
		core.Arg{Data: res, Map: m.ecell, Idx: 0, Access: core.Inc, Kind: core.ArgIndirect})
	ref.Kernel.CXX = true
	if err := SIMDCheck(ref); err == nil || !strings.Contains(err.Error(), "not a plain pointer") {
		t.Fatalf("SIMDCheck of a reference parameter = %v, want an error saying it is not a plain pointer", err)
	}
}

// TestLaneMathClones: a C kernel that calls math functions the compiler
// cannot vectorise gets a lane form calling them through
// functions with SIMD clones (mathClones), float forms and calls in a
// helper too, but for calls that GCC may fold or simplify (constant
// arguments, pow(x, 2.0)), which stay the function's own, as in the
// scalar code; GCC on x86-64 then vectorises the lanes and calls a vector
// form of each clone. A C++ kernel, a call in a branch (of the kernel or
// a helper), gets none; nor does any kernel off x86-64.
func TestLaneMathClones(t *testing.T) {
	m := newLaneMesh()
	x := m.dat("x", m.edges, core.Float64, 2)
	y := m.dat("y", m.edges, core.Float64, 2)
	f := m.dat("f", m.edges, core.Float32, 1)
	args := []core.Arg{{Data: x, Access: core.Read, Kind: core.ArgDirect}, {Data: y, Access: core.Write, Kind: core.ArgDirect},
		{Data: f, Access: core.Write, Kind: core.ArgDirect}}
	src := `#include <math.h>
static double h(double v) { return log1p(v) / 3; }
void k(const double *x, double *y, float *f) {
  y[0] = cbrt(x[0]) / (1 + x[1]) + pow(x[0], 2.0) + cbrt(8.0) / x[1];
  y[1] = pow(x[1], x[0]) / x[0] + atan2(x[0], x[1]) + fmod(x[1], 61.0) + h(x[1]);
  f[0] = expf((float)x[0]) / 3.0f;
}`
	l := laneLoop(t, m, src, "k", args...)
	if !clonesHere {
		if got := laneCloneCalls(l); got != nil {
			t.Fatalf("laneCloneCalls = %v on %s, want none", got, runtime.GOARCH)
		}
		return
	}
	if got := laneCloneCalls(l); len(got) != 6 || !got["cbrt"] || !got["pow"] || !got["atan2"] || !got["fmod"] || !got["expf"] || !got["log1p"] {
		t.Fatalf("laneCloneCalls = %v, want cbrt, pow, atan2, fmod, expf and log1p", got)
	}
	for _, lanes := range LaneWidths {
		src, err := SequentialLanes(l, lanes)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []string{fmt.Sprintf("#pragma omp declare simd simdlen(%d)", lanes), "#define cbrt op2_lm_cbrt\n",
			"#define pow op2_lm_pow\n", "#define log1p op2_lm_log1p\n", "#undef cbrt\n",
			"static __attribute__((noinline)) float op2_simd_expf(float op2_a)",
			"(__builtin_constant_p(op2_a) && __builtin_constant_p(op2_b)) || (__builtin_constant_p(op2_b) && (op2_b == 0 ||",
			"{ return (__builtin_constant_p(op2_a) && __builtin_constant_p(op2_b)) ? atan2(op2_a, op2_b) : op2_simd_atan2(op2_a, op2_b); }"} {
			if !strings.Contains(src, w) {
				t.Errorf("%d lanes: the lane form lacks %q", lanes, w)
			}
		}
		compiles(t, fmt.Sprintf("%d lanes", lanes), src)
		asm := assemble(t, src)
		for _, fn := range []string{"op2_simd_cbrt", "op2_simd_pow", "op2_simd_atan2", "op2_simd_fmod", "op2_simd_expf", "op2_simd_log1p"} {
			if !regexp.MustCompile(`call\s+_ZGV\w+_` + fn + `\b`).MatchString(asm) {
				t.Errorf("%d lanes: no call of a vector form of %s", lanes, fn)
			}
		}
		// A compiler CloneGuard excludes (Clang defines __clang__) reads
		// none of it: its lanes call the functions themselves.
		if asm := assemble(t, src, "-D__clang__"); strings.Contains(asm, "op2_simd_") || !regexp.MustCompile(`call\s+(cbrt|pow|log1p)\b`).MatchString(asm) {
			t.Errorf("%d lanes with __clang__ defined: op2_simd_ functions, or no call of cbrt, pow or log1p\n%s", lanes, asm)
		}
	}
	// Arguments the preprocessor would split or a macro supplies: the
	// compiler reads them (the macros are object-like).
	for _, c := range []struct{ name, src string }{
		{"compound literal", "#include <math.h>\nvoid k(const double *x, double *y, float *f) { y[0] = pow((double[]){x[0], x[1]}[0], 3.5) / x[1] / 3; }"},
		{"arguments from a macro", "#include <math.h>\n#define XY(p) p[0], p[1]\nvoid k(const double *x, double *y, float *f) { y[0] = atan2(XY(x)) / x[1] / 3; }"},
	} {
		l := laneLoop(t, m, c.src, "k", args...)
		if got := laneCloneCalls(l); len(got) != 1 {
			t.Errorf("%s: laneCloneCalls = %v, want one function", c.name, got)
		}
		src, err := SequentialLanes(l, 8)
		if err != nil {
			t.Fatal(err)
		}
		compiles(t, c.name, src)
	}
	// Kernels whose lanes would not vectorise a clone's call, could
	// differ from the scalar code or would not compile with the macros:
	// no clones, and lane forms that compile.
	for _, c := range []struct{ name, src string }{
		{"branch", "void k(const double *x, double *y, float *f) { if (x[0] > 0) y[0] = cbrt(x[0]); }"},
		{"branch in a helper", "static double h(double v) { return v > 1 ? exp(v) : v; }\nvoid k(const double *x, double *y, float *f) { y[0] = h(x[0]); }"},
		{"call in a for statement", "void k(const double *x, double *y, float *f) { double s = 0; for (int q = 0; q < 17; q++) s += cbrt(0.7 * (q + 1)) * x[1]; y[0] = s * x[0]; }"},
		{"a parameter of the name", "static double twice(double v) { return 2 * v; }\nstatic double apply(double (*exp)(double), double v) { return exp(v); }\n" +
			"void k(const double *x, double *y, float *f) { y[0] = exp(x[0]) / x[1] / 3 + apply(twice, x[1]); }"},
		{"a local of the name", "static double twice(double v) { return 2 * v; }\nstatic double apply(double v) { double (*exp)(double) = twice; return exp(v); }\n" +
			"void k(const double *x, double *y, float *f) { y[0] = exp(x[0]) / x[1] / 3 + apply(x[1]); }"},
		{"static initializer", "void k(const double *x, double *y, float *f) { static const double e1 = exp(1.0); y[0] = exp(x[0]) / x[1] / 3 * e1; }"},
		{"file-scope initializer", "static const double e1 = exp(1.0);\nvoid k(const double *x, double *y, float *f) { y[0] = exp(x[0]) / x[1] / 3 * e1; }"},
		{"enum", "void k(const double *x, double *y, float *f) { enum { N = (int)exp(2.0) }; y[0] = exp(x[0]) / x[1] / N; }"},
		{"subscript", "void k(const double *x, double *y, float *f) { double t[4] = {0}; t[(int)pow(2.0, 1.0)] = x[1]; y[0] = pow(x[0], 3.5) / x[1] / (3 + t[2]); }"},
		{"member through a macro", "struct o { double (*exp)(double); };\n#define CALLM(o, fn, v) (o).fn(v)\nstatic double twice(double v) { return 2 * v; }\n" +
			"void k(const double *x, double *y, float *f) { struct o s = {twice}; y[0] = exp(x[0]) / x[1] / 3 + CALLM(s, exp, x[1]); }"},
		{"ifdef", "#ifdef cbrt\n#error cbrt\n#endif\nvoid k(const double *x, double *y, float *f) { y[0] = cbrt(x[0]) / x[1] / 3; }"},
	} {
		l := laneLoop(t, m, "#include <math.h>\n"+c.src, "k", args...)
		if got := laneCloneCalls(l); got != nil {
			t.Errorf("%s: laneCloneCalls = %v, want none", c.name, got)
		}
		src, err := SequentialLanes(l, 8)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(src, "op2_lm_") {
			t.Errorf("%s: the lane form calls a clone", c.name)
		}
		compiles(t, c.name, src)
	}
	l = laneLoop(t, m, "#include <cmath>\nvoid k(const double *x, double *y, float *f) { y[0] = std::cbrt(x[0]) / x[1] / 3; }", "k", args...)
	l.Kernel.CXX = true
	if got := laneCloneCalls(l); got != nil {
		t.Errorf("C++: laneCloneCalls = %v, want none", got)
	}
}

// assemble returns the assembly GCC makes of C source src with the host
// backends' default flags and the simd pragma's.
func assemble(t *testing.T, src string, flags ...string) string {
	t.Helper()
	cc, f := cSource(t, src)
	out, err := exec.Command(cc, append(append([]string{"-S", "-o", "-", "-O3", "-march=native", "-fno-math-errno", "-ffp-contract=off", "-fopenmp-simd"}, flags...), f)...).CombinedOutput()
	if err != nil {
		t.Fatalf("gcc -S: %v\n%s", err, out)
	}
	return string(out)
}

// TestLanesDespiteOptionWords: a source that only mentions GCC's option
// pragmas (in a comment or a string) or calls a function named target
// keeps its lanes, as does a helper after the kernel whose prototype
// names a struct declared (not defined) before the kernel.
func TestLanesDespiteOptionWords(t *testing.T) {
	m := newLaneMesh()
	q := m.dat("q", m.cells, core.Float64, 4)
	w := m.dat("w", m.edges, core.Float64, 1)
	args := []core.Arg{{Data: w, Access: core.Read, Kind: core.ArgDirect}, {Data: q, Map: m.ecell, Idx: 0, Access: core.Inc, Kind: core.ArgIndirect}}
	for name, src := range map[string]string{
		"comment":       "// no #pragma GCC optimize here\nvoid comment(const double *w, double *q) { q[0] += w[0] / 3.0; }",
		"string":        "static const char *note = \"#pragma GCC target\";\nvoid string(const double *w, double *q) { q[0] += w[0] / 3.0 + note[0]; }",
		"call":          "static double target(const char *s, double v) { return v + s[0]; }\nvoid call(const double *w, double *q) { q[0] += target(\"a\", w[0]) / 3.0; }",
		"forwardstruct": "struct fs_p;\nstatic double fs_h(const double *v, const struct fs_p *p);\nvoid forwardstruct(const double *w, double *q) { q[0] += fs_h(w, 0) / 3.0; }\nstruct fs_p { double s; };\nstatic double fs_h(const double *v, const struct fs_p *p) { return p ? v[0] * p->s : v[0]; }",
	} {
		if err := SIMDCheck(laneLoop(t, m, src, name, args...)); err != nil {
			t.Errorf("%s: SIMDCheck = %v, want lanes", name, err)
		}
	}
}
