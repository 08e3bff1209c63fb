package backendtest

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// Conformance tests of loops over extruded sets.
func init() {
	conformance = append(conformance, []struct {
		name string
		test func(t *testing.T)
	}{
		{"ExtrudedPrismsMatchPlainMesh", testExtrudedPrismsMatchPlainMesh},
		{"ExtrudedLayersInOrder", testExtrudedLayersInOrder},
		{"ExtrudedVariableLayers", testExtrudedVariableLayers},
		{"ExtrudedCXXReferences", testExtrudedCXXReferences},
	}...)
}

// prismMesh is a grid of nx × ny squares cut into triangles, with its
// nodes numbered in random order, extruded into nz layers of prisms.
type prismMesh struct {
	nx, ny, nz int
	tri        []int32   // triangle → its 3 nodes
	xy         []float64 // base node coordinates
	z          []float64 // node layer heights, nz+1 of them
}

func newPrismMesh(r *rand.Rand, nx, ny, nz int) *prismMesh {
	m := &prismMesh{nx: nx, ny: ny, nz: nz}
	nn := (nx + 1) * (ny + 1)
	perm := r.Perm(nn)
	m.xy = make([]float64, 2*nn)
	for j := 0; j <= ny; j++ {
		for i := 0; i <= nx; i++ {
			p := perm[j*(nx+1)+i]
			m.xy[2*p], m.xy[2*p+1] = float64(i), float64(j)
		}
	}
	node := func(i, j int) int32 { return int32(perm[j*(nx+1)+i]) }
	for j := 0; j < ny; j++ {
		for i := 0; i < nx; i++ {
			m.tri = append(m.tri, node(i, j), node(i+1, j), node(i+1, j+1), node(i, j), node(i+1, j+1), node(i, j+1))
		}
	}
	m.z = make([]float64, nz+1)
	for k := 1; k <= nz; k++ {
		m.z[k] = m.z[k-1] + 1 + 0.25*float64(k%3) // dyadic: sums are exact
	}
	return m
}

// prismSource computes a prism's volume from its base triangle's
// coordinates and the heights of its bottom and top, adds it times
// (layer+1) to each of its nodes, and reduces it. The plain mesh passes
// the layer as a Dat, the extruded one with ArgLayer.
const prismSource = `
void prism(const double **xy, const double *zb, const double *zt, const int *layer,
           double *vol, double **mass, double *total, double *lo, double *hi) {
  double a = 0.5 * fabs((xy[1][0] - xy[0][0]) * (xy[2][1] - xy[0][1]) - (xy[2][0] - xy[0][0]) * (xy[1][1] - xy[0][1]));
  double v = a * (zt[0] - zb[0]);
  vol[0] = v;
  for (int i = 0; i < 6; i++) mass[i][0] += v * (*layer + 1);
  *total += v;
  if (v < *lo) *lo = v;
  if (v > *hi) *hi = v;
}`

// wideSource adds a prism's volume to the 18 entries of a map that
// passes each of its six nodes three times (more entries than the
// generators unroll).
const wideSource = `
void wide(const double *vol, double **mass) {
  for (int i = 0; i < 18; i++) mass[i][0] += vol[0];
}`

func testExtrudedPrismsMatchPlainMesh(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 24))
	m := newPrismMesh(r, 9, 7, 5)
	ntri, nn, nz := len(m.tri)/3, len(m.xy)/2, m.nz
	triangles := must(op2.NewSet(ntri, "triangles"))
	nodes2 := must(op2.NewSet(nn, "nodes2"))
	tri := must(op2.NewMap(triangles, nodes2, 3, m.tri, "tri"))
	xy := must(op2.NewDat(nodes2, 2, m.xy, "xy"))
	kernel := op2.NewKernel(prismSource, "prism")

	// The plain 3-D mesh: prism (c, l) is c*nz+l, node (n, k) is n*(nz+1)+k.
	prisms3 := must(op2.NewSet(ntri*nz, "prisms3"))
	nodes3 := must(op2.NewSet(nn*(nz+1), "nodes3"))
	var base3, six3 []int32
	layer3 := make([]int32, ntri*nz)
	z3 := make([]float64, nn*(nz+1))
	for n := 0; n < nn; n++ {
		for k := 0; k <= nz; k++ {
			z3[n*(nz+1)+k] = m.z[k]
		}
	}
	for c := 0; c < ntri; c++ {
		for l := 0; l < nz; l++ {
			layer3[c*nz+l] = int32(l)
			base3 = append(base3, m.tri[3*c:3*c+3]...)
			for s := 0; s < 2; s++ {
				for i := 0; i < 3; i++ {
					six3 = append(six3, m.tri[3*c+i]*int32(nz+1)+int32(l+s))
				}
			}
		}
	}
	pbase := must(op2.NewMap(prisms3, nodes2, 3, base3, "pbase"))
	psix := must(op2.NewMap(prisms3, nodes3, 6, six3, "psix"))
	zPlain := must(op2.NewDat(nodes3, 1, z3, "z3"))
	layerPlain := must(op2.NewDat(prisms3, 1, layer3, "layer3"))
	volPlain := must(op2.NewDat[float64](prisms3, 1, nil, "vol3"))
	massPlain := must(op2.NewDat[float64](nodes3, 1, nil, "mass3"))
	globals := func() (*op2.Global[float64], *op2.Global[float64], *op2.Global[float64]) {
		return must(op2.NewGlobal(1, []float64{0}, "total")), must(op2.NewGlobal(1, []float64{1e300}, "lo")), must(op2.NewGlobal(1, []float64{-1e300}, "hi"))
	}
	tp, lp, hp := globals()
	check(t, op2.ParLoop(kernel, prisms3, xy.ArgVec(op2.Read, pbase), zPlain.ArgMap(op2.Read, psix, 0), zPlain.ArgMap(op2.Read, psix, 3),
		layerPlain.Arg(op2.Read), volPlain.Arg(op2.Write), massPlain.ArgVec(op2.Inc, psix), tp.Arg(op2.Inc), lp.Arg(op2.Min), hp.Arg(op2.Max)))

	// The same mesh extruded.
	prisms := must(op2.NewExtrudedSet(triangles, nz, "prisms"))
	nodes := must(op2.NewExtrudedSet(nodes2, nz+1, "nodes"))
	six := make([]int32, 0, 6*ntri)
	for c := 0; c < ntri; c++ {
		six = append(six, m.tri[3*c:3*c+3]...)
		six = append(six, m.tri[3*c:3*c+3]...)
	}
	triSix := must(op2.NewMap(triangles, nodes2, 6, six, "trisix"))
	pnodes := must(op2.NewExtrudedMap(prisms, nodes, triSix, []int{0, 0, 0, 1, 1, 1}, []int{1, 1, 1, 1, 1, 1}, "pnodes"))
	pxy := must(op2.NewExtrudedMap(prisms, nil, tri, nil, nil, "pxy"))
	z := must(op2.NewExtrudedDat(nodes, 1, z3, "z"))
	vol := must(op2.NewExtrudedDat[float64](prisms, 1, nil, "vol"))
	mass := must(op2.NewExtrudedDat[float64](nodes, 1, nil, "mass"))
	tx, lx, hx := globals()
	check(t, op2.ParLoop(kernel, prisms, xy.ArgExtVec(op2.Read, pxy), z.ArgExtMap(op2.Read, pnodes, 0), z.ArgExtMap(op2.Read, pnodes, 3),
		op2.ArgLayer(), vol.Arg(op2.Write), mass.ArgExtVec(op2.Inc, pnodes), tx.Arg(op2.Inc), lx.Arg(op2.Min), hx.Arg(op2.Max)))

	if got, want := vol.Data(), volPlain.Data(); !slices.Equal(got, want) {
		t.Errorf("prism volumes differ from the plain mesh's:\n got %v\nwant %v", got, want)
	}
	if got, want := mass.Data(), massPlain.Data(); !slices.Equal(got, want) {
		t.Errorf("node sums differ from the plain mesh's:\n got %v\nwant %v", got, want)
	}
	for _, g := range []struct {
		name      string
		got, want *op2.Global[float64]
	}{{"total", tx, tp}, {"min", lx, lp}, {"max", hx, hp}} {
		if got, want := g.got.Data()[0], g.want.Data()[0]; got != want {
			t.Errorf("%s volume = %v, want the plain mesh's %v", g.name, got, want)
		}
	}
	if got := tx.Data()[0]; got != float64(m.nx*m.ny)*m.z[nz] {
		t.Errorf("total volume = %v, want %v", got, float64(m.nx*m.ny)*m.z[nz])
	}

	// Eighteen entries per prism: each node three times.
	eighteen := make([]int32, 0, 18*ntri)
	for c := 0; c < ntri; c++ {
		for range 3 {
			eighteen = append(eighteen, six[6*c:6*c+6]...)
		}
	}
	triWide := must(op2.NewMap(triangles, nodes2, 18, eighteen, "triwide"))
	start := slices.Repeat([]int{0, 0, 0, 1, 1, 1}, 3)
	pwide := must(op2.NewExtrudedMap(prisms, nodes, triWide, start, slices.Repeat([]int{1}, 18), "pwide"))
	wmass := must(op2.NewExtrudedDat[float64](nodes, 1, nil, "wmass"))
	check(t, op2.ParLoop(op2.NewKernel(wideSource, "wide"), prisms, vol.Arg(op2.Read), wmass.ArgExtVec(op2.Inc, pwide)))
	// The same sums without the layer factor, three times.
	want := make([]float64, nn*(nz+1))
	v := vol.Data()
	for c := 0; c < ntri; c++ {
		for l := 0; l < nz; l++ {
			for s := 0; s < 2; s++ {
				for i := 0; i < 3; i++ {
					want[int(m.tri[3*c+i])*(nz+1)+l+s] += 3 * v[c*nz+l]
				}
			}
		}
	}
	if got := wmass.Data(); !slices.Equal(got, want) {
		t.Errorf("sums through an 18-entry extruded map:\n got %v\nwant %v", got, want)
	}
}

// testExtrudedLayersInOrder runs a loop whose result depends on the
// layers of each column running in increasing order: each segment of a
// column sets its top point's height from its bottom's, through an
// extruded map whose base map is the identity. It also checks ArgIdx
// (the column) and ArgLayer.
func testExtrudedLayersInOrder(t *testing.T) {
	const ncol, nz = 300, 70 // a column of h takes 568 bytes: too many to stage in work groups of 64 or more
	cols := must(op2.NewSet(ncol, "cols"))
	pair := make([]int32, 2*ncol)
	for c := range ncol {
		pair[2*c], pair[2*c+1] = int32(c), int32(c)
	}
	ident := must(op2.NewMap(cols, cols, 2, pair, "ident"))
	segs := must(op2.NewExtrudedSet(cols, nz, "segments"))
	pts := must(op2.NewExtrudedSet(cols, nz+1, "points"))
	ends := must(op2.NewExtrudedMap(segs, pts, ident, []int{0, 1}, []int{1, 1}, "ends"))
	h0 := make([]float64, ncol*(nz+1))
	for c := range ncol {
		h0[c*(nz+1)] = float64(c)
	}
	h := must(op2.NewExtrudedDat(pts, 1, h0, "h"))
	where := must(op2.NewExtrudedDat[int32](segs, 2, nil, "where"))
	k := op2.NewKernel(`
void up(double **h, const int *layer, const int *col, int *where) {
  h[1][0] = h[0][0] + *layer + 1;
  where[0] = *col;
  where[1] = *layer;
}`, "up")
	check(t, op2.ParLoop(k, segs, h.ArgExtVec(op2.RW, ends), op2.ArgLayer(), op2.ArgIdx(), where.Arg(op2.Write)))
	// A direct loop (no maps), with reductions, reading a dat of the
	// base set directly: every layer sees its column's values.
	bad := must(op2.NewGlobal(1, []int32{0}, "bad"))
	top := must(op2.NewGlobal(1, []int32{-1}, "top"))
	thrice := make([]float64, ncol)
	for c := range ncol {
		thrice[c] = 3 * float64(c)
	}
	colVal := must(op2.NewDat(cols, 1, thrice, "thrice"))
	direct := op2.NewKernel(`
void same(const int *where, const int *layer, const double *thrice, int *bad, int *top) {
  if (where[1] != *layer || *thrice != 3 * where[0]) *bad += 1;
  if (*layer > *top) *top = *layer;
}`, "same")
	check(t, op2.ParLoop(direct, segs, where.Arg(op2.Read), op2.ArgLayer(), colVal.Arg(op2.Read), bad.Arg(op2.Inc), top.Arg(op2.Max)))
	if b, tp := bad.Data()[0], top.Data()[0]; b != 0 || tp != nz-1 {
		t.Errorf("direct loop: %d elements saw another layer than they wrote, top layer %d (want 0 and %d)", b, tp, nz-1)
	}
	got, w := h.Data(), where.Data()
	for c := range ncol {
		for l := 0; l <= nz; l++ {
			if want := float64(c + l*(l+1)/2); got[c*(nz+1)+l] != want {
				t.Fatalf("column %d, layer %d: height %v, want %v", c, l, got[c*(nz+1)+l], want)
			}
			if l == nz {
				continue
			}
			if e := 2 * (c*nz + l); w[e] != int32(c) || w[e+1] != int32(l) {
				t.Fatalf("segment (%d, %d): the kernel got column %d and layer %d", c, l, w[e], w[e+1])
			}
		}
	}
}

// testExtrudedVariableLayers runs loops over an extruded set whose
// columns have layer ranges of their own (some empty): a loop
// incrementing, through an extruded map, the points above and below each
// segment of the range, with a reduction, and a direct loop; layers
// outside a column's range keep their values.
func testExtrudedVariableLayers(t *testing.T) {
	const ncol, nz = 500, 9
	r := rand.New(rand.NewPCG(5, 9))
	cols := must(op2.NewSet(ncol, "cols"))
	// Each column's points and its neighbour's: the increments of
	// neighbouring columns meet, so the plan colours them.
	pairs := make([]int32, 2*ncol)
	ranges := make([]int32, 2*ncol)
	for c := range ncol {
		pairs[2*c], pairs[2*c+1] = int32(c), int32((c+1)%ncol)
		lo := r.IntN(nz + 1)
		ranges[2*c], ranges[2*c+1] = int32(lo), int32(lo+r.IntN(nz+1-lo))
	}
	ranges[0], ranges[1] = 0, nz // one full column
	nb := must(op2.NewMap(cols, cols, 2, pairs, "nb"))
	segs := must(op2.NewVariableExtrudedSet(cols, nz, ranges, "segments"))
	pts := must(op2.NewExtrudedSet(cols, nz+1, "points"))
	m := must(op2.NewExtrudedMap(segs, pts, nb, []int{0, 1}, []int{1, 1}, "m"))
	hits := must(op2.NewExtrudedDat(pts, 1, slices.Repeat([]float64{0.5}, ncol*(nz+1)), "hits"))
	seen := must(op2.NewExtrudedDat(segs, 1, slices.Repeat([]int32{-1}, ncol*nz), "seen"))
	count := must(op2.NewGlobal(1, []int32{0}, "count"))
	k := op2.NewKernel(`
void hit(const int *layer, double **p, int *n) {
  p[0][0] += *layer + 1;
  p[1][0] += 100 * (*layer + 1);
  *n += 1;
}`, "hit")
	check(t, op2.ParLoop(k, segs, op2.ArgLayer(), hits.ArgExtVec(op2.Inc, m), count.Arg(op2.Inc)))
	direct := op2.NewKernel(`void mark(const int *layer, int *s) { *s = *layer; }`, "mark")
	check(t, op2.ParLoop(direct, segs, op2.ArgLayer(), seen.Arg(op2.Write)))
	want := slices.Repeat([]float64{0.5}, ncol*(nz+1))
	wantSeen := slices.Repeat([]int32{-1}, ncol*nz)
	n := int32(0)
	for c := range ncol {
		for l := int(ranges[2*c]); l < int(ranges[2*c+1]); l++ {
			want[c*(nz+1)+l] += float64(l + 1)
			want[((c+1)%ncol)*(nz+1)+l+1] += 100 * float64(l+1)
			wantSeen[c*nz+l] = int32(l)
			n++
		}
	}
	if got := hits.Data(); !slices.Equal(got, want) {
		t.Errorf("increments over variable layers:\n got %v\nwant %v", got, want)
	}
	if got := seen.Data(); !slices.Equal(got, wantSeen) {
		t.Errorf("direct loop over variable layers:\n got %v\nwant %v", got, wantSeen)
	}
	if got := count.Data()[0]; got != n {
		t.Errorf("the kernel ran %d times, want %d (the layers in the columns' ranges)", got, n)
	}
}

// testExtrudedCXXReferences runs a C++ kernel whose reference parameters
// reach one value of a layer (a direct extruded dat and one through an
// extruded map); opencl refuses C++ kernels.
func testExtrudedCXXReferences(t *testing.T) {
	const ncol, nz = 50, 4
	cols := must(op2.NewSet(ncol, "cols"))
	pairs := make([]int32, 2*ncol)
	for c := range ncol {
		pairs[2*c], pairs[2*c+1] = int32(c), int32((c+1)%ncol)
	}
	nb := must(op2.NewMap(cols, cols, 2, pairs, "nb"))
	segs := must(op2.NewExtrudedSet(cols, nz, "segments"))
	pts := must(op2.NewExtrudedSet(cols, nz+1, "points"))
	m := must(op2.NewExtrudedMap(segs, pts, nb, []int{0, 1}, []int{1, 1}, "m"))
	v := must(op2.NewExtrudedDat[float64](segs, 1, nil, "v"))
	acc := must(op2.NewExtrudedDat[float64](pts, 1, nil, "acc"))
	k := op2.NewKernel(`
static inline double twice(const int &l) { return 2.0 * l; }
void refs(const int &layer, double &v, double &acc) { v = twice(layer); acc += layer + 1; }`, "refs").CXX()
	err := op2.ParLoop(k, segs, op2.ArgLayer(), v.Arg(op2.Write), acc.ArgExtMap(op2.Inc, m, 1))
	if op2.Backend() == "opencl" {
		if err == nil || !strings.Contains(err.Error(), "C++ for OpenCL") {
			t.Fatalf("a C++ kernel on opencl: got %v, want the refusal", err)
		}
		return
	}
	check(t, err)
	wantV := make([]float64, ncol*nz)
	wantAcc := make([]float64, ncol*(nz+1))
	for c := range ncol {
		for l := range nz {
			wantV[c*nz+l] = 2 * float64(l)
			wantAcc[((c+1)%ncol)*(nz+1)+l+1] += float64(l + 1)
		}
	}
	if got := v.Data(); !slices.Equal(got, wantV) {
		t.Errorf("direct reference: %v, want %v", got, wantV)
	}
	if got := acc.Data(); !slices.Equal(got, wantAcc) {
		t.Errorf("reference through an extruded map: %v, want %v", got, wantAcc)
	}
}
