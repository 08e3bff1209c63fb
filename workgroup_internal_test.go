package op2

import "testing"

// TestWorkGroupKey: the tuner's configuration key names a device
// work-group size other than the default, and not the default (so that
// choices saved before the size was configurable still apply).
func TestWorkGroupKey(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, ""}, {64, ""}, {32, "/wg32"}, {256, "/wg256"}} {
		if got := workGroupKey(c.n); got != c.want {
			t.Errorf("workGroupKey(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
