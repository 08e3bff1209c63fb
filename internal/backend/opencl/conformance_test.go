package opencl_test

import (
	"testing"

	"github.com/goop2/op2/internal/backendtest"
)

// TestConformance runs the conformance suite on the opencl backend.
func TestConformance(t *testing.T) { backendtest.Run(t, "opencl") }
