package backendtest

import (
	"math"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// conformance lists the conformance tests: each runs on the backend
// under test and checks its results against known values.
var conformance = []struct {
	name string
	test func(t *testing.T)
}{
	{"DirectWriteAndRW", testDirectWriteAndRW},
	{"DirectWriteDim2", testDirectWriteDim2},
	{"GlobalInc", testGlobalInc},
	{"GlobalIncDim2Float", testGlobalIncDim2Float},
	{"GlobalMinMax", testGlobalMinMax},
	{"GlobalRead", testGlobalRead},
	{"IndirectRWReversedMap", testIndirectRWReversedMap},
	{"IndirectIncIntoOneElement", testIndirectIncIntoOneElement},
	{"VectorMapRead", testVectorMapRead},
	{"VectorMapInc", testVectorMapInc},
	{"OtherTypes", testOtherTypes},
	{"EmptySetWithMap", testEmptySetWithMap},
	{"ConstChangeNoRecompile", testConstChangeNoRecompile},
	{"MathInKernel", testMathInKernel},
	{"IncThroughTwoMaps", testIncThroughTwoMaps},
	{"GlobalTwiceAsReduction", testGlobalTwiceAsReduction},
	{"PlanNotSharedAcrossConflictPatterns", testPlanNotSharedAcrossConflictPatterns},
	{"KernelSourceVariety", testKernelSourceVariety},
	{"IncrementAndReduceInOneLoop", testIncrementAndReduceInOneLoop},
	{"MatAssembly", testMatAssembly},
	{"MatWrite", testMatWrite},
	{"ComposedMap", testComposedMap},
}

const nElems = 4096

func testDirectWriteAndRW(t *testing.T) {
	{
		set := must(op2.NewSet(nElems, "elems"))
		x := must(op2.NewDat(set, 1, iota32[uint32](nElems), "x"))
		inc := op2.NewKernel("void inc(unsigned int *x) { *x = *x + 1; }", "inc")
		check(t, op2.ParLoop(inc, set, x.Arg(op2.RW)))
		if got := sum(x.Data()); got != 8390656 {
			t.Errorf("after x=x+1: sum = %d, want 8390656", got)
		}
		write := op2.NewKernel("void seven(unsigned int *x) { *x = 7; }", "seven")
		check(t, op2.ParLoop(write, set, x.Arg(op2.Write)))
		if got := sum(x.Data()); got != 7*nElems {
			t.Errorf("after x=7: sum = %d, want %d", got, 7*nElems)
		}
	}
}

func testDirectWriteDim2(t *testing.T) {
	{
		set := must(op2.NewSet(nElems, "elems"))
		in := must(op2.NewDat(set, 1, iota32[uint32](nElems), "in"))
		out := must(op2.NewDat[uint32](set, 2, nil, "out"))
		k := op2.NewKernel("void pair(const unsigned int *a, unsigned int *b) { b[0] = a[0]; b[1] = 2 * a[0]; }", "pair")
		check(t, op2.ParLoop(k, set, in.Arg(op2.Read), out.Arg(op2.Write)))
		v := out.Data()
		for i := 0; i < nElems; i++ {
			if v[2*i] != uint32(i) || v[2*i+1] != uint32(2*i) {
				t.Fatalf("element %d = (%d, %d), want (%d, %d)", i, v[2*i], v[2*i+1], i, 2*i)
			}
		}
	}
}

func testGlobalInc(t *testing.T) {
	{
		set := must(op2.NewSet(nElems, "elems"))
		g := must(op2.NewGlobal(1, []uint32{10}, "count"))
		k := op2.NewKernel("void count(unsigned int *g) { *g += 1; }", "count")
		check(t, op2.ParLoop(k, set, g.Arg(op2.Inc)))
		if got := g.Data()[0]; got != 4106 {
			t.Errorf("count = %d, want 4106", got)
		}
	}
}

func testGlobalIncDim2Float(t *testing.T) {
	{
		set := must(op2.NewSet(nElems, "elems"))
		x := must(op2.NewDat(set, 1, iota32[float64](nElems), "x"))
		g := must(op2.NewGlobal(2, []float64{0.5, 1}, "moments"))
		k := op2.NewKernel("void mom(const double *x, double *g) { g[0] += x[0]; g[1] += x[0] * x[0]; }", "mom")
		check(t, op2.ParLoop(k, set, x.Arg(op2.Read), g.Arg(op2.Inc)))
		n := float64(nElems)
		want := []float64{0.5 + n*(n-1)/2, 1 + (n-1)*n*(2*n-1)/6}
		for i, w := range want {
			if got := g.Data()[i]; got != w {
				t.Errorf("moment %d = %v, want %v", i, got, w)
			}
		}
	}
}

func testGlobalMinMax(t *testing.T) {
	src := `void mm(const int *x, int *lo, int *hi) {
  if (*x < *lo) *lo = *x;
  if (*x > *hi) *hi = *x;
}`
	cases := []struct {
		name           string
		lo, hi         int32 // initial values
		wantLo, wantHi int32
	}{
		{"contributions win", 1 << 20, -1 << 20, 0, nElems - 1},
		{"initial values win", -5, 1 << 20, -5, 1 << 20},
	}
	{
		for _, c := range cases {
			set := must(op2.NewSet(nElems, "elems"))
			x := must(op2.NewDat(set, 1, iota32[int32](nElems), "x"))
			lo := must(op2.NewGlobal(1, []int32{c.lo}, "lo"))
			hi := must(op2.NewGlobal(1, []int32{c.hi}, "hi"))
			check(t, op2.ParLoop(op2.NewKernel(src, "mm"), set, x.Arg(op2.Read), lo.Arg(op2.Min), hi.Arg(op2.Max)))
			if lo.Data()[0] != c.wantLo || hi.Data()[0] != c.wantHi {
				t.Errorf("%s: min, max = %d, %d; want %d, %d", c.name, lo.Data()[0], hi.Data()[0], c.wantLo, c.wantHi)
			}
		}
	}
}

func testGlobalRead(t *testing.T) {
	{
		set := must(op2.NewSet(nElems, "elems"))
		x := must(op2.NewDat(set, 1, iota32[uint32](nElems), "x"))
		g := must(op2.NewGlobal(1, []uint32{3}, "step"))
		k := op2.NewKernel("void add(unsigned int *x, const unsigned int *g) { *x += *g; }", "add")
		check(t, op2.ParLoop(k, set, x.Arg(op2.RW), g.Arg(op2.Read)))
		if got, want := sum(x.Data()), uint32(nElems*(nElems-1)/2+3*nElems); got != want {
			t.Errorf("sum = %d, want %d", got, want)
		}
		if g.Data()[0] != 3 {
			t.Errorf("read-only global changed to %d", g.Data()[0])
		}
	}
}

func testIndirectRWReversedMap(t *testing.T) {
	{
		set := must(op2.NewSet(nElems, "elems"))
		rev := make([]int32, nElems)
		for i := range rev {
			rev[i] = int32(nElems - 1 - i)
		}
		m := must(op2.NewMap(set, set, 1, rev, "reverse"))
		x := must(op2.NewDat(set, 1, iota32[uint32](nElems), "x"))
		idx := must(op2.NewDat(set, 1, iota32[uint32](nElems), "idx"))
		k := op2.NewKernel("void f(unsigned int *y, const unsigned int *i) { *y = *y * 2 + *i; }", "f")
		check(t, op2.ParLoop(k, set, x.ArgMap(op2.RW, m, 0), idx.Arg(op2.Read)))
		v := x.Data()
		for i := range v {
			// element e writes x[n-1-e] = 2 x[n-1-e] + e
			if want := uint32(2*i + (nElems - 1 - i)); v[i] != want {
				t.Fatalf("x[%d] = %d, want %d", i, v[i], want)
			}
		}
	}
}

func testIndirectIncIntoOneElement(t *testing.T) {
	{
		set := must(op2.NewSet(nElems, "elems"))
		one := must(op2.NewSet(1, "one"))
		m := must(op2.NewMap(set, one, 1, make([]int32, nElems), "toOne"))
		acc := must(op2.NewDat[uint32](one, 1, nil, "acc"))
		k := op2.NewKernel("void inc(unsigned int *a) { *a += 1; }", "inc")
		check(t, op2.ParLoop(k, set, acc.ArgMap(op2.Inc, m, 0)))
		if got := acc.Data()[0]; got != nElems {
			t.Errorf("acc = %d, want %d", got, nElems)
		}
	}
}

// ring returns a map of arity 3 from a set of n elements to itself:
// element i -> i, i+1, i+2 (mod n).
func ring(t *testing.T, set *op2.Set, n int) *op2.Map {
	vals := make([]int32, 3*n)
	for i := 0; i < n; i++ {
		for k := 0; k < 3; k++ {
			vals[3*i+k] = int32((i + k) % n)
		}
	}
	return must(op2.NewMap(set, set, 3, vals, "ring"))
}

func testVectorMapRead(t *testing.T) {
	{
		set := must(op2.NewSet(nElems, "elems"))
		m := ring(t, set, nElems)
		x := must(op2.NewDat(set, 1, iota32[uint32](nElems), "x"))
		y := must(op2.NewDat[uint32](set, 1, nil, "y"))
		k := op2.NewKernel(`void s(unsigned int **x, unsigned int *y) { *y = x[0][0] + x[1][0] + x[2][0]; }`, "s")
		check(t, op2.ParLoop(k, set, x.ArgVec(op2.Read, m), y.Arg(op2.Write)))
		v := y.Data()
		for i := range v {
			want := uint32(i + (i+1)%nElems + (i+2)%nElems)
			if v[i] != want {
				t.Fatalf("y[%d] = %d, want %d", i, v[i], want)
			}
		}
		if got, want := sum(v), uint32(3*nElems*(nElems-1)/2); got != want {
			t.Errorf("sum = %d, want %d", got, want)
		}
	}
}

func testVectorMapInc(t *testing.T) {
	{
		set := must(op2.NewSet(nElems, "elems"))
		m := ring(t, set, nElems)
		x := must(op2.NewDat(set, 1, iota32[uint32](nElems), "x"))
		y := must(op2.NewDat[uint32](set, 1, nil, "y"))
		k := op2.NewKernel(`void s(const unsigned int *x, unsigned int *y[3]) {
  for (int k = 0; k < 3; k++) y[k][0] += *x;
}`, "s")
		check(t, op2.ParLoop(k, set, x.Arg(op2.Read), y.ArgVec(op2.Inc, m)))
		v := y.Data()
		for i := range v {
			// i receives from elements i, i-1, i-2
			want := uint32(i + (i-1+nElems)%nElems + (i-2+nElems)%nElems)
			if v[i] != want {
				t.Fatalf("y[%d] = %d, want %d", i, v[i], want)
			}
		}
	}
}

func testOtherTypes(t *testing.T) {
	{
		set := must(op2.NewSet(nElems, "elems"))
		f := must(op2.NewDat(set, 1, iota32[float32](nElems), "f"))
		i32 := must(op2.NewDat(set, 1, iota32[int32](nElems), "i"))
		i64 := must(op2.NewDat(set, 1, iota32[int64](nElems), "l"))
		k := op2.NewKernel(`void t(float *f, int *i, long long *l) {
  *f = *f * 0.5f;
  *i = -*i;
  *l = *l * 3000000000LL;
}`, "t")
		check(t, op2.ParLoop(k, set, f.Arg(op2.RW), i32.Arg(op2.RW), i64.Arg(op2.RW)))
		for e := 0; e < nElems; e++ {
			if f.Data()[e] != float32(e)*0.5 || i32.Data()[e] != int32(-e) || i64.Data()[e] != int64(e)*3000000000 {
				t.Fatalf("element %d: %v %v %v", e, f.Data()[e], i32.Data()[e], i64.Data()[e])
			}
		}
		sumI := must(op2.NewGlobal[int64](1, nil, "sum"))
		k2 := op2.NewKernel("void s(const long long *l, long long *g) { *g += *l; }", "s")
		check(t, op2.ParLoop(k2, set, i64.Arg(op2.Read), sumI.Arg(op2.Inc)))
		if want := int64(3000000000) * nElems * (nElems - 1) / 2; sumI.Data()[0] != want {
			t.Errorf("int64 sum = %d, want %d", sumI.Data()[0], want)
		}
	}
}

func testEmptySetWithMap(t *testing.T) {
	{
		empty := must(op2.NewSet(0, "empty"))
		nodes := must(op2.NewSet(4, "nodes"))
		m := must(op2.NewMap(empty, nodes, 2, nil, "m"))
		x := must(op2.NewDat(nodes, 1, []float64{1, 2, 3, 4}, "x"))
		g := must(op2.NewGlobal(1, []float64{5}, "g"))
		k := op2.NewKernel("void k(double *a, double *b, double *g) { *a += 1; *b += 1; *g += 1; }", "k")
		check(t, op2.ParLoop(k, empty, x.ArgMap(op2.Inc, m, 0), x.ArgMap(op2.Inc, m, 1), g.Arg(op2.Inc)))
		if got := sum(x.Data()); got != 10 {
			t.Errorf("sum = %v, want 10 (untouched)", got)
		}
		if g.Data()[0] != 5 {
			t.Errorf("global = %v, want 5 (untouched)", g.Data()[0])
		}
	}
}

func testConstChangeNoRecompile(t *testing.T) {
	{
		set := must(op2.NewSet(nElems, "elems"))
		scale := must(op2.NewConst(1, []float64{2}, "scale_"+op2.Backend()))
		offs := must(op2.NewConst(2, []float64{1, 100}, "offs_"+op2.Backend()))
		defer scale.Remove()
		defer offs.Remove()
		x := must(op2.NewDat[float64](set, 1, nil, "x"))
		src := "void k(double *x) { *x = scale_B * offs_B[0] + offs_B[1]; }"
		src = strings.ReplaceAll(src, "_B", "_"+op2.Backend())
		k := op2.NewKernel(src, "k")
		check(t, op2.ParLoop(k, set, x.Arg(op2.Write)))
		if x.Data()[7] != 102 {
			t.Fatalf("x = %v, want 102", x.Data()[7])
		}
		before := op2.ReadStats()
		check(t, scale.Set(3))
		check(t, offs.Set(2, 0.5))
		check(t, op2.ParLoop(k, set, x.Arg(op2.Write)))
		if x.Data()[7] != 6.5 {
			t.Fatalf("after changing the constants x = %v, want 6.5", x.Data()[7])
		}
		after := op2.ReadStats()
		if after.Compiles != before.Compiles || after.Generations != before.Generations {
			t.Errorf("changing a constant recompiled: compiles %d -> %d, generations %d -> %d",
				before.Compiles, after.Compiles, before.Generations, after.Generations)
		}
	}
}

func testMathInKernel(t *testing.T) {
	{
		set := must(op2.NewSet(16, "s"))
		x := must(op2.NewDat(set, 1, iota32[float64](16), "x"))
		check(t, op2.ParLoop(op2.NewKernel("void r(double *x) { *x = sqrt(*x); }", "r"), set, x.Arg(op2.RW)))
		for i, v := range x.Data() {
			if v != math.Sqrt(float64(i)) {
				t.Fatalf("sqrt(%d) = %v", i, v)
			}
		}
	}
}

// TestIncThroughTwoMaps increments one dat through two different maps in
// one loop: the two paths must be coloured as one array.
func testIncThroughTwoMaps(t *testing.T) {
	{
		const n = 3000
		edges := must(op2.NewSet(n, "edges"))
		nodes := must(op2.NewSet(100, "nodes"))
		a, b := make([]int32, n), make([]int32, n)
		for i := range a {
			a[i], b[i] = int32(i%100), int32((7*i+3)%100)
		}
		ma := must(op2.NewMap(edges, nodes, 1, a, "ma"))
		mb := must(op2.NewMap(edges, nodes, 1, b, "mb"))
		acc := must(op2.NewDat[int32](nodes, 1, nil, "acc"))
		k := op2.NewKernel("void two(int *x, int *y) { *x += 1; *y += 10; }", "two")
		check(t, op2.ParLoop(k, edges, acc.ArgMap(op2.Inc, ma, 0), acc.ArgMap(op2.Inc, mb, 0)))
		want := make([]int32, 100)
		for i := 0; i < n; i++ {
			want[a[i]]++
			want[b[i]] += 10
		}
		for i, v := range acc.Data() {
			if v != want[i] {
				t.Fatalf("acc[%d] = %d, want %d", i, v, want[i])
			}
		}
	}
}

// TestGlobalTwiceAsReduction passes one Global as two reduction arguments:
// both contributions count.
func testGlobalTwiceAsReduction(t *testing.T) {
	{
		set := must(op2.NewSet(1000, "s"))
		x := must(op2.NewDat(set, 1, iota32[int32](1000), "x"))
		g := must(op2.NewGlobal(1, []int32{5}, "g"))
		lo := must(op2.NewGlobal(1, []int32{100}, "lo"))
		k := op2.NewKernel(`void k(const int *x, int *a, int *b, int *l1, int *l2) {
  *a += 1; *b += 2;
  if (*x < *l1) *l1 = *x;
  if (*x + 50 < *l2) *l2 = *x + 50;
}`, "k")
		check(t, op2.ParLoop(k, set, x.Arg(op2.Read), g.Arg(op2.Inc), g.Arg(op2.Inc), lo.Arg(op2.Min), lo.Arg(op2.Min)))
		if got := g.Data()[0]; got != 3005 {
			t.Errorf("g = %d, want 3005", got)
		}
		if got := lo.Data()[0]; got != 0 {
			t.Errorf("lo = %d, want 0", got)
		}
	}
}

// TestPlanNotSharedAcrossConflictPatterns: two loops over the same set and
// maps, one incrementing two dats and one incrementing one dat through both
// maps, need different colourings.
func testPlanNotSharedAcrossConflictPatterns(t *testing.T) {
	{
		const n = 50000
		set := must(op2.NewSet(n, "edges"))
		nodes := must(op2.NewSet(n, "nodes"))
		id, perm := make([]int32, n), make([]int32, n)
		for i := range id {
			id[i] = int32(i)
			perm[i] = int32((i*7919 + 13) % n)
		}
		m1 := must(op2.NewMap(set, nodes, 1, id, "m1"))
		m2 := must(op2.NewMap(set, nodes, 1, perm, "m2"))
		x := must(op2.NewDat[int32](nodes, 1, nil, "x"))
		y := must(op2.NewDat[int32](nodes, 1, nil, "y"))
		k := op2.NewKernel("void k(int *a, int *b) { *a += 1; *b += 1; }", "k")
		check(t, op2.ParLoop(k, set, x.ArgMap(op2.Inc, m1, 0), y.ArgMap(op2.Inc, m2, 0)))
		for rep := 0; rep < 20; rep++ {
			check(t, op2.ParLoop(k, set, x.ArgMap(op2.Inc, m1, 0), x.ArgMap(op2.Inc, m2, 0)))
		}
		for i, v := range x.Data() {
			if v != 41 {
				t.Fatalf("x[%d] = %d, want 41", i, v)
			}
		}
	}
}

// TestKernelSourceVariety: kernels as users write them, with macros and
// typedefs in the signature, stdint types, a constant named like a math.h
// function, and a local variable named like a constant, run the same on
// every backend.
func testKernelSourceVariety(t *testing.T) {
	{
		gamma := must(op2.NewConst(1, []float64{1.5}, "gamma"))
		defer gamma.Remove()
		eps := must(op2.NewConst(2, []float64{0.25, 4}, "eps"))
		defer eps.Remove()
		set := must(op2.NewSet(8, "s"))
		x := must(op2.NewDat(set, 3, iota32[float64](24), "x"))
		n := must(op2.NewDat(set, 1, iota32[int32](8), "n"))
		cases := []struct {
			name, src string
			want      func(e int, old []float64) []float64
		}{
			{"macro dimension", "#define DIM 3\nvoid f(double x[DIM], const int32_t *n) { for (int k = 0; k < DIM; k++) x[k] += *n; }",
				func(e int, old []float64) []float64 {
					return []float64{old[0] + float64(e), old[1] + float64(e), old[2] + float64(e)}
				}},
			{"typedef", "typedef double real;\nstatic void f(real *x, const int *n) { x[0] = *n * 2.0; }",
				func(e int, old []float64) []float64 { return []float64{float64(2 * e), old[1], old[2]} }},
			{"constant named gamma", "void f(double *x, const int *n) { x[1] = gamma * *n + eps[1]; }",
				func(e int, old []float64) []float64 { return []float64{old[0], 1.5*float64(e) + 4, old[2]} }},
			{"local shadows a constant", "inline void f(double *x, const int *n) { double eps = 2.0; x[2] = eps * *n + gamma; }",
				func(e int, old []float64) []float64 { return []float64{old[0], old[1], 2*float64(e) + 1.5} }},
			{"prototype first, braces in literals, constant in a macro", "void f(double *x, const int *n);\n#define SCALE (gamma * 2)\n" +
				"void f(double *x, const int *n) { char d = '}'; /* } */ char c = '{'; x[0] = SCALE + (d == '}') + (c == '{') + *n; }",
				func(e int, old []float64) []float64 { return []float64{3 + 2 + float64(e), old[1], old[2]} }},
			{"parameter named like a constant", "void f(double *gamma, const int *n) { gamma[1] = -*n; }",
				func(e int, old []float64) []float64 { return []float64{old[0], -float64(e), old[2]} }},
		}
		for _, c := range cases {
			old := append([]float64(nil), x.DataRO()...)
			if err := op2.ParLoop(op2.NewKernel(c.src, "f"), set, x.Arg(op2.RW), n.Arg(op2.Read)); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			got := x.DataRO()
			for e := 0; e < 8; e++ {
				want := c.want(e, old[3*e:3*e+3])
				for k := range want {
					if got[3*e+k] != want[k] {
						t.Fatalf("%s: element %d = %v, want %v", c.name, e, got[3*e:3*e+3], want)
					}
				}
			}
		}
	}
}

// TestIncrementAndReduceInOneLoop: a loop that increments through a map
// (coloured on openmp and opencl) and reduces into Globals at once.
func testIncrementAndReduceInOneLoop(t *testing.T) {
	{
		const n = 20000
		edges := must(op2.NewSet(n, "edges"))
		nodes := must(op2.NewSet(n/4, "nodes"))
		emap := make([]int32, 2*n)
		for i := range emap {
			emap[i] = int32((i * 7) % (n / 4))
		}
		m := must(op2.NewMap(edges, nodes, 2, emap, "m"))
		w := must(op2.NewDat(edges, 1, iota32[float64](n), "w"))
		acc := must(op2.NewDat[float64](nodes, 1, nil, "acc"))
		sum := must(op2.NewGlobal(2, []float64{1, 0}, "sum"))
		hi := must(op2.NewGlobal(1, []float64{-1}, "hi"))
		k := op2.NewKernel(`void k(const double *w, double **a, double *s, double *h) {
  a[0][0] += *w; a[1][0] -= 0.5 * *w;
  s[0] += *w; s[1] += 1;
  if (*w > *h) *h = *w;
}`, "k")
		check(t, op2.ParLoop(k, edges, w.Arg(op2.Read), acc.ArgVec(op2.Inc, m), sum.Arg(op2.Inc), hi.Arg(op2.Max)))
		want := make([]float64, n/4)
		for e := 0; e < n; e++ {
			want[emap[2*e]] += float64(e)
			want[emap[2*e+1]] -= 0.5 * float64(e)
		}
		for i, v := range acc.Data() {
			if v != want[i] {
				t.Fatalf("acc[%d] = %v, want %v", i, v, want[i])
			}
		}
		if s := sum.Data(); s[0] != 1+float64(n)*(n-1)/2 || s[1] != n {
			t.Errorf("sum = %v, want [%v %v]", s, 1+float64(n)*(n-1)/2, n)
		}
		if h := hi.Data()[0]; h != n-1 {
			t.Errorf("max = %v, want %v", h, n-1)
		}
	}
}
