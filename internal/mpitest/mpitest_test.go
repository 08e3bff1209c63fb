package mpitest

import (
	"regexp"
	"strings"
	"testing"
)

// TestRunPattern: the pattern selects the named test or subtest and no
// test whose name only begins like it, level by level as go test matches.
func TestRunPattern(t *testing.T) {
	for _, c := range []struct {
		name    string
		want    string
		matches []string // names each level of the pattern must match (joined by "/")
		misses  []string // names some level must not match
	}{
		{"TestA", "^TestA$", []string{"TestA"}, []string{"TestAB", "XTestA"}},
		{"TestA/2-ranks", "^TestA$/^2-ranks$", []string{"TestA/2-ranks"}, []string{"TestAB/2-ranks", "TestA/2-ranks-openmp"}},
		{"TestA/x.y+z", `^TestA$/^x\.y\+z$`, []string{"TestA/x.y+z"}, []string{"TestA/xzy+z"}},
	} {
		got := RunPattern(c.name)
		if got != c.want {
			t.Errorf("RunPattern(%q) = %q, want %q", c.name, got, c.want)
		}
		levels := strings.Split(got, "/")
		match := func(name string) bool {
			parts := strings.Split(name, "/")
			if len(parts) != len(levels) {
				return false
			}
			for i, p := range levels {
				if !regexp.MustCompile(p).MatchString(parts[i]) {
					return false
				}
			}
			return true
		}
		for _, n := range c.matches {
			if !match(n) {
				t.Errorf("RunPattern(%q) = %q does not select %q", c.name, got, n)
			}
		}
		for _, n := range c.misses {
			if match(n) {
				t.Errorf("RunPattern(%q) = %q also selects %q", c.name, got, n)
			}
		}
	}
}
