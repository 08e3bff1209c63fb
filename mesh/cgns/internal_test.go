package cgns

import (
	"strings"
	"testing"
)

// TestFits: a count is refused when negative or when the file has fewer
// than 4 bytes per value, naming the file, the node and the count.
func TestFits(t *testing.T) {
	r := &reader{path: "f.cgns", size: 400}
	for _, tc := range []struct {
		n    int64
		want string // "" for no error
	}{
		{0, ""}, {100, ""}, {101, "101 values, more than the file's 400 bytes"}, {-1, "negative count -1"}, {1 << 40, "more than"},
	} {
		err := r.fits("/Base/Zone/Tets", "elements", tc.n)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%d: %v", tc.n, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "f.cgns: /Base/Zone/Tets: elements")):
			t.Errorf("%d: %v, want %q", tc.n, err, tc.want)
		}
	}
}

// TestUnsupported: the element types GoOP2 does not read are named with
// why: polyhedra, higher-order elements, and numbers CGNS does not have.
func TestUnsupported(t *testing.T) {
	for _, tc := range []struct {
		typ  int
		want string
	}{
		{22, "polyhedral sections are not supported"},
		{23, "polyhedral sections are not supported"},
		{11, "higher-order or other elements are not supported"}, // TETRA_10
		{99, "element type 99 is not a CGNS element type"},
	} {
		if got := unsupported(tc.typ); !strings.Contains(got, tc.want) || !strings.Contains(got, supported) {
			t.Errorf("%d: %q, want %q", tc.typ, got, tc.want)
		}
	}
	if err := Load(); err == nil {
		if got := unsupported(11); !strings.Contains(got, "TETRA_10") {
			t.Errorf("11: %q does not name TETRA_10", got)
		}
	}
}
