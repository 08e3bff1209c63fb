package cfront

import (
	"maps"
	"slices"
	"testing"
)

func TestReadFileScope(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"void k(double *x) { x[0] += 1; }", ""},
		{"#include <math.h>\n#include <stdio.h>\n#define N 3\nvoid k(double *x) { x[0] += N; }", ""},
		{"#define _GNU_SOURCE\n#include <math.h>\nvoid k(double *x) { x[0] += 1; }", "#define _GNU_SOURCE"},
		{"#include <tgmath.h>\nvoid k(double *x) { x[0] = cos(x[0]); }", "#include <tgmath.h>"},
		{"#include \"math.h\"\nvoid k(double *x) { x[0] += 1; }", "#include \"math.h\""},
		{"#  pragma   pack(1) /* packed */\nvoid k(double *x) { x[0] += 1; }", "# pragma pack(1)"},
		{"#define P _Pragma(\"GCC ivdep\")\nvoid k(double *x) { x[0] += 1; }", "_Pragma"},
		{"#define NDEBUG\n#include <assert.h>\n#undef X\nvoid k(double *x) { x[0] += 1; }", "#define NDEBUG\n#include <assert.h>"},
	} {
		info, err := ParseKernel(c.src, "k")
		if err != nil {
			t.Fatalf("%q: %v", c.src, err)
		}
		if info.FileScope != c.want {
			t.Errorf("%q: FileScope %q, want %q", c.src, info.FileScope, c.want)
		}
	}
}

// TestDeclaredNames: the names file-scope declarations declare, not
// those they use or their structs' members.
func TestDeclaredNames(t *testing.T) {
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
		got := slices.Sorted(maps.Keys(declaredNames(c.code)))
		want := slices.Sorted(slices.Values(c.want))
		if !slices.Equal(got, want) {
			t.Errorf("declaredNames(%q) = %v, want %v", c.code, got, want)
		}
	}
}
