package cfront

import (
	"strings"
	"testing"
)

// TestIncludeGuard: an include guard around a whole kernel source, as
// OP2's headers have (aero's dotPV.h: #ifndef op2_mf_dotPV_h), is blanked,
// so its name may start with op2_ and it leaves no macro behind; a guard
// that does not wrap the whole source is a conditional like any other,
// and a reserved name in it is refused.
func TestIncludeGuard(t *testing.T) {
	const dotPV = "//\n//  dotPV.h\n//\n\n#ifndef op2_mf_dotPV_h\n#define op2_mf_dotPV_h\n" +
		"inline void dotPV(const double *p, const double *v, double *c) { *c += (*p) * (*v); }\n\n#endif /* guard */\n"
	for _, tc := range []struct {
		name, src string
		blanked   bool
		err       string
	}{
		{"OP2's aero header", dotPV, true, ""},
		{"CRLF and trailing blank lines", strings.ReplaceAll(dotPV, "\n", "\r\n") + "\r\n\r\n", true, ""},
		{"guard with a nested conditional", "#ifndef G_H\n#define G_H\n#ifdef X\n#endif\nvoid dotPV(double *c) {}\n#endif\n", true, ""},
		{"code after the #endif", "#ifndef op2_g\n#define op2_g\n#endif\nvoid dotPV(double *c) {}\n", false, `"op2_g"`},
		{"#define with a value", "#ifndef op2_g\n#define op2_g 1\nvoid dotPV(double *c) {}\n#endif\n", false, `"op2_g"`},
		{"#define of another name", "#ifndef op2_g\n#define op2_h\nvoid dotPV(double *c) {}\n#endif\n", false, `"op2_g"`},
		{"#ifdef, not #ifndef", "#ifdef G\n#define G\nvoid dotPV(double *c) {}\n#endif\n", false, "no definition"},
		{"#endif closing an inner block last", "#ifndef G\n#define G\n#endif\n#if 1\nvoid dotPV(double *c) {}\n#endif\n", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := blankIncludeGuard(tc.src)
			if len(got) != len(tc.src) || strings.Count(got, "\n") != strings.Count(tc.src, "\n") {
				t.Fatalf("length or lines changed:\n%q\n%q", tc.src, got)
			}
			if blanked := got != tc.src; blanked != tc.blanked {
				t.Fatalf("blanked %v, want %v:\n%s", blanked, tc.blanked, got)
			}
			if tc.blanked && (strings.Contains(got, "#ifndef") || strings.Contains(got, "#define") || strings.Count(got, "#endif") != strings.Count(tc.src, "#endif")-1) {
				t.Errorf("guard left:\n%s", got)
			}
			if tc.blanked && strings.Contains(tc.src, "/* guard */") && !strings.Contains(got, "/* guard */") {
				t.Errorf("comment removed:\n%s", got)
			}
			info, err := ParseKernel(tc.src, "dotPV")
			switch {
			case tc.err == "" && err != nil:
				t.Fatal(err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("ParseKernel: %v, want an error naming %s", err, tc.err)
			case err == nil && tc.blanked:
				if info.Source != got {
					t.Errorf("ParseKernel's source:\n%s\nwant:\n%s", info.Source, got)
				}
				if len(info.Macros) != 0 {
					t.Errorf("macros %v left", info.Macros)
				}
			}
		})
	}
}
