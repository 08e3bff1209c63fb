package op2_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/goop2/op2"
)

// TestKernelWritingReadArgumentRefused: a kernel that writes to a READ
// argument does not compile on any backend, whatever the kind of the
// argument (a Dat through a map or the whole map, a Global, an index),
// and whether it writes through the parameter, passes it to a helper that
// takes a pointer to modifiable values or copies it into such a pointer:
// the parameters of READ arguments are const in the generated code, and
// discarding const is an error. The error (a *CompileError, or a
// *DeviceBuildError on opencl) names the kernel, the parameter and its
// READ argument, and no data changes. Before, the write reached the host
// copy on the host backends and only the device copy on opencl, leaving
// the copies silently different.
func TestKernelWritingReadArgumentRefused(t *testing.T) {
	nodes := must(op2.NewSet(5, "nodes"))
	edges := must(op2.NewSet(4, "edges"))
	pedge := must(op2.NewMap(edges, nodes, 2, []int32{0, 1, 1, 2, 2, 3, 3, 4}, "pedge"))
	cases := []struct {
		name, kernel, src string
		args              func(x, y *op2.Dat[float64], g *op2.Global[float64]) []op2.Arg
		param, what       string // the parameter and its argument as the note names them
	}{
		{"write through the parameter", "rw_map", `void rw_map(double *x, double *y) { *x = 7; *y = *x; }`,
			func(x, y *op2.Dat[float64], _ *op2.Global[float64]) []op2.Arg {
				return []op2.Arg{x.ArgMap(op2.Read, pedge, 0), y.Arg(op2.Write)}
			}, `"x" (argument 0`, `dat "x"`},
		{"vector", "rw_vec", `void rw_vec(double **x, double *y) { x[1][0] += 1; *y = x[0][0]; }`,
			func(x, y *op2.Dat[float64], _ *op2.Global[float64]) []op2.Arg {
				return []op2.Arg{x.ArgVec(op2.Read, pedge), y.Arg(op2.Write)}
			}, `"x" (argument 0`, `dat "x"`},
		{"global through a helper", "rw_helper", `static void bump(double *p) { p[0] += 1; }
void rw_helper(double *y, double *g) { bump(g); *y = *g; }`,
			func(_, y *op2.Dat[float64], g *op2.Global[float64]) []op2.Arg {
				return []op2.Arg{y.Arg(op2.Write), g.Arg(op2.Read)}
			}, `"g" (argument 1`, `global "g"`},
		{"index through a pointer variable", "rw_index", `typedef int *ip;
void rw_index(double *y, ip e) { int *p = e; *p = -1; *y = *e; }`,
			func(_, y *op2.Dat[float64], _ *op2.Global[float64]) []op2.Arg {
				return []op2.Arg{y.Arg(op2.Write), op2.ArgIdx()}
			}, `"e" (argument 1`, `iteration index of set "edges"`},
	}
	onEachBackend(t, func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				x := must(op2.NewDat(nodes, 1, []float64{1, 2, 3, 4, 5}, "x"))
				y := must(op2.NewDat(edges, 1, []float64{9, 9, 9, 9}, "y"))
				g := must(op2.NewGlobal(1, []float64{3}, "g"))
				err := op2.ParLoop(op2.NewKernel(c.src, c.kernel), edges, c.args(x, y, g)...)
				var ce *op2.CompileError
				var de *op2.DeviceBuildError
				if !errors.As(err, &ce) && !errors.As(err, &de) {
					t.Fatalf("the kernel writes to a READ argument, but the loop returned %v; want a compile error", err)
				}
				wantErr(t, err, c.kernel, "READ", c.param, c.what, "const")
				if got := x.Data(); !slices.Equal(got, []float64{1, 2, 3, 4, 5}) {
					t.Errorf("x = %v after a refused loop", got)
				}
				if got := y.Data(); !slices.Equal(got, []float64{9, 9, 9, 9}) {
					t.Errorf("y = %v after a refused loop", got)
				}
				if got := g.Data()[0]; got != 3 {
					t.Errorf("g = %v after a refused loop", got)
				}
			})
		}
	})
}

// TestReadArgumentsConstAccepted: kernels that only read their READ
// arguments compile and run on every backend however they declare the
// parameters (without const, as arrays, restrict, through a typedef'd
// pointer or a macro, with a prototype before the definition) and pass
// them on to helpers taking pointers to const values.
func TestReadArgumentsConstAccepted(t *testing.T) {
	nodes := must(op2.NewSet(5, "nodes"))
	edges := must(op2.NewSet(4, "edges"))
	tab := []int32{0, 1, 1, 2, 2, 3, 3, 4}
	pedge := must(op2.NewMap(edges, nodes, 2, tab, "pedge"))
	k := op2.NewKernel(`typedef double *dp;
#define REAL double
static double sq(const double *p) { return p[0] * p[0]; }
static double both(const double *const *v) { return v[0][0] + v[1][0]; }
void ro_all(double *a, double **v, dp t, REAL *m, double arr[], double *restrict r, double *g, int *i, const double *c, double *out);
void ro_all(double *a, double **v, dp t, REAL *m, double arr[], double *restrict r, double *g, int *i, const double *c, double *out)
{
  out[0] = sq(a) + both(v) + *t + *m + arr[0] + *r + *g + *i + *c;
}`, "ro_all")
	onEachBackend(t, func(t *testing.T) {
		x := must(op2.NewDat(nodes, 1, []float64{1, 2, 3, 4, 5}, "x"))
		e := must(op2.NewDat(edges, 1, []float64{10, 20, 30, 40}, "e"))
		g := must(op2.NewGlobal(1, []float64{100}, "g"))
		out := must(op2.NewDat[float64](edges, 1, nil, "out"))
		check(t, op2.ParLoop(k, edges, x.ArgMap(op2.Read, pedge, 0), x.ArgVec(op2.Read, pedge), e.Arg(op2.Read), e.Arg(op2.Read),
			e.Arg(op2.Read), e.Arg(op2.Read), g.Arg(op2.Read), op2.ArgIdx(), e.Arg(op2.Read), out.Arg(op2.Write)))
		for i, got := range out.Data() {
			a, b := float64(tab[2*i]+1), float64(tab[2*i+1]+1)
			if want := a*a + a + b + 5*float64(10*(i+1)) + 100 + float64(i); got != want {
				t.Errorf("edge %d: out = %v, want %v", i, got, want)
			}
		}
	})
}

// TestUncheckedCallsRefused: a kernel whose calls the compiler cannot
// check against their parameters (a helper declared without a prototype,
// defined K&R style, or not declared) does not compile, so that a READ
// argument cannot reach a helper that writes through it unseen (the
// write reached the data on the host backends).
func TestUncheckedCallsRefused(t *testing.T) {
	edges := must(op2.NewSet(4, "edges"))
	for _, c := range []struct{ name, kernel, src string }{
		{"helper without a prototype", "rw_noproto", "static void np_bump();\nvoid rw_noproto(double *y, double *g) { np_bump(g); *y = *g; }\nstatic void np_bump(double *p) { p[0] += 100; }"},
		{"K&R helper", "rw_kr", "static void kr_bump(p) double *p; { p[0] += 100; }\nvoid rw_kr(double *y, double *g) { kr_bump(g); *y = *g; }"},
		{"undeclared helper", "rw_implicit", "void rw_implicit(double *y, double *g) { im_bump(g); *y = *g; }\nint im_bump(double *p) { p[0] += 100; return 0; }"},
		{"declared in the body", "rw_local", "static void lo_bump(double *p) { p[0] += 100; }\nvoid rw_local(double *y, double *g) { void lo_bump(); lo_bump(g); *y = *g; }"},
		{"comment in the list", "rw_comment", "static void cm_bump(/* none */);\nvoid rw_comment(double *y, double *g) { cm_bump(g); *y = *g; }\nstatic void cm_bump(double *p) { p[0] += 100; }"},
		{"function pointer", "rw_fptr", "static void fp_bump(double *p) { p[0] += 100; }\nstatic void (*fp)() = fp_bump;\nvoid rw_fptr(double *y, double *g) { fp(g); *y = *g; }"},
		{"function typedef", "rw_ftype", "static void ft_bump(double *p) { p[0] += 100; }\ntypedef void fn();\nvoid rw_ftype(double *y, double *g) { fn *f = ft_bump; f(g); *y = *g; }"},
	} {
		onEachBackend(t, func(t *testing.T) {
			t.Run(c.name, func(t *testing.T) {
				y := must(op2.NewDat(edges, 1, []float64{9, 9, 9, 9}, "y"))
				g := must(op2.NewGlobal(1, []float64{3}, "g"))
				err := op2.ParLoop(op2.NewKernel(c.src, c.kernel), edges, y.Arg(op2.Write), g.Arg(op2.Read))
				var ce *op2.CompileError
				var de *op2.DeviceBuildError
				if !errors.As(err, &ce) && !errors.As(err, &de) {
					t.Fatalf("the loop returned %v; want a compile error", err)
				}
				wantErr(t, err, c.kernel)
				if v := g.Data()[0]; v != 3 {
					t.Errorf("the READ Global is %v, want 3", v)
				}
			})
		})
	}
}
