package probe_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/nvrtc"
	"github.com/goop2/op2/internal/testreq"
)

// Issue 37, item 3: kernel sources declaring names built into OpenCL C or
// CUDA are renamed in device code. These probes declare them in other
// ways: macros tested with #ifdef, struct double3 through pointers,
// arrays and sizeof, typedef chains, C++ structs with constructors on
// cuda (NVRTC) and the host, helpers and kernels named like built-in
// functions, and variables named like OpenCL C keywords.

// renameKernel is one kernel of the rename probes: a direct loop over 6
// elements reading x (dim 3) and writing y (dim 4).
type renameKernel struct {
	name, src string
	cxx       bool
	// want is y for x = iota (the values each element computes), nil to
	// take the sequential backend's.
	want []float64
}

// runRename runs k on each of the backends named (those
// available) and NVRTC, and returns the failures, one line each.
func runRename(t *testing.T, k renameKernel) []string {
	t.Helper()
	kernel := op2.NewKernel(k.src, k.name)
	if k.cxx {
		kernel = kernel.CXX()
	}
	set := must(op2.NewSet(6, "elems"))
	x := must(op2.NewDat(set, 3, iota32[float64](18), "x"))
	var fails []string
	run := func(cfg op2.Config) []float64 {
		cfg.CacheDir = cacheDir
		r, err := op2.NewRuntime(cfg)
		if err != nil {
			fails = append(fails, cfgName(cfg)+": "+err.Error())
			return nil
		}
		y := must(op2.NewDat[float64](set, 4, nil, "y"))
		if err := r.ParLoop(kernel, set, x.Arg(op2.Read), y.Arg(op2.Write)); err != nil {
			fails = append(fails, cfgName(cfg)+": "+firstLines(err.Error(), 6))
			return nil
		}
		return slices.Clone(y.DataRO())
	}
	want := k.want
	if got := run(op2.Config{Backend: "sequential"}); want == nil {
		want = got
	} else if got != nil && !slices.Equal(got, want) {
		fails = append(fails, "sequential: "+fmtF(got)+", want "+fmtF(want))
	}
	if want == nil {
		return fails
	}
	cfgs := []op2.Config{{Backend: "openmp", Threads: 2}}
	if haveOpenCL() && !k.cxx {
		cfgs = append(cfgs, op2.Config{Backend: "opencl"}, op2.Config{Backend: "opencl", DeviceLayout: "soa"})
	}
	for _, cfg := range cfgs {
		if got := run(cfg); got != nil && !slices.Equal(got, want) {
			fails = append(fails, cfgName(cfg)+": "+fmtF(got)+", want "+fmtF(want))
		}
	}
	if nv, err := nvrtc.Load(); err == nil {
		src, err := op2.Generate("cuda", kernel, set, x.Arg(op2.Read), must(op2.NewDat[float64](set, 4, nil, "y")).Arg(op2.Write))
		if err != nil {
			fails = append(fails, "cuda Generate: "+err.Error())
		} else if _, log, err := nv.Compile(src, k.name+".cu", 80); err != nil {
			fails = append(fails, "NVRTC: "+firstLines(err.Error()+"\n"+log, 8))
		}
	} else if testreq.Required(t, "nvrtc") {
		t.Fatalf("%s names nvrtc, but: %v", testreq.Env, err)
	}
	return fails
}

func fmtF(v []float64) string { return fmt.Sprint(v) }

// renameExpect is y for each element e: y = f(x0, x1, x2) per element.
func renameExpect(f func(a, b, c float64) [4]float64) []float64 {
	var out []float64
	for e := range 6 {
		v := f(float64(3*e), float64(3*e+1), float64(3*e+2))
		out = append(out, v[:]...)
	}
	return out
}

// TestRenamePassing: declarations of built-in names that are
// renamed correctly (documented behaviour).
func TestRenamePassing(t *testing.T) {
	sum3 := renameExpect(func(a, b, c float64) [4]float64 { return [4]float64{a + b + c, a * b, 3, c} })
	for _, k := range []renameKernel{
		{name: "p37_ifdef", src: `#define double3 struct p37vec
struct p37vec { double x, y, z; };
#ifdef double3
#define P37_HAVE 1
#else
#define P37_HAVE 0
#endif
void p37_ifdef(const double *x, double *y) {
  double3 v = {x[0], x[1], x[2]};
  y[0] = v.x + v.y + v.z; y[1] = v.x * v.y; y[2] = P37_HAVE ? 3 : -1; y[3] = v.z;
}`, want: sum3},
		{name: "p37_ptr", src: `struct double3 { double x, y, z; };
typedef struct double3 vec3;
typedef vec3 vec3b;
static void p37_load(struct double3 *p, const double *v) { p->x = v[0]; p->y = v[1]; p->z = v[2]; }
static double p37_sum(const vec3b *p) { return p->x + p->y + p->z; }
void p37_ptr(const double *x, double *y) {
  struct double3 a[2];
  p37_load(&a[0], x);
  a[1] = a[0];
  vec3 *q = &a[1];
  y[0] = p37_sum(q); y[1] = a[0].x * a[1].y; y[2] = (double)(sizeof(struct double3) / sizeof(double)); y[3] = q->z;
}`, want: sum3},
		{name: "p37_tdsizeof", src: `typedef struct { double x, y, z; } double3;
typedef double3 pair3[2];
void p37_tdsizeof(const double *x, double *y) {
  pair3 p; double3 *v = &p[0];
  v->x = x[0]; v->y = x[1]; v->z = x[2]; p[1] = p[0];
  y[0] = p[1].x + p[1].y + p[1].z; y[1] = v->x * v->y; y[2] = (double)(sizeof(double3) / sizeof(double)); y[3] = p[1].z;
}`, want: sum3},
		{name: "p37_dot", src: `typedef struct { double x, y, z; } double3;
static double dot(double3 a, double3 b);
static double3 cross(double3 a, double3 b) { double3 r = {a.y*b.z - a.z*b.y, a.z*b.x - a.x*b.z, a.x*b.y - a.y*b.x}; return r; }
static double length(double3 a) { return dot(a, a); }
void p37_dot(const double *x, double *y) {
  double3 a = {x[0], x[1], x[2]}, one = {1, 1, 1};
  double3 c = cross(a, one);
  y[0] = dot(a, one); y[1] = x[0] * x[1]; y[2] = length(c) >= 0 ? 3 : 0; y[3] = x[2];
}
static double dot(double3 a, double3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }`, want: sum3},
		{name: "p37_arrtd", src: `typedef double double4[4];
typedef unsigned int uint;
typedef double float2;
void p37_arrtd(const double *x, double *y) {
  double4 v = {x[0], x[1], x[2], 0}; uint n = 3; float2 f = x[0] * x[1];
  y[0] = v[0] + v[1] + v[2]; y[1] = f; y[2] = n; y[3] = v[2];
}`, want: sum3},
		{name: "p37_macros", src: `#ifndef MAXFLOAT
#define MAXFLOAT 1e30
#endif
#define dot(a, b) ((a)[0] * (b)[0] + (a)[1] * (b)[1] + (a)[2] * (b)[2])
#define clamp(v) ((v) < 0 ? 0 : (v))
#define uint unsigned
void p37_macros(const double *x, double *y) {
  const double one[3] = {1, 1, 1};
  uint n = 3;
  y[0] = dot(x, one); y[1] = clamp(x[0] * x[1]); y[2] = MAXFLOAT > 1e29 ? n : 0; y[3] = x[2];
}`, want: sum3},
	} {
		t.Run(k.name, func(t *testing.T) {
			if fails := runRename(t, k); len(fails) > 0 {
				t.Errorf("%s", strings.Join(fails, "\n"))
			}
		})
	}
}

// TestRenameCXXStruct: a C++ kernel (Kernel.CXX) declaring
// struct double3 with a constructor, operators and a member function
// dot, and a helper make_double3 (CUDA's own function's name), on the
// host backends and on cuda through NVRTC.
func TestRenameCXXStruct(t *testing.T) {
	k := renameKernel{name: "p37_cxx", cxx: true, src: `struct double3 {
  double x, y, z;
  double3() : x(0), y(0), z(0) {}
  double3(double a, double b, double c) : x(a), y(b), z(c) {}
  double3 operator+(const double3 &o) const { return double3(x + o.x, y + o.y, z + o.z); }
  double dot(const double3 &o) const { return x * o.x + y * o.y + z * o.z; }
};
static inline double3 make_double3(double a, double b, double c) { return double3(a, b, c); }
void p37_cxx(const double *x, double *y) {
  double3 a = make_double3(x[0], x[1], x[2]);
  double3 s = a + double3();
  y[0] = s.dot(double3(1, 1, 1)); y[1] = x[0] * x[1]; y[2] = double(sizeof(double3) / sizeof(double)); y[3] = s.z;
}`, want: renameExpect(func(a, b, c float64) [4]float64 { return [4]float64{a + b + c, a * b, 3, c} })}
	if fails := runRename(t, k); len(fails) > 0 {
		t.Errorf("%s", strings.Join(fails, "\n"))
	}
}

// TestRenameKernelNamedBuiltin: a kernel whose own name is an
// OpenCL C built-in function (normalize), calling a helper named
// clamp, runs on every backend.
func TestRenameKernelNamedBuiltin(t *testing.T) {
	k := renameKernel{name: "normalize", src: `static double clamp(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }
void normalize(const double *x, double *y) {
  double s = x[0] + x[1] + x[2];
  y[0] = s; y[1] = x[0] * x[1]; y[2] = clamp(s, 0, 3) > 2 ? 3 : 3; y[3] = x[2];
}`, want: renameExpect(func(a, b, c float64) [4]float64 { return [4]float64{a + b + c, a * b, 3, c} })}
	if fails := runRename(t, k); len(fails) > 0 {
		t.Errorf("%s", strings.Join(fails, "\n"))
	}
}

// TestRenameVariablesNamedLikeKeywords: local variables and
// parameters of helpers named like OpenCL C's keywords and types (half,
// local, global, constant, private, uchar) are ordinary C names: the
// kernel runs on the host, and must run on opencl (and cuda) too, as
// the issue asks of names a kernel declares.
func TestRenameVariablesNamedLikeKeywords(t *testing.T) {
	// Finding 1 (fixed): variables named half, local, global... broke
	// the kernel on opencl (a build error), although the source is valid
	// C; the device generator now renames every word OpenCL C reserves.
	for _, k := range []renameKernel{
		{name: "p37_half", src: `void p37_half(const double *x, double *y) {
  double half = 0.5 * x[0];
  y[0] = x[0] + x[1] + x[2]; y[1] = 2 * half * x[1]; y[2] = 3; y[3] = x[2];
}`},
		{name: "p37_local", src: `static double p37_twice(double local) { return 2 * local; }
void p37_local(const double *x, double *y) {
  double global = x[0] + x[1] + x[2];
  y[0] = global; y[1] = p37_twice(x[0] * x[1]) / 2; y[2] = 3; y[3] = x[2];
}`},
		{name: "p37_uchar", src: `void p37_uchar(const double *x, double *y) {
  int uchar = 3, constant = 1;
  y[0] = x[0] + x[1] + x[2]; y[1] = x[0] * x[1] * constant; y[2] = uchar; y[3] = x[2];
}`},
	} {
		k.want = renameExpect(func(a, b, c float64) [4]float64 { return [4]float64{a + b + c, a * b, 3, c} })
		t.Run(k.name, func(t *testing.T) {
			if fails := runRename(t, k); len(fails) > 0 {
				t.Errorf("%s", strings.Join(fails, "\n"))
			}
		})
	}
}
