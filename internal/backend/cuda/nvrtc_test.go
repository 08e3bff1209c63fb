package cuda_test

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/airfoil"
	"github.com/goop2/op2/internal/backend/cuda"
	"github.com/goop2/op2/internal/backendtest"
	"github.com/goop2/op2/internal/codegen/device"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/mgcfd"
	"github.com/goop2/op2/internal/nvrtc"
	"github.com/goop2/op2/internal/poisson"
	"github.com/goop2/op2/internal/testreq"
	"github.com/goop2/op2/mesh"
)

// compileCheck is a backend that compiles the CUDA source of every loop it
// is asked to build with NVRTC, for each shared-memory size in
// sharedSizes and each work-group size in workGroupSizes (see variants)
// and the architectures in archs (see variant.archs), and then runs the loop on the sequential backend, so
// that the conformance suite, the random meshes and Airfoil (which check
// their results) drive it through every loop shape they have. No GPU is
// needed.
type compileCheck struct {
	seq exec.Backend
}

const compileCheckName = "cudacompilecheck"

var (
	archs       = []int{80, 90}
	sharedSizes = []int{cuda.NominalSharedMem}
	// workGroupSizes are the threads per block each loop is generated
	// for (0: the default).
	workGroupSizes = []int{0}

	// aosOnly leaves out the soa layout with -short (MG-CFD's loops,
	// whose shapes the suite's loops already compile in soa).
	aosOnly bool

	compiledMu sync.Mutex
	compiled   = map[string]bool{} // sources compiled (each for its variant's archs)
	failures   []string
)

func init() {
	exec.Register(compileCheckName, func(cfg *exec.Config) (exec.Backend, error) {
		seq, err := exec.Open("sequential", cfg)
		if err != nil {
			return nil, err
		}
		return &compileCheck{seq: seq}, nil
	})
}

// variant is one way a loop's CUDA source is generated.
type variant struct {
	shared int
	opts   device.Options
}

// variants are the shared-memory sizes, work-group sizes, schemes and
// data layouts each loop is generated for; with -short, sizes other than
// the default only in the aos layout (the layout and the size change
// different lines of the code). A shared-memory size other than the
// nominal one is generated with the default work-group size only (the
// two change different lines too), and the Warp scheme (which changes
// the increments' lines only) with the default sizes only.
func variants() []variant {
	var out []variant
	for _, shared := range sharedSizes {
		for _, wg := range workGroupSizes {
			if shared != cuda.NominalSharedMem && wg != 0 {
				continue
			}
			for _, scheme := range []device.Scheme{device.Staged, device.Atomics, device.Warp} {
				if scheme == device.Warp && (shared != cuda.NominalSharedMem || wg != 0) {
					continue
				}
				for _, soa := range []bool{false, true} {
					if soa && (wg != 0 || aosOnly) && testing.Short() {
						continue
					}
					out = append(out, variant{shared, device.Options{Scheme: scheme, SoA: soa, WorkGroupSize: wg}})
				}
			}
		}
	}
	return out
}

// archs are the architectures v's source is compiled for: every one in
// archs for the default sizes, the newest only for the other sizes (the
// sizes change the same lines whatever the architecture).
func (v variant) archs() []int {
	if v.shared == cuda.NominalSharedMem && v.opts.WorkGroupSize == 0 {
		return archs
	}
	return archs[len(archs)-1:]
}

func (c *compileCheck) Name() string { return compileCheckName }

func (c *compileCheck) Generate(l *core.Loop) (string, error) {
	return cuda.Generate(l, cuda.NominalSharedMem)
}

func (c *compileCheck) Build(l *core.Loop) (exec.Program, error) {
	nv, err := nvrtc.Load()
	if err != nil {
		return nil, err
	}
	for _, v := range variants() {
		shared := v.shared
		src, err := cuda.GenerateWith(l, v.shared, v.opts)
		if err != nil {
			return nil, err
		}
		compiledMu.Lock()
		done := compiled[src]
		compiled[src] = true
		compiledMu.Unlock()
		if done {
			continue
		}
		for _, arch := range v.archs() {
			_, log, err := nv.Compile(src, l.Kernel.Name+".cu", arch, cuda.CompileOptions(l)...)
			if err != nil || strings.TrimSpace(log) != "" {
				compiledMu.Lock()
				failures = append(failures, fmt.Sprintf("%s (shared memory %d, %+v, sm_%d): %v\nlog:\n%s\nsource:\n%s", l.Name(), shared, v.opts, arch, err, log, src))
				compiledMu.Unlock()
			}
		}
	}
	return c.seq.Build(l)
}

// TestNVRTCCompilesEveryLoop compiles the CUDA source of every loop of the
// conformance suite, the random-mesh tests and Airfoil, in both schemes
// (staged and atomics) and both data layouts (aos and soa), with NVRTC for
// sm_80 and sm_90 and fails on any error or warning. In the full run each
// loop is also generated for a device with 2 KiB of shared memory, so the
// code for data too large to stage is compiled as well. Sizes other than
// the defaults are compiled for sm_90 only. MG-CFD's loops
// (internal/mgcfd) are compiled too (with -short in the aos layout and
// for sm_90 only). Airfoil's loops
// are also compiled with 128 and 256 threads per block instead of the
// default 64 (with -short in the aos layout only; in the full run also
// with 32 and 1024).
func TestNVRTCCompilesEveryLoop(t *testing.T) {
	nv := loadNVRTC(t)
	t.Logf("NVRTC %s from %s", nv.Version(), nv.Path)
	if !testing.Short() {
		sharedSizes = []int{cuda.NominalSharedMem, 2 << 10}
	}
	t.Run("Conformance", func(t *testing.T) { backendtest.Run(t, compileCheckName) })
	t.Run("Airfoil", func(t *testing.T) {
		defer func(saved []int) { workGroupSizes = saved }(workGroupSizes)
		workGroupSizes = []int{0, 128, 256}
		if !testing.Short() {
			workGroupSizes = append(workGroupSizes, 32, 1024)
		}
		if err := op2.Configure(op2.Config{Backend: compileCheckName, CacheDir: t.TempDir()}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { op2.Close() }) // builds end before the TempDir is removed
		m, err := mesh.Generate(6, 9)
		if err != nil {
			t.Fatal(err)
		}
		s, err := airfoil.New(m)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, _, err := s.Iterate(2, io.Discard); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("MGCFD", func(t *testing.T) {
		if testing.Short() {
			defer func(saved []int) { archs, aosOnly = saved, false }(archs)
			archs, aosOnly = []int{90}, true
		}
		if err := op2.Configure(op2.Config{Backend: compileCheckName, CacheDir: t.TempDir()}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { op2.Close() }) // builds end before the TempDir is removed
		m, err := mgcfd.Generate(5, 2)
		if err != nil {
			t.Fatal(err)
		}
		s, err := mgcfd.New(m)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, _, err := s.Run(1, nil); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("Poisson", func(t *testing.T) {
		if err := op2.Configure(op2.Config{Backend: compileCheckName, CacheDir: t.TempDir()}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { op2.Close() }) // builds end before the TempDir is removed
		m, err := poisson.Square(4, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := poisson.Solve(m, poisson.Problems["sine"], op2.SolverOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	compiledMu.Lock()
	defer compiledMu.Unlock()
	t.Logf("%d generated sources compiled for %v", len(compiled), archs)
	for _, wg := range []int{128, 256} {
		head := fmt.Sprintf("__launch_bounds__(%d)", wg)
		n := 0
		for src := range compiled {
			if strings.Contains(src, head) {
				n++
			}
		}
		if n < 4 {
			t.Errorf("%d sources with %s compiled: Airfoil's loops did not reach the compile check with %d threads per block", n, head, wg)
		}
	}
	if len(compiled) < 20 {
		t.Errorf("only %d sources compiled: the suite did not reach the compile check", len(compiled))
	}
	for _, f := range failures {
		t.Error(f)
	}
}

// TestNVRTCCompilesKernelSourceForms compiles, for sm_90, the CUDA source
// of kernels written in the forms C kernels take: lookup tables and
// strings at file scope, helpers and prototypes, macros and conditionals,
// standard headers, memcpy, long long, typedef'd pointers, attributes.
func TestNVRTCCompilesKernelSourceForms(t *testing.T) {
	nv := loadNVRTC(t)
	if err := op2.Configure(op2.Config{Backend: "sequential", CacheDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { op2.Close() }) // builds end before the TempDir is removed
	set, err := op2.NewSet(10, "forms")
	if err != nil {
		t.Fatal(err)
	}
	x, err := op2.NewDat[float64](set, 2, nil, "formsx")
	if err != nil {
		t.Fatal(err)
	}
	n, err := op2.NewDat[int64](set, 1, nil, "formsn")
	if err != nil {
		t.Fatal(err)
	}
	kernels := map[string]string{
		"tables": `#include <math.h>
static const double weights[3] = {0.25, 0.5, 0.25};
const char *names = "abc";
void tables(double *x, long long *n) { x[0] = weights[1] * sqrt(x[1]) + names[0]; *n = (long long)x[0]; }`,
		"helpers": `#include <string.h>
#include <stdint.h>
static inline double sq(double v);
#define TWICE(v) (2 * (v))
static inline double sq(double v) { return v * v; }
void helpers(double *x, long long *n) { double t[2]; memcpy(t, x, sizeof t); x[0] = TWICE(sq(t[1])) + MIN(t[0], t[1]); *n = INT64_MAX; }`,
		"conditional": `#define DIM 2
#if DIM == 2 && defined(DIM)
void conditional(double *restrict x, long long *n) { x[0] = x[1]; *n += 1; }
#else
void conditional(float *x) { }
#endif`,
		"typedefs": `typedef double real;
typedef real *realp;
static __attribute__((unused)) int unused_helper(int a) { return a; }
void typedefs(realp x, long long *n) { x[0] = fabs(x[1]) + pow(x[1], 2) + (real)*n; }`,
		"limits": `#include <float.h>
#include <limits.h>
void limits(double *x, long long *n) { x[0] = DBL_EPSILON + DBL_MAX + DBL_MIN + FLT_EPSILON + FLT_MAX + FLT_MIN + DBL_DIG + FLT_DIG + DBL_MANT_DIG; *n = (INT_MAX > INT_MIN) + (CHAR_BIT == 8) + (CHAR_MAX > SCHAR_MIN) + (SCHAR_MAX < UCHAR_MAX) + (SHRT_MAX > SHRT_MIN) + (USHRT_MAX > 0) + (UINT_MAX > 0) + (LONG_MAX > LONG_MIN) + (LLONG_MAX > LLONG_MIN) + (ULONG_MAX > 0) + (ULLONG_MAX > 0); }`,
		"mathconsts": `#include <math.h>
void mathconsts(double *x, long long *n) { x[0] = M_PI * M_SQRT2 + M_E + M_LN2 + M_1_PI; x[1] = x[0] < INFINITY ? HUGE_VAL : NAN; *n = 0; }`,
	}
	for name, src := range kernels {
		k := op2.NewKernel(src, name)
		cuSrc, err := op2.Generate("cuda", k, set, x.Arg(op2.RW), n.Arg(op2.RW))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		_, log, err := nv.Compile(cuSrc, name+".cu", 90)
		if err != nil || strings.TrimSpace(log) != "" {
			t.Errorf("%s: %v\n%s\nsource:\n%s", name, err, log, cuSrc)
		}
	}
}

// TestNVRTCKernelParameters: in the CUDA source the parameters of READ
// arguments are const, as on the other backends: kernels that only read
// them compile without a warning however they declare them (the CUDA
// side of op2's TestReadArgumentsConstAccepted), and a kernel that
// writes to one, directly, through a helper or through a pointer
// variable, does not compile (TestKernelWritingReadArgumentRefused).
// Untyped (void *, void **) parameters compile too
// (TestUntypedPointerParameters), and so do kernels whose definitions
// function-like macros write (TestKernelFromFunctionLikeMacro).
func TestNVRTCKernelParameters(t *testing.T) {
	nv := loadNVRTC(t)
	if err := op2.Configure(op2.Config{Backend: "sequential", CacheDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { op2.Close() }) // builds end before the TempDir is removed
	nodes := must(op2.NewSet(5, "nodes"))
	edges := must(op2.NewSet(4, "edges"))
	pedge := must(op2.NewMap(edges, nodes, 2, []int32{0, 1, 1, 2, 2, 3, 3, 4}, "pedge"))
	x := must(op2.NewDat[float64](nodes, 1, nil, "x"))
	big := must(op2.NewDat[float64](nodes, 300, nil, "big")) // too large for a private copy
	e := must(op2.NewDat[float64](edges, 1, nil, "e"))
	g := must(op2.NewGlobal[float64](1, nil, "g"))
	y := must(op2.NewDat[float64](edges, 1, nil, "y"))
	y2 := must(op2.NewDat[float64](nodes, 1, nil, "y2"))
	cases := []struct {
		name, src string
		args      []op2.Arg
		ok        bool
	}{
		{"ro_all", `typedef double *dp;
#define REAL double
static double sq(const double *p) { return p[0] * p[0]; }
static double both(const double *const *v) { return v[0][0] + v[1][0]; }
void ro_all(double *a, double **v, dp t, REAL *m, double arr[], double *restrict r, double *g, int *i, const double *c, double *out);
void ro_all(double *a, double **v, dp t, REAL *m, double arr[], double *restrict r, double *g, int *i, const double *c, double *out)
{
  out[0] = sq(a) + both(v) + *t + *m + arr[0] + *r + *g + *i + *c;
}`, []op2.Arg{x.ArgMap(op2.Read, pedge, 0), x.ArgVec(op2.Read, pedge), e.Arg(op2.Read), e.Arg(op2.Read),
			e.Arg(op2.Read), e.Arg(op2.Read), g.Arg(op2.Read), op2.ArgIdx(), e.Arg(op2.Read), y.Arg(op2.Write)}, true},
		{"ro_big", `static double first(const double *p) { return p[0]; }
void ro_big(double **b, double *y) { *y = first(b[0]) + b[1][299]; }`,
			[]op2.Arg{big.ArgVec(op2.Read, pedge), y.Arg(op2.Write)}, true},
		{"untyped", `typedef void *vp;
static double twice(const void *p) { return 2 * *(const double *)p; }
void untyped(void *x, void **v, vp g, void *i, void **inc, void *out) {
  double *o = (double *)out;
  o[0] = twice(x) + ((const double *)v[0])[1] + ((const double *)v[1])[1] + *(const double *)g + *(const int *)i;
  *(double *)inc[1] += 2;
}`, []op2.Arg{x.ArgMap(op2.Read, pedge, 0), x.ArgVec(op2.Read, pedge), g.Arg(op2.Read), op2.ArgIdx(), y2.ArgVec(op2.Inc, pedge), y.Arg(op2.Write)}, true},
		{"untyped_big", `void untyped_big(void **b, void *y) { *(double *)y = ((const double *)b[0])[299]; }`,
			[]op2.Arg{big.ArgVec(op2.Read, pedge), y.Arg(op2.Write)}, true},
		{"mk", `#define DEF(name) void name(double *y, ARR(double, e))
#define ARR(T, n) const T *n
DEF(mk) { *y += e[0]; }`, []op2.Arg{y.Arg(op2.RW), e.Arg(op2.Read)}, true},
		{"mk2_k", `#define KERNEL(n, ...) void n##_k(double *y) { __VA_ARGS__ }
KERNEL(mk2, *y *= 2; *y += 1;)`, []op2.Arg{y.Arg(op2.RW)}, true},
		{"rw_map", `void rw_map(double *x, double *y) { *x = 7; *y = *x; }`,
			[]op2.Arg{x.ArgMap(op2.Read, pedge, 0), y.Arg(op2.Write)}, false},
		{"rw_vec", `void rw_vec(double **x, double *y) { x[1][0] += 1; *y = x[0][0]; }`,
			[]op2.Arg{x.ArgVec(op2.Read, pedge), y.Arg(op2.Write)}, false},
		{"rw_helper", `static void bump(double *p) { p[0] += 1; }
void rw_helper(double *y, double *g) { bump(g); *y = *g; }`, []op2.Arg{y.Arg(op2.Write), g.Arg(op2.Read)}, false},
		{"rw_index", `void rw_index(double *y, int *e) { int *p = e; *p = -1; *y = *e; }`, []op2.Arg{y.Arg(op2.Write), op2.ArgIdx()}, false},
		{"rw_big", `void rw_big(double **b, double *y) { b[0][299] = 1; *y = 0; }`, []op2.Arg{big.ArgVec(op2.Read, pedge), y.Arg(op2.Write)}, false},
	}
	for _, c := range cases {
		src, err := op2.Generate("cuda", op2.NewKernel(c.src, c.name), edges, c.args...)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		_, log, err := nv.Compile(src, c.name+".cu", 90)
		switch {
		case c.ok && (err != nil || strings.TrimSpace(log) != ""):
			t.Errorf("%s: %v\n%s\nsource:\n%s", c.name, err, log, src)
		case !c.ok && err == nil:
			t.Errorf("%s writes to a READ argument, but its CUDA source compiled:\n%s", c.name, src)
		}
	}
}

// must returns v, panicking (and so failing the test) when err is not nil.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestNVRTCCompilesMatrixProducts compiles, for sm_80 and sm_90, the CUDA
// source of the matrix-vector products Mat.Mult runs on the GPU: float64
// and float32, scalar and block matrices, x and y stored as arrays of
// structures or structures of arrays, default and other thread counts.
func TestNVRTCCompilesMatrixProducts(t *testing.T) {
	nv := loadNVRTC(t)
	for _, m := range []device.SpMV{
		{Type: core.Float64, RDim: 1, CDim: 1},
		{Type: core.Float32, RDim: 1, CDim: 1, WorkGroupSize: 256},
		{Type: core.Float64, RDim: 2, CDim: 3, XSoA: true, YSoA: true},
		{Type: core.Float32, RDim: 3, CDim: 1, YSoA: true, WorkGroupSize: 32},
	} {
		src, err := device.SpMVSource(device.CUDA, m)
		if err != nil {
			t.Fatal(err)
		}
		for _, arch := range archs {
			if _, log, err := nv.Compile(src, "mult.cu", arch); err != nil || strings.TrimSpace(log) != "" {
				t.Errorf("%+v, sm_%d: %v\nlog:\n%s\nsource:\n%s", m, arch, err, log, src)
			}
		}
	}
}

// TestNVRTCCompilesHaloRows compiles the kernel that gathers and
// scatters halo rows on the device (device.RowsSource) without a
// warning.
func TestNVRTCCompilesHaloRows(t *testing.T) {
	nv := loadNVRTC(t)
	src := device.RowsSource(device.CUDA)
	for _, arch := range archs {
		if _, log, err := nv.Compile(src, "rows.cu", arch); err != nil || strings.TrimSpace(log) != "" {
			t.Errorf("sm_%d: %v\nlog:\n%s\nsource:\n%s", arch, err, log, src)
		}
	}
}

// TestNVRTCCompilesLargeConstants compiles, for sm_80 and sm_90, the CUDA
// source of a direct loop and of an indirect loop whose helper reads a
// table, with constants beyond CUDA's 64 KiB of constant memory (just
// beyond, and 2 MiB): the source passes them as a restrict pointer to
// read-only device memory, in the kernel, the helper and the stub, and
// compiles without a warning.
func TestNVRTCCompilesLargeConstants(t *testing.T) {
	nv := loadNVRTC(t)
	if err := op2.Configure(op2.Config{Backend: "sequential", CacheDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { op2.Close() }) // builds end before the TempDir is removed
	edges := must(op2.NewSet(4, "lc_edges"))
	nodes := must(op2.NewSet(5, "lc_nodes"))
	pedge := must(op2.NewMap(edges, nodes, 2, []int32{0, 1, 1, 2, 2, 3, 3, 4}, "lc_pedge"))
	y := must(op2.NewDat[float64](edges, 1, nil, "lc_y"))
	n := must(op2.NewDat[float64](nodes, 1, nil, "lc_n"))
	for _, dim := range []int{(64<<10)/8 + 1, 1 << 18} {
		tab := must(op2.NewConst(dim, make([]float64, dim), "lc_tab"))
		scale := must(op2.NewConst(1, []float64{2}, "lc_scale"))
		loops := []struct {
			k    *op2.Kernel
			set  *op2.Set
			args []op2.Arg
		}{
			{op2.NewKernel(fmt.Sprintf(`void lc_direct(double *y, const int *e) { *y = lc_scale * lc_tab[(*e * 7919) %% %d]; }`, dim), "lc_direct"),
				edges, []op2.Arg{y.Arg(op2.Write), op2.ArgIdx()}},
			{op2.NewKernel(fmt.Sprintf(`static double lc_look(int i) { return lc_tab[i %% %d]; }
void lc_indirect(double *n, const int *e) { *n += lc_scale * lc_look(*e * 7919); }`, dim), "lc_indirect"),
				edges, []op2.Arg{n.ArgMap(op2.Inc, pedge, 1), op2.ArgIdx()}},
		}
		for _, l := range loops {
			src, err := op2.Generate("cuda", l.k, l.set, l.args...)
			if err != nil {
				t.Fatalf("dim %d: %v", dim, err)
			}
			if want := "const char *restrict op2_consts"; strings.Count(src, want) < 2 {
				t.Errorf("dim %d: the constants are not passed as %q:\n%s", dim, want, src)
			}
			for _, arch := range archs {
				if _, log, err := nv.Compile(src, "large_consts.cu", arch); err != nil || strings.TrimSpace(log) != "" {
					t.Errorf("dim %d, sm_%d: %v\nlog:\n%s\nsource:\n%s", dim, arch, err, log, src)
				}
			}
		}
		tab.Remove()
		scale.Remove()
	}
}

// loadNVRTC loads NVRTC, skipping the test when it is not installed,
// unless OP2_REQUIRE names nvrtc (scripts/test-all sets it after fetching
// NVRTC), which makes its absence a failure.
func loadNVRTC(t *testing.T) *nvrtc.Library {
	t.Helper()
	nv, err := nvrtc.Load()
	testreq.Check(t, "nvrtc", err, nvrtc.ErrUnavailable)
	return nv
}
