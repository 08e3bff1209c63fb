package device

import (
	"fmt"
	"github.com/goop2/op2/internal/clex"
	"regexp"
	"strings"
	"testing"
	"unsafe"

	"github.com/goop2/op2/internal/cfront"
	"github.com/goop2/op2/internal/core"
)

// These tests check the generated OpenCL source without a device.

// testLoop builds a loop over 8 edges with a map of arity 2 onto 4 nodes.
type testLoop struct {
	edges, nodes *core.Set
	m            *core.Map
}

func newTestLoop() *testLoop {
	edges := &core.Set{Name: "edges", Core: 8, Owned: 8, Exec: 8, Total: 8, ID: core.NewID()}
	nodes := &core.Set{Name: "nodes", Core: 4, Owned: 4, Exec: 4, Total: 4, ID: core.NewID()}
	tab := make([]int32, 16)
	for i := range tab {
		tab[i] = int32(i % 4)
	}
	return &testLoop{edges, nodes, &core.Map{Name: "m", From: edges, To: nodes, Arity: 2, Table: tab, ID: core.NewID()}}
}

func (tl *testLoop) dat(name string, dim int, on *core.Set) *core.Storage {
	return &core.Storage{Name: name, Type: core.Float64, Dim: dim, Set: on, Len: dim * on.Total, ID: core.NewID()}
}

func global(name string, dim int) *core.Storage {
	return &core.Storage{Name: name, Type: core.Float64, Dim: dim, Len: dim, ID: core.NewID()}
}

func newConst(name string, vals ...float64) *core.Const {
	c := &core.Const{Name: name, Type: core.Float64, Dim: len(vals), Host: unsafe.Pointer(&vals[0]), ID: core.NewID()}
	c.Version.Store(1)
	return c
}

func loop(t *testing.T, src, name string, set *core.Set, consts []*core.Const, args ...core.Arg) *core.Loop {
	t.Helper()
	info, err := cfront.ParseKernel(src, name)
	if err != nil {
		t.Fatal(err)
	}
	l := &core.Loop{Kernel: &core.Kernel{Name: name, Source: src, Info: info, ID: core.NewID()}, Set: set, Args: args, Consts: consts}
	l.Sig = core.Analyse(l)
	return l
}

// gen generates the loop's source for a device with localMem bytes of
// local memory.
func gen(t *testing.T, l *core.Loop, localMem int) (string, *Layout) {
	t.Helper()
	lay, err := Analyse(OpenCL, l, localMem)
	if err != nil {
		t.Fatal(err)
	}
	src, err := Generate(l, lay)
	if err != nil {
		t.Fatal(err)
	}
	return src, lay
}

// stub returns the generated code after the user's source and the #undefs.
func stub(src string) string {
	return src[strings.Index(src, "__kernel"):]
}

// shapes are loops of every kind the generator handles, for a device with
// 48 KiB of local memory (so that dim 1<<16 is not staged and dim 200 is
// staged but not copied into private memory).
func shapes(t *testing.T, src, name string, consts []*core.Const) map[string]*core.Loop {
	tl := newTestLoop()
	out := map[string]*core.Loop{}
	for _, dim := range []int{2, 200, 1 << 16} {
		x := tl.dat("x", dim, tl.nodes)
		res := tl.dat("res", dim, tl.nodes)
		vres := tl.dat("vres", dim, tl.nodes)
		q := tl.dat("q", dim, tl.edges)
		g := global("g", min(dim, 1024))
		gr := global("gr", min(dim, 1024))
		out[fmt.Sprintf("direct dim %d", dim)] = loop(t, src, name, tl.edges, consts,
			core.Arg{Data: q, Access: core.RW, Kind: core.ArgDirect},
			core.Arg{Data: q, Access: core.Read, Kind: core.ArgDirect},
			core.Arg{Data: g, Access: core.Read, Kind: core.ArgGlobal},
			core.Arg{Data: gr, Access: core.Max, Kind: core.ArgGlobal})
		out[fmt.Sprintf("indirect dim %d", dim)] = loop(t, src, name, tl.edges, consts,
			core.Arg{Data: x, Map: tl.m, Idx: 0, Access: core.Read, Kind: core.ArgIndirect},
			core.Arg{Data: res, Map: tl.m, Idx: 1, Access: core.Inc, Kind: core.ArgIndirect},
			core.Arg{Data: x, Map: tl.m, Idx: -1, Access: core.Read, Kind: core.ArgVector},
			core.Arg{Data: vres, Map: tl.m, Idx: -1, Access: core.Inc, Kind: core.ArgVector},
			core.Arg{Data: q, Access: core.Write, Kind: core.ArgDirect},
			core.Arg{Data: gr, Access: core.Inc, Kind: core.ArgGlobal})
		out[fmt.Sprintf("indirect RW dim %d", dim)] = loop(t, src, name, tl.edges, consts,
			core.Arg{Data: x, Map: tl.m, Idx: 0, Access: core.RW, Kind: core.ArgIndirect},
			core.Arg{Data: vres, Map: tl.m, Idx: -1, Access: core.Write, Kind: core.ArgVector},
			core.Arg{Data: g, Access: core.Read, Kind: core.ArgGlobal})
	}
	return out
}

// shapeSrc's kernel passes every argument on to a helper.
const shapeSrc = "static void h(const double *p) { }\n" +
	"void k(double *a, double *b, double *c, double *d, double *e, double *f) { h(a); h(b); h(c); h(d); h(e); h(f); }"

// openCLWords are the identifiers of OpenCL C the stub may use.
var openCLWords = map[string]bool{
	"__kernel": true, "__attribute__": true, "reqd_work_group_size": true, "void": true, "int": true,
	"const": true, "__global": true, "__local": true, "__constant": true, "restrict": true, "char": true,
	"double": true, "size_t": true, "sizeof": true, "for": true, "if": true, "break": true, "barrier": true,
	"CLK_LOCAL_MEM_FENCE": true, "CLK_GLOBAL_MEM_FENCE": true, "get_local_id": true,
	"get_group_id": true, "get_global_id": true, "get_global_size": true,
}

// TestGeneratedNamesReserved: every identifier the generated code
// introduces, in the stub and in the adapted user source, starts with
// op2_ (or is OpenCL C's own).
func TestGeneratedNamesReserved(t *testing.T) {
	src := "#define n 3\nstatic double first(const double *v) { return v[0] * eps; }\n" +
		"void k(double *a, double *b, double *c, double *d, double *e, double *f) { a[0] = first(b) + n; }"
	user := map[string]bool{}
	for _, id := range clex.Identifiers(src) {
		user[id] = true
	}
	for name, l := range shapes(t, src, "k", []*core.Const{newConst("eps", 1)}) {
		l.Args = l.Args[:min(len(l.Args), 6)]
		s, _ := gen(t, l, 48*1024)
		for _, id := range identRE.FindAllString(stub(s), -1) {
			if !strings.HasPrefix(id, "op2_") && !openCLWords[id] {
				t.Errorf("%s: the stub uses %q", name, id)
			}
		}
		body := s[strings.Index(s, "/* user kernel"):strings.Index(s, "/* end of user kernel")]
		body = clex.Blank(body, true, nil)
		for _, id := range identRE.FindAllString(body, -1) {
			if !strings.HasPrefix(id, "op2_") && !openCLWords[id] && !user[id] && id != "long" {
				t.Errorf("%s: the adapted user source introduces %q", name, id)
			}
		}
	}
}

// TestUserMacrosUndefined: every macro of the user source is undefined
// between the user source and the stub.
func TestUserMacrosUndefined(t *testing.T) {
	src := "#define k 1\n  #  define FOO(x) (x)\n#define BAR \\\n  2\n/* #define NOT_A_MACRO */\n#undef k\n#define k 2\n" +
		"void kern(double *a) { a[0] = FOO(BAR) + k; }"
	tl := newTestLoop()
	l := loop(t, src, "kern", tl.edges, nil, core.Arg{Data: tl.dat("q", 1, tl.edges), Access: core.Write, Kind: core.ArgDirect})
	s, _ := gen(t, l, 48*1024)
	between := s[strings.Index(s, "/* end of user kernel */"):strings.Index(s, "__kernel")]
	if got, want := strings.Count(between, "#undef"), 3; got != want {
		t.Errorf("%d #undef directives, want %d:\n%s", got, want, between)
	}
	for _, m := range []string{"k", "FOO", "BAR"} {
		if !strings.Contains(between, "#undef "+m+"\n") {
			t.Errorf("no #undef %s:\n%s", m, between)
		}
	}
}

// TestStandardIncludesDropped: #include directives of the headers OpenCL C
// provides are removed, keeping the source's lines; others stay.
func TestStandardIncludesDropped(t *testing.T) {
	tl := newTestLoop()
	for _, h := range []string{"math.h", "stdio.h", "stdint.h", "stdlib.h", "string.h", "stdbool.h", "float.h", "limits.h"} {
		for _, form := range []string{"#include <%s>", "#include \"%s\"", "  #  include<%s> // why"} {
			inc := fmt.Sprintf(form, h)
			src := inc + "\n#include \"mine.h\"\nvoid kern(double *a) {\n  a[0] = 1;\n}"
			l := loop(t, src, "kern", tl.edges, nil, core.Arg{Data: tl.dat("q", 1, tl.edges), Access: core.Write, Kind: core.ArgDirect})
			s, _ := gen(t, l, 48*1024)
			user := s[strings.Index(s, "/* user kernel"):strings.Index(s, "/* end of user kernel")]
			if strings.Contains(user, h) {
				t.Errorf("%s: still there:\n%s", inc, user)
			}
			if !strings.Contains(user, `#include "mine.h"`) {
				t.Errorf("%s: an include of the user's own header was dropped:\n%s", inc, user)
			}
			if strings.Contains(inc, "//") && !strings.Contains(user, "// why") {
				t.Errorf("%s: the comment after the directive was dropped", inc)
			}
			if got, want := strings.Count(user, "\n"), strings.Count(src, "\n")+2; got != want {
				t.Errorf("%s: %d lines, want %d:\n%s", inc, got, want, user)
			}
		}
	}
}

// TestFunctionsRenamedAndConstantsPassed: every function of the source is
// renamed in definitions, prototypes and calls (macros included), and with
// constants gets the hidden parameter; constant locals skip functions
// whose parameter shadows the constant.
func TestFunctionsRenamedAndConstantsPassed(t *testing.T) {
	src := `double dot(const double *a);
static void none(void);
#define TWICE(v) (dot(v) * 2)
static void none(void) { }
double dot(const double *a) { none(); return a[0] * eps; }
static double shade(double eps) { return eps; }
void kern(double *a) { a[0] = TWICE(a) + dot( a ) + shade(1); }`
	tl := newTestLoop()
	args := []core.Arg{{Data: tl.dat("q", 1, tl.edges), Access: core.Write, Kind: core.ArgDirect}}
	for _, withConst := range []bool{false, true} {
		var consts []*core.Const
		if withConst {
			consts = []*core.Const{newConst("eps", 2)}
		}
		s, _ := gen(t, loop(t, src, "kern", tl.edges, consts, args...), 48*1024)
		user := s[strings.Index(s, "/* user kernel"):strings.Index(s, "/* end of user kernel")]
		want := []string{"double op2_f_dot(const double *a);", "static void op2_f_none(void);", "(op2_f_dot(v) * 2)",
			"static void op2_f_none(void) {", "op2_f_none();", "op2_f_dot( a )", "static double op2_f_shade(double eps) {",
			"void op2_f_kern(double *a) {", "op2_f_kern(op2_p0);"}
		if withConst {
			want = []string{"double op2_f_dot(__constant char *op2_consts, const double *a);",
				"static void op2_f_none(__constant char *op2_consts);", "(op2_f_dot(op2_consts, v) * 2)",
				"double op2_f_dot(__constant char *op2_consts, const double *a) { const double eps = *(__constant double *)(op2_consts + 0); (void)eps; {",
				"op2_f_none(op2_consts);", "op2_f_dot(op2_consts,  a )",
				"static double op2_f_shade(__constant char *op2_consts, double eps) { {",
				"void op2_f_kern(__constant char *op2_consts, double *a) { {",
				"op2_f_kern(op2_consts, op2_p0);"}
		} else if strings.Contains(s, "op2_consts") {
			t.Errorf("op2_consts without constants:\n%s", s)
		}
		for _, w := range want {
			if !strings.Contains(s, w) {
				t.Errorf("constants %v: no %q in\n%s", withConst, w, user)
			}
		}
	}
}

// TestArgumentPassing: small arguments reach the kernel as private
// copies (unqualified parameters); larger ones as qualified pointers into
// local or global memory; datasets too large to stage are not staged.
// READ arguments' parameters are const.
func TestArgumentPassing(t *testing.T) {
	cases := []struct {
		shape     string
		localMem  int
		params    string
		unstaged  bool
		noStaging bool
	}{
		{"indirect dim 2", 48 << 10, "void op2_f_k(const double *a, double *b, const double *c, double *d, double *e, double *f)", false, false},
		{"indirect dim 200", 1 << 20, "void op2_f_k(__local const double *a, __local double *b, __local const double *c, __local double *d, __global double *e, double *f)", false, false},
		{"indirect dim 200", 48 << 10, "void op2_f_k(__global const double *a, __global double *b, __global const double *c, __global double *d, __global double *e, double *f)", true, true},
		{"indirect dim 65536", 1 << 20, "void op2_f_k(__global const double *a, __global double *b, __global const double *c, __global double *d, __global double *e, double *f)", true, true},
		{"indirect RW dim 65536", 1 << 20, "void op2_f_k(__global double *a, __global double *b, __global const double *c, double *d, double *e, double *f)", true, true},
		{"direct dim 200", 48 << 10, "void op2_f_k(__global double *a, __global const double *b, __global const double *c, double *d, double *e, double *f)", false, true},
		// Arguments the kernel does not pass on need no private copy.
		{"indirect dim 2", 48 << 10, "void op2_f_k(__local const double *a, double *b, __local const double *c, double *d, __global double *e, double *f) { a[0] = *b + c[0][1] * **d; e[1] = (*f) * 2; }", false, false},
		{"direct dim 2", 48 << 10, "void op2_f_k(__global double *a, __global const double *b, __global const double *c, double *d, double *e, double *f) { a[0] = *b + c[0] * *d; }", false, true},
	}
	all := shapes(t, shapeSrc, "k", nil)
	local := shapes(t, "void k(double *a, double *b, double *c, double *d, double *e, double *f) { a[0] = *b + c[0][1] * **d; e[1] = (*f) * 2; }", "k", nil)
	direct := shapes(t, "void k(double *a, double *b, double *c, double *d, double *e, double *f) { a[0] = *b + c[0] * *d; }", "k", nil)
	for n, c := range cases {
		l := all[c.shape]
		switch {
		case n == len(cases)-2:
			l = local[c.shape]
		case n == len(cases)-1:
			l = direct[c.shape]
		}
		s, lay := gen(t, l, c.localMem)
		if !strings.Contains(s, c.params) {
			t.Errorf("%s: no %q in\n%s", c.shape, c.params, s)
		}
		for d := range lay.DSGlobal {
			if lay.DSGlobal[d] != c.unstaged {
				t.Errorf("%s: dataset %d unstaged = %v", c.shape, d, lay.DSGlobal[d])
			}
		}
		if strings.Contains(s, "op2_s0") == c.noStaging {
			t.Errorf("%s: staging = %v, want %v", c.shape, !c.noStaging, c.noStaging)
		}
	}
}

var identRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// TestOpenCLNamedConstRefused: a constant named like an OpenCL C keyword,
// type or built-in (made without NewConst's check) is refused when the
// device code is generated, with an error naming it.
func TestOpenCLNamedConstRefused(t *testing.T) {
	tl := newTestLoop()
	args := []core.Arg{{Data: tl.dat("q", 1, tl.edges), Access: core.Write, Kind: core.ArgDirect}}
	for _, name := range []string{"global", "local", "constant", "kernel", "half", "float4", "image2d_t", "get_global_id"} {
		l := loop(t, "void k(double *a) { a[0] = "+name+"; }", "k", tl.edges, []*core.Const{newConst(name, 1)}, args...)
		_, err := Analyse(OpenCL, l, 48*1024)
		if err == nil || !strings.Contains(err.Error(), `const "`+name+`"`) || !strings.Contains(err.Error(), "OpenCL") {
			t.Errorf("const %q: error %v, want one naming the constant and OpenCL", name, err)
		}
	}
}

// TestStandardAttributesDropped: [[...]] attributes, which OpenCL C does
// not accept, are removed from the user's source, also where the
// generator adds the hidden constants parameter; GNU attributes stay.
func TestStandardAttributesDropped(t *testing.T) {
	src := `[[gnu::pure]] static double g([[maybe_unused]] double v) { return v * eps; }
[[gnu::hot]] __attribute__((noinline)) void kern([[maybe_unused]] double *a) { a[0] = g(a[0]); }`
	tl := newTestLoop()
	args := []core.Arg{{Data: tl.dat("q", 1, tl.edges), Access: core.Write, Kind: core.ArgDirect}}
	s, _ := gen(t, loop(t, src, "kern", tl.edges, []*core.Const{newConst("eps", 2)}, args...), 48*1024)
	user := s[strings.Index(s, "/* user kernel"):strings.Index(s, "/* end of user kernel")]
	if strings.Contains(user, "[[") {
		t.Errorf("[[ left in\n%s", user)
	}
	for _, w := range []string{"static double op2_f_g(__constant char *op2_consts, ", " double v) {", "__attribute__((noinline)) void op2_f_kern("} {
		if !strings.Contains(user, w) {
			t.Errorf("no %q in\n%s", w, user)
		}
	}
}

// TestMatrixArgument: a matrix argument's element matrix is a private
// array zeroed for every element, passed to the kernel, and added at the
// element's block offsets (skipping -1) in a thread colour in the staged
// scheme, atomically in the atomics scheme; WRITE stores in a colour, in
// both schemes. The matrix is never staged.
func TestMatrixArgument(t *testing.T) {
	tl := newTestLoop()
	vals := &core.Storage{Name: "A", Type: core.Float64, Dim: 1, Len: 64, ID: core.NewID(), Matrix: `mat "A"`}
	off := make([]int32, 8*2*2)
	src := "void k(double *A) { A[0] = 1; }"
	for _, tc := range []struct {
		acc    core.Access
		scheme Scheme
		store  string
		atomic bool
	}{
		{core.Inc, Staged, "op2_d0[(size_t)op2_mo * 6 + op2_ma * 3 + op2_mb] += op2_p0[(op2_mr * 2 + op2_ma) * 6 + op2_mc * 3 + op2_mb];", false},
		{core.Inc, Atomics, "op2_atomic_add_double(&op2_d0[(size_t)op2_mo * 6 + op2_ma * 3 + op2_mb], op2_p0[(op2_mr * 2 + op2_ma) * 6 + op2_mc * 3 + op2_mb]);", true},
		{core.Write, Atomics, "op2_d0[(size_t)op2_mo * 6 + op2_ma * 3 + op2_mb] = op2_p0[(op2_mr * 2 + op2_ma) * 6 + op2_mc * 3 + op2_mb];", false},
	} {
		t.Run(fmt.Sprintf("%v/%v", tc.acc, tc.scheme), func(t *testing.T) {
			a := core.Arg{Data: vals, Map: tl.m, Idx: -1, Access: tc.acc, Kind: core.ArgMat,
				Mat: &core.MatArg{Col: tl.m, RDim: 2, CDim: 3, Offsets: off, OffsetData: core.NewIndexStorage("offsets", off)}}
			l := loop(t, src, "k", tl.edges, nil, a)
			lay, err := AnalyseScheme(OpenCL, l, 48*1024, tc.scheme)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Generate(l, lay)
			if err != nil {
				t.Fatal(err)
			}
			st := stub(s)
			for _, want := range []string{
				"__global const int *restrict op2_moff0,",
				"double op2_p0[24];",
				"for (int op2_k = 0; op2_k < 24; op2_k++) op2_p0[op2_k] = 0;",
				"op2_f_k(op2_p0);",
				"const int op2_mo = op2_moff0[((size_t)op2_e * 2 + op2_mr) * 2 + op2_mc];",
				"if (op2_mo >= 0)",
				tc.store,
			} {
				if !strings.Contains(st, want) {
					t.Errorf("no %q in\n%s", want, st)
				}
			}
			coloured := strings.Contains(st, "op2_col = op2_thrcol[op2_e]")
			if lay.Atomic != tc.atomic || coloured == tc.atomic {
				t.Errorf("atomic layout %v, thread colours used %v; want atomic %v", lay.Atomic, coloured, tc.atomic)
			}
			if strings.Contains(st, "op2_s0") || strings.Contains(st, "op2_map0") {
				t.Errorf("the matrix is staged or its dataset's map declared:\n%s", st)
			}
		})
	}
	// An element matrix larger than a work item keeps is refused.
	big := &core.Map{Name: "big", From: tl.edges, To: tl.nodes, Arity: 40, Table: make([]int32, 8*40), ID: core.NewID()}
	l := loop(t, src, "k", tl.edges, nil, core.Arg{Data: vals, Map: big, Idx: -1, Access: core.Inc, Kind: core.ArgMat,
		Mat: &core.MatArg{Col: big, RDim: 1, CDim: 1}})
	if _, err := Analyse(OpenCL, l, 48*1024); err == nil || !strings.Contains(err.Error(), "40×40") {
		t.Errorf("a 40×40 element matrix: %v", err)
	}
	// Two 24×24 (4608 bytes each) are refused together; one 32×32
	// (8192 bytes) fits a work item but not a work group of 512.
	m24 := &core.Map{Name: "m24", From: tl.edges, To: tl.nodes, Arity: 24, Table: make([]int32, 8*24), ID: core.NewID()}
	arg24 := core.Arg{Data: vals, Map: m24, Idx: -1, Access: core.Inc, Kind: core.ArgMat, Mat: &core.MatArg{Col: m24, RDim: 1, CDim: 1}}
	two := loop(t, "void k(double *A, double *B) { A[0] = B[0] = 1; }", "k", tl.edges, nil, arg24, arg24)
	if _, err := Analyse(OpenCL, two, 48*1024); err == nil || !strings.Contains(err.Error(), "9216 bytes") {
		t.Errorf("two 24×24 element matrices: %v", err)
	}
	m32 := &core.Map{Name: "m32", From: tl.edges, To: tl.nodes, Arity: 32, Table: make([]int32, 8*32), ID: core.NewID()}
	one := loop(t, src, "k", tl.edges, nil, core.Arg{Data: vals, Map: m32, Idx: -1, Access: core.Inc, Kind: core.ArgMat, Mat: &core.MatArg{Col: m32, RDim: 1, CDim: 1}})
	for _, tc := range []struct {
		wg   int
		want string
	}{{256, ""}, {512, "use a device work-group size of at most 256"}} {
		_, err := AnalyseWith(CUDA, one, 48*1024, Options{WorkGroupSize: tc.wg})
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("a 32×32 element matrix, work groups of %d: %v", tc.wg, err)
		}
	}
}

// TestPrivateArraysRefused: on opencl, a loop whose work items keep
// privately more than a work group may (reductions' accumulators, one
// per Global; a vector argument's entry pointers) is refused, saying
// which work-group size fits or that none does: PoCL overflowed its
// thread's stack (SIGSEGV) with a Global of dim 1024 in work groups of
// 1024, 16 of them in the default 64, or a vector argument of arity 8192
// in 128. CUDA keeps them in each thread's local memory: not refused.
func TestPrivateArraysRefused(t *testing.T) {
	tl := newTestLoop()
	one := loop(t, "void k(double *g) { g[0] += 1; }", "k", tl.edges, nil,
		core.Arg{Data: global("g", 1024), Access: core.Inc, Kind: core.ArgGlobal})
	var args []core.Arg
	for i := range 16 {
		args = append(args, core.Arg{Data: global(fmt.Sprintf("g%d", i), 1024), Access: core.Inc, Kind: core.ArgGlobal})
	}
	params := make([]string, 16)
	for i := range params {
		params[i] = fmt.Sprintf("double *g%d", i)
	}
	many := loop(t, "void k("+strings.Join(params, ", ")+") { g0[0] += 1; }", "k", tl.edges, nil, args...)
	wide := &core.Map{Name: "wide", From: tl.edges, To: tl.nodes, Arity: 8192, Table: make([]int32, 8*8192), ID: core.NewID()}
	vec := loop(t, "void k(const double **x, double *g) { g[0] += x[0][0]; }", "k", tl.edges, nil,
		core.Arg{Data: tl.dat("x", 1, tl.nodes), Map: wide, Idx: -1, Access: core.Read, Kind: core.ArgVector},
		core.Arg{Data: global("g", 1), Access: core.Inc, Kind: core.ArgGlobal})
	for _, tc := range []struct {
		l    *core.Loop
		wg   int
		want string
	}{
		{one, 512, ""},
		{one, 1024, "use a device work-group size of at most 512"},
		{many, 0, "use a device work-group size of at most 32"},
		{vec, 64, ""},
		{vec, 128, "use a device work-group size of at most 64"},
	} {
		_, err := AnalyseWith(OpenCL, tc.l, 48*1024, Options{WorkGroupSize: tc.wg})
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "may keep privately")) {
			t.Errorf("opencl, %d arguments, work groups of %d: %v", len(tc.l.Args), tc.wg, err)
		}
		if _, err := AnalyseWith(CUDA, tc.l, 48*1024, Options{WorkGroupSize: tc.wg}); err != nil {
			t.Errorf("cuda, %d arguments, work groups of %d: %v", len(tc.l.Args), tc.wg, err)
		}
	}
}
