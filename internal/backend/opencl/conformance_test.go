package opencl_test

import (
	"testing"

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
