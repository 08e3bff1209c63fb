package op2_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// cacheEntries lists the cache entries matching pattern in dir.
func cacheEntries(t *testing.T, dir, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// newCacheEntry runs a helper process that builds the loop for tag (adding
// inc) and returns the one cache entry it added.
func newCacheEntry(t *testing.T, dir, backend, pattern, tag, inc string) string {
	t.Helper()
	before := cacheEntries(t, dir, pattern)
	out, err := runHelper(t, dir, tag, "OP2_TEST_INC="+inc, "OP2_TEST_BACKEND="+backend)
	if want := "compiles=1 diskhits=0 rebuilds=0"; err != nil || out != want {
		t.Fatalf("building %s: got %q (%v), want %q", tag, out, err, want)
	}
	var added []string
	for _, e := range cacheEntries(t, dir, pattern) {
		if !slices.Contains(before, e) {
			added = append(added, e)
		}
	}
	if len(added) != 1 {
		t.Fatalf("building %s added entries %v, want one", tag, added)
	}
	return added[0]
}

// cacheBackends are the backends with a disk cache entry per loop, and the
// pattern of their entries.
func cacheBackends(t *testing.T) map[string]string {
	m := map[string]string{"sequential": "*.so", "openmp": "*.so"}
	if slices.Contains(allBackends, "opencl") {
		m["opencl"] = "*.clbin"
	} else {
		t.Log("opencl: skipped, no OpenCL runtime")
	}
	return m
}

// TestCacheEntryBoundToKey: loop A's valid entry copied over loop B's is
// detected and rebuilt (B must not run A's code), for host libraries and
// OpenCL binaries alike.
func TestCacheEntryBoundToKey(t *testing.T) {
	for backend, pattern := range cacheBackends(t) {
		t.Run(backend, func(t *testing.T) {
			dir := t.TempDir()
			a := newCacheEntry(t, dir, backend, pattern, "swap-a", "1.5")
			b := newCacheEntry(t, dir, backend, pattern, "swap-b", "2.5")
			check(t, os.WriteFile(b, must(os.ReadFile(a)), 0o600))
			for _, want := range []string{"compiles=1 diskhits=0 rebuilds=1", "compiles=0 diskhits=1 rebuilds=0"} {
				out, err := runHelper(t, dir, "swap-b", "OP2_TEST_INC=2.5", "OP2_TEST_BACKEND="+backend)
				if err != nil || out != want {
					t.Fatalf("after the swap: got %q (%v), want %q", out, err, want)
				}
			}
		})
	}
}

// TestCacheEntryOthersCouldWriteIsRebuilt: an entry that another user
// could have written is never loaded, but rebuilt privately.
func TestCacheEntryOthersCouldWriteIsRebuilt(t *testing.T) {
	cases := []struct {
		name  string
		root  bool
		setup func(path string) error
	}{
		{"world writable", false, func(p string) error { return os.Chmod(p, 0o666) }},
		{"group writable", false, func(p string) error { return os.Chmod(p, 0o620) }},
		{"owned by another user", true, func(p string) error { return os.Chown(p, 54321, 54321) }},
	}
	for backend, pattern := range cacheBackends(t) {
		for _, c := range cases {
			t.Run(backend+"/"+c.name, func(t *testing.T) {
				if c.root && os.Geteuid() != 0 {
					t.Skip("needs root to give a file to another user")
				}
				dir := t.TempDir()
				e := newCacheEntry(t, dir, backend, pattern, "foreign", "3")
				check(t, c.setup(e))
				out, err := runHelper(t, dir, "foreign", "OP2_TEST_INC=3", "OP2_TEST_BACKEND="+backend)
				if want := "compiles=1 diskhits=0 rebuilds=1"; err != nil || out != want {
					t.Fatalf("got %q (%v), want %q", out, err, want)
				}
				fi := must(os.Stat(e))
				if fi.Mode().Perm()&0o022 != 0 {
					t.Errorf("rebuilt entry has mode %04o", fi.Mode().Perm())
				}
			})
		}
	}
}

// TestCacheDirectoryRefused: a cache directory other users could write to
// is refused when the backend is opened, with an error naming it and what
// to do.
func TestCacheDirectoryRefused(t *testing.T) {
	cases := []struct {
		name  string
		root  bool
		setup func(dir string) error
		want  string
	}{
		{"world writable", false, func(d string) error { return os.Chmod(d, 0o777) }, "chmod go-w"},
		{"group writable", false, func(d string) error { return os.Chmod(d, 0o770) }, "chmod go-w"},
		{"owned by another user", true, func(d string) error { return os.Chown(d, 54321, 54321) }, "owned by uid 54321"},
	}
	for _, backend := range allBackends {
		for _, c := range cases {
			t.Run(backend+"/"+c.name, func(t *testing.T) {
				if c.root && os.Geteuid() != 0 {
					t.Skip("needs root to give a directory to another user")
				}
				dir := filepath.Join(t.TempDir(), "cache")
				check(t, os.Mkdir(dir, 0o700))
				check(t, c.setup(dir))
				t.Cleanup(func() {
					check(t, op2.Configure(op2.Config{CacheDir: os.Getenv("OP2_CACHE_DIR"), PlanCheck: true}))
				})
				err := op2.Configure(op2.Config{Backend: backend, CacheDir: dir})
				if err == nil {
					t.Fatal("accepted")
				}
				for _, w := range []string{dir, c.want, "OP2_CACHE_DIR"} {
					if !strings.Contains(err.Error(), w) && !(w == "OP2_CACHE_DIR" && c.want == "chmod go-w") {
						t.Errorf("error does not mention %q: %v", w, err)
					}
				}
			})
		}
	}
}

// TestCacheRelativeDirectory: OP2_CACHE_DIR=. (any relative path) works.
func TestCacheRelativeDirectory(t *testing.T) {
	for _, rel := range []string{".", "sub/cache"} {
		t.Run(rel, func(t *testing.T) {
			orig := os.Getenv("OP2_CACHE_DIR")
			wd := t.TempDir()
			t.Chdir(wd)
			t.Setenv("OP2_CACHE_DIR", rel)
			t.Cleanup(func() { check(t, op2.Configure(op2.Config{CacheDir: orig, PlanCheck: true})) })
			for _, backend := range hostBackends {
				check(t, op2.Configure(op2.Config{Backend: backend, PlanCheck: true}))
				check(t, cacheLoop(cacheKernel("relative-"+rel+"-"+backend)))
			}
			if libs := cacheEntries(t, filepath.Join(wd, rel), "*.so"); len(libs) != 2 {
				t.Errorf("cache %s holds %d libraries, want 2", rel, len(libs))
			}
		})
	}
}

// TestCCWithArguments: CC may carry arguments, as make and cgo accept.
func TestCCWithArguments(t *testing.T) {
	for _, cc := range []string{"cc -std=gnu11", `cc -std=gnu11 '-DOP2_TEST_UNUSED="a b"'`} {
		for _, backend := range hostBackends {
			t.Run(cc+"/"+backend, func(t *testing.T) {
				check(t, op2.Configure(op2.Config{Backend: backend, CC: cc, CacheDir: t.TempDir(), PlanCheck: true}))
				t.Cleanup(func() {
					check(t, op2.Configure(op2.Config{CacheDir: os.Getenv("OP2_CACHE_DIR"), PlanCheck: true}))
				})
				check(t, cacheLoop(cacheKernel("cc-args")))
			})
		}
	}
}

// mathFuncs are math.h functions a kernel may call, with Go's equivalent,
// applied to a in (0, 1) and b in (1, 2).
var mathFuncs = []struct {
	c   string
	go_ func(a, b float64) float64
}{
	{"sin(a)", func(a, b float64) float64 { return math.Sin(a) }},
	{"cos(a)", func(a, b float64) float64 { return math.Cos(a) }},
	{"tan(a)", func(a, b float64) float64 { return math.Tan(a) }},
	{"asin(a)", func(a, b float64) float64 { return math.Asin(a) }},
	{"acos(a)", func(a, b float64) float64 { return math.Acos(a) }},
	{"atan(a)", func(a, b float64) float64 { return math.Atan(a) }},
	{"atan2(a, b)", func(a, b float64) float64 { return math.Atan2(a, b) }},
	{"sinh(a)", func(a, b float64) float64 { return math.Sinh(a) }},
	{"cosh(a)", func(a, b float64) float64 { return math.Cosh(a) }},
	{"tanh(a)", func(a, b float64) float64 { return math.Tanh(a) }},
	{"asinh(a)", func(a, b float64) float64 { return math.Asinh(a) }},
	{"acosh(b)", func(a, b float64) float64 { return math.Acosh(b) }},
	{"atanh(a)", func(a, b float64) float64 { return math.Atanh(a) }},
	{"exp(a)", func(a, b float64) float64 { return math.Exp(a) }},
	{"exp2(a)", func(a, b float64) float64 { return math.Exp2(a) }},
	{"expm1(a)", func(a, b float64) float64 { return math.Expm1(a) }},
	{"log(b)", func(a, b float64) float64 { return math.Log(b) }},
	{"log10(b)", func(a, b float64) float64 { return math.Log10(b) }},
	{"log2(b)", func(a, b float64) float64 { return math.Log2(b) }},
	{"log1p(a)", func(a, b float64) float64 { return math.Log1p(a) }},
	{"pow(b, a)", func(a, b float64) float64 { return math.Pow(b, a) }},
	{"sqrt(b)", func(a, b float64) float64 { return math.Sqrt(b) }},
	{"cbrt(b)", func(a, b float64) float64 { return math.Cbrt(b) }},
	{"hypot(a, b)", func(a, b float64) float64 { return math.Hypot(a, b) }},
	// int arguments are converted to double, as C does (OpenCL's float
	// and double overloads would make these calls ambiguous).
	{"hypot(3, 4) + a", func(a, b float64) float64 { return 5 + a }},
	{"fmin(1, 2) * a", func(a, b float64) float64 { return a }},
	{"fma(2, 3, 4) + b", func(a, b float64) float64 { return 10 + b }},
	{"pow(2, 10) * a", func(a, b float64) float64 { return 1024 * a }},
	{"sqrt(sqrt(16)) + atan2(1, 1) * a", func(a, b float64) float64 { return 2 + math.Pi/4*a }},
	{"fabs(-a)", func(a, b float64) float64 { return math.Abs(-a) }},
	{"floor(5 * b)", func(a, b float64) float64 { return math.Floor(5 * b) }},
	{"ceil(5 * b)", func(a, b float64) float64 { return math.Ceil(5 * b) }},
	{"round(5 * b)", func(a, b float64) float64 { return math.Round(5 * b) }},
	{"trunc(-5 * b)", func(a, b float64) float64 { return math.Trunc(-5 * b) }},
	{"fmod(b, a)", func(a, b float64) float64 { return math.Mod(b, a) }},
	{"fmin(a, b)", func(a, b float64) float64 { return math.Min(a, b) }},
	{"fmax(a, b)", func(a, b float64) float64 { return math.Max(a, b) }},
	{"fdim(b, a)", func(a, b float64) float64 { return math.Dim(b, a) }},
	{"copysign(a, -b)", func(a, b float64) float64 { return math.Copysign(a, -b) }},
	{"ldexp(a, 3)", func(a, b float64) float64 { return math.Ldexp(a, 3) }},
	{"erf(a)", func(a, b float64) float64 { return math.Erf(a) }},
	{"erfc(a)", func(a, b float64) float64 { return math.Erfc(a) }},
	{"tgamma(b)", func(a, b float64) float64 { return math.Gamma(b) }},
	{"lgamma(b)", func(a, b float64) float64 { v, _ := math.Lgamma(b); return v }},
}

// TestKernelMathFunctions: a kernel may call any common math.h function on
// every backend (host libraries are linked with libm; on opencl int
// arguments are converted to double as in C), and gets what Go's math
// package computes.
func TestKernelMathFunctions(t *testing.T) {
	var body strings.Builder
	for i, f := range mathFuncs {
		fmt.Fprintf(&body, "  y[%d] = %s;\n", i, f.c)
	}
	src := "void mathk(const double *x, double *y) {\n  const double a = x[0], b = x[1];\n" + body.String() + "}"
	const n = 10
	for _, backend := range allBackends {
		t.Run(backend, func(t *testing.T) {
			check(t, op2.Use(backend))
			defer op2.Use("sequential")
			set := must(op2.NewSet(n, "points"))
			in := make([]float64, 2*n)
			for i := 0; i < n; i++ {
				in[2*i], in[2*i+1] = 0.05+0.09*float64(i), 1.05+0.09*float64(i)
			}
			x := must(op2.NewDat(set, 2, in, "x"))
			y := must(op2.NewDat[float64](set, len(mathFuncs), nil, "y"))
			check(t, op2.ParLoop(op2.NewKernel(src, "mathk"), set, x.Arg(op2.Read), y.Arg(op2.Write)))
			out := y.Data()
			for i := 0; i < n; i++ {
				a, b := in[2*i], in[2*i+1]
				for j, f := range mathFuncs {
					got, want := out[i*len(mathFuncs)+j], f.go_(a, b)
					if math.Abs(got-want) > 1e-13*math.Max(1, math.Abs(want)) {
						t.Errorf("%s with a=%g b=%g: got %v, want %v", f.c, a, b, got, want)
					}
				}
			}
		})
	}
}

// firstValues runs kernel name of src over a set of two elements, writing
// a Dat of dim values per element, on a runtime of cfg, and returns the
// first element's values.
func firstValues(t *testing.T, cfg op2.Config, src, name string, dim int) []float64 {
	t.Helper()
	r, s, y := writeTarget(t, cfg, dim)
	check(t, r.ParLoop(op2.NewKernel(src, name), s, y.Arg(op2.Write)))
	return y.DataRO()[:dim]
}

// writeTarget returns a runtime configured by cfg (closed when the test
// ends), a set of 2 elements and a float64 Dat of dim on it, for a
// kernel to write.
func writeTarget(t *testing.T, cfg op2.Config, dim int) (*op2.Runtime, *op2.Set, *op2.Dat[float64]) {
	t.Helper()
	r := closeAtEnd(t, must(op2.NewRuntime(cfg)))
	s := must(op2.NewSet(2, "s"))
	return r, s, must(op2.NewDat[float64](s, dim, nil, "y"))
}

// TestIsinfSign: isinf gives -1 for minus infinity, as glibc's does on
// the host, on opencl too (OpenCL C's gives 1). CUDA's is C++'s (bool),
// as a C++ kernel's is on the host: not checked.
func TestIsinfSign(t *testing.T) {
	src := "#include <math.h>\nvoid isinf_k(const double *x, double *y) { double m = -1 / (x[0] - x[0]); y[0] = isinf(m); y[1] = isinf((float)-m); y[2] = isinf(x[0]);\n" +
		"  double v = 5; y[3] = isinf(v += 1); y[4] = v; }" // the argument evaluated once
	for _, backend := range allBackends {
		if backend == "cuda" {
			continue
		}
		t.Run(backend, func(t *testing.T) {
			r := must(op2.NewRuntime(op2.Config{Backend: backend}))
			defer r.Close()
			set := must(op2.NewSet(3, "s"))
			x := must(op2.NewDat(set, 1, []float64{1, 2, 3}, "x"))
			y := must(op2.NewDat[float64](set, 5, nil, "y"))
			check(t, r.ParLoop(op2.NewKernel(src, "isinf_k"), set, x.Arg(op2.Read), y.Arg(op2.Write)))
			if got := y.DataRO()[:5]; !slices.Equal(got, []float64{-1, 1, 0, 0, 6}) {
				t.Errorf("isinf(-inf), isinf(inf), isinf(1), isinf(v += 1), v = %v, want [-1 1 0 0 6]", got)
			}
		})
	}
}

// TestInlineKernelsLink: a kernel or helper defined C99-style inline
// (not static), as OP2's kernels often are, runs when the compiler does
// not inline it: a recursive helper at -O3, every function at -O0. By
// C99's rules such a definition supplies no symbol, and the library did
// not load ("undefined symbol: fib").
func TestInlineKernelsLink(t *testing.T) {
	for _, c := range []struct {
		name, src string
		flags     []string
	}{
		{"recursive helper", "inline int fib(int k) { return k < 2 ? k : fib(k - 1) + fib(k - 2); }\nvoid inl_k(double *y) { *y = fib(20); }", nil},
		{"helper at -O0", "inline double twice(double v) { return 2 * v; }\nvoid inl_k(double *y) { *y = twice(3382.5); }", []string{"-O0", "-g"}},
		{"kernel at -O0", "__attribute__((unused)) inline void inl_k(double *y) { *y = 6765; }", []string{"-O0"}},
		{"__inline__ helper at -O0", "__inline__ double twice(double v) { return 2 * v; }\nvoid inl_k(double *y) { *y = twice(3382.5); }", []string{"-O0"}},
		{"__inline helper at -O0", "__inline double twice(double v) { return 2 * v; }\nvoid inl_k(double *y) { *y = twice(3382.5); }", []string{"-O0"}},
		// A definition in a skipped #if group; one beside a conditional.
		{"inline helper in a skipped branch", "#ifdef INL_NOPE\ninline double twice(double v) { return 2 * v; }\n#endif\nvoid inl_k(double *y) { *y = 6765; }", []string{"-O0"}},
		{"inline helper beside a conditional", "#ifndef M_PI\n#define M_PI 3.14159265358979323846\n#endif\ninline int fib(int k) { return k < 2 ? k : fib(k - 1) + fib(k - 2); }\nvoid inl_k(double *y) { *y = fib(20); }", []string{"-O0"}},
	} {
		for _, backend := range hostBackends {
			t.Run(c.name+"/"+backend, func(t *testing.T) {
				if got := firstValues(t, op2.Config{Backend: backend, CFlags: c.flags}, c.src, "inl_k", 1); got[0] != 6765 {
					t.Errorf("y = %v, want 6765", got)
				}
			})
		}
	}
}

// TestFuncNameEverywhere: __func__ names the kernel and its helpers as
// the source does on every backend (the device generator renames them:
// it said "op2_f_fn_k").
func TestFuncNameEverywhere(t *testing.T) {
	src := `#define FNLEN sizeof(__func__)
static double fn_h(void) { return sizeof(__func__) + 100 * __func__[3]; }
void fn_k(double *y) { y[0] = FNLEN; y[1] = __func__[3]; y[2] = fn_h(); y[3] = sizeof(__FUNCTION__) + sizeof(__PRETTY_FUNCTION__); }`
	for _, backend := range allBackends {
		t.Run(backend, func(t *testing.T) {
			if got := firstValues(t, op2.Config{Backend: backend}, src, "fn_k", 4); !slices.Equal(got, []float64{5, 'k', 5 + 100*'h', 10}) {
				t.Errorf("sizeof(__func__) through a macro, __func__[3], the helper's, __FUNCTION__'s and __PRETTY_FUNCTION__'s = %v, want [5 %d %d 10]", got, 'k', 5+100*'h')
			}
		})
	}
}

// TestStaticConstTablesAndRegister: a static const table in a function
// and register variables, common C that OpenCL C 1.2 (and C++17, CUDA)
// lacks, run on every backend (opencl refused both).
func TestStaticConstTablesAndRegister(t *testing.T) {
	src := `static double weight(register int i) { static const double w[4] = {0.5, 0.25, 0.125, 2}; return w[i]; }
void sc_k(register double *y) {
  const static int order[4] = {3, 2, 1, 0};
  register int i;
  for (i = 0; i < 4; i++) y[i] = weight(order[i]);
}`
	for _, backend := range allBackends {
		t.Run(backend, func(t *testing.T) {
			if got := firstValues(t, op2.Config{Backend: backend}, src, "sc_k", 4); !slices.Equal(got, []float64{2, 0.125, 0.25, 0.5}) {
				t.Errorf("y = %v, want [2 0.125 0.25 0.5]", got)
			}
			r, s, y := writeTarget(t, op2.Config{Backend: backend}, 1)
			// A static variable that is not const (a member is) keeps
			// its value from call to call on the host; opencl, which
			// cannot, refuses it rather than run it otherwise.
			for i, counter := range []string{
				`static double sc_cnt(void) { static struct { const int k; int n; } s = {1, 0}; s.n++; return s.n; }`,
				`static double sc_cnt(void) { static const double tab[2] = {1, 2}; static const double *p = tab; double v = *p; p = p == tab ? tab + 1 : tab; return v; }`,
			} {
				err := r.ParLoop(op2.NewKernel(counter+"\nvoid sc_c(double *y) { y[0] = sc_cnt(); }", "sc_c"), s, y.Arg(op2.Write))
				if backend == "opencl" && err == nil {
					t.Errorf("static variable %d that is not const ran on opencl: y = %v", i, y.DataRO())
				} else if backend != "opencl" && err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestHelpersThroughMacros: helpers called through macros (a name as a
// macro's argument, pasted with ##, an object-like macro naming one) run
// on every backend (the device generator renamed only the calls the
// source spells, and opencl said "use of undeclared identifier 'hh'").
func TestHelpersThroughMacros(t *testing.T) {
	src := `static double hm_h(double v) { return v + 1; }
static double hm_helper_a(double v) { return v * 3; }
#define APPLY(f, v) f(v)
#define SQ(v) (hm_h(v) * hm_h(v))
#define CALL(n, v) hm_helper_##n(v)
#define FN hm_h
void hm_k(double *y) { y[0] = APPLY(hm_h, 2.0); y[1] = SQ(1.0); y[2] = CALL(a, 2.0); y[3] = FN(5.0); }`
	for _, backend := range allBackends {
		t.Run(backend, func(t *testing.T) {
			if got := firstValues(t, op2.Config{Backend: backend}, src, "hm_k", 4); !slices.Equal(got, []float64{3, 4, 6, 6}) {
				t.Errorf("y = %v, want [3 4 6 6]", got)
			}
			// With a Const the helpers reached through macros get the
			// constants; a helper guarded by #ifndef, and ## only in a
			// comment, keep their own names.
			r, s, y := writeTarget(t, op2.Config{Backend: backend}, 4)
			c := must(op2.NewConstIn[float64](r, 1, []float64{10}, "hm_c"))
			defer c.Remove()
			withConst := `/* ## */
static double hm_g(double v) { return v + hm_c; }
static double hm_z(void) { return hm_c; }
#ifndef hm_max
static double hm_max(double a, double b) { return a > b ? a : b; }
#endif
#define APPLY(f, v) f(v)
#define ZERO(f) f()
void hm_kc(double *y) { y[0] = APPLY(hm_g, 2.0); y[1] = ZERO(hm_z); y[2] = hm_max(1, 3); y[3] = hm_g(0); }`
			check(t, r.ParLoop(op2.NewKernel(withConst, "hm_kc"), s, y.Arg(op2.Write)))
			if got := y.DataRO()[:4]; !slices.Equal(got, []float64{12, 10, 3, 10}) {
				t.Errorf("with a Const: y = %v, want [12 10 3 10]", got)
			}
		})
	}
}

// TestKernelUndeclaredFunction: a kernel calling a function that exists
// nowhere fails to compile (C99 has no implicit declarations), with an
// error naming the function and showing the compiler's message.
func TestKernelUndeclaredFunction(t *testing.T) {
	for _, backend := range hostBackends {
		t.Run(backend, func(t *testing.T) {
			check(t, op2.Use(backend))
			defer op2.Use("sequential")
			set := must(op2.NewSet(4, "s"))
			x := must(op2.NewDat[float64](set, 1, nil, "x"))
			k := op2.NewKernel("void callsmystery(double *x) { *x = mystery_function(*x); }", "callsmystery")
			err := op2.ParLoop(k, set, x.Arg(op2.RW))
			if err == nil {
				t.Fatal("a kernel calling an undefined function ran")
			}
			for _, w := range []string{"callsmystery", "mystery_function"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not mention %q:\n%v", w, err)
				}
			}
			// The compiler's warning, as GCC and Clang word it.
			if msg := err.Error(); !strings.Contains(msg, "implicit declaration") && !strings.Contains(msg, "undeclared function") {
				t.Errorf("error does not show the compiler's warning:\n%v", err)
			}
		})
	}
}

// TestKernelTypesEverywhere: valid C types give every backend the same
// values: a function-type typedef (typedef double unop(double)) made the
// kernel's own "double" parameters refused on every backend, and int8_t
// was plain char on opencl (signed char on the host), which _Generic
// tells apart.
func TestKernelTypesEverywhere(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      []float64
	}{
		{"function typedef", "typedef double unop(double);\ntypedef int cmpfn(const void *, const void *);\nstatic unop twice;\nstatic double twice(double v) { return 2 * v; }\nvoid ty_k(double *y) { y[0] = twice(1.5); }", []float64{3}},
		{"int8_t", "#include <stdint.h>\nvoid ty_k(double *y) { int8_t v = -3; y[0] = _Generic(v, char: 1, signed char: 2, default: 3) + v; }", []float64{-1}},
	} {
		for _, backend := range allBackends {
			if backend == "cuda" {
				continue
			}
			t.Run(c.name+"/"+backend, func(t *testing.T) {
				needBackend(t, backend)
				if got := firstValues(t, op2.Config{Backend: backend}, c.src, "ty_k", 1); !slices.Equal(got, c.want) {
					t.Errorf("%v, want %v", got, c.want)
				}
			})
		}
	}
}
