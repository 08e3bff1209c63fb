package cuda_test

import (
	"testing"

	"github.com/goop2/op2/internal/backendtest"
)

// TestConformance runs the conformance suite and the random-mesh
// comparisons with the sequential backend on the cuda backend, where a GPU
// and its driver are present (elsewhere it skips, saying why). The scheme
// and layout come from OP2_DEVICE_SCHEME and OP2_DEVICE_LAYOUT.
func TestConformance(t *testing.T) { backendtest.Run(t, "cuda") }
