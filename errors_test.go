package op2_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// wantPrefixOnce fails unless err's message starts with "op2: " and has
// it nowhere else.
func wantPrefixOnce(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "op2: ") || strings.Count(msg, "op2: ") != 1 {
		t.Errorf("message does not start with \"op2: \" exactly once:\n%s", msg)
	}
}

// fileExists fails unless path names a file.
func fileExists(t *testing.T, what, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("%s %q: %v", what, path, err)
	}
}

// TestErrorsCallersCanInspect walks representative failures of every kind
// and checks that each message starts with "op2: " once, still names what
// failed, and matches the sentinel (errors.Is) or exported type
// (errors.As) a caller would test for, and no other.
func TestErrorsCallersCanInspect(t *testing.T) {
	cache := os.Getenv("OP2_CACHE_DIR")
	restore := func() { check(t, op2.Configure(op2.Config{CacheDir: cache, PlanCheck: true})) }
	defer restore()

	// loopOn runs a one-argument loop on a fresh set with the given kernel.
	loopOn := func(src, name string) error {
		set := must(op2.NewSet(8, "s"))
		x := must(op2.NewDat[float64](set, 1, nil, "x"))
		return op2.ParLoop(op2.NewKernel(src, name), set, x.Arg(op2.Write))
	}
	// configured runs f with cfg configured, then restores the default.
	configured := func(cfg op2.Config, f func() error) func(t *testing.T) error {
		return func(t *testing.T) error {
			if cfg.CacheDir == "" {
				cfg.CacheDir = t.TempDir()
			}
			check(t, op2.Configure(cfg))
			defer restore()
			return f()
		}
	}
	// configuring configures cfg (which must fail) and returns its error.
	configuring := func(cfg op2.Config) func(t *testing.T) error {
		return func(t *testing.T) error {
			if cfg.CacheDir == "" {
				cfg.CacheDir = t.TempDir()
			}
			defer restore()
			return op2.Configure(cfg)
		}
	}
	broken := func() error { return loopOn("void broken(double *x) { *x = 1.0 +; }", "broken") }
	notADir := filepath.Join(t.TempDir(), "file")
	check(t, os.WriteFile(notADir, nil, 0o600))

	type kind int
	const (
		plain kind = iota // none of the sentinels or types below
		unavailable
		noCompiler
		compileErr
		deviceBuildErr
		loopErr
	)
	kindNames := []string{"plain", "ErrBackendUnavailable", "ErrNoCompiler", "*CompileError", "*DeviceBuildError", "*LoopError"}
	cases := []struct {
		name string
		run  func(t *testing.T) error
		kind kind
		want []string
	}{
		{"unknown backend (Use)", func(*testing.T) error { return op2.Use("no-such-backend") },
			unavailable, []string{`unknown backend "no-such-backend"`}},
		{"unknown backend (Configure)", func(*testing.T) error { return op2.Configure(op2.Config{Backend: "no-such-backend"}) },
			unavailable, []string{`unknown backend "no-such-backend"`, "sequential"}},
		{"opencl: no such platform", func(*testing.T) error {
			return op2.Configure(op2.Config{Backend: "opencl", OpenCLPlatform: "no-such-platform-anywhere", CacheDir: cache})
		}, unavailable, []string{"opencl"}},
		{"opencl: unknown device type", func(*testing.T) error {
			return op2.Configure(op2.Config{Backend: "opencl", OpenCLDevice: "toaster", CacheDir: cache})
		}, plain, []string{`Config.OpenCLDevice: unknown OpenCL device type "toaster"`}},
		{"CC not found", configuring(op2.Config{CC: "no-such-cc"}), noCompiler, []string{`"no-such-cc"`, "apt-get install gcc"}},
		{"CC does not parse", configuring(op2.Config{CC: `gcc "-O2`}), noCompiler, []string{"CC=", "unterminated"}},
		{"CC does not run", configuring(op2.Config{CC: "false"}), noCompiler, []string{`"false"`, "does not run"}},
		{"CC does not run (openmp)", configuring(op2.Config{Backend: "openmp", CC: "false"}), noCompiler, []string{`"false"`, "does not run"}},
		{"compile error (sequential)", configured(op2.Config{Backend: "sequential"}, broken), compileErr,
			[]string{`loop "broken"`, "expected expression"}},
		{"compile error (openmp)", configured(op2.Config{Backend: "openmp"}, broken), compileErr,
			[]string{`loop "broken"`, "expected expression"}},
		{"cache directory is a file", func(*testing.T) error { return op2.Configure(op2.Config{CacheDir: notADir}) },
			plain, []string{"cache", "not a directory"}},
		{"negative Config.Threads", func(*testing.T) error { return op2.Configure(op2.Config{Threads: -1, CacheDir: cache}) },
			plain, []string{"Config.Threads"}},
		{"too many Config.Threads", func(*testing.T) error {
			return op2.Configure(op2.Config{Backend: "openmp", Threads: op2.MaxThreads + 1, CacheDir: cache})
		}, plain, []string{"Config.Threads", "1024"}},
		{"bad OMP_NUM_THREADS", func(t *testing.T) error {
			t.Setenv("OMP_NUM_THREADS", "lots")
			return op2.Configure(op2.Config{CacheDir: cache})
		}, plain, []string{`OMP_NUM_THREADS="lots"`}},
		{"bad OP2_CHECK", func(t *testing.T) error {
			t.Setenv("OP2_CHECK", "maybe")
			return op2.Configure(op2.Config{CacheDir: cache})
		}, plain, []string{`OP2_CHECK="maybe"`}},
		{"bind: dat on another set", func(*testing.T) error {
			a, b := must(op2.NewSet(2, "a")), must(op2.NewSet(2, "b"))
			x := must(op2.NewDat[float64](b, 1, nil, "x"))
			return op2.ParLoop(op2.NewKernel("void k(double *x) {}", "k"), a, x.Arg(op2.Read))
		}, loopErr, []string{`loop "k" over set "a"`, `lives on set "b"`}},
		{"bind: kernel function missing", func(*testing.T) error { return loopOn("void other(double *x) {}", "missing") },
			plain, []string{`kernel "missing"`, "no definition"}},
		{"bind: kernel name not an identifier", func(*testing.T) error { return loopOn("void k(double *x) {}", "not a name") },
			plain, []string{"not a C identifier"}},
		{"declaration: negative set size", func(*testing.T) error { return second(op2.NewSet(-1, "bad")) },
			plain, []string{`set "bad"`}},
	}
	if slices.Contains(allBackends, "opencl") {
		cases = append(cases, struct {
			name string
			run  func(t *testing.T) error
			kind kind
			want []string
		}{"opencl build error", configured(op2.Config{Backend: "opencl"}, broken), deviceBuildErr,
			[]string{`loop "broken"`, "build log", "generated source"}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.run(t)
			wantErr(t, err, c.want...)
			wantPrefixOnce(t, err)
			var (
				ce *op2.CompileError
				de *op2.DeviceBuildError
				le *op2.LoopError
			)
			got := map[kind]bool{
				unavailable:    errors.Is(err, op2.ErrBackendUnavailable),
				noCompiler:     errors.Is(err, op2.ErrNoCompiler),
				compileErr:     errors.As(err, &ce),
				deviceBuildErr: errors.As(err, &de),
				loopErr:        errors.As(err, &le),
			}
			for k, ok := range got {
				if ok != (k == c.kind) {
					t.Errorf("errors.Is/As for %s: %v, want %v (error: %v)", kindNames[k], ok, k == c.kind, err)
				}
			}
			switch c.kind {
			case compileErr:
				if !strings.Contains(ce.Output, "expected expression") || ce.Compiler == "" {
					t.Errorf("CompileError fields: compiler %q, output %q", ce.Compiler, ce.Output)
				}
				fileExists(t, "CompileError.SourcePath", ce.SourcePath)
			case deviceBuildErr:
				if de.Device == "" || !strings.Contains(de.Log, "error") {
					t.Errorf("DeviceBuildError fields: device %q, log %q", de.Device, de.Log)
				}
				fileExists(t, "DeviceBuildError.SourcePath", de.SourcePath)
			case loopErr:
				if le.Kernel != "k" || le.Arg != 0 {
					t.Errorf("LoopError fields: %+v", le)
				}
			}
		})
	}
}

// TestOpenCLLibraryMissingIsUnavailable: with no OpenCL library (in a child
// process, since the library is loaded once per process) opening the opencl
// backend fails with ErrBackendUnavailable and one "op2: " prefix.
func TestOpenCLLibraryMissingIsUnavailable(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "OP2_TEST_HELPER=opencl-unavailable", "OP2_OPENCL_LIBRARY=/nonexistent/libOpenCL.so.1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	msg, is, _ := strings.Cut(strings.TrimSpace(string(out)), "\nunavailable=")
	wantPrefixOnce(t, errors.New(msg))
	if is != "true" || !strings.Contains(msg, "cannot load the OpenCL library") {
		t.Errorf("child reported %q (ErrBackendUnavailable: %s)", msg, is)
	}
}

// TestCUDADriverMissingIsUnavailable: with no CUDA driver (in a child
// process) opening the cuda backend fails with ErrBackendUnavailable, one
// "op2: " prefix, and says what to install.
func TestCUDADriverMissingIsUnavailable(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "OP2_TEST_HELPER=cuda-unavailable", "OP2_CUDA_LIBRARY=/nonexistent/libcuda.so.1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	msg, is, _ := strings.Cut(strings.TrimSpace(string(out)), "\nunavailable=")
	wantPrefixOnce(t, errors.New(msg))
	if is != "true" || !strings.Contains(msg, "libcuda.so.1") || !strings.Contains(msg, "NVIDIA driver") {
		t.Errorf("child reported %q (ErrBackendUnavailable: %s)", msg, is)
	}
}

// cudaUnavailable is the child process of
// TestCUDADriverMissingIsUnavailable.
func cudaUnavailable() int {
	err := op2.Use("cuda")
	fmt.Printf("%v\nunavailable=%v\n", err, errors.Is(err, op2.ErrBackendUnavailable))
	return 0
}

// openCLUnavailable is the child process of
// TestOpenCLLibraryMissingIsUnavailable.
func openCLUnavailable() int {
	err := op2.Use("opencl")
	fmt.Printf("%v\nunavailable=%v\n", err, errors.Is(err, op2.ErrBackendUnavailable))
	return 0
}

// TestSync: on every backend, Sync after a loop returns nil and leaves
// the host copy current, so that Data and DataRO read the loop's values
// without another device copy; on a device backend it makes exactly one
// copy per Dat or Global, and keeps the device copy valid.
func TestSync(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		set := must(op2.NewSet(100, "s"))
		x := must(op2.NewDat(set, 2, iota32[float64](200), "x"))
		untouched := must(op2.NewDat[float64](set, 1, nil, "untouched"))
		g := must(op2.NewGlobal[float64](1, nil, "g"))
		k := op2.NewKernel("void sync_k(double *x, double *g) { x[0] += 1; x[1] *= 2; *g += x[0]; }", "sync_k")
		check(t, op2.ParLoop(k, set, x.Arg(op2.RW), g.Arg(op2.Inc)))

		before := op2.ReadStats()
		check(t, x.Sync())
		check(t, g.Sync())
		check(t, untouched.Sync())
		check(t, x.Sync()) // nothing left to copy
		copies := op2.ReadStats().Downloads - before.Downloads
		if want := map[bool]uint64{true: 1, false: 0}[isDevice(op2.Backend())]; copies != want {
			t.Errorf("Sync made %d device copies, want %d", copies, want)
		}
		if s := untouched.State(); s != op2.HostUnallocated {
			t.Errorf("Sync allocated a dat never used: state %v", s)
		}
		if isDevice(op2.Backend()) {
			if s := x.State(); s != op2.Both {
				t.Errorf("after Sync x is %v, want BOTH (device copy kept)", s)
			}
		}
		before = op2.ReadStats()
		xs, gs := x.DataRO(), g.DataRO()
		if d := op2.ReadStats().Downloads - before.Downloads; d != 0 {
			t.Errorf("DataRO after Sync made %d device copies, want 0", d)
		}
		var sum float64
		for e := 0; e < 100; e++ {
			if xs[2*e] != float64(2*e+1) || xs[2*e+1] != float64(2*(2*e+1)) {
				t.Fatalf("x[%d] = %v, want [%d %d]", e, xs[2*e:2*e+2], 2*e+1, 2*(2*e+1))
			}
			sum += float64(2*e + 1)
		}
		if gs[0] != sum {
			t.Errorf("g = %v, want %v", gs[0], sum)
		}
	})
}
