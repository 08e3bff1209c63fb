package device

import (
	"regexp"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/clex"
	"github.com/goop2/op2/internal/core"
)

// userPart returns the user's source as the generated code has it, and
// the rest of the code after it (the #undefs and the stub).
func userPart(t *testing.T, src string) (user, after string) {
	t.Helper()
	start := strings.Index(src, "/* user kernel ")
	end := strings.Index(src, "/* end of user kernel */")
	if start < 0 || end < start {
		t.Fatalf("no user kernel in\n%s", src)
	}
	return src[start:end], src[end:]
}

// bareName matches name as an identifier that is not a member (after '.'
// or "->").
func bareName(name string) *regexp.Regexp {
	return regexp.MustCompile(`(^|[^.>_A-Za-z0-9])` + name + `\b`)
}

// TestBuiltinNamesRenamed: the names a kernel source declares that the
// device language has built in (MG-CFD's double3 as a typedef or a struct
// tag, a macro named float4, CUDA's dim3, OpenCL's uint) are renamed in
// the device code, with every use (in helpers' parameter lists, in the
// bodies, in macros, in the #undef after the source), and the loop is not
// refused; members, comments and string literals keep the name, and so
// does a source that uses the built-in type without declaring it, and a
// dialect that does not have the name built in. Functions named like
// built-in functions (dot) get the prefix of every function of the source.
func TestBuiltinNamesRenamed(t *testing.T) {
	tl := newTestLoop()
	q := tl.dat("q", 3, tl.edges)
	n := &core.Storage{Name: "n", Type: core.Uint32, Dim: 1, Set: tl.edges, Len: tl.edges.Total, ID: core.NewID()}
	qArg := []core.Arg{{Data: q, Access: core.RW, Kind: core.ArgDirect}}
	for _, tc := range []struct {
		name     string
		src      string
		args     []core.Arg
		dialects []*Dialect
		want     []string // in the user's source as generated
		bare     []string // names left as they were, outside comments and literals
		gone     []string // names renamed everywhere outside comments, literals and members
		after    []string // after the user's source
	}{
		{
			name: "typedef struct double3 and a helper named dot",
			src: `typedef struct { double x, y, z; } double3;
#define NAME "double3" /* double3 */
static double dot(double3 a, double3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static double3 mk(const double *q) { double3 v = {q[0], q[1], q[2]}; return v; }
void k(double *q) { double3 v = mk(q); q[0] = eps * dot(v, v); }`,
			args:     qArg,
			dialects: []*Dialect{OpenCL, CUDA},
			want: []string{"typedef struct { double x, y, z; } op2_u_double3;", `#define NAME "double3" /* double3 */`,
				"char *op2_consts, op2_u_double3 a, op2_u_double3 b)", "a.x * b.x + a.y * b.y + a.z * b.z",
				"static op2_u_double3 op2_f_mk(", "op2_u_double3 v = {q[0], q[1], q[2]};", "op2_u_double3 v = op2_f_mk(op2_consts, q);",
				"op2_f_dot(op2_consts, v, v)"},
			gone: []string{"double3", "dot"},
		},
		{
			name: "struct double3 used as struct double3",
			src: `struct double3 { double x, y, z; };
static void scale(struct double3 *v, double s) { v->x *= s; v->y *= s; v->z *= s; }
void k(double *q) { struct double3 v = {q[0], q[1], q[2]}; scale(&v, 2); q[0] = v.x + v.y + v.z; }`,
			args:     qArg,
			dialects: []*Dialect{OpenCL, CUDA},
			want:     []string{"struct op2_u_double3 { double x, y, z; };", "struct op2_u_double3 *v, double s)", "v->x *= s;", "struct op2_u_double3 v ="},
			gone:     []string{"double3"},
		},
		{
			name:     "a macro named float4",
			src:      "#define float4 double\n#define TWICE(a) ((float4)2 * (a))\nvoid k(double *q) { float4 a = q[0]; q[0] = TWICE(a); }",
			args:     qArg,
			dialects: []*Dialect{OpenCL, CUDA},
			want:     []string{"#define op2_u_float4 double", "((op2_u_float4)2 * (a))", "op2_u_float4 a = q[0];"},
			gone:     []string{"float4"},
			after:    []string{"#undef op2_u_float4", "#undef TWICE"},
		},
		{
			name:     "CUDA's dim3, not built into OpenCL C",
			src:      "typedef struct { int a; } dim3;\nvoid k(double *q) { dim3 d = {2}; q[0] *= d.a; }",
			args:     qArg,
			dialects: []*Dialect{CUDA},
			want:     []string{"} op2_u_dim3;", "op2_u_dim3 d = {2};"},
			gone:     []string{"dim3"},
		},
		{
			name:     "dim3 on OpenCL",
			src:      "typedef struct { int a; } dim3;\nvoid k(double *q) { dim3 d = {2}; q[0] *= d.a; }",
			args:     qArg,
			dialects: []*Dialect{OpenCL},
			bare:     []string{"dim3"},
		},
		{
			// The kernel's parameter list is written anew: no rename
			// edit may fall in it.
			name:     "typedef uint, in the kernel's parameter list too",
			src:      "typedef unsigned int uint;\nvoid k(uint *n) { uint m = *n; *n = m + 1u; }",
			args:     []core.Arg{{Data: n, Access: core.RW, Kind: core.ArgDirect}},
			dialects: []*Dialect{OpenCL},
			want:     []string{"typedef unsigned int op2_u_uint;", "op2_u_uint m = *n;"},
			gone:     []string{"uint"},
		},
		{
			name:     "uint on CUDA",
			src:      "typedef unsigned int uint;\nvoid k(uint *n) { uint m = *n; *n = m + 1u; }",
			args:     []core.Arg{{Data: n, Access: core.RW, Kind: core.ArgDirect}},
			dialects: []*Dialect{CUDA},
			bare:     []string{"uint"},
		},
		{
			name:     "OpenCL's double3 used, not declared",
			src:      "typedef double3 vec;\nvoid k(double *q) { double3 v = (double3)(q[0], q[1], q[2]); vec w = v; q[0] = w.x + v.y; }",
			args:     qArg,
			dialects: []*Dialect{OpenCL},
			want:     []string{"typedef double3 vec;", "double3 v = (double3)(q[0], q[1], q[2]);"},
		},
		{
			name:     "CUDA's double3 used, not declared",
			src:      "void k(double *q) { struct double3 v = make_double3(q[0], q[1], q[2]); q[0] = v.x + v.y; }",
			args:     qArg,
			dialects: []*Dialect{CUDA},
			want:     []string{"struct double3 v = make_double3(q[0], q[1], q[2]);"},
		},
		{
			// OpenCL C reserves these words where C has none: every
			// use is the source's own, members included.
			name: "variables, parameters and members named like OpenCL keywords",
			src: `typedef struct { double local; } box;
static double twice(double global) { return 2 * global; }
void k(double *q) { double half = 0.5 * q[0]; int uchar = 3, constant = 1; box b = {half}; box *pb = &b;
	q[0] = twice(b.local) + pb->local * uchar + constant; }`,
			args:     qArg,
			dialects: []*Dialect{OpenCL},
			want: []string{"double op2_u_local; } box;", "double op2_u_global)", "return 2 * op2_u_global;",
				"double op2_u_half = 0.5 * q[0]; int op2_u_uchar = 3, op2_u_constant = 1;", "b.op2_u_local) + pb->op2_u_local * op2_u_uchar"},
			gone: []string{"half", "global", "local", "uchar", "constant"},
		},
		{
			// MG-CFD's structures.h: the device compilers have their
			// own double3, which the kernels use there.
			name: "double3 declared for host compilers only",
			src: `#if !defined(__OPENCL_VERSION__) && !defined(__CUDACC__)
typedef struct { double x, y, z; } double3;
#endif
void k(double *q) { double3 v = {q[0], q[1], q[2]}; q[0] = v.x + v.y + v.z; }`,
			args:     qArg,
			dialects: []*Dialect{OpenCL, CUDA},
			want:     []string{"#if !defined(__OPENCL_VERSION__) && !defined(__CUDACC__)\ntypedef struct { double x, y, z; } double3;\n#endif", "double3 v = {q[0], q[1], q[2]};"},
			bare:     []string{"double3"},
		},
		{
			name: "double3 declared but for CUDA, on OpenCL",
			src: `#ifndef __CUDACC__
typedef struct { double x, y, z; } double3;
#endif
void k(double *q) { double3 v = {q[0], q[1], q[2]}; q[0] = v.x + v.y + v.z; }`,
			args:     qArg,
			dialects: []*Dialect{OpenCL},
			want:     []string{"typedef struct { double x, y, z; } op2_u_double3;", "op2_u_double3 v = {"},
			gone:     []string{"double3"},
		},
		{
			name: "double3 declared but for CUDA, on CUDA",
			src: `#ifndef __CUDACC__
typedef struct { double x, y, z; } double3;
#endif
void k(double *q) { double3 v = {q[0], q[1], q[2]}; q[0] = v.x + v.y + v.z; }`,
			args:     qArg,
			dialects: []*Dialect{CUDA},
			bare:     []string{"double3"},
		},
		{
			// The device branch uses the built-in; the host branch
			// declares it, and a macro, for hosts.
			name: "an #else for host compilers",
			src: `#if defined(__OPENCL_VERSION__) || defined(__CUDACC__)
#define ONE 1.0
#elif __STDC_VERSION__ >= 199901L
typedef struct { double x, y, z; } double3;
#define float4 double
#define ONE 1.0
#else
#error C99 needed
#endif
void k(double *q) { double3 v = {q[0], q[1], q[2]}; q[0] = ONE * (v.x + v.y + v.z); }`,
			args:     qArg,
			dialects: []*Dialect{OpenCL, CUDA},
			want:     []string{"typedef struct { double x, y, z; } double3;", "#define float4 double"},
			bare:     []string{"double3", "float4"},
		},
		{
			// Whether a host compiler's macro is defined on the device
			// is not known: declared, as far as GoOP2 can tell.
			name: "a condition GoOP2 cannot decide",
			src: `#ifndef __GNUC__
typedef struct { double x, y, z; } double3;
#endif
void k(double *q) { double3 v = {q[0], q[1], q[2]}; q[0] = v.x + v.y + v.z; }`,
			args:     qArg,
			dialects: []*Dialect{OpenCL, CUDA},
			want:     []string{"typedef struct { double x, y, z; } op2_u_double3;"},
			gone:     []string{"double3"},
		},
		{
			name:     "a member named like a built-in type",
			src:      "typedef struct { double float2; } pair;\nvoid k(double *q) { pair p = {q[0]}; pair *pp = &p; q[0] = p.float2 + pp->float2; }",
			args:     qArg,
			dialects: []*Dialect{OpenCL, CUDA},
			want:     []string{"double float2; } pair;", "p.float2 + pp->float2"},
		},
	} {
		for _, d := range tc.dialects {
			t.Run(tc.name+" on "+d.Name, func(t *testing.T) {
				l := loop(t, tc.src, "k", tl.edges, []*core.Const{newConst("eps", 0.5)}, tc.args...)
				lay, err := Analyse(d, l, 48*1024)
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				src, err := Generate(l, lay)
				if err != nil {
					t.Fatal(err)
				}
				user, after := userPart(t, src)
				for _, w := range tc.want {
					if !strings.Contains(user, w) {
						t.Errorf("no %q in the user's source as generated:\n%s", w, user)
					}
				}
				code := clex.Blank(user, true, nil)
				for _, name := range tc.bare {
					if bareName(name).FindStringIndex(code) == nil || strings.Contains(src, builtinRename(name)) {
						t.Errorf("%s renamed:\n%s", name, user)
					}
				}
				for _, name := range tc.gone {
					if bareName(name).FindStringIndex(code+after) != nil {
						t.Errorf("%s left in the code:\n%s", name, code+after)
					}
				}
				for _, w := range tc.after {
					if !strings.Contains(after, w) {
						t.Errorf("no %q after the user's source:\n%s", w, after)
					}
				}
			})
		}
	}
}

// TestTypedefNames: the names a typedef declares, not the types it uses.
func TestTypedefNames(t *testing.T) {
	for _, tc := range []struct{ decl, want string }{
		{"typedef struct { double x, y, z; } double3;", "double3"},
		{"typedef struct double3 { double x; } double3, *double3p;", "double3 double3p"},
		{"typedef double3 vec;", "vec"},
		{"typedef double int2[2];", "int2"},
		{"typedef void (*float4)(double3 a, int b);", "float4"},
		{"typedef union { int i; float f; } bits;", "bits"},
	} {
		u, err := scanSource(tc.decl)
		if err != nil {
			t.Fatal(err)
		}
		if err := u.renameBuiltins(&Dialect{Builtin: func(string) bool { return true }}); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, name := range strings.Fields("double3 double3p vec int2 float4 a b bits i f x") {
			if u.renamed[name] {
				got = append(got, name)
			}
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: %q declared, want %q", tc.decl, got, tc.want)
		}
	}
}
