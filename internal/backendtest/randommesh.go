package backendtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/goop2/op2"
)

// randomMesh is a random "edges to nodes" mesh with data on both sets.
type randomMesh struct {
	nNodes, nEdges, arity int
	emap                  []int32   // edges -> nodes, arity per edge
	perm                  []int32   // edges -> nodes, one-to-one (nNodes == nEdges)
	nodeF                 []float64 // dim 2 on nodes
	nodeI                 []int32   // dim 1 on nodes
	edgeF                 []float64 // dim 1 on edges
}

func newRandomMesh(r *rand.Rand, nEdges, nNodes, arity int, local bool) *randomMesh {
	m := &randomMesh{nNodes: nNodes, nEdges: nEdges, arity: arity}
	m.emap = make([]int32, nEdges*arity)
	for i := range m.emap {
		m.emap[i] = int32(r.IntN(max(nNodes, 1)))
		if local {
			// Near the edge's place in the node numbering, as on a
			// mesh numbered for locality.
			c := i/arity*nNodes/nEdges + r.IntN(9) - 4
			m.emap[i] = int32(min(max(c, 0), nNodes-1))
		}
	}
	m.nodeF = make([]float64, 2*nNodes)
	for i := range m.nodeF {
		m.nodeF[i] = r.Float64()*2 - 1
	}
	m.nodeI = make([]int32, nNodes)
	for i := range m.nodeI {
		m.nodeI[i] = int32(r.IntN(1000)) - 500
	}
	m.edgeF = make([]float64, nEdges)
	for i := range m.edgeF {
		m.edgeF[i] = r.Float64()
	}
	p := r.Perm(nEdges)
	m.perm = make([]int32, nEdges)
	for i, v := range p {
		m.perm[i] = int32(v)
	}
	return m
}

// outcome is everything the loops of runRandomLoops compute.
type outcome struct {
	incF       []float64 // vector-map INC of float data
	incI       []int32   // idx-map INC of int data, twice through two columns
	rw         []float64 // RW through a one-to-one map
	wr         []float64 // WRITE through a one-to-one map
	edgeOut    []float64 // direct WRITE of a gathered value
	sum        float64
	sumI       int64
	lo, hi     float64
	minI, maxI int32
}

const randomKernels = `
void gather(const double *w, double **x, const int *c0, double *out) {
  double s = 0;
  for (int k = 0; k < ARITY; k++) s += x[k][0] * x[k][1];
  *out = s * w[0] + c0[0];
}`

// runRandomLoops runs the same loops on the current backend with fresh
// copies of the mesh data.
func runRandomLoops(t *testing.T, m *randomMesh) outcome {
	t.Helper()
	nodes := must(op2.NewSet(m.nNodes, "nodes"))
	edges := must(op2.NewSet(m.nEdges, "edges"))
	emap := must(op2.NewMap(edges, nodes, m.arity, m.emap, "emap"))
	xF := must(op2.NewDat(nodes, 2, m.nodeF, "xF"))
	xI := must(op2.NewDat(nodes, 1, m.nodeI, "xI"))
	w := must(op2.NewDat(edges, 1, m.edgeF, "w"))
	out := must(op2.NewDat[float64](edges, 1, nil, "out"))
	accF := must(op2.NewDat[float64](nodes, 2, nil, "accF"))
	accI := must(op2.NewDat[int32](nodes, 1, nil, "accI"))

	ar := fmt.Sprint(m.arity)
	gather := op2.NewKernel("#define ARITY "+ar+"\n"+randomKernels, "gather")
	check(t, op2.ParLoop(gather, edges, w.Arg(op2.Read), xF.ArgVec(op2.Read, emap), xI.ArgMap(op2.Read, emap, m.arity-1), out.Arg(op2.Write)))

	scatter := op2.NewKernel(`void scatter(const double *w, double **acc) {
  for (int k = 0; k < `+ar+`; k++) { acc[k][0] += w[0] * (k + 1); acc[k][1] -= w[0]; }
}`, "scatter")
	check(t, op2.ParLoop(scatter, edges, w.Arg(op2.Read), accF.ArgVec(op2.Inc, emap)))

	col := m.arity - 1
	count := op2.NewKernel(`void count(int *a, int *b, const int *x) { *a += 1; *b += *x; }`, "count")
	check(t, op2.ParLoop(count, edges, accI.ArgMap(op2.Inc, emap, 0), accI.ArgMap(op2.Inc, emap, col), xI.ArgMap(op2.Read, emap, 0)))

	var o outcome
	if m.nNodes == m.nEdges {
		perm := must(op2.NewMap(edges, nodes, 1, m.perm, "perm"))
		rw := must(op2.NewDat(nodes, 2, m.nodeF, "rw"))
		wr := must(op2.NewDat[float64](nodes, 1, nil, "wr"))
		k := op2.NewKernel(`void permute(double *y, double *z, const double *w) {
  y[0] = y[0] * 2 + w[0]; y[1] = -y[1]; z[0] = w[0] + 1;
}`, "permute")
		check(t, op2.ParLoop(k, edges, rw.ArgMap(op2.RW, perm, 0), wr.ArgMap(op2.Write, perm, 0), w.Arg(op2.Read)))
		o.rw, o.wr = rw.Data(), wr.Data()
	}

	sum := must(op2.NewGlobal(1, []float64{0.25}, "sum"))
	sumI := must(op2.NewGlobal(1, []int64{7}, "sumI"))
	lo := must(op2.NewGlobal(1, []float64{math.Inf(1)}, "lo"))
	hi := must(op2.NewGlobal(1, []float64{-0.5}, "hi"))
	minI := must(op2.NewGlobal(1, []int32{1 << 30}, "minI"))
	maxI := must(op2.NewGlobal(1, []int32{-1 << 30}, "maxI"))
	red := op2.NewKernel(`void red(const double *v, const int *i, double *s, long long *si, double *lo, double *hi, int *mi, int *ma) {
  *s += v[0];
  *si += *i;
  if (v[0] < *lo) *lo = v[0];
  if (v[0] > *hi) *hi = v[0];
  if (*i < *mi) *mi = *i;
  if (*i > *ma) *ma = *i;
}`, "red")
	check(t, op2.ParLoop(red, edges, out.Arg(op2.Read), xI.ArgMap(op2.Read, emap, 0),
		sum.Arg(op2.Inc), sumI.Arg(op2.Inc), lo.Arg(op2.Min), hi.Arg(op2.Max), minI.Arg(op2.Min), maxI.Arg(op2.Max)))

	o.incF, o.incI, o.edgeOut = accF.Data(), accI.Data(), out.Data()
	o.sum, o.sumI, o.lo, o.hi = sum.Data()[0], sumI.Data()[0], lo.Data()[0], hi.Data()[0]
	o.minI, o.maxI = minI.Data()[0], maxI.Data()[0]
	return o
}

func closeEnough(a, b float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= 1e-12*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func compareOutcomes(t *testing.T, what string, want, got outcome) {
	t.Helper()
	floats := []struct {
		name string
		w, g []float64
	}{{"vector INC", want.incF, got.incF}, {"direct WRITE", want.edgeOut, got.edgeOut}}
	for _, f := range floats {
		if len(f.w) != len(f.g) {
			t.Fatalf("%s: %s: length %d, want %d", what, f.name, len(f.g), len(f.w))
		}
		for i := range f.w {
			if !closeEnough(f.w[i], f.g[i]) {
				t.Fatalf("%s: %s: value %d = %v, sequential gives %v", what, f.name, i, f.g[i], f.w[i])
			}
		}
	}
	exact := []struct {
		name string
		w, g []float64
	}{{"RW through a map", want.rw, got.rw}, {"WRITE through a map", want.wr, got.wr}}
	for _, f := range exact {
		for i := range f.w {
			if f.w[i] != f.g[i] {
				t.Fatalf("%s: %s: value %d = %v, sequential gives %v", what, f.name, i, f.g[i], f.w[i])
			}
		}
	}
	for i := range want.incI {
		if want.incI[i] != got.incI[i] {
			t.Fatalf("%s: int INC: value %d = %d, sequential gives %d", what, i, got.incI[i], want.incI[i])
		}
	}
	if !closeEnough(want.sum, got.sum) || want.sumI != got.sumI || want.lo != got.lo || want.hi != got.hi ||
		want.minI != got.minI || want.maxI != got.maxI {
		t.Fatalf("%s: reductions %v %v %v %v %v %v, sequential gives %v %v %v %v %v %v", what,
			got.sum, got.sumI, got.lo, got.hi, got.minI, got.maxI, want.sum, want.sumI, want.lo, want.hi, want.minI, want.maxI)
	}
}

// testRandomMeshes runs every access mode and reduction on random meshes
// (and one whose maps are local, as on a mesh numbered for locality, where
// the openmp owner scheme has interior elements and separators) with the
// sequential backend and with the backend under test, in the
// configurations that change how it runs (openmp: 1, 2 and 3 threads; block
// sizes 0, 1 and 64 where the backend uses plans), and compares the
// results.
func testRandomMeshes(t *testing.T, backend, cache string) {
	defer func() { check(t, op2.Configure(op2.Config{Backend: backend, CacheDir: cache, PlanCheck: true})) }()
	r := rand.New(rand.NewPCG(1, 2))
	meshes := []struct {
		edges, nodes, arity int
		local               bool
	}{
		{0, 5, 2, false}, {1, 1, 1, false}, {700, 700, 3, false}, {5000, 800, 2, false}, {20000, 20000, 4, false}, {60000, 3000, 8, false},
		{30000, 12000, 2, true},
	}
	// The reference is the scalar sequential code; the sequential
	// backend is compared with it when SIMD lanes or the tuner are on:
	// by default (OP2_SIMD unset: auto), with 4 or 8 lanes.
	simd := os.Getenv("OP2_SIMD")
	lanes := simd != "off" && simd != "scalar"
	if backend == "sequential" && !lanes && os.Getenv("OP2_TUNE") == "" {
		t.Skip("the reference backend: nothing to compare")
	}
	type variant struct{ threads, blockSize int }
	variants := []variant{{0, 0}}
	switch backend {
	case "openmp":
		variants = nil
		for _, threads := range []int{1, 2, 3} {
			for _, bs := range []int{0, 1, 64} {
				variants = append(variants, variant{threads, bs})
			}
		}
	case "opencl":
		variants = []variant{{0, 0}, {0, 64}}
	}
	for _, mc := range meshes {
		m := newRandomMesh(r, mc.edges, mc.nodes, mc.arity, mc.local)
		check(t, op2.Configure(op2.Config{Backend: "sequential", SIMD: "off", CacheDir: cache, PlanCheck: true}))
		want := runRandomLoops(t, m)
		for _, v := range variants {
			if v.blockSize == 1 && mc.edges > 5000 {
				continue // thousands of colours: slow, and covered by smaller meshes
			}
			what := fmt.Sprintf("%s: %d edges, %d nodes, arity %d (local %v), %d threads, block size %d", backend, mc.edges, mc.nodes, mc.arity, mc.local, v.threads, v.blockSize)
			check(t, op2.Configure(op2.Config{Backend: backend, Threads: v.threads, BlockSize: v.blockSize, CacheDir: cache, PlanCheck: true}))
			compareOutcomes(t, what, want, runRandomLoops(t, m))
		}
	}
}
