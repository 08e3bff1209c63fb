package op2_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// mixedFixture is a small P1 × P0 mesh: 3 triangles over 5 nodes.
type mixedFixture struct {
	nodes, tris *op2.Set
	ptri, ident *op2.Map
	ms          *op2.MixedSet
	mm          *op2.MixedMap
	u           *op2.MixedDat[float64]
	w           *op2.Dat[float64]
	assemble    *op2.Kernel
}

func newMixedFixture(t *testing.T) *mixedFixture {
	f := &mixedFixture{}
	f.nodes = must(op2.NewSet(5, "nodes"))
	f.tris = must(op2.NewSet(3, "tris"))
	f.ptri = must(op2.NewMap(f.tris, f.nodes, 3, []int32{0, 1, 2, 1, 2, 3, 2, 3, 4}, "ptri"))
	f.ident = must(op2.NewMap(f.tris, f.tris, 1, []int32{0, 1, 2}, "ident"))
	f.ms = must(op2.NewMixedSet([]*op2.Set{f.nodes, f.tris}, "P1×P0"))
	f.mm = must(op2.NewMixedMap([]*op2.Map{f.ptri, f.ident}, "dofs"))
	f.u = must(op2.NewMixedDat[float64](f.ms, []int{2, 1}, nil, "u"))
	f.w = must(op2.NewDat(f.tris, 1, []float64{1, 2, 3}, "w"))
	f.assemble = op2.NewKernel(`
void assemble(const double *w, double **a, double **b) {
  for (int i = 0; i < 3; i++) { a[i][0] += w[0]; a[i][1] += 1; }
  b[0][0] += w[0];
}`, "assemble")
	return f
}

// TestMixedLoopErrors checks that misuse of mixed arguments is refused
// before anything runs, with a *LoopError naming the argument the caller
// passed and its block, and that nothing changed.
func TestMixedLoopErrors(t *testing.T) {
	f := newMixedFixture(t)
	three := must(op2.NewMixedMap([]*op2.Map{f.ptri, f.ident, f.ident}, "three"))
	swapped := must(op2.NewMixedMap([]*op2.Map{f.ident, f.ptri}, "swapped"))
	ptri2 := must(op2.NewMap(f.tris, f.nodes, 3, []int32{4, 3, 2, 3, 2, 1, 2, 1, 0}, "ptri2"))
	twice := must(op2.NewMixedMap([]*op2.Map{f.ptri, ptri2}, "twice"))
	nodes2 := must(op2.NewMixedDat[float64](must(op2.NewMixedSet([]*op2.Set{f.nodes, f.nodes}, "nodes twice")), []int{1, 1}, nil, "n2"))
	d := must(op2.NewDat[float64](f.nodes, 2, nil, "d"))
	same := must(op2.NewMixedDatOf([]*op2.Dat[float64]{d, d}, "same"))
	g := must(op2.NewGlobal[float64](1, nil, "g"))
	sp := must(op2.NewMixedSparsity(f.ms, []int{1, 1}, f.ms, []int{1, 1}, []op2.MixedMapPair{{Row: f.mm, Col: f.mm}}, "sp"))
	A := must(op2.NewMixedMat[float64](sp, "A"))
	matK := op2.NewKernel(`void m(double *a, double *b, double *c, double *d) {}`, "m")
	vecK := op2.NewKernel(`void v(double *a, double *b) {}`, "v")
	cases := []struct {
		name string
		run  func() error
		arg  int
		want string
	}{
		{"block count", func() error {
			return op2.ParLoop(f.assemble, f.tris, f.w.Arg(op2.Read), f.u.ArgVec(op2.Inc, three))
		}, 1, `mixed dat "u" has 2 blocks but mixed map "three" has 3`},
		{"nil mixed map", func() error {
			return op2.ParLoop(f.assemble, f.tris, f.w.Arg(op2.Read), f.u.ArgVec(op2.Inc, nil))
		}, 1, `mixed dat "u": mixed map is nil`},
		{"block into the wrong set", func() error {
			return op2.ParLoop(f.assemble, f.tris, f.w.Arg(op2.Read), f.u.ArgVec(op2.Inc, swapped))
		}, 1, `block 0 of mixed dat "u" through mixed map "swapped": dat "u[0]"`},
		{"kernel parameter count", func() error {
			return op2.ParLoop(vecK, f.tris, f.w.Arg(op2.Read), f.u.ArgVec(op2.Inc, f.mm))
		}, -1, `takes 2 parameters but the loop's 2 arguments pass 3 (a mixed argument passes one per block)`},
		{"block parameter type", func() error {
			k := op2.NewKernel(`void k(const double *w, double **a, float **b) {}`, "k")
			return op2.ParLoop(k, f.tris, f.w.Arg(op2.Read), f.u.ArgVec(op2.Inc, f.mm))
		}, 1, `block 1 of mixed dat "u" through mixed map "dofs"`},
		{"argument after a mixed one", func() error {
			k := op2.NewKernel(`void k(double **a, double **b, double *g) {}`, "k")
			return op2.ParLoop(k, f.tris, f.u.ArgVec(op2.Inc, f.mm), g.Arg(op2.Write))
		}, 1, `access WRITE is not allowed for a Global`},
		{"blocks conflict", func() error {
			k := op2.NewKernel(`void k(double **a, double **b) {}`, "k")
			return op2.ParLoop(k, f.tris, same.ArgVec(op2.RW, twice))
		}, 0, `conflicts with argument 0 (block 0 of mixed dat "same" through mixed map "twice")`},
		{"direct block on another set", func() error {
			k := op2.NewKernel(`void k(double *a, double *b) {}`, "k")
			return op2.ParLoop(k, f.tris, f.u.Arg(op2.RW))
		}, 0, `block 0 of mixed dat "u": dat "u[0]"`},
		{"mixed map in a loop over a mixed set", func() error {
			return op2.ParLoop(vecK, f.ms, f.u.ArgVec(op2.Inc, f.mm))
		}, 0, `block 0 of mixed set "P1×P0": mixed dat "u" through mixed map "dofs": in a loop over mixed set`},
		{"mixed set block count", func() error {
			k := op2.NewKernel(`void k(double *a) {}`, "k")
			three := must(op2.NewMixedSet([]*op2.Set{f.nodes, f.tris, f.tris}, "three sets"))
			return op2.ParLoop(k, three, f.u.Arg(op2.RW))
		}, 0, `mixed dat "u" has 2 blocks but the loop's mixed set "three sets" has 3`},
		{"mixed set block on another set", func() error {
			k := op2.NewKernel(`void k(double *a) {}`, "k")
			return op2.ParLoop(k, f.ms, nodes2.Arg(op2.RW))
		}, 0, `block 1 of mixed set "P1×P0": block 1 of mixed dat "n2"`},
		{"Global read and reduced over a mixed set", func() error {
			k := op2.NewKernel(`void k(const double *a, double *b) {}`, "k")
			return op2.ParLoop(k, f.ms, g.Arg(op2.Read), g.Arg(op2.Inc))
		}, 1, `may not be both read and reduced`},
		{"nil Globals over a mixed set", func() error {
			k := op2.NewKernel(`void k(const double *a, double *b) {}`, "k")
			var g1, g2 *op2.Global[float64]
			return op2.ParLoop(k, f.ms, g1.Arg(op2.Read), g2.Arg(op2.Inc))
		}, 0, `the Global is nil`},
		{"matrix block count", func() error {
			return op2.ParLoop(matK, f.tris, A.Arg(op2.Inc, f.mm, three))
		}, 0, `mixed mat "A" has 2×2 blocks but mixed maps "dofs" and "three" have 2 and 3`},
		{"matrix map pair not the sparsity's", func() error {
			return op2.ParLoop(matK, f.tris, A.Arg(op2.Inc, twice, f.mm))
		}, 0, `block (1, 0) of mixed mat "A" through mixed maps ("twice", "dofs")`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			var le *op2.LoopError
			if !errors.As(err, &le) {
				t.Fatalf("got %v, want a *LoopError", err)
			}
			t.Log(err)
			if le.Arg != c.arg || !strings.Contains(err.Error(), c.want) || strings.Count(err.Error(), "op2: ") != 1 {
				t.Fatalf("got argument %d: %v\nwant argument %d and %q", le.Arg, err, c.arg, c.want)
			}
		})
	}
	if got := f.u.DataRO(); slices.ContainsFunc(got, func(b []float64) bool { return slices.ContainsFunc(b, func(v float64) bool { return v != 0 }) }) {
		t.Fatalf("a refused loop changed u: %v", got)
	}
	if _, err := op2.NewLoop(vecK, f.ms, f.u.Arg(op2.RW)); err == nil || !strings.Contains(err.Error(), "one loop per block, which ParLoop runs") {
		t.Fatalf("NewLoop over a mixed set: %v", err)
	}
	if _, err := op2.Generate("sequential", vecK, f.ms, f.u.Arg(op2.RW)); err == nil {
		t.Fatal("Generate over a mixed set: no error")
	}
	// A loop object and static generation expand mixed arguments too.
	for _, b := range []string{"sequential", "opencl", "cuda"} {
		src, err := op2.Generate(b, f.assemble, f.tris, f.w.Arg(op2.Read), f.u.ArgVec(op2.Inc, f.mm))
		if err != nil || !strings.Contains(src, "assemble") {
			t.Fatalf("Generate(%s) with a mixed argument: %v", b, err)
		}
	}
	lp := must(op2.NewLoop(f.assemble, f.tris, f.w.Arg(op2.Read), f.u.ArgVec(op2.Inc, f.mm)))
	check(t, lp.Compute())
	if got := f.u.DataRO(); !slices.Equal(got[1], []float64{1, 2, 3}) {
		t.Fatalf("Loop.Compute with a mixed argument: u = %v", got)
	}
}

// TestMixedDeclarationErrors checks the constructors' and methods'
// errors, each naming the object and the block.
func TestMixedDeclarationErrors(t *testing.T) {
	f := newMixedFixture(t)
	other := must(op2.NewSet(2, "other"))
	fromOther := must(op2.NewMap(other, f.nodes, 1, []int32{0, 1}, "from other"))
	v := must(op2.NewMixedDat[float64](f.ms, []int{1, 1}, nil, "v"))
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"empty mixed set", second(op2.NewMixedSet(nil, "e")), `mixed set "e": no sets`},
		{"nil set", second(op2.NewMixedSet([]*op2.Set{f.nodes, nil}, "n")), `mixed set "n": block 1: set is nil`},
		{"maps from two sets", second(op2.NewMixedMap([]*op2.Map{f.ptri, fromOther}, "mm")),
			`mixed map "mm": block 1: map "from other" goes from set "other", but block 0's map "ptri" from set "tris"`},
		{"dims count", second(op2.NewMixedDat[float64](f.ms, []int{1}, nil, "x")), `mixed dat "x" on mixed set "P1×P0": 1 dims given for 2 blocks`},
		{"data length", second(op2.NewMixedDat(f.ms, []int{1, 1}, []float64{1, 2}, "x")), `2 values given, want 8`},
		{"bad dim", second(op2.NewMixedDat[float64](f.ms, []int{1, 0}, nil, "x")), `block 1: dim 0`},
		{"nil dat", second(op2.NewMixedDatOf([]*op2.Dat[float64]{nil}, "x")), `mixed dat "x": block 0: dat is nil`},
		{"sparsity dims", second(op2.NewMixedSparsity(f.ms, []int{1}, f.ms, []int{1, 1}, []op2.MixedMapPair{{Row: f.mm, Col: f.mm}}, "sp")),
			`mixed sparsity "sp": 1 row dims for the 2 blocks`},
		{"copy between shapes", f.u.CopyTo(v), `copying mixed dat "u" to mixed dat "v": block 0: dims differ (2 and 1)`},
		{"subset of a mixed set", second(op2.NewSubset(f.ms, []int32{0})), `subset of mixed set "P1×P0"`},
		{"union with a mixed set", second(must(op2.NewSubset(f.nodes, []int32{0})).Union(f.ms)), `and mixed set "P1×P0": they are not subsets of one set`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.err == nil || !strings.Contains(c.err.Error(), c.want) || strings.Count(c.err.Error(), "op2: ") != 1 {
				t.Fatalf("got %v, want %q", c.err, c.want)
			}
		})
	}
	sp := must(op2.NewMixedSparsity(f.ms, []int{1, 1}, f.ms, []int{1, 1}, []op2.MixedMapPair{{Row: f.mm, Col: f.mm}}, "sp"))
	A := must(op2.NewMixedMat[float64](sp, "A"))
	if err := A.Mult(f.u, v); err == nil || !strings.Contains(err.Error(), `block (0, 0) is 1×1 per element pair, but x's block 0 has dim 2`) {
		t.Fatalf("Mult with x of the wrong dims: %v", err)
	}
	if err := A.Mult(v, v); err == nil || !strings.Contains(err.Error(), `is also a block of x`) {
		t.Fatalf("Mult with y = x: %v", err)
	}
}

// TestMixedDatUtilities checks Data, Zero, CopyTo, Clone and Nbytes of a
// mixed dat on every backend, and a loop with a disabled mixed argument.
func TestMixedDatUtilities(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		f := newMixedFixture(t)
		md := must(op2.NewMixedDat(f.ms, []int{2, 1}, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, "md"))
		if got := md.DataRO(); !slices.Equal(got[0], []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) || !slices.Equal(got[1], []float64{10, 11, 12}) {
			t.Fatalf("blocks %v", got)
		}
		if md.Len() != 2 || !slices.Equal(md.Dims(), []int{2, 1}) || md.Block(1).Name() != "md[1]" || md.Set() != f.ms {
			t.Fatalf("Len %d, Dims %v, block 1 %q", md.Len(), md.Dims(), md.Block(1).Name())
		}
		if md.Nbytes() != md.Block(0).Nbytes()+md.Block(1).Nbytes() || md.Nbytes() != 13*8 {
			t.Fatalf("Nbytes %d", md.Nbytes())
		}
		check(t, op2.ParLoop(f.assemble, f.tris, f.w.Arg(op2.Read), md.ArgVec(op2.Inc, f.mm)))
		c := must(md.Clone("c"))
		check(t, md.Zero())
		check(t, md.Sync())
		want0 := []float64{1, 2, 5, 5, 10, 8, 11, 9, 11, 10}
		if got := c.DataRO(); !slices.Equal(got[0], want0) || !slices.Equal(got[1], []float64{11, 13, 15}) {
			t.Fatalf("clone %v", got)
		}
		if got := md.DataRO(); slices.Max(got[0]) != 0 || slices.Max(got[1]) != 0 {
			t.Fatalf("zeroed %v", got)
		}
		check(t, c.CopyTo(md))
		if got := md.Data(); !slices.Equal(got[0], want0) {
			t.Fatalf("copied %v", got)
		}
		// A disabled mixed argument: a null pointer for every block.
		g := must(op2.NewGlobal[float64](1, nil, "g"))
		k := op2.NewKernel(`void k(double **a, double **b, double *g) { if (!a && !b) g[0] += 1; }`, "k")
		check(t, op2.ParLoop(k, f.tris, op2.Opt(false, md.ArgVec(op2.Inc, f.mm)), g.Arg(op2.Inc)))
		if g.DataRO()[0] != 3 {
			t.Fatalf("the kernel saw a block of a disabled mixed argument: g = %v", g.DataRO())
		}
	})
}

// TestMixedMatFloat32Dim2 assembles a float32 block matrix whose first
// block has dim 2 and checks Mult against the dense blocks.
func TestMixedMatFloat32Dim2(t *testing.T) {
	f := newMixedFixture(t)
	sp := must(op2.NewMixedSparsity(f.ms, []int{2, 1}, f.ms, []int{2, 1}, []op2.MixedMapPair{{Row: f.mm, Col: f.mm}}, "sp"))
	A := must(op2.NewMixedMat[float32](sp, "A"))
	k := op2.NewKernel(`
void elem(const int *e, float *a00, float *a01, float *a10, float *a11) {
  for (int i = 0; i < 6; i++) {
    for (int j = 0; j < 6; j++) a00[i * 6 + j] = (i == j) ? 2 : 0.5f;
    a01[i] = *e + 1; a10[i] = -1;
  }
  a11[0] = 4;
}`, "elem")
	check(t, op2.ParLoop(k, f.tris, op2.ArgIdx(), A.Arg(op2.Inc, f.mm, f.mm)))
	x := must(op2.NewMixedDat(f.ms, []int{2, 1}, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 2, 3}, "x"))
	y := must(op2.NewMixedDat[float32](f.ms, []int{2, 1}, nil, "y"))
	check(t, A.Mult(x, y))
	xs, ys := x.DataRO(), y.DataRO()
	for i := range 2 {
		for r := range ys[i] {
			var want float32
			for j := range 2 {
				var p float32
				for c, v := range must(A.Block(i, j).Dense())[r] {
					if v != 0 {
						p += v * xs[j][c]
					}
				}
				want += p
			}
			if ys[i][r] != want {
				t.Fatalf("(A x) block %d [%d] = %v, want %v", i, r, ys[i][r], want)
			}
		}
	}
}

// TestMixedLoopAllocations checks what a repeated mixed loop allocates on
// the Go side: nothing when the mixed argument is made once, and only
// the argument itself (its blocks) when it is made on every call.
func TestMixedLoopAllocations(t *testing.T) {
	check(t, op2.Configure(op2.Config{}.Explicit("Lazy"))) // loops run at once
	defer op2.Configure(op2.Config{})
	f := newMixedFixture(t)
	arg := f.u.ArgVec(op2.Inc, f.mm)
	once := func() { check(t, op2.ParLoop(f.assemble, f.tris, f.w.Arg(op2.Read), arg)) }
	each := func() { check(t, op2.ParLoop(f.assemble, f.tris, f.w.Arg(op2.Read), f.u.ArgVec(op2.Inc, f.mm))) }
	once()
	if a := testing.AllocsPerRun(20, once); a != 0 {
		t.Errorf("a repeated loop with a mixed argument made once allocates %v times per call, want 0", a)
	}
	if a := testing.AllocsPerRun(20, each); a > 2 {
		t.Errorf("a repeated loop making its mixed argument allocates %v times per call, want at most 2 (the argument and its blocks)", a)
	}
}
