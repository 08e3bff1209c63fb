package cfront

import "testing"

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
