package hostc

import (
	"maps"
	"slices"
	"testing"
)

// TestFileScopeNames: the names file-scope declarations declare, not
// those they use or their structs' members.
func TestFileScopeNames(t *testing.T) {
	for _, c := range []struct {
		code string
		want []string
	}{
		{"static const double gamma = 1.4;", []string{"gamma"}},
		{"static double gamma, y1;", []string{"gamma", "y1"}},
		{"static double a = 0, y0 = 0;", []string{"a", "y0"}},
		{"static int (*select)(int);", []string{"select"}},
		{"enum { y0 = 2, y1 };", []string{"y0", "y1"}},
		{"static double gamma[3];\nextern double *index;", []string{"gamma", "index"}},
		{"static long (*rng)(void) = random;", []string{"rng"}},
		{"static double (*const bes[2])(double) = {j0, y1};", []string{"bes"}},
		{"static double t = pow(1, y1);", []string{"t"}},
		{"struct P { double y1; int index; };", nil},
		{"struct index { int i; } s;", []string{"s"}},
	} {
		got := slices.Sorted(maps.Keys(fileScopeNames(c.code)))
		want := slices.Sorted(slices.Values(c.want))
		if !slices.Equal(got, want) {
			t.Errorf("fileScopeNames(%q) = %v, want %v", c.code, got, want)
		}
	}
}
