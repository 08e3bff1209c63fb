// Package backendtest is the conformance suite every backend runs: loops
// with known results (every access mode, reductions, maps, types,
// constants), random meshes compared with the sequential backend, random
// sequences of loops run at once, in a Chain and in lazy mode (and, on
// the host backends, in sparse tiles), and the suite again in lazy mode. Each backend package's tests call Run with its
// name, as gonum's backends run testblas:
//
//	func TestConformance(t *testing.T) { backendtest.Run(t, "openmp") }
//
// OP2_TEST_BACKENDS (a comma-separated list of names) limits which
// backends' suites run; unset, every backend that can be opened runs it.
// A backend that cannot be opened because its driver or device is missing
// skips the suite, saying what to install, unless OP2_REQUIRE names it
// (internal/testreq); any other failure to open it fails the suite.
package backendtest

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/testreq"
)

// Run runs the conformance suite on backend, in the default runtime
// configured for it with a private cache directory and plan checking. It
// skips, saying why, when OP2_TEST_BACKENDS leaves the backend out or the
// backend's driver or device is not installed (op2.ErrBackendUnavailable)
// and OP2_REQUIRE does not name it; it fails on any other error.
func Run(t *testing.T, backend string) {
	if list := os.Getenv("OP2_TEST_BACKENDS"); list != "" && !slices.Contains(strings.Split(list, ","), backend) {
		t.Skipf("OP2_TEST_BACKENDS=%s leaves out %s", list, backend)
	}
	cache := t.TempDir()
	// Fused loops build in the background into cache: done before it
	// is removed.
	t.Cleanup(exec.WaitBuilds)
	NeedBackend(t, backend, op2.Configure(op2.Config{Backend: backend, CacheDir: cache, PlanCheck: true}))
	for _, c := range conformance {
		t.Run(c.name, c.test)
	}
	t.Run("RandomMeshes", func(t *testing.T) { testRandomMeshes(t, backend, cache) })
	if firstChains(backend) {
		t.Run("RandomChains", func(t *testing.T) { testRandomChains(t, backend, cache) })
		t.Run("Fusion", func(t *testing.T) { testFusion(t, backend, cache) })
		t.Run("LazyConformance", func(t *testing.T) { testLazyConformance(t, backend, cache) })
		if backend == "sequential" || backend == "openmp" {
			t.Run("TiledChains", func(t *testing.T) { testTiledChains(t, backend, cache) })
		}
	}
}

// NeedBackend returns when err, the error of opening backend, is nil; it
// skips t when the backend's driver or device is missing
// (op2.ErrBackendUnavailable) and OP2_REQUIRE does not name it, and fails
// t otherwise. The host backends are always required: a C compiler is all
// they need.
func NeedBackend(t testing.TB, backend string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if _, optional := testreq.Libraries[backend]; !optional {
		t.Fatalf("backend %s: %v", backend, err)
	}
	testreq.Check(t, backend, err, op2.ErrBackendUnavailable)
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

func iota32[T ~uint32 | ~int32 | ~int64 | ~float64 | ~float32](n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = T(i)
	}
	return s
}

func sum[T ~uint32 | ~int32 | ~int64 | ~float64 | ~float32](s []T) T {
	var total T
	for _, v := range s {
		total += v
	}
	return total
}
