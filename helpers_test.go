package op2_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/goop2/op2"
)

// hostBackends are the backends that need nothing but a C compiler.
var hostBackends = []string{"sequential", "openmp"}

// allBackends are the backends every conformance test runs on: the host
// backends and, where their drivers and devices exist, opencl and cuda.
var allBackends = hostBackends

func TestMain(m *testing.M) {
	// A private cache keeps the compile counters meaningful; plan checking
	// verifies every plan the tests build.
	dir, err := os.MkdirTemp("", "goop2-test-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("OP2_CACHE_DIR", dir)
	os.Setenv("OP2_PLAN_CHECK", "1")
	if os.Getenv("OP2_TEST_HELPER") != "" {
		os.Exit(helperProcess())
	}
	if err := op2.Configure(op2.Config{CacheDir: dir, PlanCheck: true}); err != nil {
		panic(err)
	}
	for _, device := range []string{"opencl", "cuda"} {
		if err := op2.Use(device); err != nil {
			fmt.Printf("%s backend tests skipped: %v\n", device, err)
		} else {
			allBackends = append(allBackends, device)
		}
	}
	op2.Use("sequential")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
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

// onEachBackend runs f as a subtest on every backend.
func onEachBackend(t *testing.T, f func(t *testing.T)) {
	for _, b := range allBackends {
		t.Run(b, func(t *testing.T) {
			check(t, op2.Use(b))
			defer op2.Use("sequential")
			f(t)
		})
	}
}

func iota32[T ~uint32 | ~int32 | ~int64 | ~float64 | ~float32](n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = T(i)
	}
	return s
}
