package cfront

import (
	"slices"
	"strings"
)

// declaringHeaders are headers that only declare functions, types and
// macros of reserved or standard names a source not including them
// cannot use without a compile error: a source that includes one
// changes nothing in code after it that compiles without it.
var declaringHeaders = setOf(strings.Fields(`math.h stdio.h stdlib.h string.h stdint.h stddef.h stdbool.h
	float.h limits.h inttypes.h stdarg.h errno.h complex.h`))

// readFileScope returns what in a kernel's source (code: its comments
// blanked) holds for the code after it in the same file, other than
// declarations and its own macros (core.KernelInfo.FileScope): each
// #pragma and _Pragma, each #include of a header other than
// declaringHeaders (<tgmath.h> turns cos into a type-generic macro,
// <assert.h> reads NDEBUG), and each #define or #undef before an
// #include (it may change what the header declares), one a line.
func readFileScope(code string) string {
	dirs := directives(code)
	lastInclude := -1
	for i, d := range dirs {
		if readDirective(code[d[0]:d[1]]).name == "include" {
			lastInclude = i
		}
	}
	var out []string
	for i, d := range dirs {
		line := code[d[0]:d[1]]
		r := readDirective(line)
		text := strings.Join(strings.Fields(line), " ")
		switch r.name {
		case "pragma":
			out = append(out, text)
		case "include":
			if r.header < 0 || !declaringHeaders[line[r.header:r.headerEnd]] || line[r.header-1] != '<' {
				out = append(out, text)
			}
		case "define", "undef":
			if i < lastInclude {
				out = append(out, text)
			}
		}
	}
	if strings.Contains(code, "_Pragma") || strings.Contains(code, "__pragma") {
		out = append(out, "_Pragma")
	}
	return strings.Join(slices.Compact(out), "\n")
}
