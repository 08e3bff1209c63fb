package core

import (
	"testing"

	"github.com/goop2/op2/internal/clex"
)

func TestIsConstTable(t *testing.T) {
	for decl, want := range map[string]bool{
		"static const double w[3] = {1, 2, 3}":  true,
		"const int n = 4, m = 5":                true,
		"double const v = 1":                    true,
		"__constant double w[2] = {1, 2}":       false,
		"extern const int n":                    false,
		"struct s { const double a; }":          false,
		"struct s { const double a; } v = {1}":  false,
		"double v = 1":                          false,
		"const double w[2]":                     false,
		"typedef const double cd":               false,
		"struct pair { const double a; } const": false,
	} {
		if got := isConstTable(decl); got != want {
			t.Errorf("isConstTable(%q) = %v, want %v", decl, got, want)
		}
	}
}

// TestBlankComments: comments and literals' contents become spaces, an
// #include's quoted file name stays, and so does every newline, also for
// a comment that starts after an #include and ends on a later line.
func TestBlankComments(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`x = "ab"; // c`, `x = "  ";     `},
		{"#include \"m.h\" // c\ny", "#include \"m.h\"     \ny"},
		{" # include \"m.h\" /* a\nb */ y", " # include \"m.h\"     \n     y"},
		{`s = "#include \"m.h\""`, `s = "                "`},
	} {
		if got := clex.Blank(c.in, true, isIncludeName); got != c.want {
			t.Errorf("blankComments(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
