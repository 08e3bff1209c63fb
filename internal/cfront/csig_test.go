package cfront

import (
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/core"
)

func TestParseKernel(t *testing.T) {
	cases := []struct {
		name, src, fn string
		want          []core.Param // Text is not compared; CType only when set
		err           []string
	}{
		{"plain", "void k(double *a, const float *b, int c[4]) { }", "k",
			[]core.Param{{Name: "a", Type: core.Float64, Depth: 1}, {Name: "b", Type: core.Float32, Depth: 1}, {Name: "c", Type: core.Int32, Depth: 1}}, nil},
		{"vector and qualifiers", "static inline void k(const double *restrict *x, double *y[3], unsigned int *__restrict__ u)\n{}", "k",
			[]core.Param{{Name: "x", Type: core.Float64, Depth: 2}, {Name: "y", Type: core.Float64, Depth: 2}, {Name: "u", Type: core.Uint32, Depth: 1}}, nil},
		{"integer spellings", "void k(long long *a, long *b, unsigned *c, int64_t *d, uint32_t *e, long int *f, int long long *g, signed *h) {}", "k",
			[]core.Param{{Name: "a", Type: core.Int64, Depth: 1}, {Name: "b", Type: core.Int64, Depth: 1}, {Name: "c", Type: core.Uint32, Depth: 1},
				{Name: "d", Type: core.Int64, Depth: 1}, {Name: "e", Type: core.Uint32, Depth: 1}, {Name: "f", Type: core.Int64, Depth: 1},
				{Name: "g", Type: core.Int64, Depth: 1}, {Name: "h", Type: core.Int32, Depth: 1}}, nil},
		{"unnamed parameters", "void k(double *, unsigned long *, const int32_t *) {}", "k",
			[]core.Param{{Type: core.Float64, Depth: 1}, {Type: 0, Depth: 1, CType: "unsigned long"}, {Type: core.Int32, Depth: 1}}, nil},
		{"prototype and call before the definition", "void k(double *a);\nvoid g(double *b) { k(b); }\nvoid k(double *a) { *a = 1; }", "k",
			[]core.Param{{Name: "a", Type: core.Float64, Depth: 1}}, nil},
		{"comments and preprocessor", "#define N 3\n/* void k(float *z) {} */\n// void k(int *q) {}\nvoid k(double *a) {}", "k",
			[]core.Param{{Name: "a", Type: core.Float64, Depth: 1}}, nil},
		{"no parameters", "void k(void) {}", "k", nil, nil},
		{"longer name is not a match", "void kk(double *a) {}", "k", nil, []string{"no definition"}},
		{"missing", "void other(double *a) {}", "k", nil, []string{"no definition"}},
	}
	runParseCases(t, cases)
}

// TestParseKernelTypes: every parameter's base type is resolved (through
// the source's typedefs and macros) to a type GoOP2 supports, or marked
// unknown with a description; nothing unknown passes as known.
func TestParseKernelTypes(t *testing.T) {
	cases := []struct {
		decl  string // declarations before the kernel
		param string
		typ   core.ScalarType
		ctype string // substring of CType
	}{
		{"", "long double *a", 0, "long double"},
		{"", "uint64_t *a", 0, "uint64_t"},
		{"", "unsigned long *a", 0, "unsigned long"},
		{"", "long unsigned int *a", 0, "long unsigned int"},
		{"", "unsigned long long *a", 0, "unsigned long long"},
		{"", "size_t *a", 0, "size_t"},
		{"", "void *a", 0, "void"},
		{"", "char *a", 0, "char"},
		{"", "short *a", 0, "short"},
		{"", "struct pt *a", 0, "struct pt"},
		{"", "mytype *a", 0, "mytype"},
		{"", "_Bool *a", 0, "_Bool"},
		{"", "double (*a)[3]", 0, "function pointer or parenthesised"},
		{"", "double *a, ...", core.Float64, "double"},
		{"typedef double real;", "real *a", core.Float64, "real (typedef of double)"},
		{"typedef double real;", "const real *restrict a", core.Float64, "typedef of double"},
		{"typedef double real; typedef real real2;", "real2 *a", core.Float64, "real2 (typedef of real (typedef of double))"},
		{"typedef unsigned long ulong;", "ulong *a", 0, "typedef of unsigned long"},
		{"typedef double *dptr;", "dptr a", core.Float64, "dptr (typedef of double *)"},
		{"typedef double *dptr;", "dptr *a", core.Float64, "typedef of double *"},
		{"typedef const float *cfp;", "cfp a", core.Float32, "typedef of float *"},
		{"typedef double vec3[3];", "vec3 a", core.Float64, "typedef of double []"},
		{"#define N 3\ntypedef double vecN[N];", "vecN a", core.Float64, "vecN (typedef of double []"},
		{"typedef double (*fp)(double);", "fp a", 0, "function type"},
		// A function type names its declarator before the "(": the
		// parameter's own type words are no typedef (it took "double"
		// and "void" for function types).
		{"typedef double unop(double);", "double *a", core.Float64, "double"},
		{"typedef int cmpfn(const void *, const void *);", "double *a", core.Float64, "double"},
		{"typedef double unop(double);", "unop *a", 0, "function type"},
		{"typedef unsigned long (ulfn)(int);", "double *a", core.Float64, "double"},
		{"typedef unsigned long (ulfn)(int);", "ulfn *a", 0, "function type"},
		{"typedef struct s (*sfp)(void);", "sfp a", 0, "function type"},
		{"typedef struct { double w[2]; } pair;", "pair *a", 0, "struct"},
		{"typedef double unop(double), binop(double, double);", "double *a", core.Float64, "double"},
		{"typedef double real, realfn(real);", "real *a", core.Float64, "typedef of double"},
		{"typedef double real, realfn(real);", "realfn *a", 0, "function type"},
		{"typedef int f1(int), (*f2)(void);", "f2 a", 0, "function type"},
		{"typedef struct { double w[2]; } pair;", "double *w", core.Float64, "double"},
		{"typedef struct { double x; } pt;", "pt *a", 0, "struct"},
		{"typedef float flt, *fltp;", "flt *a", core.Float32, "typedef of float"},
		{"typedef float flt, *fltp;", "fltp a", core.Float32, "typedef of float *"},
		{"#define real double", "real *a", core.Float64, "macro for double"},
		{"#define real long double", "real *a", 0, "long double"},
		{"#define INT unsigned", "INT *a", core.Uint32, "macro"},
		// Macros that write more than type names are expanded, as the
		// compiler expands them (TestParseKernelMacroDefinitions).
		{"#define PTR double *", "PTR a", core.Float64, "double"},
		{"#define T(x) x", "T(double) *a", core.Float64, "double"},
		{"#define real double\n#undef real\n#define real float", "real *a", core.Float32, "macro for float"},
		{"#if 0\ntypedef float real;\n#else\ntypedef double real;\n#endif", "real *a", core.Float64, "typedef of double"},
		{"#ifdef USE_FLOAT\ntypedef float real;\n#else\ntypedef double real;\n#endif", "real *a", core.Float64, "typedef of double"},
		{"#include <x.h>\n#ifdef USE_FLOAT\ntypedef float real;\n#else\ntypedef double real;\n#endif", "real *a", 0, "#ifdef USE_FLOAT"},
		{"#ifdef __FAST_MATH__\ntypedef float real;\n#else\ntypedef double real;\n#endif", "real *a", 0, "#ifdef __FAST_MATH__"},
		{"#ifdef USE_FLOAT\n#define real float\n#endif", "real *a", 0, "real"},
		{"#ifdef __FAST_MATH__\n#define real float\n#endif", "real *a", 0, "cannot evaluate"},
		{"void g(void) { typedef float real; }\ntypedef double real;", "real *a", core.Float64, "typedef of double"},
	}
	for _, c := range cases {
		t.Run(c.decl+"|"+c.param, func(t *testing.T) {
			info, err := ParseKernel(c.decl+"\nvoid k("+c.param+") {}", "k")
			if err != nil {
				t.Fatal(err)
			}
			p := info.Params[0]
			if p.Type != c.typ || !strings.Contains(p.CType, c.ctype) {
				t.Errorf("param %+v: type %v, CType %q; want %v and a CType containing %q", p, p.Type, p.CType, c.typ, c.ctype)
			}
		})
	}
}

// TestParseKernelPreprocessor: the reader sees the code the compiler
// sees, and refuses what it cannot evaluate.
func TestParseKernelPreprocessor(t *testing.T) {
	dbl := []core.Param{{Name: "a", Type: core.Float64, Depth: 1}}
	cases := []struct {
		name, src, fn string
		want          []core.Param
		err           []string
	}{
		{"#if 0 around a second definition", "#if 0\nvoid k(float *a) {}\n#endif\nvoid k(double *a) {}", "k", dbl, nil},
		{"#if 0 around the first definition", "#if 0\nvoid k(long double *a) {}\n#else\nvoid k(double *a) {}\n#endif", "k", dbl, nil},
		{"#if 1 / #else", "#if 1\nvoid k(double *a) {}\n#else\nvoid k(float *a) {}\n#endif", "k", dbl, nil},
		{"#if 0 spanning a continuation", "#if 0 \\\n || 0\nvoid k(float *a) {}\n#endif\nvoid k(double *a) {}", "k", dbl, nil},
		{"#ifdef a source macro", "#define USE_D\n#ifdef USE_D\nvoid k(double *a) {}\n#else\nvoid k(float *a) {}\n#endif", "k", dbl, nil},
		{"#ifndef a source macro", "#define USE_F 1\n#ifndef USE_F\nvoid k(float *a) {}\n#else\nvoid k(double *a) {}\n#endif", "k", dbl, nil},
		{"#undef then #ifdef", "#define X\n#undef X\n#ifdef X\nvoid k(float *a) {}\n#else\nvoid k(double *a) {}\n#endif", "k", dbl, nil},
		{"#if with defined() and values", "#define V 3\n#if defined(V) && V > 2 && !defined W_NOT\n#endif\n#if V * 2 == 6\nvoid k(double *a) {}\n#elif 1\nvoid k(float *a) {}\n#endif", "k", dbl, nil},
		{"#elif chain", "#define MODE 2\n#if MODE == 1\nvoid k(float *a) {}\n#elif MODE == 2\nvoid k(double *a) {}\n#else\nvoid k(int *a) {}\n#endif", "k", dbl, nil},
		{"nested conditionals", "#if 1\n#if 0\nvoid k(float *a) {}\n#endif\nvoid k(double *a) {}\n#endif", "k", dbl, nil},
		{"dead branch inside an unknown one", "#ifdef EXT\n#if 0\nvoid k(float *a) {}\n#endif\n#endif\nvoid k(double *a) {}", "k", dbl, nil},
		{"known short-circuit around an unknown macro", "#if 0 && EXT\nvoid k(float *a) {}\n#endif\nvoid k(double *a) {}", "k", dbl, nil},
		{"unknown conditional elsewhere", "#ifndef M_PI\n#define M_PI 3.14159\n#endif\nvoid k(double *a) { *a = M_PI; }", "k", dbl, nil},
		{"definition under an unknown macro", "#ifdef __OPENCL_VERSION__\nvoid k(float *a) {}\n#else\nvoid k(double *a) {}\n#endif", "k", nil,
			[]string{"line 2", "#ifdef __OPENCL_VERSION__ (line 1)", "cannot evaluate"}},
		{"definition under #if of an undefined macro", "#if HAVE_X > 1\nvoid k(double *a) {}\n#endif", "k", nil, []string{"no definition"}},
		{"definition under an unknown #if (after #include)", "#include <x.h>\n#if HAVE_X > 1\nvoid k(double *a) {}\n#endif", "k", nil, []string{"#if HAVE_X > 1", "cannot evaluate"}},
		{"definition under an unknown #if (compiler macro)", "#if __GNUC__ > 1\nvoid k(double *a) {}\n#endif", "k", nil, []string{"#if __GNUC__ > 1", "cannot evaluate"}},
		{"definition under a function-like macro test", "#define F(x) x\n#if F(1)\nvoid k(double *a) {}\n#endif", "k", nil, []string{"cannot evaluate"}},
		{"two active definitions", "void k(double *a) {}\nvoid k(float *a) {}", "k", nil, []string{"defined 2 times", "lines 1 and 2"}},
		{"two definitions through #if 1", "#if 1\nvoid k(float *a) {}\n#endif\nvoid k(double *a) {}", "k", nil, []string{"defined 2 times"}},
		{"K&R definition", "void k(a, b)\n  double *a; float *b;\n{ *a = *b; }", "k", nil, []string{"K&R-style definition; write a prototype", "line 1"}},
		{"K&R definition, one parameter", "void k(a) double *a; { *a = 1; }", "k", nil, []string{"K&R-style definition"}},
		{"prototype with attribute is not K&R", "void k(double *a) __attribute__((noinline));\nvoid k(double *a) {}", "k", dbl, nil},
		{"call in a body is not a definition", "void g(double *a) { if (a) k(a); }\nvoid k(double *a) {}", "k", dbl, nil},
		{"kernel name is a macro", "#define k kernel_impl\nvoid k(double *a) {}", "k", nil, []string{"also a macro"}},
		{"reserved identifier", "void k(double *a) { double op2_n = 1; *a = op2_n; }", "k", nil, []string{`"op2_n"`, "line 1", "reserved"}},
		{"reserved macro", "#define OP2_X 1\nvoid k(double *a) { *a = OP2_X; }", "k", nil, []string{`"OP2_X"`, "reserved"}},
		{"reserved function", "static void op2_range(void) {}\nvoid k(double *a) {}", "k", nil, []string{`"op2_range"`}},
		{"continuation splitting a type name", "void k(dou\\\nble *a) {}", "k", dbl, nil},
		{"continuation splitting the kernel name", "void \\\nk\\\n(double *a) {}", "k", dbl, nil},
		{"continuation in a // comment hides a definition", "// old: \\\nvoid k(float *a) {}\nvoid k(double *a) {}", "k", dbl, nil},
		{"continuation splitting #if", "#i\\\nf 0\nvoid k(float *a) {}\n#endif\nvoid k(double *a) {}", "k", dbl, nil},
		{"continuation with CRLF", "void k(dou\\\r\nble *a) {}", "k", dbl, nil},
		{"digraphs", "%:define N 3\nvoid k(double a<:N:>) <% a<:0:> = 1; %>", "k", dbl, nil},
		{"digraph directive", "%:if 0\nvoid k(float *a) <% %>\n%:endif\nvoid k(double *a) <% %>", "k", dbl, nil},
		{"GNU attributes in the signature", "__attribute__((always_inline)) static inline void __attribute__((hot)) k(double *a __attribute__((unused))) __attribute__((nonnull)) {}", "k", dbl, nil},
		{"standard attributes in the signature", "[[gnu::hot]] void k([[maybe_unused]] double *a) [[gnu::nonnull]] {}", "k", dbl, nil},
		{"__attribute without underscores at the end", "void k(double *__attribute((aligned(8))) a) {}", "k", dbl, nil},
		{"reserved name in a comment is fine", "/* op2_range */\nvoid k(double *a) { /* OP2_X */ char *s = \"op2_n\"; }", "k", dbl, nil},
	}
	runParseCases(t, cases)
}

// TestParseKernelMacroDefinitions: a definition whose head or parameters
// come from macros (function-like or object-like, nested, with # and ##,
// variadic) is read as the compiler reads it: the invocations are
// expanded in place, keeping the source's lines. Invocations GoOP2
// cannot expand soundly are refused with a message naming the macro.
func TestParseKernelMacroDefinitions(t *testing.T) {
	dbl := []core.Param{{Name: "x", Type: core.Float64, Depth: 1}}
	cases := []struct {
		name, src, fn string
		want          []core.Param
		err           []string
	}{
		{"function-like head", "#define DEF(name) void name(double *x)\nDEF(k) { *x += 1; }", "k", dbl, nil},
		{"head spread over lines", "#define DEF(name) void name(double *x)\nDEF(\n  k\n) { *x += 1; }", "k", dbl, nil},
		{"pasted name", "#define KERNEL(n) void n##_kernel(double *x, int *i)\nKERNEL(k) { *x += *i; }", "k_kernel",
			[]core.Param{{Name: "x", Type: core.Float64, Depth: 1}, {Name: "i", Type: core.Int32, Depth: 1}}, nil},
		{"nested macros", "#define T double\n#define HEAD(n, t) void n(t *a, t **b)\n#define DEF(n) HEAD(n, T)\nDEF(k) { *a = **b; }", "k",
			[]core.Param{{Name: "a", Type: core.Float64, Depth: 1}, {Name: "b", Type: core.Float64, Depth: 2}}, nil},
		{"whole kernel, variadic body", "#define KERNEL(n, ...) void n(double *x) { __VA_ARGS__ }\nKERNEL(k, *x += 1; *x *= 2, 3;)", "k", dbl, nil},
		{"stringized name", "#define DEF(n) void n(double *x) { const char *s = #n; (void)s; }\nDEF(k)", "k", dbl, nil},
		{"object-like head", "#define HEAD void k(double *x)\nHEAD { *x = 1; }", "k", dbl, nil},
		{"function-like parameters", "#define ARR(T, n) T *n\nvoid k(ARR(double, x), ARR(int, i)) { *x = *i; }", "k",
			[]core.Param{{Name: "x", Type: core.Float64, Depth: 1}, {Name: "i", Type: core.Int32, Depth: 1}}, nil},
		{"object-like parameter list", "#define PARAMS double *x, double **v\nvoid k(PARAMS) { *x = v[0][0]; }", "k",
			[]core.Param{{Name: "x", Type: core.Float64, Depth: 1}, {Name: "v", Type: core.Float64, Depth: 2}}, nil},
		{"parameters of a macro-written head", "#define P(n) double *n\n#define DEF(name) void name(P(x))\nDEF(k) { }", "k", dbl, nil},
		{"other macros stay", "#define SQ(a) ((a) * (a))\n#define DEF(name) void name(double *x)\nDEF(k) { *x = SQ(*x); }", "k", dbl, nil},
		{"GNU comma", "#define DEF(n, ...) void n(double *x , ## __VA_ARGS__)\nDEF(k) { }", "k", dbl, nil},
		{"macro defined under an unknown condition", "#include <x.h>\n#ifdef FOO\n#define DEF(n) void n(double *x)\n#endif\nDEF(k) { }", "k", nil,
			[]string{`no definition of function "k"`, "macro DEF at line 5", "condition GoOP2 cannot evaluate"}},
		{"expansion names a macro again", "#define x x\n#define DEF(n) void n(double *x)\nDEF(k) { }", "k", nil,
			[]string{`"k" comes from macro DEF at line 3`, "names macro x again"}},
		{"wrong argument count", "#define DEF(n) void n(double *x)\nDEF(k, j) { }", "k", nil,
			[]string{"macro DEF", "takes 1 arguments, given 2"}},
		{"not written by the macro", "#define DEF(n) void n(double *x)\nDEF(j) { }", "k", nil, []string{`no definition of function "k"`}},
		{"reserved name from a paste", "#define DEF(a, b) void k(double *a##b)\nDEF(op, 2_x) { }", "k", nil, []string{"op2_x", "reserved"}},
	}
	runParseCases(t, cases)
	info, err := ParseKernel("#define DEF(name) void name(double *x)\n\nDEF(k) { *x += 1; }", "k")
	if err != nil {
		t.Fatal(err)
	}
	if want := "#define DEF(name) void name(double *x)\n\nvoid k(double *x) { *x += 1; }"; info.Source != want {
		t.Errorf("source read:\n%s\nwant:\n%s", info.Source, want)
	}
}

func runParseCases(t *testing.T, cases []struct {
	name, src, fn string
	want          []core.Param
	err           []string
}) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			info, err := ParseKernel(c.src, c.fn)
			if c.err != nil {
				if err == nil {
					t.Fatalf("no error; params %+v", info.Params)
				}
				for _, e := range c.err {
					if !strings.Contains(err.Error(), e) {
						t.Errorf("error %q does not mention %q", err, e)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(info.Params) != len(c.want) {
				t.Fatalf("%d params %+v, want %d", len(info.Params), info.Params, len(c.want))
			}
			for i, w := range c.want {
				g := info.Params[i]
				if g.Name != w.Name || g.Type != w.Type || g.Depth != w.Depth || (w.CType != "" && g.CType != w.CType) {
					t.Errorf("param %d = %+v, want name %q type %v depth %d ctype %q", i, g, w.Name, w.Type, w.Depth, w.CType)
				}
			}
			src := info.Source // what the offsets refer to
			if strings.Count(src, "\n") != strings.Count(c.src, "\n") {
				t.Errorf("the source read has %d lines, the kernel's %d:\n%s", strings.Count(src, "\n")+1, strings.Count(c.src, "\n")+1, src)
			}
			if got := src[info.NameStart : info.NameStart+len(c.fn)]; got != c.fn {
				t.Errorf("NameStart points at %q", got)
			}
			if src[info.BodyOpen] != '{' || src[info.BodyClose] != '}' || src[info.ListStart-1] != '(' || src[info.ListEnd] != ')' {
				t.Errorf("positions %d %d %d %d do not point at the definition", info.ListStart, info.ListEnd, info.BodyOpen, info.BodyClose)
			}
		})
	}
}

func TestKernelMacrosAndTopLevel(t *testing.T) {
	src := "#define k 3\n#define n(x) x\n#if 0\n#define dead 1\n#endif\n#ifdef __EXT\n#define maybe 2\n#endif\n#ifdef EXT\n#define not_defined 2\n#endif\n#undef k\n#define k 4\n" +
		"static double MIN(double a, double b) { return a < b ? a : b; }\nvoid f(double *x) { *x = MAX(k, n(1)); }"
	info, err := ParseKernel(src, "f")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(info.Macros, " "); got != "k n maybe" {
		t.Errorf("Macros = %q, want %q", got, "k n maybe")
	}
	if !info.TopLevel["MIN"] || info.TopLevel["MAX"] || !info.Idents["MAX"] {
		t.Errorf("TopLevel MIN %v MAX %v, Idents MAX %v; want true false true", info.TopLevel["MIN"], info.TopLevel["MAX"], info.Idents["MAX"])
	}
	if !info.DefinesMacro("n") || info.DefinesMacro("dead") {
		t.Error("DefinesMacro wrong")
	}
}

func TestKernelIdentifiers(t *testing.T) {
	info, err := ParseKernel("void k(double *x) { *x = gam * qinf[2] + 1e-3; /* eps */ }", "k")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"gam", "qinf", "x"} {
		if !info.Idents[id] {
			t.Errorf("identifier %q not found", id)
		}
	}
	for _, id := range []string{"eps", "e", "3"} {
		if info.Idents[id] {
			t.Errorf("%q reported as an identifier", id)
		}
	}
}

func TestConstNameProblem(t *testing.T) {
	cases := []struct {
		name string
		want string // substring of the problem, "" if the name is fine
	}{
		{"gam", ""}, {"qinf", ""}, {"gamma", ""}, {"eps_2", ""}, {"_lower", ""}, {"Nmax", ""}, {"k", ""},
		{"", "C identifier"}, {"2x", "C identifier"}, {"a-b", "C identifier"}, {"not a name", "C identifier"},
		{"return", "keyword"}, {"for", "keyword"}, {"double", "keyword"}, {"inline", "keyword"}, {"restrict", "keyword"},
		{"_Bool", "keyword"}, {"bool", "keyword"}, {"true", "keyword"}, {"false", "keyword"}, {"sizeof", "keyword"},
		{"_Static_assert", "keyword"}, {"typeof", "keyword"}, {"local", "keyword"}, {"NULL", "keyword"},
		{"int32_t", "type"}, {"uint64_t", "type"}, {"size_t", "type"}, {"ptrdiff_t", "type"}, {"int_fast8_t", "type"}, {"uintptr_t", "type"},
		{"op2_x", "reserved for GoOP2"}, {"OP2_X", "reserved for GoOP2"}, {"op2_", "reserved for GoOP2"},
		{"__x", "C implementation"}, {"_X", "C implementation"},
	}
	for _, c := range cases {
		got := ConstNameProblem(c.name)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("ConstNameProblem(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestParseKernelArraysOfArrays: a parameter declared as an array of
// arrays cannot receive what GoOP2 passes; the reader says so, naming it.
func TestParseKernelArraysOfArrays(t *testing.T) {
	cases := []struct {
		src     string
		problem string // substring of Problem; "" for none
	}{
		{"void k(double x[3][2]) {}", "parameter x is an array of arrays"},
		{"void k(const double x[][2]) {}", "parameter x is an array of arrays"},
		{"typedef double row[2];\nvoid k(row x[3]) {}", "parameter x is an array of arrays"},
		{"typedef double mat[3][2];\nvoid k(mat m) {}", "parameter m is an array of arrays"},
		{"void k(double *x[3]) {}", ""},
		{"void k(double x[6]) {}", ""},
	}
	for _, c := range cases {
		info, err := ParseKernel(c.src, "k")
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Params[0].Problem; (c.problem == "") != (got == "") || !strings.Contains(got, c.problem) {
			t.Errorf("%q: Problem %q, want %q", c.src, got, c.problem)
		}
	}
}

// TestReadOnlySource: the parameters of READ arguments get const values
// however they are spelled (and not twice), in the definition and in its
// prototypes; other parameters, and disabled optional arguments, are left
// as written.
func TestReadOnlySource(t *testing.T) {
	src := "typedef double *dp;\ntypedef const double *cdp;\n#define CREAL const double\n" +
		"void k(double *a, double b[], double *restrict c, double *const d, dp e, const double *f, double const *g, cdp h, CREAL *i, " +
		"__attribute__((unused)) double *j, double **v, double *w, double *o);\n" +
		"void k(double *a, double b[], double *restrict c, double *const d, dp e, const double *f, double const *g, cdp h, CREAL *i, " +
		"__attribute__((unused)) double *j, double **v, double *w, double *o) { }"
	want := "void k(const double *a, const double b[], const double *restrict c, const double *const d, const double *e, const double *f, double const *g, cdp h, CREAL *i, " +
		"__attribute__((unused)) const double *j, const double **v, double *w, double *o)"
	info, err := ParseKernel(src, "k")
	if err != nil {
		t.Fatal(err)
	}
	d := &core.Storage{Type: core.Float64, Dim: 1}
	var args []core.Arg
	for range 11 {
		args = append(args, core.Arg{Data: d, Access: core.Read, Kind: core.ArgDirect})
	}
	args[10].Kind = core.ArgVector
	args = append(args, core.Arg{Data: d, Access: core.RW, Kind: core.ArgDirect}, core.OffArg(core.Float64))
	l := &core.Loop{Kernel: &core.Kernel{Name: "k", Source: info.Source, Info: info}, Args: args}
	got := ReadOnlySource(l)
	if n := strings.Count(got, want); n != 2 {
		t.Errorf("%d of 2 declarations are\n%s\nin\n%s", n, want, got)
	}
}

// TestKernelEffects: a kernel writes to C's streams, or has other
// effects, when its source calls such a function or names such a stream
// (core.KernelInfo.WritesStdio, HasEffects), directly, in parentheses,
// through a macro or as a function pointer; variables, fields and header
// names spelled like the functions whose names are ordinary words are
// none.
func TestKernelEffects(t *testing.T) {
	for _, c := range []struct {
		src          string
		stdio, other bool
	}{
		{"void k(double *x) { x[0] += 1; }", false, false},
		{"#include <stdio.h>\nvoid k(double *x) { printf(\"%g\\n\", x[0]); }", true, true},
		{"void k(double *x) { if (x[0] < 0) __builtin_printf(\"neg\\n\"); }", true, true},
		{"#include <wchar.h>\nvoid k(double *x) { putwchar(L'x'); }", true, true},
		{"#include <stdio.h>\nvoid k(double *x) { fputs_unlocked(\"x\", stdout); }", true, true},
		{"#include <iostream>\nvoid k(double *x) { std::cout << x[0]; }", true, true},
		{"#include <stdio.h>\nvoid k(double *x) { dprintf(2, \"%g\", x[0]); }", false, true},
		{"#include <fstream>\nvoid k(double *x) { std::ofstream f(\"out\"); f << x[0]; }", false, true},
		{"#include <stdlib.h>\nvoid k(double *x) { if (x[0] < 0) exit(3); }", false, true},
		{"void k(double *x) { if (x[0] < 0) __builtin_trap(); }", false, true},
		{"struct s { double (*write)(double); };\nvoid k(double *x) { struct s v = {0}; if (v.write) x[0] = v.write(x[0]); }", false, true},
		{"void k(double *x) { double system[2] = {1, 2}; x[0] += system[1]; }", false, false},
		{"void k(double *x) { int open = x[0] > 0; if (open) x[0] += 1; }", false, false},
		{"struct valve { int open; double kill; };\nvoid k(double *x) { struct valve v = {1, 2}; x[0] += v.open * v.kill; }", false, false},
		{"#include <fstream>\nvoid k(double *x) { x[0] += 1; }", false, false},
		{"void k(double *x) { x[0] += 1; } /* printf(\"x\"); exit(1); */", false, false},
		{"#include <stdio.h>\n#define P printf\nvoid k(double *x) { P(\"%g\\n\", x[0]); }", true, true},
		{"#include <stdio.h>\nvoid k(double *x) { (printf)(\"%g\\n\", x[0]); }", true, true},
		{"#include <stdio.h>\nvoid k(double *x) { int (*p)(const char *, ...) = printf; p(\"%g\\n\", x[0]); }", true, true},
		{"#include <fstream>\nvoid k(double *x) { std::fstream f(\"out\", std::ios::out); f << x[0]; }", false, true},
		{"#include <stdlib.h>\n#define DIE exit\nvoid k(double *x) { if (x[0] < 0) DIE(1); }", false, true},
		{"#include <stdlib.h>\nvoid k(double *x) { if (x[0] < 0) (exit)(1); }", false, true},
		{"#include <cstdlib>\nvoid k(double *x) { if (x[0] < 0) (std::exit)(1); }", false, true},
		{"void k(const double *a, double *r) { double err = a[0] - a[1]; r[0] = err; double *pe = &err; r[0] += *pe ? err : 1; }", false, false},
		{"void k(double *r) { int open = r[0] > 0, kill = 2; double w = open ? kill : 0; r[0] = w; }", false, false},
		{"void k(double *r) { double clog = 2; r[0] = clog; }", false, false},
		{"#include <iostream>\nvoid k(double *x) { std::ostream &o = std::clog; o << x[0]; }", true, true},
		{"#include <iostream>\nvoid k(double *x) { (std::clog) << x[0]; }", true, true},
		{"#include <stdlib.h>\nvoid k(double *x) { void (*die)(int) = exit; if (x[0] < 0) die(1); }", false, true},
		{"#include <stdlib.h>\nvoid k(double *x) { void (*die)(int) = &exit; if (x[0] < 0) die(1); }", false, true},
		{"void k(const double *a, double *r) { double m = a[0], err = m; r[0] = err; int open = 1; r[0] += open; }", false, false},
		{"#include <stdio.h>\nvoid k(double *x) { if (x[0] < 0) remove(\"f\"); }", false, true},
		{"#include <err.h>\nvoid k(double *x) { if (x[0] < 0) warnx(\"neg %g\", x[0]); }", true, true},
		{"void k(double *x) { if (x[0] < 0) __builtin_puts_unlocked(\"neg\"); }", true, true},
		{"#include <complex.h>\nvoid k(double *x) { double complex z = clog(x[0] + 1.0 * I); x[0] = creal(z); }", false, false},
		{"#include <iostream>\nvoid k(double *x) { std::clog << x[0]; }", true, true},
		{"#include <assert.h>\nvoid k(double *x) { assert(x[0] >= 0); x[0] += 1; }", false, true},
		{"#include <cassert>\nvoid k(double *x) { assert (x[0] >= 0); }", false, true},
		{"void k(double *x) { _Static_assert(sizeof(double) == 8, \"d\"); x[0] += 1; }", false, false},
		{"void k(double *x) { int assert = x[0] > 0; x[0] += assert; }", false, false},
		{"#include <unistd.h>\nvoid k(double *x) { if (x[0] < 0) execl(\"/bin/true\", \"true\", (char *)0); }", false, true},
		{"#include <unistd.h>\nvoid k(double *x) { if (x[0] < 0) fork(); }", false, true},
		{"#include <sys/stat.h>\nvoid k(double *x) { if (x[0] < 0) mkdir(\"d\", 0700); }", false, true},
		{"void k(double *x) { double link = 2, truncate = x[0]; x[0] = link * truncate; }", false, false},
		{"#include <stdlib.h>\nvoid k(double *x) { if (x[0] < 0) setenv(\"A\", \"1\", 1); }", false, true},
		{"#include <unistd.h>\nvoid k(double *x) { if (x[0] < 0) close(3); }", false, true},
		{"#include <unistd.h>\nvoid k(double *x) { if (x[0] < 0) ftruncate(3, 0); }", false, true},
		{"void k(double *x) { int close = x[0] > 0; x[0] += close; }", false, false},
		{"#include <unistd.h>\nvoid k(double *x) { { int close = 1; x[0] += close; } if (x[0] < 0) close(3); }", false, true},
		{"void k(double *x) { int kill = x[0] > 0; if (kill) (x[0])++; while (kill) (x[0] += 1, kill = 0); }", false, false},
		{"#include <assert.h>\n#undef assert\n#define assert(c) ((void)0)\nvoid k(double *x) { assert(x[0] >= 0); x[0] += 1; }", false, false},
		{"#if 0\n#define assert(c) ((void)0)\n#endif\n#include <assert.h>\nvoid k(double *x) { assert(x[0] >= 0); }", false, true},
		{"#include <stdlib.h>\n#define exit(c) abort()\nvoid k(double *x) { if (x[0] < 0) exit(1); }", false, true},
		{"#include <stdlib.h>\nvoid k(double *x) { if (x[0] < 0) (*exit)(1); }", false, true},
		{"#include <unistd.h>\nvoid k(double *x) { if (x[0] < 0) (*close)(3); }", false, true},
		{"#include <stdlib.h>\n#define exit(c) do { x[0] = 0; exit(c); } while (0)\nvoid k(double *x) { if (x[0] < 0) exit(1); }", false, true},
		{"#define assert(c) ((void)0)\n#include <assert.h>\nvoid k(double *x) { assert(x[0] >= 0); }", false, true},
		{"#include <assert.h>\nvoid k(double *x) { assert(x[0] >= 0); }\n#undef assert\n#define assert(c) ((void)0)\n", false, true},
		{"#include <stdlib.h>\nvoid k(double *x) { if (x[0] < 0) x[0] = 0; else (exit)(1); }", false, true},
		{"#include <stdlib.h>\ndouble f(double v) { if (v < 0) return (exit)(1), 0; return v; }\nvoid k(double *x) { x[0] = f(x[0]); }", false, true},
		{"#include <stdlib.h>\n#define exit exit\nvoid k(double *x) { if (x[0] < 0) exit(1); }", false, true},
		{"#include <unistd.h>\nstruct s { int (*close)(int); };\nvoid k(double *x) { if (x[0] < 0) close(3); }", false, true},
		{"#include <stdlib.h>\nvoid k(double *x) {\n#ifdef exit\n  x[0] = 1;\n#endif\n  x[0] += 1; }", false, false},
		{"#include <stdlib.h>\n#define exit(c) ((void)0)\nvoid k(double *x) { if (x[0] < 0) (exit)(1); }", false, true},
		{"#include <stdlib.h>\n#define exit(c) ((void)0)\nvoid k(double *x) { void (*d)(int) = exit; if (x[0] < 0) d(1); }", false, true},
		{"#include <stdlib.h>\n#define exit(c) DIE(c)\n#define DIE(c) exit(c)\nvoid k(double *x) { if (x[0] < 0) exit(1); }", false, true},
		{"#include <stdlib.h>\n#define exit(c) ex##it(c)\nvoid k(double *x) { if (x[0] < 0) exit(1); }", false, true},
		{"#include <stdlib.h>\nstatic void my_exit(int c) { (void)c; }\n#define exit my_exit\nvoid k(double *x) { if (x[0] < 0) (exit)(1); }", false, false},
		{"#include <stdlib.h>\n#define exit(c) ((void)0)\n#if 0\n#undef exit\n#endif\nvoid k(double *x) { if (x[0] < 0) exit(1); }", false, false},
		{"#define assert(c) ((void)0)\n#include \"assert.h\"\nvoid k(double *x) { assert(x[0] >= 0); }", false, true},
		{"#include <stdlib.h>\n#define exit(c) \\\n do { exit(c); } while (0)\nvoid k(double *x) { if (x[0] < 0) exit(1); }", false, true},
		{"#include <assert.h>\n#undef assert\n#define assert(c) ((void)0)\nvoid k(double *x) { assert(x[0] >= 0); }\n#undef assert\n", false, false},
		{"static double truncate(double v) { return (long)v; }\nvoid k(double *x) { x[0] = truncate(x[0]); }", false, false},
		{"static inline double signal(double a, double b) { return a - b; }\nvoid k(double *x) { x[0] = signal(x[0], 1); }", false, false},
		{"void exit(int);\nvoid k(double *x) { if (x[0] < 0) exit(1); }", false, true},
		{"extern int kill(int, int);\nvoid k(double *x) { if (x[0] < 0) kill(0, 9); }", false, true},
		{"int close(int);\nvoid k(double *x) { if (x[0] < 0) close(3); }", false, true},
		{"#include <stdio.h>\nvoid k(double *x) {\n#if 0\n  printf(\"%g\\n\", x[0]);\n#endif\n  x[0] += 1; }", false, false},
		{"#include <stdio.h>\nvoid k(double *x) {\n# if  0 /* debug */\n#ifdef V\n  printf(\"v\");\n#endif\n  exit(1);\n#else\n  x[0] += 1;\n#endif\n}", false, false},
		{"#include <stdio.h>\nvoid k(double *x) {\n#if 0\n  x[0] = 0;\n#else\n  printf(\"%g\\n\", x[0]);\n#endif\n}", true, true},
		{"#include <stdio.h>\nvoid k(double *x) {\n#if 0\n  x[0] = 0;\n#elif 1\n  printf(\"%g\\n\", x[0]);\n#endif\n}", true, true},
		{"#include <stdio.h>\nvoid k(double *x) {\n#if 00\n  x[0] = 0;\n#endif\n  printf(\"x\"); }", true, true},
		{"#include <stdio.h>\nvoid k(double *x) {\n#if 1\n  printf(\"x\");\n#endif\n}", true, true},
		{"#include <stdio.h>\nvoid k(double *x) {\n#if 0\n  x[0] = 0;\n#endif\n#if 0\n  exit(2);\n#endif\n  puts(\"y\"); }", true, true},
		{"void k(double *x) {\n#ifdef K_DEBUG\n  __builtin_printf(\"%g\\n\", x[0]);\n#endif\n  x[0] += 1; }", false, false},
		{"#define K_DEBUG 1\nvoid k(double *x) {\n#if K_DEBUG\n  __builtin_printf(\"%g\\n\", x[0]);\n#endif\n  x[0] += 1; }", true, true},
		// exit as a value: a cast's operand, in an initializer, a
		// conditional, a call's arguments, qualified.
		{"#include <stdlib.h>\nvoid k(double *x) { void (*d)(int) = (void (*)(int))exit; if (x[0] < 0) d(1); }", false, true},
		{"#include <stdlib.h>\nvoid k(double *x) { void (*d[1])(int) = {exit}; if (x[0] < 0) d[0](1); }", false, true},
		{"#include <stdlib.h>\nvoid k(double *x) { void (*d)(int) = x[0] < 0 ? exit : 0; if (d) d(1); }", false, true},
		{"#include <stdlib.h>\nstatic void call(void (*f)(int), double v) { if (v < 0) f(1); }\nvoid k(double *x) { call(exit, x[0]); }", false, true},
		{"#include <cstdlib>\nvoid k(double *x) { void (*d)(int) = std::exit; if (x[0] < 0) d(1); }", false, true},
		// Objects, members, labels: no effect.
		{"void k(const double *a, double *write) { write[0] = a[0]; }", false, false},
		{"typedef struct { double v; } vec;\nvoid k(double *x) { vec open = {x[0]}; vec *kill = &open; x[0] = kill->v + open.v; }", false, false},
		{"struct valve { int open; };\nvoid k(double *x, const int *v) { const struct valve *p = (const struct valve *)v; x[0] += p->open; }", false, false},
		{"void k(double *x) { if (x[0] < 0) goto exit; x[0] = 1; exit: return; }", false, false},
		{"void k(double *x, double *const err) { err[0] = x[0]; }", false, false},
		{"void k(const double *x, double *y) { double a, err[2]; err[0] = x[0]; err[1] = x[1]; a = 0; y[0] = a + err[0] + err[1]; }", false, false},
		{"void k(const double *x, double *y) { double s = 0, err[2]; err[0] = x[0]; y[0] = s + err[0]; }", false, false},
		{"void k(const double (*err)[2], double *y) { y[0] = err[0][1]; }", false, false},
		{"enum mode { readm, write };\nvoid k(const int *m, double *y) { if (*m == write) y[0] = 1; }", false, false},
		{"enum { open = 1, shut };\nvoid k(const int *m, double *y) { y[0] = *m == open ? 1 : 0; }", false, false},
		{"struct st { double open, write; };\nvoid k(const struct st *s, double *y) { y[0] = s->open + s->write; }", false, false},
		{"double err[3] = {0}, warn[3] = {0};\nvoid k(const double *x, double *y) { for (int i = 0; i < 3; i++) warn[i] = x[0]; y[0] = warn[1] + err[0]; }", false, false},
		{"#include <array>\nvoid k(const double *x, double *y) { std::array<double, 2> err{}; err[0] = x[0]; y[0] = err[0]; }", false, false},
		{"#include <stdlib.h>\nvoid k(double *x) { void (*d)(int) = 0; d = x[0] < 0 ? exit : abort == 0 ? 0 : 0; if (d) d(1); }", false, true},
		{"#include <stdlib.h>\nvoid (*pick(int q))(int) { return q ? exit : 0; }\nvoid k(double *x) { void (*d)(int) = pick(x[0] < 0); if (d) d(1); }", false, true},
		// Found by a review: after a product in a call's arguments or an
		// initializer, and dereferenced.
		{"#include <stdlib.h>\nstatic void on(int c, void (*f)(int)) { if (c) f(1); }\nvoid k(double *x) { int n = 2; on(n * (int)x[0], exit); }", false, true},
		{"#include <stdlib.h>\nstatic double on(int c, void (*f)(int)) { if (c) f(1); return 0; }\nvoid k(double *x) { int n = 2; double r = on(n * (int)x[0], exit); x[0] = r; }", false, true},
		{"#include <stdlib.h>\nstruct h { double s; void (*f)(int); };\nvoid k(double *x) { double s = 2; struct h o = { s * x[0], exit }; if (x[0] < 0) o.f(1); }", false, true},
		{"#include <stdlib.h>\nvoid k(double *x) { void (*d)(int) = *exit; if (x[0] < 0) d(1); }", false, true},
		// A macro defined in a branch that may not be compiled is not
		// the source's own (NDEBUG, QUIET may come from the command
		// line); an indented #define in a skipped branch is skipped.
		{"#include <assert.h>\n#ifndef NDEBUG\n#else\n#undef assert\n#define assert(c) ((void)0)\n#endif\nvoid k(double *x) { assert(x[0] >= 0); }", false, true},
		{"#ifndef NDEBUG\n#include <assert.h>\n#else\n#define assert(c) ((void)0)\n#endif\nvoid k(double *x) { assert(x[0] >= 0); }", false, true},
		{"#include <stdlib.h>\n#ifdef QUIET\n#define exit(c) ((void)0)\n#endif\nvoid k(double *x) { if (x[0] < 0) exit(1); }", false, true},
		{"#include <stdlib.h>\n#define exit(c) ((void)0)\n#ifdef QUIET\n#define exit(c) ((void)0)\n#endif\nvoid k(double *x) { if (x[0] < 0) exit(1); }", false, true},
		{"#include <assert.h>\n#if 0\n  #undef assert\n  #define assert(c) ((void)0)\n#endif\nvoid k(double *x) { assert(x[0] >= 0); }", false, true},
		{"#include <stdlib.h>\n#if 1\n  #define exit(c) ((void)0)\n#endif\nvoid k(double *x) { if (x[0] < 0) exit(1); }", false, false},
		// A C++ member named like a library function leaves the
		// library's, qualified, counting.
		{"#include <unistd.h>\nstruct F { int fd; void close() { fd = -1; } };\nvoid k(double *x) { F f; f.close(); if (x[0] < 0) ::close(3); }", false, true},
		{"#include <cstdlib>\nstruct F { void exit(int c) { (void)c; } };\nvoid k(double *x) { F f; f.exit(1); if (x[0] < 0) return std::exit(1); }", false, true},
		{"#include <unistd.h>\nstruct F { int fd; void close() { fd = -1; } };\nvoid k(double *x) { F f; if (x[0] < 0) f.close(); }", false, false},
		{"namespace io { static int close(int c) { return c; } }\nvoid k(double *x) { x[0] += io::close(3); }", false, false},
	} {
		info, err := ParseKernel(c.src, "k")
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if got := info.WritesStdio; got != c.stdio {
			t.Errorf("WritesStdio = %v, want %v: %s", got, c.stdio, c.src)
		}
		if got := info.HasEffects; got != c.other {
			t.Errorf("HasEffects = %v, want %v: %s", got, c.other, c.src)
		}
	}
}

// TestParseKernelCXXHeads: a definition with C++'s noexcept, throw(...)
// or a trailing return type between its parameter list and its body, or
// inside a linkage-specification block (extern "C" { ... }), is found as
// it is without them (and CXXOnly says what of C++ it has); macros there
// are expanded; a function-try-block, or words that are neither, are
// refused saying so.
func TestParseKernelCXXHeads(t *testing.T) {
	x := []core.Param{{Name: "x", Type: core.Float64, Depth: 1}, {Name: "y", Type: core.Float64, Depth: 1}}
	cases := []struct {
		name, src string
		want      []core.Param
		cxxOnly   string   // substring of CXXOnly; "-" for none
		protos    int      // the kernel's prototypes
		err       []string // when refused
	}{
		{"noexcept", "void k(const double *x, double *y) noexcept { *y = x[0]; }", x, `"noexcept" between`, 0, nil},
		{"noexcept(true)", "void k(const double *x, double *y) noexcept(true) { *y = x[0]; }", x, `"noexcept(true)"`, 0, nil},
		{"throw()", "void k(const double *x, double *y) throw() { *y = x[0]; }", x, `"throw()"`, 0, nil},
		{"trailing return type", "auto k(const double *x, double *y) -> void { *y = x[0]; }", x, `"-> void"`, 0, nil},
		{"noexcept on lines of its own", "void k(const double *x, double *y)\n  noexcept\n{ *y = x[0]; }", x, `"noexcept"`, 0, nil},
		{"attribute and noexcept", "void k(const double *x, double *y) noexcept __attribute__((hot)) { *y = x[0]; }", x, `"noexcept"`, 0, nil},
		{"prototypes with noexcept", "void k(const double *x, double *y) noexcept;\nvoid k(const double *x, double *y) noexcept { *y = x[0]; }\nvoid k(const double *x, double *y) noexcept;", x, "noexcept", 2, nil},
		{"extern C block", "extern \"C\" {\nstatic double h(double v) { return v; }\nvoid k(const double *x, double *y) { *y = h(x[0]); }\n}", x, `extern "C" { ... }) at line 1`, 0, nil},
		{"nested linkage blocks", "extern \"C++\" { extern \"C\" { void k(const double *x, double *y) noexcept { *y = x[0]; } } }", x, "noexcept", 0, nil},
		{"extern C block under __cplusplus", "#ifdef __cplusplus\nextern \"C\" {\n#endif\nvoid k(const double *x, double *y) { *y = x[0]; }\n#ifdef __cplusplus\n}\n#endif", x, "-", 0, nil},
		{"extern C on the definition", "extern \"C\" void k(const double *x, double *y) { *y = x[0]; }", x, "-", 0, nil},
		{"macro", "#define NOEXCEPT noexcept\nvoid k(const double *x, double *y) NOEXCEPT { *y = x[0]; }", x, `"noexcept"`, 0, nil},
		{"prototype with a macro", "#define NOEXCEPT noexcept\nvoid k(double *x, double *y) NOEXCEPT;\nvoid k(const double *x, double *y) NOEXCEPT { *y = x[0]; }", x, `"noexcept"`, 1, nil},
		{"function-like macro", "#define NOEXCEPT_IF(c) noexcept(c)\nvoid k(const double *x, double *y) NOEXCEPT_IF(true) { *y = x[0]; }", x, `"noexcept(true)"`, 0, nil},
		{"empty macro", "#define NOEXCEPT\nvoid k(const double *x, double *y) NOEXCEPT { *y = x[0]; }", x, "-", 0, nil},
		{"K&R", "void k(x, y) double *x; double *y; { *y = x[0]; }", nil, "", 0, []string{"K&R-style"}},
		{"function-try-block", "void k(const double *x, double *y) try { *y = x[0]; } catch (...) { }", nil, "", 0,
			[]string{"function-try-block", "a function-try-block kernel is not supported", "line 1"}},
		{"function-try-block with noexcept", "void k(const double *x, double *y) noexcept try { *y = x[0]; } catch (...) { }", nil, "", 0,
			[]string{"a function-try-block kernel is not supported"}},
		{"unknown word", "void k(const double *x, double *y) override { *y = x[0]; }", nil, "", 0,
			[]string{`has "override" between its parameter list and its body, which GoOP2 does not read`}},
		{"macro to an unknown word", "#define FINAL final\nvoid k(const double *x, double *y) FINAL { *y = x[0]; }", nil, "", 0,
			[]string{`has "final" between its parameter list and its body`}},
		{"macro under a condition", "#ifdef __SOMETHING_X\n#define NOEXCEPT noexcept\n#endif\nvoid k(const double *x, double *y) NOEXCEPT { *y = x[0]; }", nil, "", 0,
			[]string{"macro NOEXCEPT", "cannot expand"}},
		{"helpers with them", "static double h(double v) noexcept { return v; }\nstatic auto g(double v) -> double { return v; }\nextern \"C\" { static double f(double v) throw() { return v; } }\nvoid k(const double *x, double *y) { *y = h(g(f(x[0]))); }", x, "extern", 0, nil},
		{"a helper's function-try-block", "static double h(double v) try { return v; } catch (...) { return 0; }\nvoid k(const double *x, double *y) { *y = h(x[0]); }", x, "-", 0, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			info, err := ParseKernel(c.src, "k")
			if c.err != nil {
				if err == nil {
					t.Fatalf("no error; params %+v", info.Params)
				}
				for _, e := range c.err {
					if !strings.Contains(err.Error(), e) {
						t.Errorf("error %q does not mention %q", err, e)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(info.Params) != len(c.want) {
				t.Fatalf("%d params %+v, want %d", len(info.Params), info.Params, len(c.want))
			}
			for i, w := range c.want {
				if g := info.Params[i]; g.Name != w.Name || g.Type != w.Type || g.Depth != w.Depth {
					t.Errorf("param %d = %+v, want %+v", i, g, w)
				}
			}
			src := info.Source
			if src[info.NameStart:info.NameStart+1] != "k" || src[info.BodyOpen] != '{' || src[info.BodyClose] != '}' || src[info.ListStart-1] != '(' || src[info.ListEnd] != ')' {
				t.Errorf("positions %d %d %d %d %d do not point at the definition", info.NameStart, info.ListStart, info.ListEnd, info.BodyOpen, info.BodyClose)
			}
			if body := strings.TrimSpace(src[info.BodyOpen+1 : info.BodyClose]); !strings.HasPrefix(body, "*y = ") {
				t.Errorf("body %q", body)
			}
			if c.cxxOnly == "-" && info.CXXOnly != "" || c.cxxOnly != "-" && !strings.Contains(info.CXXOnly, c.cxxOnly) {
				t.Errorf("CXXOnly %q, want %q", info.CXXOnly, c.cxxOnly)
			}
			if len(info.Protos) != c.protos {
				t.Errorf("%d prototypes, want %d", len(info.Protos), c.protos)
			}
			if strings.Count(src, "\n") != strings.Count(c.src, "\n") {
				t.Errorf("the source read has other lines:\n%s", src)
			}
		})
	}
}

// TestKernelInfoFunctions: the names a source declares or defines as
// functions at file scope (what core.Undeclared leaves out), not the
// variables, Consts in initializers and default arguments, nor names in
// directives and bodies.
func TestKernelInfoFunctions(t *testing.T) {
	src := "#define G \\\n  gg(2)\nstatic double first(const double *p);\nstatic const double g2 = 2 * zgam;\nstatic const double e1 = exp(1.0);\n" +
		"static double scale(double v, double g = zscale) { return inner(v) * g; }\nvoid k(double *x) { *x = first(x) + g2 + scale(*x) + grav; }"
	info, err := ParseKernel(src, "k")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for name := range info.Functions {
		got = append(got, name)
	}
	slices.Sort(got)
	if want := []string{"exp", "first", "k", "scale"}; !slices.Equal(got, want) {
		t.Errorf("Functions = %v, want %v", got, want)
	}
}
