package sequential_test

import (
	"testing"

	"github.com/goop2/op2/internal/backendtest"
)

// TestConformance runs the conformance suite on the sequential backend.
func TestConformance(t *testing.T) { backendtest.Run(t, "sequential") }

// TestConformanceSIMD runs the conformance suite on the sequential
// backend with every loop that can have SIMD lanes built with 8
// (OP2_SIMD=8), and unless -short with the tuner choosing between the
// scalar code and 4 or 8 lanes (OP2_SIMD=auto, OP2_TUNE=1). (4 lanes
// alone: TestSIMDLanesMatchScalar in package op2, and the openmp suite.)
func TestConformanceSIMD(t *testing.T) {
	t.Run("lanes8", func(t *testing.T) {
		t.Setenv("OP2_SIMD", "8")
		backendtest.Run(t, "sequential")
	})
	t.Run("tuned", func(t *testing.T) {
		if testing.Short() {
			t.Skip("-short: 8 lanes only")
		}
		t.Setenv("OP2_SIMD", "auto")
		t.Setenv("OP2_TUNE", "1")
		backendtest.Run(t, "sequential")
	})
}
