package op2_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/testreq"
)

// TestCXXKernelErrors: what a C++ kernel's parameters may be, and the
// errors naming the kernel, the argument and why. (The C++ kernels
// themselves run in the conformance suite, on every backend.)
func TestCXXKernelErrors(t *testing.T) {
	set := must(op2.NewSet(4, "s"))
	one := must(op2.NewDat[float64](set, 1, nil, "one"))
	two := must(op2.NewDat[float64](set, 2, nil, "two"))
	m := must(op2.NewMap(set, set, 2, []int32{0, 1, 1, 2, 2, 3, 3, 0}, "ring"))
	cases := []struct {
		name, src string
		cxx       bool
		arg       op2.Arg
		want      string
	}{
		{"reference in a C kernel", "void k(double &x) { x = 1; }", false, one.Arg(op2.Write), "is a C++ reference, and the kernel is C; declare it C++ with Kernel.CXX()"},
		{"reference to dim 2", "void k(double &x) { x = 1; }", true, two.Arg(op2.Write), "passes 2 per element: make the parameter a pointer"},
		{"reference to a vector argument", "void k(const double &x) { }", true, one.ArgVec(op2.Read, m), "passes several (one per map entry)"},
		{"optional reference", "void k(double &x) { x = 1; }", true, op2.Opt(true, one.Arg(op2.Write)), "cannot be null, but the argument is optional"},
		{"reference to a pointer", "void k(double *&x) { x[0] = 1; }", true, one.Arg(op2.Write), "is a reference to a pointer or an array"},
		{"rvalue reference", "void k(double &&x) { x = 1; }", true, one.Arg(op2.Write), "is an rvalue reference"},
		{"wrong element type", "void k(float &x) { x = 1; }", true, one.Arg(op2.Write), "has element type float32"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := op2.NewKernel(c.src, "k")
			if c.cxx {
				k = k.CXX()
			}
			err := op2.ParLoop(k, set, c.arg)
			var le *op2.LoopError
			if !errors.As(err, &le) || le.Arg != 0 || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a LoopError about argument 0 saying %q", err, c.want)
			}
		})
	}
}

func TestKernelCXXIsANewKernel(t *testing.T) {
	k := op2.NewKernel("void k(double *x) { *x = 1; }", "k")
	c := k.CXX()
	if k.IsCXX() || !c.IsCXX() || c.CXX() != c || c.Name() != "k" {
		t.Fatalf("NewKernel IsCXX %v, CXX() IsCXX %v, CXX() of a C++ kernel returns itself: %v", k.IsCXX(), c.IsCXX(), c.CXX() == c)
	}
}

// TestMissingCXXCompiler: a C++ kernel whose compiler cannot be found
// gets an error naming it and what to install, matching ErrNoCompiler;
// C kernels are not affected.
func TestMissingCXXCompiler(t *testing.T) {
	r := closeAtEnd(t, must(op2.NewRuntime(op2.Config{Backend: "sequential", CXX: "no-such-cxx-compiler", CacheDir: t.TempDir()})))
	set := must(op2.NewSet(3, "s"))
	x := must(op2.NewDat[float64](set, 1, nil, "x"))
	err := r.ParLoop(op2.NewKernel("void k(double &x) { x = 2; }", "k").CXX(), set, x.Arg(op2.Write))
	if !errors.Is(err, op2.ErrNoCompiler) || !strings.Contains(err.Error(), `kernel "k" is C++`) || !strings.Contains(err.Error(), "apt-get install g++") || !strings.Contains(err.Error(), "CXX=") {
		t.Fatalf("got %v; want ErrNoCompiler naming the kernel, CXX and g++", err)
	}
	check(t, r.ParLoop(op2.NewKernel("void k(double *x) { *x = 3; }", "k"), set, x.Arg(op2.Write)))
	if got := x.DataRO(); got[0] != 3 {
		t.Fatalf("C kernel after the refused C++ one: %v", got)
	}
}

// A kernel written in OP2's C++ style: a helper taking references, a
// functional cast, constexpr, and a reference parameter for a one-value
// argument. Host backends compile it with the C++ compiler (g++), cuda
// with NVRTC.
func ExampleKernel_CXX() {
	nodes, _ := op2.NewSet(3, "nodes")
	q, _ := op2.NewDat(nodes, 2, []float64{1, 2, 3, 4, 5, 6}, "q")
	energy, _ := op2.NewDat[float64](nodes, 1, nil, "energy")
	kernel := op2.NewKernel(`
constexpr double half = 0.5;
static inline void kinetic(const double &rho, const double &u, double &e) { e = half * rho * u * u; }
inline void energy_kernel(const double *q, double &e) { kinetic(q[0], double(q[1]), e); }`, "energy_kernel").CXX()
	if err := op2.ParLoop(kernel, nodes, q.Arg(op2.Read), energy.Arg(op2.Write)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(energy.DataRO())
	// Output: [2 24 90]
}

// TestCXXConstantsOnDevices: on cuda, constants reach a C++ kernel's
// file-scope functions; code in a namespace, a member function or a
// file-scope initializer that uses one (or calls a function that takes
// them) is refused, naming the kernel and the constant.
func TestCXXConstantsOnDevices(t *testing.T) {
	set := must(op2.NewSet(4, "s"))
	x := must(op2.NewDat[float64](set, 1, nil, "x"))
	gain := must(op2.NewConst(1, []float64{3}, "gain"))
	defer gain.Remove()
	cases := []struct{ name, src, want string }{
		{"file scope", "static inline double f(double v) { return v * gain; }\ninline void k(double &x) { x = f(2); }", ""},
		{"namespace", "namespace ns { inline double f(double v) { return v * gain; } }\ninline void k(double &x) { x = ns::f(2); }", `uses constant "gain" outside its file-scope functions`},
		{"member function", "struct S { double v; double g() const { return v * gain; } };\ninline void k(double &x) { S s{2}; x = s.g(); }", `uses constant "gain" outside its file-scope functions`},
		{"call from a namespace", "static double f(double v) { return v * gain; }\nnamespace ns { inline double g(double v) { return f(v); } }\ninline void k(double &x) { x = ns::g(2); }", `calls its function "f" outside its file-scope functions`},
		{"call in an initializer", "static double f(double v) { return v * gain; }\nstatic const double c = f(0) + 2;\ninline void k(double &x) { x = 3 * c; }", `calls its function "f" outside its file-scope functions`},
		{"constant in a math call's initializer", "#include <cmath>\nstatic const double c = sqrt(gain * 0 + 36);\ninline void k(double &x) { x = c; }", `uses constant "gain" outside its file-scope functions`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := op2.NewKernel(c.src, "k").CXX()
			_, err := op2.Generate("cuda", k, set, x.Arg(op2.Write))
			if c.want == "" {
				check(t, err)
			} else if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `C++ kernel "k"`) {
				t.Fatalf("got %v, want an error saying %q", err, c.want)
			}
			// The host backends compile them all.
			check(t, op2.ParLoop(k, set, x.Arg(op2.Write)))
			if got := x.DataRO()[0]; got != 6 {
				t.Fatalf("x = %v, want 6", got)
			}
		})
	}
}

// TestCXXAlgorithmOnCUDA: a C++ kernel including <algorithm> for std::min,
// as OP2's apps/c/min does, reaches NVRTC without the #include (NVRTC has
// no C++ standard library headers) and with std::min declared by the
// prelude; the host backends compile the header. op2apps TestMin found it.
func TestCXXAlgorithmOnCUDA(t *testing.T) {
	set := must(op2.NewSet(4, "s"))
	d := must(op2.NewDat(set, 1, []int32{7, 3, 9, 5}, "d"))
	lo := must(op2.NewGlobal(1, []int32{100}, "lo"))
	k := op2.NewKernel("#include <algorithm>\nvoid k(const int *d, int *lo) {\n    *lo = std::min(*d, *lo);\n}\n", "k").CXX()
	src, err := op2.Generate("cuda", k, set, d.Arg(op2.Read), lo.Arg(op2.Min))
	check(t, err)
	if strings.Contains(src, "<algorithm>") || !strings.Contains(src, "using ::min;") || !strings.Contains(src, "std::min(*d, *lo)") {
		t.Fatalf("the cuda source keeps <algorithm> or lacks std::min:\n%s", src)
	}
	check(t, op2.ParLoop(k, set, d.Arg(op2.Read), lo.Arg(op2.Min)))
	if got := lo.Value(); got != 3 {
		t.Fatalf("min %d, want 3", got)
	}
}

// TestCXXKernelHeads: C++ kernels with noexcept, throw(), a trailing
// return type or a macro between the parameter list and the body, or
// inside extern "C" { ... }, and helpers written so, run on the host
// backends, their READ parameters made const in the definition and its
// prototypes; with SIMD lanes (a compiler that refuses code without a
// lane form) they give the scalar code's results.
func TestCXXKernelHeads(t *testing.T) {
	gxx := testreq.Command(t, "cc", "g++")
	lanesOnly := filepath.Join(t.TempDir(), "lanes-only")
	script := "#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in *.c|*.cc) if ! grep -q op2_lanes_ \"$a\"; then echo 'lanes only' >&2; exit 1; fi;; esac; done\nexec " + gxx + " \"$@\"\n"
	if err := os.WriteFile(lanesOnly, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, src string }{
		{"noexcept", "void k(double *x, double *y) noexcept { *y = x[0] / x[1]; }"},
		{"noexcept(true)", "void k(const double *x, double *y) noexcept(true) { *y = x[0] / x[1]; }"},
		{"throw()", "void k(const double *x, double *y) throw() { *y = x[0] / x[1]; }"},
		{"trailing return type", "auto k(const double *x, double *y) -> void { *y = x[0] / x[1]; }"},
		{"prototypes", "void k(double *x, double *y) noexcept;\nvoid k(double *x, double *y) noexcept { *y = x[0] / x[1]; }"},
		{"extern C", "extern \"C\" {\nstatic double h(double v) { return v * 3; }\nvoid k(const double *x, double *y) { *y = h(x[0]) / x[1]; }\n}"},
		{"extern C, helper after it", "static double h(const double *v) noexcept;\nextern \"C++\" { extern \"C\" { void k(const double *x, double *y) noexcept { *y = h(x) / x[1]; } } }\nstatic double h(const double *v) noexcept { return v[0] * 3; }"},
		{"macro", "#define NOEXCEPT noexcept\nvoid k(double *x, double *y) NOEXCEPT;\nvoid k(double *x, double *y) NOEXCEPT { *y = x[0] / x[1]; }"},
		{"helpers", "#define NOEXCEPT noexcept\nstatic double f(const double *v) NOEXCEPT { return v[0] * 3; }\nstatic auto g(const double *v) -> float { return v[0] / 3; }\n" +
			"static double h(const double *v) throw() { return v[1]; }\nvoid k(const double *x, double *y) { *y = (f(x) + g(x)) / h(x); }"},
		{"a helper's function-try-block", "static double h(double v) try { return v * 3; } catch (...) { return 0; }\nvoid k(const double *x, double *y) { *y = h(x[0]) / x[1]; }"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := func(cfg op2.Config) []float64 {
				cfg.CacheDir, cfg.Threads = t.TempDir(), 2
				r := closeAtEnd(t, must(op2.NewRuntime(cfg)))
				s := must(op2.NewSet(37, "s"))
				xv := make([]float64, 74)
				for i := range xv {
					xv[i] = 1 + float64(i%7)/8
				}
				x := must(op2.NewDat(s, 2, xv, "x"))
				y := must(op2.NewDat[float64](s, 1, nil, "y"))
				if err := r.ParLoop(op2.NewKernel(c.src, "k").CXX(), s, x.Arg(op2.Read), y.Arg(op2.Write)); err != nil {
					t.Fatalf("%s SIMD %s: %v", cfg.Backend, cfg.SIMD, err)
				}
				return y.DataRO()
			}
			want := run(op2.Config{Backend: "sequential", SIMD: "off", CXX: gxx})
			if want[0] == 0 {
				t.Fatalf("y[0] = 0")
			}
			for _, backend := range hostBackends {
				if got := run(op2.Config{Backend: backend, SIMD: "off", CXX: gxx}); !slices.Equal(got, want) {
					t.Errorf("%s: y[0] = %v, sequential's %v", backend, got[0], want[0])
				}
				if got := run(op2.Config{Backend: backend, SIMD: "8", CXX: lanesOnly}); !slices.Equal(got, want) {
					t.Errorf("%s: lanes give y[0] = %v, the scalar code %v", backend, got[0], want[0])
				}
			}
		})
	}
}

// TestCXXKernelHeadErrors: a C++ kernel GoOP2 cannot read for what is
// between its parameter list and its body is refused saying what; a C
// kernel with C++'s noexcept or extern "C" { ... } is refused saying to
// declare it C++, while C's #ifdef __cplusplus around extern "C" { ... }
// compiles as C.
func TestCXXKernelHeadErrors(t *testing.T) {
	set := must(op2.NewSet(4, "s"))
	x := must(op2.NewDat(set, 1, []float64{1, 2, 3, 4}, "x"))
	y := must(op2.NewDat[float64](set, 1, nil, "y"))
	cases := []struct {
		name, src string
		cxx       bool
		want      string // "" when it runs
	}{
		{"function-try-block", "void k(const double *x, double *y) try { *y = *x; } catch (...) { }", true, "a function-try-block kernel is not supported"},
		{"unknown word", "void k(const double *x, double *y) final { *y = *x; }", true, `has "final" between its parameter list and its body, which GoOP2 does not read`},
		{"C kernel with noexcept", "void k(const double *x, double *y) noexcept { *y = *x; }", false, `has "noexcept" between the definition's parameter list and its body, which is C++, and the kernel is C; declare it C++ with Kernel.CXX()`},
		{"C kernel in extern C", "extern \"C\" { void k(const double *x, double *y) { *y = *x; } }", false, `has a linkage-specification block (extern "C" { ... }) at line 1, which is C++, and the kernel is C; declare it C++`},
		{"C kernel, extern C under __cplusplus", "#ifdef __cplusplus\nextern \"C\" {\n#endif\nvoid k(const double *x, double *y) { *y = *x * 2; }\n#ifdef __cplusplus\n}\n#endif", false, ""},
		{"C++ kernel, extern C under __cplusplus", "#ifdef __cplusplus\nextern \"C\" {\n#endif\nvoid k(const double *x, double *y) { *y = *x * 2; }\n#ifdef __cplusplus\n}\n#endif", true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := op2.NewKernel(c.src, "k")
			if c.cxx {
				k = k.CXX()
			}
			err := op2.ParLoop(k, set, x.Arg(op2.Read), y.Arg(op2.Write))
			switch {
			case c.want == "":
				check(t, err)
				if got := y.DataRO(); got[3] != 8 {
					t.Errorf("y = %v", got)
				}
			case err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `kernel "k"`):
				t.Fatalf("got %v, want an error naming the kernel and saying %q", err, c.want)
			}
		})
	}
}
