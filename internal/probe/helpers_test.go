// Package probe_test is an independent probe suite: tests written from the
// outside against the public API (timing, logging, index and optional
// arguments, MIN/MAX through maps, Dat utilities, subsets, dumps, VTK,
// HDF5, the atomics scheme, sparse matrices and solvers), kept as
// regression tests, one file per subject. The bugs it found, all fixed,
// are described in docs/history/probe*-findings-*.md: probe 12's, the
// matrix feature's (matrix_test.go, solver_test.go), loop fusion's
// (fuse_test.go), sparse tiling's (tile_test.go,
// tile_mpi_test.go) and issue 37's fixes' (consts_test.go,
// empty_test.go, builtin_names_test.go, settings_test.go, solver_test.go,
// solver_mpi_test.go).
package probe_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/mpitest"
)

type bk struct{ name, backend, scheme string }

var backends = []bk{
	{"sequential", "sequential", ""},
	{"openmp", "openmp", ""},
	{"opencl", "opencl", "staged"},
	{"opencl-atomics", "opencl", "atomics"},
}

var cacheDir string

// probeCacheEnv names, for the ranks a test launches (mpitest.Run), the
// launcher's cache directory, which they then share: the loops it
// compiled before launching them, they find.
const probeCacheEnv = "PROBE_CACHE"

func TestMain(m *testing.M) {
	os.Setenv("OMP_NUM_THREADS", "2")
	if dir := os.Getenv(probeCacheEnv); dir != "" && mpitest.InRanks() {
		cacheDir = dir
		os.Setenv("OP2_CACHE_DIR", dir)
		os.Exit(m.Run()) // the launcher removes it
	}
	dir, err := os.MkdirTemp("", "probe12-cache-")
	if err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	cacheDir = dir
	os.Setenv("OP2_CACHE_DIR", dir)
	code := m.Run()
	exec.EndAllBuilds() // builds in the background into dir end first
	os.RemoveAll(dir)
	os.Exit(code)
}

func use(t *testing.T, b bk) {
	t.Helper()
	if err := op2.Configure(op2.Config{Backend: b.backend, DeviceScheme: b.scheme, CacheDir: cacheDir, PlanCheck: true, Threads: 2}); err != nil {
		t.Fatalf("configure %v: %v", b, err)
	}
	t.Cleanup(func() { op2.Configure(op2.Config{CacheDir: cacheDir}) })
}

func each(t *testing.T, f func(t *testing.T, b bk)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			use(t, b)
			f(t, b)
		})
	}
}

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
