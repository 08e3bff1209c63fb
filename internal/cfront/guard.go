package cfront

import (
	"strings"

	"github.com/goop2/op2/internal/clex"
)

// blankIncludeGuard returns src with its include guard's directives
// blanked (their characters spaces, comments kept, so offsets and lines
// stay), when the
// whole source is one: its first directive, with only blank space and
// comments before it, is #ifndef G, the next line #define G with no
// replacement, and the #endif that closes the #ifndef is its last
// non-blank line. Otherwise it returns src unchanged.
//
// A kernel source is compiled once in each translation unit (a fused
// kernel's source includes each source once), so such a guard changes
// nothing but what the generated code after the source sees: the macro G.
// Removed, it can neither reach the generated code nor count against the
// names reserved for it, as the guards of OP2's own kernel headers
// (aero's "#ifndef op2_mf_dotPV_h") would.
func blankIncludeGuard(src string) string {
	code := clex.Blank(src, true, nil) // comments blanked, same offsets
	type line struct{ start, end int }
	var lines []line
	for i := 0; i <= len(code); {
		j := strings.IndexByte(code[i:], '\n')
		if j < 0 {
			lines = append(lines, line{i, len(code)})
			break
		}
		lines = append(lines, line{i, i + j})
		i += j + 1
	}
	text := func(l line) string { return strings.TrimSpace(code[l.start:l.end]) }
	// directive returns the directive's name and the rest of line l, or
	// "" when l is not a directive; a continued line counts as none of
	// the guard's.
	directive := func(l line) (string, string) {
		t := text(l)
		if !strings.HasPrefix(t, "#") || strings.HasSuffix(t, "\\") {
			return "", ""
		}
		t = strings.TrimSpace(t[1:])
		k := strings.IndexAny(t, " \t")
		if k < 0 {
			return t, ""
		}
		return t[:k], strings.TrimSpace(t[k:])
	}
	first := 0
	for first < len(lines) && text(lines[first]) == "" {
		first++
	}
	if first+1 >= len(lines) {
		return src
	}
	d, g := directive(lines[first])
	if d != "ifndef" || !isIdentifier(g) {
		return src
	}
	if d, rest := directive(lines[first+1]); d != "define" || rest != g {
		return src
	}
	last := len(lines) - 1
	for last > first+1 && text(lines[last]) == "" {
		last--
	}
	// The #ifndef's #endif must be the last line: count the nesting.
	depth := 0
	for k := first; k <= last; k++ {
		switch d, _ := directive(lines[k]); d {
		case "if", "ifdef", "ifndef":
			depth++
		case "endif":
			depth--
			if depth == 0 && k != last {
				return src
			}
		}
	}
	if d, _ := directive(lines[last]); d != "endif" || depth != 0 {
		return src
	}
	b := []byte(src)
	for _, l := range []line{lines[first], lines[first+1], lines[last]} {
		for k := l.start; k < l.end; k++ {
			if code[k] != ' ' { // the directive's own text; comments stay
				b[k] = ' '
			}
		}
	}
	return string(b)
}
