package openmp_test

import (
	"testing"

	"github.com/goop2/op2/internal/backend/openmp"
	"github.com/goop2/op2/internal/backendtest"
)

// TestConformance runs the conformance suite on the openmp backend in its
// default scheme.
func TestConformance(t *testing.T) { backendtest.Run(t, "openmp") }

// TestConformanceOtherScheme runs the conformance suite on the openmp
// backend in the scheme that is not the default (owner-compute or block
// colouring), set through OP2_OPENMP_SCHEME.
func TestConformanceOtherScheme(t *testing.T) {
	other := openmp.SchemeColour
	if openmp.DefaultScheme == openmp.SchemeColour {
		other = openmp.SchemeOwner
	}
	t.Setenv("OP2_OPENMP_SCHEME", other)
	backendtest.Run(t, "openmp")
}

// TestParseScheme: the accepted spellings, and an unknown scheme refused.
func TestParseScheme(t *testing.T) {
	for _, c := range []struct {
		in    string
		owner bool
		ok    bool
	}{
		{"", openmp.DefaultScheme == openmp.SchemeOwner, true},
		{"owner", true, true},
		{" Owner ", true, true},
		{"colour", false, true},
		{"color", false, true},
		{"staged", false, false},
	} {
		owner, err := openmp.ParseScheme(c.in)
		if (err == nil) != c.ok || (c.ok && owner != c.owner) {
			t.Errorf("ParseScheme(%q) = %v, %v", c.in, owner, err)
		}
	}
}

// TestConformanceSIMD runs the conformance suite on the openmp backend
// with every loop that can have SIMD lanes built with 8 (OP2_SIMD=8), and
// unless -short with 4 lanes in the other scheme. (The tuner choosing
// schemes and lanes: TestSIMDLanesMatchScalar and TestTuneSameResults in
// package op2, and the sequential suite.)
func TestConformanceSIMD(t *testing.T) {
	t.Run("lanes8", func(t *testing.T) {
		t.Setenv("OP2_SIMD", "8")
		backendtest.Run(t, "openmp")
	})
	t.Run("lanes4-colour", func(t *testing.T) {
		if testing.Short() {
			t.Skip("-short: 8 lanes only")
		}
		t.Setenv("OP2_SIMD", "4")
		t.Setenv("OP2_OPENMP_SCHEME", openmp.SchemeColour)
		backendtest.Run(t, "openmp")
	})
}
