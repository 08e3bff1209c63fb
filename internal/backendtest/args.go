package backendtest

import (
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// Conformance tests of the argument kinds beyond data: the iteration
// index, a map's values, optional arguments, and MIN and MAX through maps.
func init() {
	conformance = append(conformance, []struct {
		name string
		test func(t *testing.T)
	}{
		{"IterationAndMapIndex", testIterationAndMapIndex},
		{"IndexArgumentsArePrivate", testIndexArgumentsArePrivate},
		{"OptionalArguments", testOptionalArguments},
		{"MinMaxThroughMaps", testMinMaxThroughMaps},
		{"MinMaxOtherTypes", testMinMaxOtherTypes},
	}...)
}

// edgeMesh is nEdges random edges (arity 2) over nNodes nodes.
func edgeMesh(r *rand.Rand, nEdges, nNodes int) (edges, nodes *op2.Set, table []int32, m *op2.Map) {
	edges = must(op2.NewSet(nEdges, "edges"))
	nodes = must(op2.NewSet(nNodes, "nodes"))
	table = make([]int32, 2*nEdges)
	for i := range table {
		table[i] = int32(r.IntN(nNodes))
	}
	m = must(op2.NewMap(edges, nodes, 2, table, "pedge"))
	return edges, nodes, table, m
}

func testIterationAndMapIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const nEdges, nNodes = 3000, 700
	edges, nodes, table, m := edgeMesh(r, nEdges, nNodes)
	// Direct: the element's own index and its map's values.
	out := must(op2.NewDat[int32](edges, 3, nil, "out"))
	k := op2.NewKernel(`void ids(const int *e, const int *n0, int *o, const int *n1) { o[0] = *e; o[1] = *n0; o[2] = *n1; }`, "ids")
	check(t, op2.ParLoop(k, edges, op2.ArgIdx(), m.ArgIdx(0), out.Arg(op2.Write), m.ArgIdx(1)))
	v := out.Data()
	for e := 0; e < nEdges; e++ {
		if v[3*e] != int32(e) || v[3*e+1] != table[2*e] || v[3*e+2] != table[2*e+1] {
			t.Fatalf("edge %d: kernel got index %d and map values %d, %d; want %d, %d, %d", e, v[3*e], v[3*e+1], v[3*e+2], e, table[2*e], table[2*e+1])
		}
	}
	// Beside increments through the map (a coloured, staged loop): every
	// node sums the indices of its edges, and checks the map's value.
	sumIdx := must(op2.NewDat[int64](nodes, 1, nil, "sum"))
	bad := must(op2.NewGlobal[int32](1, nil, "bad"))
	k2 := op2.NewKernel(`
void gather(const int *e, const int *n, const int *me, long long *s, int *bad) {
  *s += *e;
  if (*n != *me) *bad += 1;
}`, "gather")
	check(t, op2.ParLoop(k2, edges, op2.ArgIdx(), m.ArgIdx(1), m.ArgIdx(1), sumIdx.ArgMap(op2.Inc, m, 1), bad.Arg(op2.Inc)))
	want := make([]int64, nNodes)
	for e := 0; e < nEdges; e++ {
		want[table[2*e+1]] += int64(e)
	}
	got := sumIdx.Data()
	for n := range want {
		if got[n] != want[n] {
			t.Fatalf("node %d: sum of its edges' indices = %d, want %d", n, got[n], want[n])
		}
	}
	if bad.Data()[0] != 0 {
		t.Errorf("map values differ between arguments %d times", bad.Data()[0])
	}
	// The nodes' own index in a loop over the nodes.
	nid := must(op2.NewDat[int32](nodes, 1, nil, "nid"))
	check(t, op2.ParLoop(op2.NewKernel(`void own(int *o, const int *i) { *o = *i * 2; }`, "own"), nodes, nid.Arg(op2.Write), op2.ArgIdx()))
	for n, x := range nid.Data() {
		if x != int32(2*n) {
			t.Fatalf("node %d: index %d", n, x/2)
		}
	}
}

// testIndexArgumentsArePrivate: a kernel that writes through its index
// parameters (casting their const away) changes only its own copy: the
// loop's other elements, and every later loop over the set or through the
// map, still get each element's index and the map's values. In check
// mode the write is reported (and undone) instead.
func testIndexArgumentsArePrivate(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	const nEdges, nNodes = 3000, 700
	edges, nodes, table, m := edgeMesh(r, nEdges, nNodes)
	checkMode, _ := strconv.ParseBool(os.Getenv("OP2_CHECK"))
	seen := must(op2.NewDat[int32](edges, 4, nil, "seen"))
	count := must(op2.NewDat[int32](nodes, 1, nil, "count"))
	// A direct loop, and a coloured one (staged on devices) beside an
	// increment through the map: each element reads its values, writes
	// garbage through both parameters and reads them again.
	scribble := op2.NewKernel(`
void scribble(const int *e, const int *n, int *seen) {
  seen[0] = *e; seen[1] = *n;
  *(int *)e = -1 - *e; *(int *)n = -7;
  seen[2] = *e; seen[3] = *n;
}`, "scribble")
	scribbleInc := op2.NewKernel(`
void scribble_inc(const int *e, const int *n, int *seen, int *count) {
  seen[0] = *e; seen[1] = *n;
  *(int *)e = -1 - *e; *(int *)n = -7;
  seen[2] = *e; seen[3] = *n;
  *count += 1;
}`, "scribble_inc")
	ids := op2.NewKernel(`void ids2(const int *e, const int *n0, const int *n1, int *o) { o[0] = *e; o[1] = *n0; o[2] = *n1; o[3] = 0; }`, "ids2")
	own := op2.NewKernel(`void own2(const int *i, int *o) { *o = *i; }`, "own2")
	nid := must(op2.NewDat[int32](nodes, 1, nil, "nid"))
	verify := func(when string) {
		t.Helper()
		check(t, op2.ParLoop(ids, edges, op2.ArgIdx(), m.ArgIdx(0), m.ArgIdx(1), seen.Arg(op2.Write)))
		v := seen.Data()
		for e := 0; e < nEdges; e++ {
			if v[4*e] != int32(e) || v[4*e+1] != table[2*e] || v[4*e+2] != table[2*e+1] {
				t.Fatalf("%s: edge %d: a later loop got index %d and map values %d, %d; want %d, %d, %d", when, e, v[4*e], v[4*e+1], v[4*e+2], e, table[2*e], table[2*e+1])
			}
		}
		check(t, op2.ParLoop(own, nodes, op2.ArgIdx(), nid.Arg(op2.Write)))
		for n, x := range nid.Data() {
			if x != int32(n) {
				t.Fatalf("%s: node %d: a later loop over the nodes got index %d", when, n, x)
			}
		}
	}
	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"direct", func() error {
			return op2.ParLoop(scribble, edges, op2.ArgIdx(), m.ArgIdx(1), seen.Arg(op2.Write))
		}},
		{"coloured", func() error {
			return op2.ParLoop(scribbleInc, edges, op2.ArgIdx(), m.ArgIdx(1), seen.Arg(op2.Write), count.ArgMap(op2.Inc, m, 1))
		}},
	} {
		for rep := 0; rep < 2; rep++ { // a second run of the same program
			err := c.run()
			if checkMode {
				if err == nil || !strings.Contains(err.Error(), "check mode") {
					t.Fatalf("%s: check mode did not report the kernel's writes to its index arguments: %v", c.name, err)
				}
				verify(c.name + " (check mode)")
				continue
			}
			check(t, err)
			v := seen.Data()
			for e := 0; e < nEdges; e++ {
				want := []int32{int32(e), table[2*e+1], -1 - int32(e), -7}
				if got := v[4*e : 4*e+4]; !slicesEqual(got, want) {
					t.Fatalf("%s: edge %d: the kernel saw (index, map value) %v before and %v after its own writes; want %v and %v",
						c.name, e, got[:2], got[2:], want[:2], want[2:])
				}
			}
			verify(c.name)
		}
	}
}

func slicesEqual[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func testOptionalArguments(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const nEdges, nNodes = 2000, 500
	edges, nodes, table, m := edgeMesh(r, nEdges, nNodes)
	x := must(op2.NewDat(nodes, 1, iota32[float64](nNodes), "x"))
	acc := must(op2.NewDat[float64](nodes, 1, nil, "acc"))
	total := must(op2.NewGlobal(1, []float64{1}, "total"))
	out := must(op2.NewDat[float64](edges, 2, nil, "out"))
	flag := must(op2.NewGlobal(1, []int32{1}, "flag"))
	k := op2.NewKernel(`
void opt(const int *on, const double *x0, double **xs, double *acc, double *total, double *out) {
  if (*on) {
    out[0] = *x0 + xs[0][0] + xs[1][0];
    *acc += 1;
    *total += *x0;
  } else {
    /* Disabled arguments are null pointers. */
    out[0] = (x0 == 0) + (xs == 0) + (acc == 0) + (total == 0);
  }
  out[1] = 7;
}`, "opt")
	run := func(on bool) {
		t.Helper()
		check(t, op2.ParLoop(k, edges, flag.Arg(op2.Read),
			op2.Opt(on, x.ArgMap(op2.Read, m, 0)), op2.Opt(on, x.ArgVec(op2.Read, m)),
			op2.Opt(on, acc.ArgMap(op2.Inc, m, 1)), op2.Opt(on, total.Arg(op2.Inc)), out.Arg(op2.Write)))
	}
	run(true)
	wantAcc := make([]float64, nNodes)
	wantTotal := 1.0
	for e := 0; e < nEdges; e++ {
		a, b := float64(table[2*e]), float64(table[2*e+1])
		if got := out.Data()[2*e]; got != a+a+b {
			t.Fatalf("enabled: edge %d: out = %v, want %v", e, got, a+a+b)
		}
		wantAcc[table[2*e+1]]++
		wantTotal += a
	}
	for n, v := range acc.Data() {
		if v != wantAcc[n] {
			t.Fatalf("enabled: acc[%d] = %v, want %v", n, v, wantAcc[n])
		}
	}
	if total.Data()[0] != wantTotal {
		t.Fatalf("enabled: total = %v, want %v", total.Data()[0], wantTotal)
	}
	flag.Data()[0] = 0
	run(false)
	for e := 0; e < nEdges; e++ {
		if o := out.Data()[2*e : 2*e+2]; o[0] != 4 || o[1] != 7 {
			t.Fatalf("disabled: edge %d: out = %v, want [4 7] (every disabled argument a null pointer)", e, o)
		}
	}
	for n, v := range acc.Data() {
		if v != wantAcc[n] {
			t.Fatalf("disabled: acc[%d] changed to %v", n, v)
		}
	}
	if total.Data()[0] != wantTotal {
		t.Fatalf("disabled: total changed to %v", total.Data()[0])
	}
	// A disabled argument conflicts with nothing: here x is also written.
	w := op2.NewKernel(`void wr(double *x, const double *unused) { *x = 3; }`, "wr")
	check(t, op2.ParLoop(w, nodes, x.Arg(op2.Write), op2.Opt(false, x.Arg(op2.Read))))
	for n, v := range x.Data() {
		if v != 3 {
			t.Fatalf("x[%d] = %v, want 3", n, v)
		}
	}
}

// minMaxRef folds candidates into start with a Go MIN (lo) or MAX.
func minMaxRef(start []float64, lo bool, dim int, elems int, target func(e, c int) int, cand func(e, c, k int) float64, cols int) []float64 {
	out := append([]float64(nil), start...)
	for e := 0; e < elems; e++ {
		for c := 0; c < cols; c++ {
			n := target(e, c)
			for k := 0; k < dim; k++ {
				v := cand(e, c, k)
				if lo && v < out[n*dim+k] || !lo && v > out[n*dim+k] {
					out[n*dim+k] = v
				}
			}
		}
	}
	return out
}

func testMinMaxThroughMaps(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const nEdges, nNodes = 5000, 900
	edges, nodes, table, m := edgeMesh(r, nEdges, nNodes)
	// A second map onto the same nodes: minima through two maps of one Dat.
	table2 := make([]int32, nEdges)
	for i := range table2 {
		table2[i] = int32(r.IntN(nNodes))
	}
	m2 := must(op2.NewMap(edges, nodes, 1, table2, "other"))
	vals := make([]float64, 2*nEdges)
	for i := range vals {
		vals[i] = r.NormFloat64() * 100
	}
	val := must(op2.NewDat(edges, 2, vals, "val"))
	start := func() []float64 {
		s := make([]float64, 2*nNodes)
		for i := range s {
			s[i] = r.NormFloat64() * 150
		}
		s[0] = math.Inf(1) // a target with infinity keeps the candidates' minimum
		return s
	}
	loStart, hiStart := start(), start()
	lo := must(op2.NewDat(nodes, 2, loStart, "lo"))
	hi := must(op2.NewDat(nodes, 2, hiStart, "hi"))
	// The accumulators start from the identity: the kernel sees +inf in a
	// MIN argument and -inf in a MAX one whatever the targets hold.
	seen := must(op2.NewGlobal[int32](1, nil, "seen"))
	k := op2.NewKernel(`
void mm(const double *v, double *lo0, double *lo1, double *lo2, double **hi, int *seen) {
  const double big = 1.7976931348623157e308; /* the largest double: only infinity exceeds it */
  if (lo0[0] > big && lo0[1] > big && hi[0][0] < -big && hi[1][1] < -big) *seen += 1;
  lo0[0] = v[0]; lo0[1] = v[1];
  lo1[0] = v[0] * 0.5;          /* lo1[1] left alone: no contribution */
  lo2[1] = v[1] - 1;
  hi[0][0] = v[0]; hi[0][1] = v[1];
  hi[1][0] = -v[0];
}`, "mm")
	check(t, op2.ParLoop(k, edges, val.Arg(op2.Read), lo.ArgMap(op2.Min, m, 0), lo.ArgMap(op2.Min, m, 1), lo.ArgMap(op2.Min, m2, 0),
		hi.ArgVec(op2.Max, m), seen.Arg(op2.Inc)))
	if got := seen.Data()[0]; got != nEdges {
		t.Errorf("%d of %d elements saw the identities in their accumulators", got, nEdges)
	}
	inf := math.Inf(1)
	wantLo := minMaxRef(loStart, true, 2, nEdges, func(e, c int) int { return int(table[2*e]) }, func(e, c, k int) float64 { return vals[2*e+k] }, 1)
	wantLo = minMaxRef(wantLo, true, 2, nEdges, func(e, c int) int { return int(table[2*e+1]) }, func(e, c, k int) float64 {
		if k == 1 {
			return inf
		}
		return vals[2*e] * 0.5
	}, 1)
	wantLo = minMaxRef(wantLo, true, 2, nEdges, func(e, c int) int { return int(table2[e]) }, func(e, c, k int) float64 {
		if k == 0 {
			return inf
		}
		return vals[2*e+1] - 1
	}, 1)
	wantHi := minMaxRef(hiStart, false, 2, nEdges, func(e, c int) int { return int(table[2*e+c]) }, func(e, c, k int) float64 {
		switch {
		case c == 0:
			return vals[2*e+k]
		case k == 0:
			return -vals[2*e]
		}
		return math.Inf(-1)
	}, 2)
	for i, w := range wantLo {
		if g := lo.Data()[i]; math.Float64bits(g) != math.Float64bits(w) {
			t.Fatalf("lo[%d] = %v, want %v", i, g, w)
		}
	}
	for i, w := range wantHi {
		if g := hi.Data()[i]; math.Float64bits(g) != math.Float64bits(w) {
			t.Fatalf("hi[%d] = %v, want %v", i, g, w)
		}
	}
}

func testMinMaxOtherTypes(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const nEdges, nNodes = 3000, 400
	edges, nodes, table, m := edgeMesh(r, nEdges, nNodes)
	iv := make([]int32, nEdges)
	for i := range iv {
		iv[i] = r.Int32() - 1<<30
	}
	src := must(op2.NewDat(edges, 1, iv, "src"))
	ilo := must(op2.NewDat(nodes, 1, make([]int32, nNodes), "ilo"))
	lmax := must(op2.NewDat(nodes, 1, make([]int64, nNodes), "lmax"))
	umax := must(op2.NewDat(nodes, 1, make([]uint32, nNodes), "umax"))
	fmin := must(op2.NewDat(nodes, 1, make([]float32, nNodes), "fmin"))
	k := op2.NewKernel(`
void typed(const int *v, int *lo, long long **hi, unsigned int *u, float *f) {
  *lo = *v;
  hi[0][0] = (long long)*v * 4; hi[1][0] = -(long long)*v;
  *u = (unsigned int)*v;
  *f = (float)*v / 3;
}`, "typed")
	check(t, op2.ParLoop(k, edges, src.Arg(op2.Read), ilo.ArgMap(op2.Min, m, 1), lmax.ArgVec(op2.Max, m), umax.ArgMap(op2.Max, m, 0), fmin.ArgMap(op2.Min, m, 0)))
	wlo, whi, wu, wf := make([]int32, nNodes), make([]int64, nNodes), make([]uint32, nNodes), make([]float32, nNodes)
	for e, v := range iv {
		a, b := table[2*e], table[2*e+1]
		wlo[b] = min(wlo[b], v)
		whi[a] = max(whi[a], int64(v)*4)
		whi[b] = max(whi[b], -int64(v))
		wu[a] = max(wu[a], uint32(v))
		wf[a] = min(wf[a], float32(v)/3)
	}
	for n := 0; n < nNodes; n++ {
		if ilo.Data()[n] != wlo[n] || lmax.Data()[n] != whi[n] || umax.Data()[n] != wu[n] || math.Float32bits(fmin.Data()[n]) != math.Float32bits(wf[n]) {
			t.Fatalf("node %d: int32 min %d, int64 max %d, uint32 max %d, float32 min %v; want %d, %d, %d, %v",
				n, ilo.Data()[n], lmax.Data()[n], umax.Data()[n], fmin.Data()[n], wlo[n], whi[n], wu[n], wf[n])
		}
	}
}
