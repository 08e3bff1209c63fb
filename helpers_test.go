package op2_test

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/internal/ptscotch"
	"github.com/goop2/op2/internal/testreq"
)

// hostBackends are the backends that need nothing but a C compiler.
var hostBackends = []string{"sequential", "openmp"}

// deviceBackends are the backends that need a driver and a device.
var deviceBackends = []string{"opencl", "cuda"}

// allBackends are the backends every conformance test runs on: the host
// backends and, where their drivers and devices exist, opencl and cuda.
// A device backend left out is in missingBackends, with the error of
// opening it: onEachBackend, needBackend and TestDeviceBackends record it
// as a skip (or a failure where OP2_REQUIRE names it).
var allBackends = hostBackends

// missingBackends holds the error of each device backend TestMain could
// not open.
var missingBackends = map[string]error{}

// needBackend returns when backend opened in TestMain; else it skips t,
// saying what to install, when its driver or device is missing and
// OP2_REQUIRE does not name it, and fails t otherwise.
func needBackend(t testing.TB, backend string) {
	t.Helper()
	if err := missingBackends[backend]; err != nil {
		testreq.Check(t, backend, err, op2.ErrBackendUnavailable)
	}
}

// TestDeviceBackends records, as a skip or (under OP2_REQUIRE) a failure,
// each device backend the tests leave out of allBackends.
func TestDeviceBackends(t *testing.T) {
	for _, b := range deviceBackends {
		t.Run(b, func(t *testing.T) { needBackend(t, b) })
	}
}

// isDevice reports whether backend runs loops on a device (opencl, cuda).
func isDevice(backend string) bool { return backend == "opencl" || backend == "cuda" }

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

// mpiRun is mpitest.Run, skipping the test when the job asks for a
// partitioner (OP2_MPI_PARTITIONER) whose library is not installed
// (failing it where OP2_REQUIRE names the library).
func mpiRun(t *testing.T, np int, timeout time.Duration, env ...string) {
	t.Helper()
	for _, e := range env {
		switch e {
		case "OP2_MPI_PARTITIONER=metis":
			testreq.Check(t, "metis", dist.LoadMETIS(), op2.ErrMETISUnavailable)
		case "OP2_MPI_PARTITIONER=ptscotch":
			testreq.Check(t, "ptscotch", ptscotch.Load(), op2.ErrPTScotchUnavailable)
		}
	}
	mpitest.Run(t, np, timeout, env...)
}

// testMain sets the test process up and runs the tests; its deferred
// clean-up runs on every way out (tests passing or failing, a helper
// process, a failed set-up, a panic), which os.Exit would skip. Every test
// process runs it: the test binary, the helper processes the tests start
// and each MPI rank (internal/mpitest), each with its own cache.
func testMain(m *testing.M) int {
	// A private cache keeps the compile counters meaningful; plan checking
	// verifies every plan the tests build.
	// MPI ranks of a test that shares its process's compiled loops use
	// that process's cache.
	dir := os.Getenv("OP2_TEST_CACHE_DIR")
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "goop2-test-cache-"); err != nil {
			fmt.Fprintln(os.Stderr, "test cache:", err)
			return 2
		}
		defer os.RemoveAll(dir)
	}
	defer op2.WaitBuilds() // builds in the background into dir, before it is removed
	os.Setenv("OP2_CACHE_DIR", dir)
	os.Setenv("OP2_PLAN_CHECK", "1")
	if os.Getenv("OP2_TEST_HELPER") != "" {
		return helperProcess()
	}
	if err := op2.Configure(op2.Config{CacheDir: dir, PlanCheck: true}); err != nil {
		fmt.Fprintln(os.Stderr, "configuring the tests:", err)
		return 2
	}
	for _, device := range deviceBackends {
		if err := op2.Use(device); err != nil {
			missingBackends[device] = err
		} else {
			allBackends = append(allBackends, device)
		}
	}
	op2.Use("sequential")
	return m.Run()
}

// closeAtEnd returns r, closed (Runtime.Close) when t ends: registered
// after the t.TempDir that r compiles into, the clean-up runs before that
// directory is removed (clean-ups run last registered first), so no
// build in the background writes into it meanwhile. Close's error is the
// test's own business.
func closeAtEnd(t testing.TB, r *op2.Runtime) *op2.Runtime {
	t.Cleanup(func() { r.Close() })
	return r
}

// must returns v, panicking (and so failing the test) when err is not nil.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// onEachBackend runs f as a subtest on every backend; a device backend
// that is missing here gives a skipped subtest (needBackend).
func onEachBackend(t *testing.T, f func(t *testing.T)) {
	for _, b := range append(slices.Clone(hostBackends), deviceBackends...) {
		t.Run(b, func(t *testing.T) {
			needBackend(t, b)
			check(t, op2.Use(b))
			defer op2.Use("sequential")
			f(t)
		})
	}
}

// scatteredEdges declares ne edges joining nn nodes, edge e joining nodes
// (2e*mul + 2e%mix) % nn and ((2e+1)*mul + (2e+1)%mix) % nn: a mesh with
// no locality and repeated targets, for loops that increment through a
// map.
func scatteredEdges(ne, nn, mul, mix int) (edges, nodes *op2.Set, pedge *op2.Map) {
	edges = must(op2.NewSet(ne, "edges"))
	nodes = must(op2.NewSet(nn, "nodes"))
	tab := make([]int32, 2*ne)
	for i := range tab {
		tab[i] = int32((i*mul + i%mix) % nn)
	}
	return edges, nodes, must(op2.NewMap(edges, nodes, 2, tab, "pedge"))
}

func iota32[T ~uint32 | ~int32 | ~int64 | ~float64 | ~float32](n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = T(i)
	}
	return s
}

// cleanupChildEnv makes the test binary, started by
// TestTestProcessesCleanUp, take one of its ways out.
const cleanupChildEnv = "OP2_TEST_CLEANUP_CHILD"

// TestTestProcessesCleanUp: a test process removes the cache directory its
// TestMain made, whether its tests pass or fail, whether it is a helper
// process, and whether its set-up fails.
func TestTestProcessesCleanUp(t *testing.T) {
	switch os.Getenv(cleanupChildEnv) {
	case "":
	case "fail":
		t.Fatal("failing on purpose")
	default:
		return
	}
	cases := []struct {
		name   string
		args   []string
		env    []string
		failOK bool // the process is expected to exit non-zero
	}{
		{"tests pass", []string{"-test.run=^TestTestProcessesCleanUp$"}, []string{cleanupChildEnv + "=pass"}, false},
		{"a test fails", []string{"-test.run=^TestTestProcessesCleanUp$"}, []string{cleanupChildEnv + "=fail"}, true},
		{"no tests", []string{"-test.run=^$"}, nil, false},
		{"helper process", []string{"-test.run=^$"}, []string{"OP2_TEST_HELPER=opencl-error"}, false},
		{"set-up fails", []string{"-test.run=^$"}, []string{"CC=/nonexistent/bin/gcc"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			cmd := exec.Command(os.Args[0], c.args...)
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
			cmd.Env = append(cmd.Env, c.env...)
			out, err := cmd.CombinedOutput()
			if (err != nil) != c.failOK {
				t.Fatalf("child exited with %v, want failure %v:\n%s", err, c.failOK, out)
			}
			ents, err := os.ReadDir(tmp)
			check(t, err)
			var left []string
			for _, e := range ents {
				left = append(left, e.Name())
			}
			if len(left) > 0 {
				t.Errorf("child left %q in its temporary directory; output:\n%s", left, out)
			}
			if testing.Verbose() {
				t.Logf("child output:\n%s", out)
			}
		})
	}
}

// must3 returns a, b and c, panicking (and so failing the test) when err
// is not nil.
func must3[A, B, C any](a A, b B, c C, err error) (A, B, C) {
	if err != nil {
		panic(err)
	}
	return a, b, c
}

// repeatWhile calls repeat on another goroutine, again and again until
// it returns false or run has returned, while run runs.
func repeatWhile(repeat func() bool, run func()) {
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				if !repeat() {
					return
				}
			}
		}
	}()
	run()
	close(stop)
	<-done
}
