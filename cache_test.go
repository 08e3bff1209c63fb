package op2_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/goop2/op2"
)

// cacheKernel returns a kernel whose text includes tag, so each tag is a
// loop no cache has seen before.
func cacheKernel(tag string) *op2.Kernel {
	return op2.NewKernel(fmt.Sprintf("/* %s */\nvoid k(double *x) { *x += 1.5; }", tag), "k")
}

// incKernel returns a kernel, different for each tag, that adds inc.
func incKernel(tag, inc string) *op2.Kernel {
	return op2.NewKernel(fmt.Sprintf("/* %s */\nvoid k(double *x) { *x += %s; }", tag, inc), "k")
}

// cacheLoop runs kernel k (from cacheKernel) on new data and checks the result.
func cacheLoop(k *op2.Kernel) error { return cacheLoopWant(k, "") }

// cacheLoopWant runs kernel k on new data and checks that it added inc
// (a number; "" for cacheKernel's 1.5).
func cacheLoopWant(k *op2.Kernel, inc string) error {
	want := 1.5
	if inc != "" {
		if _, err := fmt.Sscan(inc, &want); err != nil {
			return err
		}
	}
	set, err := op2.NewSet(100, "s")
	if err != nil {
		return err
	}
	x, err := op2.NewDat[float64](set, 1, nil, "x")
	if err != nil {
		return err
	}
	if err := op2.ParLoop(k, set, x.Arg(op2.RW)); err != nil {
		return err
	}
	if x.Data()[99] != want {
		return fmt.Errorf("x = %v, want %v", x.Data()[99], want)
	}
	return nil
}

// helperProcess is what the test binary does when started by the cache
// tests as a separate process: run cacheLoop and report the counters.
func helperProcess() int {
	if os.Getenv("OP2_TEST_HELPER") == "opencl-error" {
		fmt.Println(op2.Use("opencl"))
		return 0
	}
	if os.Getenv("OP2_TEST_HELPER") == "generate-no-opencl" {
		return generateWithoutOpenCL()
	}
	if os.Getenv("OP2_TEST_HELPER") == "opencl-unavailable" {
		return openCLUnavailable()
	}
	if os.Getenv("OP2_TEST_HELPER") == "cuda-unavailable" {
		return cudaUnavailable()
	}
	if os.Getenv("OP2_TEST_HELPER") == "reconfigure-openmp" {
		return reconfigureOpenMP()
	}
	if err := op2.Configure(op2.Config{CacheDir: os.Getenv("OP2_TEST_CACHE"), Backend: os.Getenv("OP2_TEST_BACKEND")}); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	k := cacheKernel(os.Getenv("OP2_TEST_HELPER"))
	if inc := os.Getenv("OP2_TEST_INC"); inc != "" {
		k = incKernel(os.Getenv("OP2_TEST_HELPER"), inc)
	}
	if err := cacheLoopWant(k, os.Getenv("OP2_TEST_INC")); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	s := op2.ReadStats()
	fmt.Printf("compiles=%d diskhits=%d rebuilds=%d\n", s.Compiles, s.DiskHits, s.Rebuilds)
	return 0
}

func runHelper(t *testing.T, dir, tag string, env ...string) (string, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "OP2_TEST_HELPER="+tag, "OP2_TEST_CACHE="+dir), env...)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func withCacheDir(t *testing.T, dir string) {
	t.Helper()
	check(t, op2.Configure(op2.Config{CacheDir: dir, PlanCheck: true}))
	t.Cleanup(func() {
		check(t, op2.Configure(op2.Config{CacheDir: os.Getenv("OP2_CACHE_DIR"), PlanCheck: true}))
	})
}

func TestCacheSameLoopCompilesOnce(t *testing.T) {
	withCacheDir(t, t.TempDir())
	before := op2.ReadStats()
	k := cacheKernel("once")
	check(t, cacheLoop(k))
	check(t, cacheLoop(k))
	after := op2.ReadStats()
	if n := after.Compiles - before.Compiles; n != 1 {
		t.Errorf("two runs of one loop compiled %d times, want 1", n)
	}
	if n := after.Generations - before.Generations; n != 1 {
		t.Errorf("two runs of one loop generated code %d times, want 1", n)
	}
	// A second kernel object with the same source generates its code but
	// finds the library already built.
	check(t, cacheLoop(cacheKernel("once")))
	if n := op2.ReadStats().Compiles - after.Compiles; n != 0 {
		t.Errorf("an identical kernel compiled again (%d compilations)", n)
	}
}

func TestCacheAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	steps := []struct {
		what string
		prep func()
		want string
	}{
		{"first process compiles", nil, "compiles=1 diskhits=0 rebuilds=0"},
		{"second process reuses the disk entry", nil, "compiles=0 diskhits=1 rebuilds=0"},
		{"a truncated entry is rebuilt", func() {
			libs, _ := filepath.Glob(filepath.Join(dir, "*.so"))
			if len(libs) != 1 {
				t.Fatalf("cache holds %d libraries, want 1", len(libs))
			}
			info := must(os.Stat(libs[0]))
			check(t, os.Truncate(libs[0], info.Size()/2))
		}, "compiles=1 diskhits=0 rebuilds=1"},
		{"the rebuilt entry is reused", nil, "compiles=0 diskhits=1 rebuilds=0"},
		{"a damaged entry is rebuilt", func() {
			libs, _ := filepath.Glob(filepath.Join(dir, "*.so"))
			b := must(os.ReadFile(libs[0]))
			b[len(b)/2] ^= 0xff
			check(t, os.WriteFile(libs[0], b, 0o644))
		}, "compiles=1 diskhits=0 rebuilds=1"},
	}
	for _, s := range steps {
		if s.prep != nil {
			s.prep()
		}
		out, err := runHelper(t, dir, "across-processes")
		if err != nil || out != s.want {
			t.Fatalf("%s: got %q (%v), want %q", s.what, out, err, s.want)
		}
	}
}

// TestOpenCLProgramCache: an OpenCL program built by one process is loaded
// from the disk cache (as a device binary) by the next.
func TestOpenCLProgramCache(t *testing.T) {
	requireDevice(t)
	dir := t.TempDir()
	for _, want := range []string{"compiles=1 diskhits=0 rebuilds=0", "compiles=0 diskhits=1 rebuilds=0"} {
		out, err := runHelper(t, dir, "opencl-cache", "OP2_TEST_BACKEND=opencl")
		if err != nil || out != want {
			t.Fatalf("got %q (%v), want %q", out, err, want)
		}
	}
}

func TestCacheConcurrentProcesses(t *testing.T) {
	dir := t.TempDir()
	const n = 8
	var wg sync.WaitGroup
	outs := make([]string, n)
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			outs[i], errs[i] = runHelper(t, dir, "eight-at-once")
		}(i)
	}
	wg.Wait()
	for i := 0; i < n; i++ {
		if errs[i] != nil || !strings.HasPrefix(outs[i], "compiles=") {
			t.Errorf("process %d: %v: %s", i, errs[i], outs[i])
		}
	}
	libs, _ := filepath.Glob(filepath.Join(dir, "*.so"))
	tmps, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
	if len(libs) != 1 || len(tmps) != 0 {
		t.Errorf("cache holds %d libraries and %d temporary files, want 1 and 0", len(libs), len(tmps))
	}
}

func TestCompileErrorShowsCompilerMessage(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		set := must(op2.NewSet(4, "s"))
		x := must(op2.NewDat[float64](set, 1, nil, "x"))
		k := op2.NewKernel("void broken(double *x) { *x = 1.0 +; }", "broken")
		err := op2.ParLoop(k, set, x.Arg(op2.Write))
		if err == nil {
			t.Fatal("a kernel with a syntax error compiled")
		}
		msg := err.Error()
		if !strings.Contains(msg, "expected expression") && !strings.Contains(msg, "expected an expression") { // gcc, clang; NVRTC
			t.Errorf("error does not give the compiler's message:\n%s", msg)
		}
		for _, want := range []string{"broken", "error", "generated source", "/"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error does not mention %q:\n%s", want, msg)
			}
		}
		if x.Data()[0] != 0 {
			t.Errorf("data changed by a loop that failed to compile")
		}
	})
}
