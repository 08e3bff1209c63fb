package host

import (
	"testing"

	"github.com/goop2/op2/internal/exec"
)

// TestRegistersHostOptions: with the host run time linked, Config.SIMD
// names the host generator's lane counts and no others.
func TestRegistersHostOptions(t *testing.T) {
	for _, c := range []struct {
		s  string
		ok bool
	}{{"4", true}, {"simd8", true}, {"16", false}, {"2", false}} {
		if _, _, err := exec.ParseSIMD(c.s); (err == nil) != c.ok {
			t.Errorf("ParseSIMD(%q): %v", c.s, err)
		}
	}
}
