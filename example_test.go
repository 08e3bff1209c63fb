package op2_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/goop2/op2"
)

// A small mesh of two triangles sharing an edge: compute each cell's
// centroid (an indirect read through a vector map), then sum, for each node,
// the number of cells it belongs to (an indirect increment).
func Example() {
	nodes, _ := op2.NewSet(4, "nodes")
	cells, _ := op2.NewSet(2, "cells")
	cellNodes, _ := op2.NewMap(cells, nodes, 3, []int32{0, 1, 2, 2, 1, 3}, "cellNodes")
	coords, _ := op2.NewDat(nodes, 2, []float64{0, 0, 1, 0, 0, 1, 1, 1}, "coords")
	centre, _ := op2.NewDat[float64](cells, 2, nil, "centre")
	degree, _ := op2.NewDat[int32](nodes, 1, nil, "degree")

	centroid := op2.NewKernel(`
void centroid(double *c, double *x[3]) {
  c[0] = (x[0][0] + x[1][0] + x[2][0]) / 3.0;
  c[1] = (x[0][1] + x[1][1] + x[2][1]) / 3.0;
}`, "centroid")
	if err := op2.ParLoop(centroid, cells, centre.Arg(op2.Write), coords.ArgVec(op2.Read, cellNodes)); err != nil {
		fmt.Println(err)
		return
	}
	count := op2.NewKernel(`void count(int *a, int *b, int *c) { *a += 1; *b += 1; *c += 1; }`, "count")
	if err := op2.ParLoop(count, cells,
		degree.ArgMap(op2.Inc, cellNodes, 0), degree.ArgMap(op2.Inc, cellNodes, 1), degree.ArgMap(op2.Inc, cellNodes, 2)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("centres %.3f\n", centre.Data())
	fmt.Println("degree", degree.Data())
	// Output:
	// centres [0.333 0.333 0.667 0.667]
	// degree [1 2 2 1]
}

// Reductions into a Global: the sum and the maximum of a Dat.
func ExampleGlobal() {
	set, _ := op2.NewSet(5, "values")
	v, _ := op2.NewDat(set, 1, []float64{3, 1, 4, 1, 5}, "v")
	total, _ := op2.NewGlobal[float64](1, nil, "total")
	biggest, _ := op2.NewGlobal(1, []float64{-1e300}, "biggest")
	k := op2.NewKernel(`void stats(const double *v, double *s, double *m) {
  *s += *v;
  if (*v > *m) *m = *v;
}`, "stats")
	if err := op2.ParLoop(k, set, v.Arg(op2.Read), total.Arg(op2.Inc), biggest.Arg(op2.Max)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(total.Data()[0], biggest.Data()[0])
	// Output: 14 5
}

// A Const is read by name inside kernels; a new value applies to the next
// loop without recompiling.
func ExampleConst() {
	gain, _ := op2.NewConst(1, []float64{2}, "gain")
	defer gain.Remove()
	set, _ := op2.NewSet(3, "s")
	x, _ := op2.NewDat(set, 1, []float64{1, 2, 3}, "x")
	scale := op2.NewKernel("void scale(double *x) { *x *= gain; }", "scale")
	_ = op2.ParLoop(scale, set, x.Arg(op2.RW))
	_ = gain.Set(10)
	_ = op2.ParLoop(scale, set, x.Arg(op2.RW))
	fmt.Println(x.Data())
	// Output: [20 40 60]
}

// The loop object separates code generation from execution.
func ExampleLoop_Generate() {
	set, _ := op2.NewSet(3, "s")
	x, _ := op2.NewDat[float64](set, 1, nil, "x")
	l, _ := op2.NewLoop(op2.NewKernel("void one(double *x) { *x = 1; }", "one"), set, x.Arg(op2.Write))
	src, _ := l.Generate()
	fmt.Println(len(src) > 0)
	_ = l.Compute()
	fmt.Println(x.Data())
	// Output:
	// true
	// [1 1 1]
}

// A runtime of its own: its configuration, programs and constants are
// independent of the default runtime's.
func ExampleNewRuntime() {
	r, err := op2.NewRuntime(op2.Config{Backend: "openmp", Threads: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	set, _ := op2.NewSet(4, "s")
	x, _ := op2.NewDat(set, 1, []float64{1, 2, 3, 4}, "x")
	sum, _ := op2.NewGlobal[float64](1, nil, "sum")
	add := op2.NewKernel("void add(const double *x, double *s) { *s += *x; }", "add")
	_ = r.ParLoop(add, set, x.Arg(op2.Read), sum.Arg(op2.Inc))
	fmt.Println(r.Backend(), sum.Data())
	// Output: openmp [10]
}

// Static generation: any backend's source, with nothing opened.
func ExampleGenerate() {
	set, _ := op2.NewSet(3, "s")
	x, _ := op2.NewDat[float64](set, 1, nil, "x")
	src, err := op2.Generate("opencl", op2.NewKernel("void one(double *x) { *x = 1; }", "one"), set, x.Arg(op2.Write))
	fmt.Println(err == nil && strings.Contains(src, "__kernel"))
	// Output: true
}

// Dumping a Dat in OP2's text and binary formats and loading the dumps
// into another Dat on the same set.
func ExampleDat_WriteText() {
	dir, err := os.MkdirTemp("", "dump")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	cells, _ := op2.NewSet(3, "cells")
	q, _ := op2.NewDat(cells, 2, []float64{1, 0.5, -2, 0.25, 3, 0}, "q")
	txt, bin := filepath.Join(dir, "q.txt"), filepath.Join(dir, "q.bin")
	if err := q.WriteText(txt); err != nil {
		fmt.Println(err)
		return
	}
	if err := q.WriteBinary(bin); err != nil {
		fmt.Println(err)
		return
	}
	text, _ := os.ReadFile(txt)
	fmt.Print(string(text))

	fromText, _ := op2.NewDat[float64](cells, 2, nil, "fromText")
	fromBinary, _ := op2.NewDat[float64](cells, 2, nil, "fromBinary")
	if err := fromText.ReadText(txt); err != nil {
		fmt.Println(err)
		return
	}
	if err := fromBinary.ReadBinary(bin); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(fromText.Data(), fromBinary.Data())

	// A dump of another shape is refused, naming the file and the line.
	other, _ := op2.NewDat[float64](cells, 3, nil, "other")
	err = other.ReadText(txt)
	fmt.Println(strings.ReplaceAll(err.Error(), dir, "DIR"))
	// Output:
	// 3 2
	//  +1.000000000000000E+00 +5.000000000000000E-01
	//  -2.000000000000000E+00 +2.500000000000000E-01
	//  +3.000000000000000E+00 +0.000000000000000E+00
	// [1 0.5 -2 0.25 3 0] [1 0.5 -2 0.25 3 0]
	// op2: reading dat "other" (float64, dim 3) on set "cells" from DIR/q.txt: line 1: header says size 3, dim 2; the dat has size 3, dim 3
}

// A loop over a subset: boundary edges only. Direct arguments are the
// parent set's Dats and maps are the parent set's maps; the kernel runs
// for the subset's elements (given in any order, duplicates dropped).
func ExampleSubset() {
	nodes, _ := op2.NewSet(4, "nodes")
	edges, _ := op2.NewSet(5, "edges")
	edgeNodes, _ := op2.NewMap(edges, nodes, 2, []int32{0, 1, 1, 2, 2, 3, 3, 0, 0, 2}, "edgeNodes")
	boundary, err := op2.NewSubset(edges, []int32{3, 0, 1, 2, 0})
	if err != nil {
		fmt.Println(err)
		return
	}
	flux, _ := op2.NewDat(edges, 1, []float64{1, 2, 3, 4, 100}, "flux")
	res, _ := op2.NewDat[float64](nodes, 1, nil, "res")
	total, _ := op2.NewGlobal[float64](1, nil, "total")
	k := op2.NewKernel(`void spread(const double *f, double *a, double *b, double *t) {
  *a += 0.5 * *f;
  *b += 0.5 * *f;
  *t += *f;
}`, "spread")
	if err := op2.ParLoop(k, boundary, flux.Arg(op2.Read),
		res.ArgMap(op2.Inc, edgeNodes, 0), res.ArgMap(op2.Inc, edgeNodes, 1), total.Arg(op2.Inc)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(boundary.Indices(), res.Data(), total.Value())
	// Output: [0 1 2 3] [2.5 1.5 2.5 3.5] 10
}

// Subsets of subsets and subset algebra (PyOP2's Subset(subset, indices)
// and |, &, -): the indices of a subset of a subset are positions in it;
// every result is a subset of the underlying set, and loops over it take
// the set's Dats and maps.
func ExampleSubset_Union() {
	cells, _ := op2.NewSet(8, "cells")
	even, _ := op2.NewSubset(cells, []int32{0, 2, 4, 6})
	low, _ := op2.NewSubset(cells, []int32{0, 1, 2, 3})
	mid, _ := op2.NewSubset(even, []int32{1, 2}) // positions in even: cells 2 and 4
	union, _ := even.Union(low)
	both, _ := even.Intersection(low)
	onlyEven, _ := even.Difference(low)
	rest, _ := low.Difference(cells) // the set itself as operand: empty
	fmt.Println(mid.Indices(), union.Indices(), both.Indices(), onlyEven.Indices(), rest.Size())

	x, _ := op2.NewDat[int32](cells, 1, nil, "x")
	k := op2.NewKernel("void mark(int *x) { *x += 1; }", "mark")
	for _, s := range []*op2.Subset{mid, union, onlyEven, rest} {
		if err := op2.ParLoop(k, s, x.Arg(op2.RW)); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Println(x.Data())

	other, _ := op2.NewSet(8, "nodes")
	elsewhere, _ := op2.NewSubset(other, []int32{1})
	_, err := even.Union(elsewhere)
	fmt.Println(err)
	_, err = op2.NewSubset(even, []int32{4})
	fmt.Println(err)
	// Output:
	// [2 4] [0 1 2 3 4 6] [0 2] [4 6] 0
	// [1 1 2 1 3 0 2 0]
	// op2: union of subset of set "cells" (4 of 8 elements) and subset of set "nodes" (1 of 8 elements): they are not subsets of one set
	// op2: subset of subset of set "cells" (4 of 8 elements): index 4 (position 0) is outside the subset's positions [0,4)
}

// Renumbering a mesh whose numbering has lost its locality: five nodes on
// a line, declared out of order, joined by four edges. Reverse
// Cuthill–McKee on the nodes' graph numbers neighbours next to each other;
// the edges follow. Data has the new order; Gather, the dumps and index
// arguments keep the declared numbering.
func ExampleRenumber() {
	nodes, _ := op2.NewSet(5, "nodes")
	edges, _ := op2.NewSet(4, "edges")
	// Node positions along the line: node 0 at 0, node 1 at 2, node 2 at 4, node 3 at 1, node 4 at 3.
	x, _ := op2.NewDat(nodes, 1, []float64{0, 2, 4, 1, 3}, "x")
	edgeNodes, _ := op2.NewMap(edges, nodes, 2, []int32{4, 2, 0, 3, 1, 4, 3, 1}, "edgeNodes")
	info, err := op2.Renumber(op2.RCMOrdering(edgeNodes))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("renumbered:", info.Sets)
	fmt.Println("x in the new order:", x.DataRO())
	fmt.Println("declared number of each node:", nodes.DeclaredNumbers())
	fmt.Println("edges in the new numbering:", edgeNodes.Values())

	length, _ := op2.NewDat[float64](edges, 1, nil, "length")
	k := op2.NewKernel(`void len(const double *a, const double *b, double *l) { *l = *b - *a; }`, "len")
	if err := op2.ParLoop(k, edges, x.ArgMap(op2.Read, edgeNodes, 0), x.ArgMap(op2.Read, edgeNodes, 1), length.Arg(op2.Write)); err != nil {
		fmt.Println(err)
		return
	}
	declaredOrder, _ := length.Gather()
	fmt.Println("edge lengths in the declared numbering:", declaredOrder)
	// Output:
	// renumbered: [nodes edges]
	// x in the new order: [4 3 2 1 0]
	// declared number of each node: [2 4 1 3 0]
	// edges in the new numbering: [1 0 2 1 3 2 4 3]
	// edge lengths in the declared numbering: [1 1 1 1]
}

// A view of one component of a Dat (PyOP2's DatView) passed as a Dat of
// dim 1: the kernel gets one value per element. Here the x coordinate
// of each node is read through a map and the y coordinate is written
// directly, in two loops over the same Dat of dim 2.
func ExampleDat_View() {
	nodes, _ := op2.NewSet(3, "nodes")
	edges, _ := op2.NewSet(2, "edges")
	ends, _ := op2.NewMap(edges, nodes, 2, []int32{0, 1, 1, 2}, "ends")
	xy, _ := op2.NewDat(nodes, 2, []float64{0, 5, 2, 5, 6, 5}, "xy")
	length, _ := op2.NewDat[float64](edges, 1, nil, "length")
	x, err := xy.View(0)
	if err != nil {
		fmt.Println(err)
		return
	}
	y, _ := xy.View(1)
	span := op2.NewKernel("void span(const double *a, const double *b, double *l) { *l = *b - *a; }", "span")
	if err := op2.ParLoop(span, edges, x.ArgMap(op2.Read, ends, 0), x.ArgMap(op2.Read, ends, 1), length.Arg(op2.Write)); err != nil {
		fmt.Println(err)
		return
	}
	lift := op2.NewKernel("void lift(const double *x, double *y) { *y = *x * *x; }", "lift")
	if err := op2.ParLoop(lift, nodes, x.Arg(op2.Read), y.Arg(op2.Write)); err != nil {
		fmt.Println(err)
		return
	}
	_, err = xy.View(2)
	fmt.Println(length.Data(), xy.Data(), y.DataRO())
	fmt.Println(err)
	// Output:
	// [2 4] [0 0 2 4 6 36] [0 4 36]
	// op2: view of dat "xy" (float64, dim 2) on set "nodes": component 2 is out of range [0, 2)
}

// ExampleMap_Locality compares a map whose consecutive elements reach
// neighbouring targets with the same map numbered at random: only the
// second has poor locality, which Renumber would mend.
func ExampleMap_Locality() {
	const n = 100000
	nodes, _ := op2.NewSet(n, "loc_nodes")
	edges, _ := op2.NewSet(n-1, "loc_edges")
	ordered := make([]int32, 0, 2*(n-1))
	for e := 0; e < n-1; e++ {
		ordered = append(ordered, int32(e), int32(e+1))
	}
	perm := rand.New(rand.NewPCG(1, 2)).Perm(n)
	scattered := make([]int32, len(ordered))
	for i, v := range ordered {
		scattered[i] = int32(perm[v])
	}
	a, _ := op2.NewMap(edges, nodes, 2, ordered, "loc_ordered")
	b, _ := op2.NewMap(edges, nodes, 2, scattered, "loc_scattered")
	gap, poor := a.Locality()
	fmt.Println("ordered:", gap, poor)
	_, poor = b.Locality()
	fmt.Println("scattered: poor", poor)
	// Output:
	// ordered: 1 false
	// scattered: poor true
}
