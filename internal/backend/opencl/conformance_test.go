package opencl_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/backendtest"
)

// TestConformance runs the conformance suite on the opencl backend.
func TestConformance(t *testing.T) { backendtest.Run(t, "opencl") }

// TestConformanceAtomics runs the conformance suite on the opencl backend
// in the Atomics scheme (increments through maps added atomically in
// global memory, no colours).
func TestConformanceAtomics(t *testing.T) {
	t.Setenv("OP2_DEVICE_SCHEME", "atomics")
	backendtest.Run(t, "opencl")
}

// TestConformanceSoA runs the conformance suite on the opencl backend with
// Dats of dim > 1 stored structure-of-arrays on the device, in both
// schemes.
func TestConformanceSoA(t *testing.T) {
	t.Setenv("OP2_DEVICE_LAYOUT", "soa")
	t.Run("staged", func(t *testing.T) { backendtest.Run(t, "opencl") })
	t.Run("atomics", func(t *testing.T) {
		t.Setenv("OP2_DEVICE_SCHEME", "atomics")
		backendtest.Run(t, "opencl")
	})
}

// TestConformanceWorkGroupSizes runs the conformance suite and the
// random-mesh comparisons on the opencl backend with work groups of 32,
// 128 and 256 items (OP2_DEVICE_WORKGROUP) instead of the default 64, in
// the staged scheme; with -short only 256, the size furthest from the
// default that leaves the least local memory to staging.
func TestConformanceWorkGroupSizes(t *testing.T) {
	sizes := []int{32, 128, 256}
	if testing.Short() {
		sizes = []int{256}
	}
	for _, n := range sizes {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Setenv("OP2_DEVICE_WORKGROUP", fmt.Sprint(n))
			checkWorkGroupSize(t, n)
			backendtest.Run(t, "opencl")
		})
	}
}

// checkWorkGroupSize checks that the opencl backend, configured from the
// environment, generates kernels for work groups of n items (so that the
// suite, which skips when the backend cannot be configured, runs with
// that size).
func checkWorkGroupSize(t *testing.T, n int) {
	t.Helper()
	r, err := op2.NewRuntime(op2.Config{Backend: "opencl", CacheDir: t.TempDir()})
	backendtest.NeedBackend(t, "opencl", err)
	set, err := op2.NewSet(4, "wgcheck")
	if err != nil {
		t.Fatal(err)
	}
	x, err := op2.NewDat[float64](set, 1, nil, "wgx")
	if err != nil {
		t.Fatal(err)
	}
	lp, err := r.NewLoop(op2.NewKernel("void one(double *x) { *x = 1; }", "one"), set, x.Arg(op2.Write))
	if err != nil {
		t.Fatal(err)
	}
	src, err := lp.Generate()
	if err != nil {
		t.Fatal(err)
	}
	if head := fmt.Sprintf("reqd_work_group_size(%d, 1, 1)", n); !strings.Contains(src, head) {
		t.Fatalf("OP2_DEVICE_WORKGROUP=%d: the generated source lacks %q:\n%s", n, head, src)
	}
}
