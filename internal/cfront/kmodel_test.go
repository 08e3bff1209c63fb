package cfront

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/clex"
	"github.com/goop2/op2/internal/core"
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

func TestPassedOn(t *testing.T) {
	cases := []struct {
		body  string
		depth int
		want  bool
	}{
		{"x[0] = 1;", 1, false},
		{"*x = 2 * x[1];", 1, false},
		{"y = a * x[0] + a**x;", 1, false},
		{"y = (*x) + (double)x[2];", 1, false},
		{"h(x);", 1, true},
		{"h(x + 1);", 1, true},
		{"double *t = x;", 1, true},
		{"h(&x[1]);", 1, true},
		{"y = x[0][1] + *x[1] + **x;", 2, false},
		{"h(x[0]);", 2, true},
		{"double *r = *x;", 2, true},
		{"y = sizeof(x);", 1, true},
		{"y = ADDX;", 1, true}, // named in a macro
		{"if (*x < 7) *x = 7;", 1, false},
		{"while (*x > 0) *x -= 1;", 1, false},
		{"y = sizeof *x;", 1, false},
		{"y = a *(x[0]) + (a) * x[1] + h(*x);", 1, false},
		{"if (a) h(x);", 1, true},
		{"for (int i = 0; i < 2; i++) *x += i;", 1, false},
	}
	for _, c := range cases {
		src := "#define ADDX (x[0] + 1)\nvoid k(double *x) { double y, a = 1; " + c.body + " }"
		u, err := ReadSource(src)
		if err != nil {
			t.Fatal(err)
		}
		got := u.PassedOn(&u.Defs[0], []string{"x"}, []int{c.depth})[0]
		if c.body != "y = ADDX;" {
			u.MacroIdents = map[string]bool{}
			got = u.PassedOn(&u.Defs[0], []string{"x"}, []int{c.depth})[0]
		}
		if got != c.want {
			t.Errorf("%q (depth %d): passed on = %v, want %v", c.body, c.depth, got, c.want)
		}
	}
}

// TestReadSource: the file-scope model of a source: functions and
// prototypes with their spans, calls (in bodies, in macros, outside
// functions), math calls, typedefs and declared types, macros, includes,
// attributes, const tables.
func TestReadSource(t *testing.T) {
	src := `#include <math.h>
#  include "mine.h"
#include_next <x.h>
#define SQ(a) ((a) * helper(a))
#define N 3
#define N 4
typedef struct pt { double x; } pt, *ptp;
struct tag { int i; };
typedef double real;
static const double w[2] = {1, 2};
static const char *msg = "hi";
double helper(double v);
[[nodiscard]] double helper(double v) { return sqrt(v) + hypot(v, 1) + fabs(v); }
void k(double *x, const real y[2], int) { x[0] = helper(y[0]) + SQ(x[1]) + w[N - 3]; obj.helper(1); p->helper(2); }
`
	u, err := ReadSource(src)
	if err != nil {
		t.Fatal(err)
	}
	var defs []string
	for _, f := range u.Defs {
		defs = append(defs, f.Name+"("+strings.Join(f.Params, ",")+")")
		if u.Src[f.BodyOpen] != '{' || u.Src[f.BodyClose] != '}' || !f.Defined {
			t.Errorf("%s: body span %d..%d", f.Name, f.BodyOpen, f.BodyClose)
		}
	}
	if got, want := strings.Join(defs, " "), "helper(v) k(x,y,)"; got != want {
		t.Errorf("definitions %q, want %q", got, want)
	}
	if got, want := declNames(u.Protos), "helper"; got != want {
		t.Errorf("prototypes %q, want %q", got, want)
	}
	var calls []string
	for _, c := range u.Calls {
		calls = append(calls, fmt.Sprintf("%s@%d", c.Name, strings.Count(src[:c.NameAt], "\n")+1))
		if src[c.NameAt:c.NameAt+len(c.Name)] != c.Name || src[c.Open] != '(' {
			t.Errorf("call %s: position %d, '(' at %d", c.Name, c.NameAt, c.Open)
		}
	}
	if got, want := strings.Join(calls, " "), "helper@14 helper@4"; got != want {
		t.Errorf("calls %q, want %q", got, want)
	}
	var math []string
	for _, c := range u.MathCalls {
		math = append(math, c.Name)
		if len(u.ArgSpans(c.Open)) == 0 {
			t.Errorf("%s: no arguments", c.Name)
		}
	}
	if got, want := strings.Join(math, " "), "sqrt hypot fabs"; got != want {
		t.Errorf("math calls %q, want %q", got, want)
	}
	if got := u.ArgSpans(u.MathCalls[1].Open); len(got) != 2 || src[got[0][0]:got[0][1]] != "v" || src[got[1][0]:got[1][1]] != "1" {
		t.Errorf("hypot's arguments %v", got)
	}
	if got, want := strings.Join(u.Macros, " "), "SQ N"; got != want {
		t.Errorf("macros %q, want %q", got, want)
	}
	if !u.MacroIdents["helper"] || u.MacroIdents["SQ"] || !u.Typedefs["real"] || !u.Typedefs["ptp"] || u.Typedefs["pt"] {
		t.Errorf("macro identifiers %v, typedefs %v", u.MacroIdents, u.Typedefs)
	}
	slices.Sort(u.DeclaredTypes)
	if got, want := strings.Join(u.DeclaredTypes, " "), "pt pt ptp real tag"; got != want {
		t.Errorf("declared types %q, want %q", got, want)
	}
	var inc []string
	for _, in := range u.Includes {
		inc = append(inc, in.Header+"="+src[in.Start:in.End])
	}
	if got, want := strings.Join(inc, " "), `math.h=#include <math.h> mine.h=#  include "mine.h"`; got != want {
		t.Errorf("includes %q, want %q", got, want)
	}
	if len(u.StdAttrs) != 1 || src[u.StdAttrs[0][0]:u.StdAttrs[0][1]] != "[[nodiscard]]" {
		t.Errorf("attributes %v", u.StdAttrs)
	}
	if len(u.ConstTables) != 2 || !strings.HasPrefix(src[u.ConstTables[0]:], "static const double w") || len(u.ConstPtrs) != 1 || !strings.HasPrefix(src[u.ConstPtrs[0]:], "msg") {
		t.Errorf("const tables %v, pointers %v", u.ConstTables, u.ConstPtrs)
	}
	if !u.Called["sqrt"] || !u.Called["SQ"] || !u.Called["helper"] || u.Called["x"] || !u.Names["obj"] || !u.Names["helper"] {
		t.Errorf("called %v", u.Called)
	}
	if !u.Uses("w") || !u.Uses("helper") || u.Uses("msg") || !u.Declares("N") || !u.Declares("helper") || !u.Declares("real") || u.Declares("w") {
		t.Error("Uses or Declares wrong")
	}
	if !u.OutsideIdents["msg"] || u.OutsideIdents["sqrt"] {
		t.Errorf("outside identifiers %v", u.OutsideIdents)
	}
	for _, bad := range []string{"void f(double *x { }", "void f(double *x) { x[0] = 1;", "int a; { "} {
		if _, err := ReadSource(bad); err == nil {
			t.Errorf("%q read", bad)
		}
	}
}

// declNames returns the names of fs, in order, separated by spaces.
func declNames(fs []FuncDecl) string {
	var names []string
	for _, f := range fs {
		names = append(names, f.Name)
	}
	return strings.Join(names, " ")
}

// TestReadSourceInitializerCalls: a call in a file-scope initializer
// declares nothing (static const double c = cbrt(3.0) is no prototype
// of cbrt), nor do the commas of a template's arguments in it end it
// (T<int, int>::f(cbrt(1.0))), while a prototype after the initializer's comma, a function
// after a C++ operator='s or operator=='s body or a lambda, and a template
// with default arguments or a requires clause, are still read; a brace
// block in an initializer does not end it.
func TestReadSourceInitializerCalls(t *testing.T) {
	src := `static const double c = 2 * cbrt(3.0), d = (1, exp(1.0)), g(double);
struct S { double v; S &operator=(const S &b); };
static const double w[2] = { pow(2.0, 3.0), 1 };
S &S::operator=(const S &b) { v = b.v; return *this; }
double h(double v) { return v; }
template <int N = 3, typename T = S<(2 > 1)>> double tg(double v) { return N * v; }
auto lam = [](double v) { return v; };
using R = double;
R tr(R v) { return v; }
static const double c2 = double{2} * cbrt(3.0);
bool operator==(const S &a, const S &b) { return a.v == b.v; }
template <int N> requires N >= 3 double rq(double v) { return v; }
static const double t1 = T<int, int>::f(cbrt(1.0)), t2 = std::max<int, long>(cbrt(2.0), 2);
static const bool lt = 1 < 2, gt = 3 > (2);
static const int n2 = 2, m2 = 3;
static const bool b1 = n2 < m2, f2(double), b2 = m2 > (n2);
void k(double *x) { *x = cbrt(*x) + h(c); }
`
	u, err := ReadSource(src)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := declNames(u.Protos), "g f2"; got != want {
		t.Errorf("prototypes %q, want %q", got, want)
	}
	if got, want := declNames(u.Defs), "h tg tr rq k"; got != want {
		t.Errorf("definitions %q, want %q", got, want)
	}
	for _, name := range []string{"cbrt", "exp", "pow"} {
		if u.Declares(name) {
			t.Errorf("Declares(%q)", name)
		}
	}
	info, err := ParseKernel(src, "k")
	if err != nil {
		t.Fatal(err)
	}
	if n := CountOps(info).Calls["cbrt"]; n != 1 {
		t.Errorf("%d calls of cbrt counted, want 1", n)
	}
}

// TestReadSourceKeepsDefinitions: what ends a file-scope initializer or
// a template's parameter list in ways the scan does not see (a shift or
// <= in a template argument, a digit separator, a default argument in a
// parenthesised declarator's list, a macro's ';', C's identifier
// template) loses none of the definitions after it.
func TestReadSourceKeepsDefinitions(t *testing.T) {
	const rest = "\nstatic double h(double v) { return cbrt(v) / 3; }\nvoid k(double *x) { *x = h(*x); }\n"
	for _, c := range []struct{ name, src string }{
		{"shift in a template argument", "template <int N = 1 << 2> double t(double v) { return N * v; }"},
		{"<= in a template argument", "template <bool B = 1 <= 2> double t(double v) { return B * v; }"},
		{"digit separator", "static const int n = 1'000;"},
		{"default argument", "double (mx)(double a, double b = 0) { return a > b ? a : b; }"},
		{"macro ending a declaration", "#define END ;\nstatic const double c = 2.0 END"},
		{"comparison, then a '>' before a '('", "static const int n = 2; static const int lim = n < 3; double t(double v) { return v > (1) ? v : 1; }"},
		{"C's identifier template", "static const int template = 3; static const int lim = template < 4 ? 1 : 2;"},
	} {
		u, err := ReadSource(c.src + rest)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !u.Defined["h"] || !u.Defined["k"] {
			t.Errorf("%s: definitions %v, want h and k among them", c.name, u.Defined)
		}
		info, err := ParseKernel(c.src+rest, "k")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if ops := CountOps(info); ops.Calls["cbrt"] != 1 || ops.Divisions != 1 {
			t.Errorf("%s: calls %v, %d divisions; want cbrt once and one division (in h)", c.name, ops.Calls, ops.Divisions)
		}
	}
}

// TestReadSourceCXX: calls outside the file-scope functions (a member
// function) are marked, and a member function's declaration named like
// a file-scope function is no call.
func TestReadSourceCXX(t *testing.T) {
	src := "static double g(double v) { return v; }\nstruct S { double g(double v); double h() { return ::g(1) + g(2); } };\nnamespace n { double m() { return g(3); } }\n"
	u, err := ReadSource(src)
	if err != nil {
		t.Fatal(err)
	}
	var outside []int
	for _, c := range u.Calls {
		if c.Outside {
			outside = append(outside, c.NameAt)
		}
	}
	if len(outside) != 2 {
		t.Errorf("calls outside at %v, want 2 (g(2), g(3))", outside)
	}
}

// TestKernelModelOnce: a kernel's model and body are read once and kept;
// the body is expanded, tokenised, and says whether it has a directive.
func TestKernelModelOnce(t *testing.T) {
	info, err := ParseKernel("#define TWICE(v) (2 * (v))\nvoid k(double *x) { x[0] = TWICE(x[1]); /* c */ }", "k")
	if err != nil {
		t.Fatal(err)
	}
	m1, err := Model(info)
	if err != nil {
		t.Fatal(err)
	}
	if m2, _ := Model(info); m1 != m2 || len(m1.Defs) != 1 {
		t.Error("the model is read again, or wrong")
	}
	b, err := Body(info)
	if err != nil || b.Directive || strings.Contains(b.Text, "TWICE") || !strings.Contains(b.Text, "2 *") || len(b.Tokens) == 0 {
		t.Fatalf("body %+v, %v", b, err)
	}
	if b2, _ := Body(info); b2 != b {
		t.Error("the body is read again")
	}
	// Without the reader's cache (a KernelInfo made by hand) the same.
	bare := &core.KernelInfo{Source: info.Source, BodyOpen: info.BodyOpen, BodyClose: info.BodyClose}
	if b3, err := Body(bare); err != nil || b3.Text != b.Text {
		t.Errorf("uncached body %+v, %v", b3, err)
	}
	if m3, err := Model(bare); err != nil || len(m3.Defs) != 1 {
		t.Errorf("uncached model %v", err)
	}
	info, err = ParseKernel("void k(double *x) {\n#if 1\n x[0] = 1;\n#endif\n}", "k")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := Body(info); !b.Directive {
		t.Error("the directive in the body is not seen")
	}
}

// TestKernelOps: Ops counts the divisions and the calls of functions the
// source does not define, in the kernel's body and the functions it
// calls (through others too), their macros expanded, C++'s std:: calls
// by their last name; a function the source defines is not counted as a
// call, and a function the kernel does not call (another kernel), with
// the macros only it uses, does not count.
func TestKernelOps(t *testing.T) {
	src := `#define INV(v) (1.0 / (v))
#define U(v) sin(v) / 7
static double third(double v) { return INV(v) / 3; }
static double half(double v) { return v / 2 + std::exp(v) + third(v); }
static double unused(double v) { return cbrt(v) / 5 + U(v); }
void other(double *x) { *x = unused(*x) / 9; }
void k(double *x, double *y) { *x = INV(*y) + half(*x) + sqrt(*y) / 3; *y /= sqrt(*x); }`
	info, err := ParseKernel(src, "k")
	if err != nil {
		t.Fatal(err)
	}
	ops := CountOps(info)
	if ops.Divisions != 6 || ops.Calls["sqrt"] != 2 || ops.Calls["exp"] != 1 || ops.Calls["half"] != 0 || ops.Calls["INV"] != 0 ||
		ops.Calls["cbrt"] != 0 || ops.Calls["sin"] != 0 {
		t.Fatalf("Ops = %+v, want 6 divisions, sqrt twice, exp once, no half, INV, cbrt or sin", ops)
	}
	if again := CountOps(info); again.Divisions != ops.Divisions {
		t.Fatalf("Ops again = %+v", again)
	}
	// A helper's body that cannot be expanded: the whole source counts,
	// every macro's math calls too.
	info, err = ParseKernel(`#define A B
#define B A
#define U(v) sin(v)
static double h(double v) { return A + v; }
static double unused(double v) { return cbrt(v) / 5; }
void k(double *x) { *x = h(*x) / 2; }`, "k")
	if err != nil {
		t.Fatal(err)
	}
	if ops := CountOps(info); ops.Divisions != 2 || ops.Calls["cbrt"] != 1 || ops.Calls["sin"] != 1 {
		t.Fatalf("Ops = %+v with a helper that cannot be expanded, want the whole source's: 2 divisions, cbrt, sin", ops)
	}
}

// TestSkipped: with a compiler's predefined macros, the groups it skips
// are known, the source's own #define and #undef taking precedence, and
// groups on names it may or may not define (__GNUC__, a header's) are
// not skipped; a predefined macro's value is unknown. Without them
// (Predefined{}), nothing on a compiler's macros is skipped.
func TestSkipped(t *testing.T) {
	src := `#if !defined(__OPENCL_VERSION__) && !defined(__CUDACC__)
int hostA;
#define HOSTMACRO 1
#endif
#ifdef __OPENCL_VERSION__
int clB;
#else
int notclC;
#endif
#if __OPENCL_VERSION__ >= 200
int cl2D;
#endif
#ifndef __GNUC__
int gnuE;
#endif
#define __CUDACC__ 1
#ifdef __CUDACC__
int ownF;
#endif
#undef __OPENCL_VERSION__
#ifndef __OPENCL_VERSION__
int undefG;
#endif
#if 0
int neverH;
#endif
typedef struct { int x; } T1, *T2; struct S3 { int y; }; using T4 = int;
`
	m, err := ReadSource(src)
	if err != nil {
		t.Fatal(err)
	}
	ocl := Predefined{Defined: []string{"__OPENCL_VERSION__"}, Undefined: []string{"__CUDACC__"}}
	for _, c := range []struct {
		p    Predefined
		want string // the names declared on skipped lines, and the skipped #define
	}{
		{ocl, "hostA HOSTMACRO notclC neverH"},
		{Predefined{Defined: []string{"__CUDACC__"}, Undefined: []string{"__OPENCL_VERSION__"}}, "hostA HOSTMACRO clB cl2D neverH"},
		{Predefined{}, "neverH"},
	} {
		spans, err := m.Skipped(c.p)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, name := range strings.Fields("hostA HOSTMACRO clB notclC cl2D gnuE ownF undefG neverH") {
			if InSpans(spans, strings.Index(src, name)) {
				got = append(got, name)
			}
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%+v: skipped %q, want %q (spans %v)", c.p, got, c.want, spans)
		}
	}
	if got := strings.Join(m.DeclaredTypes, " "); got != "T1 T2 S3 T4" {
		t.Errorf("DeclaredTypes %q", got)
	}
	for i, name := range m.DeclaredTypes {
		if at := m.DeclaredAt[i]; src[at:at+len(name)] != name {
			t.Errorf("DeclaredAt[%d] = %d: %q, not %q", i, at, src[at:at+len(name)], name)
		}
	}
	for _, d := range m.MacroDefs {
		if !strings.HasPrefix(src[d.At:], "#define "+d.Name) {
			t.Errorf("MacroDef %s at %d: %q", d.Name, d.At, src[d.At:min(d.At+20, len(src))])
		}
	}
	if len(m.MacroDefs) != 2 {
		t.Errorf("MacroDefs %v, want HOSTMACRO and __CUDACC__", m.MacroDefs)
	}
}

// TestKernelOpsBranchesAndLoops: Ops counts the tokens that may make code
// conditional (|| a token of its own), in the kernel's body and the
// functions it calls, not in comments or literals; and of the calls (not
// for, return or sizeof), those in a for statement:
// its header or its body, a block, a statement or a nested for, but not
// what follows it.
func TestKernelOpsBranchesAndLoops(t *testing.T) {
	for _, c := range []struct {
		name, src      string
		branches, loop int
	}{
		{"none", `void k(double *x) { /* if ? && */ const char *s = "if || ?"; *x = exp(*x) + s[0]; }`, 0, 0},
		{"branches", `static double h(double v) { return v > 0 ? v : -v; }
void k(double *x) { if (*x > 1 && *x < 2) *x = h(*x); do { *x /= 2; } while (*x > 1 || *x < -1); }`, 6, 0},
		{"for block", `void k(double *x) { double s = 0; for (int i = 0; i < 3; i++) { s += exp(*x * i); } *x = exp(s); }`, 0, 1},
		{"for statement", `void k(double *x) { double s = 0; for (int i = 0; i < 3; i++) s += cbrt(*x * i); *x = cbrt(s) + exp(s); }`, 0, 1},
		{"nested for", `void k(double *x) { double s = 0; for (int i = 0; i < 3; i++) for (int j = 0; j < i; j++) s += pow(*x, i * j); *x = s; }`, 0, 1},
		{"for header", `void k(double *x) { double s = 0; for (int i = 0; i < (int)exp(*x); i++) s += i; *x = s; }`, 0, 1},
		{"keywords", `void k(double *x) { for (int i = 0; i < (int)sizeof(double); i++) *x += i; return (void)0; }`, 0, 0},
		{"in a helper", `static double h(double v) { double s = 0; for (int i = 0; i < 2; i++) s += sin(v * i); return s; }
void k(double *x) { *x = h(*x) + sin(*x); }`, 0, 1},
	} {
		info, err := ParseKernel(c.src, "k")
		if err != nil {
			t.Fatal(err)
		}
		ops := CountOps(info)
		loop := 0
		for _, n := range ops.LoopCalls {
			loop += n
		}
		if ops.Branches != c.branches || loop != c.loop {
			t.Errorf("%s: %d branches, %d calls in for statements (%v), want %d and %d", c.name, ops.Branches, loop, ops.LoopCalls, c.branches, c.loop)
		}
	}
}

// TestReadSourceCXXHeads: functions defined with noexcept, throw(...), a
// trailing return type or a macro the source defines between their
// parameter list and body, and those in a linkage-specification block,
// are definitions (their prototypes prototypes); a function-try-block
// is none, and its handlers are no functions.
func TestReadSourceCXXHeads(t *testing.T) {
	cases := []struct{ name, src, defs, protos string }{
		{"noexcept", "static double h(double v) noexcept;\nstatic double h(double v) noexcept { return v; }\nvoid k(double *x) noexcept(true) { *x = h(1); }", "h k", "h"},
		{"throw and trailing return", "static double h(double v) throw() { return v; }\nauto k(double *x) -> void { *x = h(1); }", "h k", ""},
		{"macro", "#define NOEXCEPT noexcept\nstatic double h(double v) NOEXCEPT { return v; }\nvoid k(double *x) NOEXCEPT { *x = h(1); }", "h k", ""},
		{"linkage blocks", "extern \"C\" {\nstatic double h(double v) { return v; }\n}\nextern \"C++\" { extern \"C\" { void k(double *x) { *x = h(1); } } }", "h k", ""},
		{"function-try-block", "static double h(double v) try { return v; } catch (int) { return 1; } catch (...) { return 0; }\nvoid k(double *x) { *x = h(1); }", "k", ""},
		{"a macro's invocation before a struct", "#define TAGGED(n) n\nTAGGED(a) struct s { int i; };\nvoid k(double *x) { *x = 1; }", "k", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u, err := ReadSource(c.src)
			if err != nil {
				t.Fatal(err)
			}
			if got := declNames(u.Defs); got != c.defs {
				t.Errorf("definitions %q, want %q", got, c.defs)
			}
			if got := declNames(u.Protos); got != c.protos {
				t.Errorf("prototypes %q, want %q", got, c.protos)
			}
			for _, f := range u.Defs {
				if u.Src[f.BodyOpen] != '{' || u.Src[f.BodyClose] != '}' || u.Src[f.ListEnd] != ')' {
					t.Errorf("%s: spans %d %d %d", f.Name, f.ListEnd, f.BodyOpen, f.BodyClose)
				}
			}
			if strings.Contains(c.src, "h(1)") && !slices.ContainsFunc(u.Calls, func(k Call) bool { return k.Name == "h" }) && u.Defined["h"] {
				t.Errorf("no call of h found")
			}
		})
	}
}

// TestRecursion: Recursion finds a function calling itself and two
// calling each other (one declared first); a chain of helpers, with a
// parameter named like a function, is no cycle, nor is a function passed
// as a value (no call of it spelt).
func TestRecursion(t *testing.T) {
	for _, c := range []struct {
		src  string
		want []string
	}{
		{"static int h(int k) { return k + 1; }\nstatic int g(int k) { return h(k) * 2; }\nvoid k(double *x) { *x = g(h(1)); }", nil},
		{"static int f(int k) { return k ? f(k - 1) : 0; }\nvoid k(double *x) { *x = f(3); }", []string{"f", "f"}},
		{"static int b(int);\nstatic int a(int k) { return k ? b(k - 1) : 0; }\nstatic int b(int k) { return a(k); }\nvoid k(double *x) { *x = a(3); }", []string{"a", "b", "a"}},
		{"static int apply(int (*f)(int), int v);\nstatic int sq(int v) { return apply(sq, v - 1); }\nstatic int apply(int (*f)(int), int v) { return v > 0 ? f(v) : 0; }\nvoid k(double *x) { *x = sq(2); }", nil},
		// Definitions in the branches of an #if are one function.
		{"#ifndef NOPE\nstatic int f(int k) { return k < 2 ? k : f(k - 1); }\n#else\nstatic int f(int k) { return k; }\n#endif\nvoid k(double *x) { *x = f(3); }", []string{"f", "f"}},
		// A call a macro makes, through another macro too.
		{"#define G(k) f(k)\n#define F(k) G(k)\nstatic int f(int k) { return k < 2 ? k : F(k - 1); }\nvoid k(double *x) { *x = f(3); }", []string{"f", "f"}},
		// A macro's parameter, a member, a comment or a string named
		// like a function is no call of it.
		{"#define APPLY(f, v) f(v)\nstatic double sq(double v) { return v * v; }\nstatic double f(double v) { return APPLY(sq, v) + 1; }\nvoid k(double *x) { *x = f(3); }", nil},
		{"#define SCALE 2.0 /* as in scale() */\nstatic double scale(double v) { return v * SCALE; }\nvoid k(double *x) { *x = scale(3); }", nil},
		{"struct cell { double area; };\n#define AREA(c) ((c).area)\nstatic double area(struct cell c) { return AREA(c) * 2; }\nvoid k(double *x) { struct cell c = {1}; *x = area(c); }", nil},
		{"#define NAME \"f\"\nstatic int f(int k) { return NAME[0] + k; }\nvoid k(double *x) { *x = f(3); }", nil},
	} {
		info, err := ParseKernel(c.src, "k")
		if err != nil {
			t.Fatal(err)
		}
		m, err := Model(info)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Recursion(nil); !slices.Equal(got, c.want) {
			t.Errorf("%q: Recursion() = %q, want %q", c.src, got, c.want)
		}
	}
}
