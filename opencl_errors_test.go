package op2_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/testreq"
)

// TestOpenCLMissingSays what to install: run in a child process whose
// OpenCL library or driver list is made unusable.
func TestOpenCLMissingSaysWhatToInstall(t *testing.T) {
	cases := []struct {
		name string
		env  string
		want []string
	}{
		{"no ICD loader", "OP2_OPENCL_LIBRARY=/nonexistent/libOpenCL.so.1", []string{"cannot load the OpenCL library", "apt-get install", "pocl-opencl-icd"}},
		// No vendors folder, and no drivers named in OCL_ICD_FILENAMES
		// either (a machine may set it, as NVIDIA's images do).
		{"no driver", "OCL_ICD_VENDORS=/nonexistent-vendors-dir", []string{"apt-get install", "pocl-opencl-icd"}},
		// A library that loads but is not OpenCL: the error names it and
		// the first entry point it lacks.
		{"not OpenCL (libm)", "OP2_OPENCL_LIBRARY=libm.so.6", []string{"libm.so.6", "not an OpenCL library", "clGetPlatformIDs", "apt-get install"}},
		{"not OpenCL (libc)", "OP2_OPENCL_LIBRARY=libc.so.6", []string{"libc.so.6", "not an OpenCL library", "clGetPlatformIDs"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "no driver" && !onSystemLoader() {
				testreq.Skip(t, "opencl", errors.New("the system has no ocl-icd loader to point at an empty driver list"))
			}
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "OP2_TEST_HELPER=opencl-error", c.env, "OCL_ICD_FILENAMES=")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			for _, w := range c.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("error %q does not mention %q", strings.TrimSpace(string(out)), w)
				}
			}
		})
	}
}

func onSystemLoader() bool {
	_, err := os.Stat("/usr/lib/x86_64-linux-gnu/libOpenCL.so.1")
	return err == nil
}

func TestOpenCLDeviceSelection(t *testing.T) {
	requireDevice(t)
	cache := os.Getenv("OP2_CACHE_DIR")
	defer func() { check(t, op2.Configure(op2.Config{CacheDir: cache, PlanCheck: true})) }()
	err := op2.Configure(op2.Config{Backend: "opencl", OpenCLPlatform: "no-such-platform", CacheDir: cache})
	wantErr(t, err, `no device on a platform matching "no-such-platform" (Config.OpenCLPlatform, OP2_OPENCL_PLATFORM)`, "found")
	err = op2.Configure(op2.Config{Backend: "opencl", OpenCLDevice: "toaster", CacheDir: cache})
	wantErr(t, err, `unknown OpenCL device type "toaster"`)
}

// TestOpenCLRejectsConflictingWrites: a dat written through one map and
// also modified through another is refused (on every backend, by ParLoop's
// conflict rule) before anything changes.
func TestOpenCLRejectsConflictingWrites(t *testing.T) {
	requireDevice(t)
	edges := must(op2.NewSet(10, "edges"))
	nodes := must(op2.NewSet(10, "nodes"))
	id := make([]int32, 10)
	for i := range id {
		id[i] = int32(i)
	}
	m1 := must(op2.NewMap(edges, nodes, 1, id, "m1"))
	m2 := must(op2.NewMap(edges, nodes, 1, id, "m2"))
	x := must(op2.NewDat(nodes, 1, iota32[float64](10), "x"))
	k := op2.NewKernel("void k(double *a, double *b) { *a = 1; *b += 2; }", "k")
	err := op2.ParLoop(k, edges, x.ArgMap(op2.RW, m1, 0), x.ArgMap(op2.Inc, m2, 0))
	wantErr(t, err, `dat "x"`, "argument 1", "argument 0", "INC", "RW")
	for i, v := range x.DataRO() {
		if v != float64(i) {
			t.Fatalf("x[%d] = %v after a refused loop", i, v)
		}
	}
}

// TestOpenCLFailedLoopChangesNothing: a loop that fails before its launch
// (here the device cannot allocate a dat it reads through a map, after
// allocating the one it writes) leaves every Dat's state and values as
// they were.
func TestOpenCLFailedLoopChangesNothing(t *testing.T) {
	requireDevice(t)
	edges := must(op2.NewSet(2, "edges"))
	nodes := must(op2.NewSet(1<<16, "nodes"))
	m := must(op2.NewMap(edges, nodes, 1, []int32{0, 1}, "m"))
	const huge = 1 << 18 // 128 GiB for the nodes, never allocated on the host: no device can hold it
	big := must(op2.NewDat[float64](nodes, huge, nil, "big"))
	w := must(op2.NewDat(edges, 1, []float64{1, 2}, "w"))
	k := op2.NewKernel("void k(double *w, const double *b) { *w = b[0]; }", "k")
	err := op2.ParLoop(k, edges, w.Arg(op2.Write), big.ArgMap(op2.Read, m, 0))
	wantErr(t, err, `loop "k"`, "argument 1")
	if w.State() != op2.DeviceUnallocated {
		t.Errorf("after the failed loop w is %v, want DEVICE_UNALLOCATED", w.State())
	}
	if got := w.DataRO(); got[0] != 1 || got[1] != 2 {
		t.Errorf("after the failed loop w = %v, want [1 2]", got)
	}
}

// TestOpenCLFusedLoopFailingBeforeItRuns: recorded loops fused into one
// whose data cannot be allocated on the device run one by one instead,
// as without fusion: the loop before the failing one runs, the
// *ChainError names the failing loop, and the loop after it is dropped;
// in lazy mode and in a Chain.
func TestOpenCLFusedLoopFailingBeforeItRuns(t *testing.T) {
	needBackend(t, "opencl")
	defer op2.Configure(op2.Config{CacheDir: os.Getenv("OP2_CACHE_DIR"), PlanCheck: true})
	set := must(op2.NewSet(1<<16, "ff_s"))
	const huge = 1 << 18 // 128 GiB, never allocated on the host: no device can hold it
	big := must(op2.NewDat[float64](set, huge, nil, "ff_big"))
	first := op2.NewKernel("void ff_first(double *y) { *y = 7; }", "ff_first")
	fails := op2.NewKernel("void ff_fails(const double *b, double *z) { *z = b[0]; }", "ff_fails")
	after := op2.NewKernel("void ff_after(double *y) { *y += 1; }", "ff_after")
	for _, lazy := range []bool{true, false} {
		check(t, op2.Configure(op2.Config{Backend: "opencl", Lazy: lazy, Fusion: "on", CacheDir: os.Getenv("OP2_CACHE_DIR")}))
		y := must(op2.NewDat[float64](set, 1, nil, "ff_y"))
		z := must(op2.NewDat[float64](set, 1, nil, "ff_z"))
		issue := func() error {
			check(t, op2.ParLoop(first, set, y.Arg(op2.Write)))
			check(t, op2.ParLoop(fails, set, big.Arg(op2.Read), z.Arg(op2.Write)))
			check(t, op2.ParLoop(after, set, y.Arg(op2.RW)))
			return nil
		}
		var err error
		if lazy {
			check(t, issue())
			err = op2.Wait()
		} else {
			err = op2.Chain(issue)
		}
		var ce *op2.ChainError
		if !errors.As(err, &ce) || ce.Kernel != "ff_fails" || ce.Index != 1 {
			t.Fatalf("lazy %v: %v, want a *ChainError naming ff_fails, the second loop", lazy, err)
		}
		if got := y.DataRO()[0]; got != 7 {
			t.Errorf("lazy %v: y = %v, want 7 (the first loop ran, the third was dropped)", lazy, got)
		}
	}
}

// TestOpenCLFailedAllocationAfterReconfigure: data left on the device by an
// earlier opencl instance survives a later loop that fails to allocate.
func TestOpenCLFailedAllocationAfterReconfigure(t *testing.T) {
	requireDevice(t)
	cache := os.Getenv("OP2_CACHE_DIR")
	defer func() { check(t, op2.Configure(op2.Config{CacheDir: cache, PlanCheck: true})) }()
	set := must(op2.NewSet(1<<20, "many"))
	y := must(op2.NewDat[float64](set, 1, nil, "y"))
	seven := op2.NewKernel("void seven(double *y) { *y = 7; }", "seven")
	check(t, op2.ParLoop(seven, set, y.Arg(op2.RW)))
	check(t, op2.Configure(op2.Config{Backend: "opencl", CacheDir: cache}))
	// 256 GiB, never allocated on the host: no device can hold it.
	big := must(op2.NewDat[float64](set, 1<<15, nil, "big"))
	k := op2.NewKernel("void k(const double *b, double *y) { *y += b[0]; }", "k")
	if err := op2.ParLoop(k, set, big.Arg(op2.Read), y.Arg(op2.RW)); err == nil {
		t.Fatal("a 256 GiB device allocation succeeded")
	}
	if got := y.DataRO()[0]; got != 7 {
		t.Errorf("y = %v after the failed loop, want 7", got)
	}
	if big.State() != op2.HostUnallocated {
		t.Errorf("big is %v after the failed loop, want HOST_UNALLOCATED", big.State())
	}
}

// TestOpenCLMissingLibraryFunctionExplained: a kernel calling C library
// functions OpenCL C lacks fails to build on opencl with an error that
// names them and says they are not available in OpenCL C; it runs on the
// host backends.
func TestOpenCLMissingLibraryFunctionExplained(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string
	}{
		{"j0", "#include <math.h>\nvoid k(double *x) { *x = j0(1.0); }", []string{"calls j0, which is not available in OpenCL C"}},
		{"drand48", "#include <stdlib.h>\nvoid k(double *x) { *x = drand48(); }", []string{"calls drand48, which is not available in OpenCL C"}},
		{"two", "#include <stdlib.h>\n#include <math.h>\nvoid k(double *x) { *x = drand48() + j0(2.0); }", []string{"drand48", "j0", "which are not available in OpenCL C"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			set := must(op2.NewSet(4, "s"))
			x := must(op2.NewDat[float64](set, 1, nil, "x"))
			k := op2.NewKernel(c.src, "k")
			check(t, op2.ParLoop(k, set, x.Arg(op2.Write)))
			requireDevice(t)
			err := op2.ParLoop(k, set, x.Arg(op2.Write))
			var de *op2.DeviceBuildError
			if !errors.As(err, &de) {
				t.Fatalf("error %v is not a *DeviceBuildError", err)
			}
			wantErr(t, err, append([]string{`loop "k"`, "host backend"}, c.want...)...)
			// The missing functions are not taken for undeclared Consts:
			// the hint leads.
			if strings.Contains(err.Error(), "NewConst") {
				t.Errorf("error suggests declaring a Const:\n%v", err)
			}
		})
	}
	// An undeclared name that is not called (a forgotten Const) gets no
	// such hint.
	requireDevice(t)
	set := must(op2.NewSet(4, "s"))
	x := must(op2.NewDat[float64](set, 1, nil, "x"))
	err := op2.ParLoop(op2.NewKernel("void k(double *x) { *x = forgotten_const; }", "k"), set, x.Arg(op2.Write))
	if err == nil || strings.Contains(err.Error(), "not available in OpenCL C") {
		t.Errorf("error %v, want a build error without the library hint", err)
	}
}

// TestOpenCLFunctionValueNotTakenForConst: a kernel using a function it
// defines as a value (a function pointer, which OpenCL C lacks) fails to
// build on opencl with the compiler's message first, not with a
// suggestion that the function's name is an undeclared Const.
func TestOpenCLFunctionValueNotTakenForConst(t *testing.T) {
	requireDevice(t)
	set := must(op2.NewSet(4, "s"))
	x := must(op2.NewDat[float64](set, 1, nil, "x"))
	src := "static double first(const double *v) { return v[0]; }\nvoid k(double *x) { double (*f)(const double *) = first; *x = f(x) + 1; }"
	err := op2.ParLoop(op2.NewKernel(src, "k"), set, x.Arg(op2.RW))
	var de *op2.DeviceBuildError
	if !errors.As(err, &de) {
		t.Fatalf("error %v is not a *DeviceBuildError", err)
	}
	if strings.Contains(err.Error(), "NewConst") {
		t.Errorf("error suggests declaring a Const:\n%v", err)
	}
	wantErr(t, err, `loop "k"`, "pointers to functions are not allowed")
}

// TestOpenCLConstTableToHelper: a file-scope const table passed to a
// helper's plain pointer parameter cannot build on opencl (OpenCL C 1.2
// puts the table in __constant memory); the error says so and what to
// do, and indexing the table directly builds.
func TestOpenCLConstTableToHelper(t *testing.T) {
	requireDevice(t)
	s := must(op2.NewSet(4, "s"))
	x := must(op2.NewDat(s, 2, []float64{1, 2, 3, 4, 5, 6, 7, 8}, "x"))
	y := must(op2.NewDat[float64](s, 1, nil, "y"))
	passed := op2.NewKernel(`static const double w[2] = {0.25, 0.75};
static double dot2(const double *a, const double *b) { return a[0]*b[0] + a[1]*b[1]; }
void tab_passed(const double *x, double *y) { *y = dot2(w, x); }`, "tab_passed")
	err := op2.ParLoop(passed, s, x.Arg(op2.Read), y.Arg(op2.Write))
	wantErr(t, err, "file-scope const tables are in opencl's __constant address space", "copy the values into a local array first")
	direct := op2.NewKernel(`static const double w[2] = {0.25, 0.75};
void tab_direct(const double *x, double *y) { *y = w[0]*x[0] + w[1]*x[1]; }`, "tab_direct")
	check(t, op2.ParLoop(direct, s, x.Arg(op2.Read), y.Arg(op2.Write)))
	if got := y.DataRO(); got[0] != 1.75 {
		t.Errorf("y = %v, want 1.75 first", got)
	}
}

// TestOpenCLRecursionRefused: a kernel whose helpers call themselves,
// directly or through each other, is refused on opencl with an error
// naming the cycle (PoCL's compiler overflowed its stack on it and killed
// the process); the host backends run it.
func TestOpenCLRecursionRefused(t *testing.T) {
	requireDevice(t)
	for _, c := range []struct{ src, cycle string }{
		{"static int fib(int k) { return k < 2 ? k : fib(k - 1) + fib(k - 2); }\nvoid rec_k(double *x) { *x = fib((int)*x); }", "fib calls fib"},
		{"static int h2(int k);\nstatic int h1(int k) { return k ? h2(k - 1) : 0; }\nstatic int h2(int k) { return k ? h1(k - 1) + 1 : 0; }\nvoid rec_k(double *x) { *x = h1((int)*x); }", "h1 calls h2 calls h1"},
		{"#ifndef REC_NOPE\nstatic int f(int k) { return k < 2 ? k : f(k - 1) + f(k - 2); }\n#else\nstatic int f(int k) { return k; }\n#endif\nvoid rec_k(double *x) { *x = f((int)*x); }", "f calls f"},
		{"#define F(k) f(k)\nstatic int f(int k) { return k < 2 ? k : F(k - 1) + F(k - 2); }\nvoid rec_k(double *x) { *x = f((int)*x); }", "f calls f"},
	} {
		s := must(op2.NewSet(4, "s"))
		x := must(op2.NewDat(s, 1, []float64{1, 5, 10, 12}, "x"))
		err := op2.ParLoop(op2.NewKernel(c.src, "rec_k"), s, x.Arg(op2.RW))
		wantErr(t, err, `loop "rec_k"`, "the kernel's source is recursive ("+c.cycle+")", "OpenCL C does not allow recursion")
	}
	// No cycle: a helper named in a comment of a macro, or two helpers
	// calling each other only across #if branches the compiler picks.
	for _, src := range []string{
		"#define SCALE 2.0 /* as in scale() */\nstatic double scale(double v) { return v * SCALE; }\nvoid nrec_k(double *x) { *x = scale(3); }",
		"static double h(double k);\n#ifdef NREC_NOPE\nstatic double g(double k) { return h(k); }\n#else\nstatic double g(double k) { return 2 * k; }\n#endif\n" +
			"#ifdef NREC_NOPE\nstatic double h(double k) { return k; }\n#else\nstatic double h(double k) { return g(k) / 2 + 5; }\n#endif\nvoid nrec_k(double *x) { *x = h(1); }",
	} {
		s := must(op2.NewSet(2, "s"))
		x := must(op2.NewDat[float64](s, 1, nil, "x"))
		check(t, op2.ParLoop(op2.NewKernel(src, "nrec_k"), s, x.Arg(op2.Write)))
		if got := x.DataRO()[0]; got != 6 {
			t.Errorf("x = %v, want 6", got)
		}
	}
}

// TestOpenCLLargeReductionsRefused: reductions whose accumulators a work
// group cannot keep privately are refused with a loop error saying what
// fits, and the Global keeps its value: PoCL overflowed its stack and the
// process died (SIGSEGV) at the next host read.
func TestOpenCLLargeReductionsRefused(t *testing.T) {
	needBackend(t, "opencl")
	r := closeAtEnd(t, must(op2.NewRuntime(op2.Config{Backend: "opencl", DeviceWorkGroupSize: 1024})))
	set := must(op2.NewSet(3000, "lr_s"))
	g := must(op2.NewGlobal(1024, make([]float64, 1024), "lr_g"))
	k := op2.NewKernel("void lr_k(double *g) { for (int j = 0; j < 1024; j++) g[j] += 1; }", "lr_k")
	err := r.ParLoop(k, set, g.Arg(op2.Inc))
	wantErr(t, err, `loop "lr_k"`, "may keep privately", "use a device work-group size of at most 512")
	if v, err := g.DataROErr(); err != nil || v[0] != 0 || v[1023] != 0 {
		t.Errorf("the Global after the refused loop: %v, %v; want zeros", v, err)
	}
}
