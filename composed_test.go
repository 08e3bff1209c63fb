package op2_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// compose is the composition NewComposedMap documents, made in Go:
// entry i×ko+j of element e is outer's entry j of element inner[e][i].
func compose(outer []int32, ko int, inner []int32) []int32 {
	var out []int32
	for _, t := range inner {
		out = append(out, outer[int(t)*ko:(int(t)+1)*ko]...)
	}
	return out
}

// TestComposedMap checks composed maps' values against PyOP2's tests of
// ComposedMap (two and three maps, nested either way, an inner permuted
// map) and general arities, runs PyOP2's copy loop through one on every
// backend, over the set and over a subset, and checks that bad compositions are refused naming the maps
// and sets. (internal/backendtest's ComposedMap compares loops and
// matrices through a composed map with an explicit one on every backend,
// and TestMPIRandomAgreesWithOneRank composes maps before Partition.)
func TestComposedMap(t *testing.T) {
	// PyOP2's test_composed_map_two_maps and _three_maps.
	setA, nodesA := must(op2.NewSet(5, "setA")), must(op2.NewSet(8, "nodesetA"))
	setB, setC := must(op2.NewSet(3, "setB")), must(op2.NewSet(2, "setC"))
	a0 := must(op2.NewMap(setA, nodesA, 2, []int32{0, 1, 2, 3, 4, 5, 6, 7, 0, 1}, "mapA0"))
	a1 := must(op2.NewMap(setB, setA, 1, []int32{3, 1, 2}, "mapA1"))
	a2 := must(op2.NewMap(setC, setB, 1, []int32{2, 0}, "mapA2"))
	wide := must(op2.NewMap(setB, setA, 3, []int32{0, 4, 4, 1, 2, 3, 3, 3, 0}, "wide"))
	a0a1 := must(op2.NewComposedMap("A0 A1", a0, a1))
	tests := []struct {
		name     string
		maps     []*op2.Map
		from, to *op2.Set
		arity    int
		want     []int32
	}{
		{"two maps", []*op2.Map{a0, a1}, setB, nodesA, 2, []int32{6, 7, 2, 3, 4, 5}},
		{"permuted first", []*op2.Map{must(op2.NewPermutedMap(a0, []int{1, 0}, "A0 swapped")), a1}, setB, nodesA, 2, []int32{7, 6, 3, 2, 5, 4}},
		{"three maps", []*op2.Map{a0, a1, a2}, setC, nodesA, 2, []int32{4, 5, 6, 7}},
		{"three maps, first nested", []*op2.Map{a0a1, a2}, setC, nodesA, 2, []int32{4, 5, 6, 7}},
		{"three maps, last nested", []*op2.Map{a0, must(op2.NewComposedMap("A1 A2", a1, a2))}, setC, nodesA, 2, []int32{4, 5, 6, 7}},
		{"inner arity 3", []*op2.Map{a0, wide}, setB, nodesA, 6, compose(a0.Values(), 2, wide.Values())},
		{"arities 2, 3, 1", []*op2.Map{a0, wide, a2}, setC, nodesA, 6, compose(a0.Values(), 2, compose(wide.Values(), 3, a2.Values()))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := must(op2.NewComposedMap(tc.name, tc.maps...))
			if m.From() != tc.from || m.To() != tc.to || m.Arity() != tc.arity || !slices.Equal(m.Values(), tc.want) {
				t.Errorf("from %v to %v arity %d values %v; want from %v to %v arity %d values %v",
					m.From(), m.To(), m.Arity(), m.Values(), tc.from, tc.to, tc.arity, tc.want)
			}
		})
	}

	// PyOP2's copy kernel, through the composed map, on every backend.
	nodesB := must(op2.NewSet(6, "nodesetB"))
	mapB := must(op2.NewMap(setB, nodesB, 2, []int32{0, 1, 2, 3, 4, 5}, "mapB"))
	datA := must(op2.NewDat(nodesA, 1, []float64{0, .1, .2, .3, .4, .5, .6, .7}, "datA"))
	k := op2.NewKernel(`void copy(double **to, const double **from) {
  for (int i = 0; i < 2; ++i) { *to[i] = *from[i]; }
}`, "copy")
	onEachBackend(t, func(t *testing.T) {
		datB := must(op2.NewDat[float64](nodesB, 1, nil, "datB"))
		check(t, op2.ParLoop(k, setB, datB.ArgVec(op2.Write, mapB), datA.ArgVec(op2.Read, a0a1)))
		if got, want := datB.DataRO(), []float64{.6, .7, .2, .3, .4, .5}; !slices.Equal(got, want) {
			t.Errorf("datB = %v, want %v", got, want)
		}
		// Over a subset (PyOP2's subset case): element 1 only.
		check(t, datB.Zero())
		check(t, op2.ParLoop(k, must(op2.NewSubset(setB, []int32{1})), datB.ArgVec(op2.Write, mapB), datA.ArgVec(op2.Read, a0a1)))
		if got, want := datB.DataRO(), []float64{0, 0, .2, .3, 0, 0}; !slices.Equal(got, want) {
			t.Errorf("over a subset: datB = %v, want %v", got, want)
		}
	})

	empty, other := must(op2.NewSet(0, "empty")), must(op2.NewSet(0, "other"))
	huge := must(op2.NewMap(empty, empty, 1<<16, nil, "huge"))
	bad := []struct {
		name string
		maps []*op2.Map
		want string
	}{
		{"none", nil, `composed map "none": 0 maps given; a composition needs at least two`},
		{"one", []*op2.Map{a0}, `composed map "one": 1 maps given`},
		{"nil", []*op2.Map{a0, nil}, `composed map "nil": map 1 of 2 is nil`},
		{"reversed", []*op2.Map{a1, a0}, `composed map "reversed": map "mapA0" goes to set "nodesetA", but map "mapA1", which comes before it, goes from set "setB"`},
		{"unchained", []*op2.Map{a0, a2}, `map "mapA2" goes to set "setB", but map "mapA0", which comes before it, goes from set "setA"`},
		{"arity", []*op2.Map{huge, huge}, `composed map "arity": its arity, the product of the maps' arities 65536×65536, exceeds the largest allowed`},
		{"other set", []*op2.Map{huge, must(op2.NewMap(empty, other, 1, nil, "e2o"))}, `map "e2o" goes to set "other", but map "huge", which comes before it, goes from set "empty"`},
	}
	for _, tc := range bad {
		if m, err := op2.NewComposedMap(tc.name, tc.maps...); err == nil || !strings.HasPrefix(err.Error(), "op2: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, %v; want an error containing %q", tc.name, m, err, tc.want)
		}
	}
}

// TestComposedMapRenumber: a composed map declared before Renumber
// follows it like any map (its table in the new numbering is the
// composition of its maps' new tables, and Gather gives the declared
// one); composing after Renumber gives the same map.
func TestComposedMapRenumber(t *testing.T) {
	cells, faces, nodes := must(op2.NewSet(7, "rc cells")), must(op2.NewSet(6, "rc faces")), must(op2.NewSet(9, "rc nodes"))
	c2fTab := []int32{5, 0, 3, 1, 2, 4, 0, 5, 4, 3, 1, 1, 2, 0}
	f2nTab := []int32{0, 8, 1, 7, 2, 6, 3, 5, 4, 4, 8, 0}
	c2f := must(op2.NewMap(cells, faces, 2, c2fTab, "rc c2f"))
	f2n := must(op2.NewMap(faces, nodes, 2, f2nTab, "rc f2n"))
	before := must(op2.NewComposedMap("rc before", f2n, c2f))
	must(op2.Renumber(op2.RCMOrdering(f2n)))
	if slices.Equal(c2f.Values(), c2fTab) && slices.Equal(f2n.Values(), f2nTab) {
		t.Fatal("Renumber changed nothing: the test needs a mesh it renumbers")
	}
	after := must(op2.NewComposedMap("rc after", f2n, c2f))
	want := compose(f2n.Values(), 2, c2f.Values())
	if !slices.Equal(before.Values(), want) || !slices.Equal(after.Values(), want) {
		t.Errorf("after Renumber: composed before %v, after %v, want %v", before.Values(), after.Values(), want)
	}
	if got, want := must(before.Gather()), compose(f2nTab, 2, c2fTab); !slices.Equal(got, want) {
		t.Errorf("Gather of the composed map: %v, want the declared composition %v", got, want)
	}
}

// A composed map in PyOP2's order: NewComposedMap(name, faceNodes,
// cellFaces) goes from cells to nodes, each cell's two faces expanded
// into their two nodes. The table is made once; loops and sparsities use
// it like any map.
func ExampleNewComposedMap() {
	cells, _ := op2.NewSet(2, "cells")
	faces, _ := op2.NewSet(3, "faces")
	nodes, _ := op2.NewSet(4, "nodes")
	cellFaces, _ := op2.NewMap(cells, faces, 2, []int32{0, 1, 1, 2}, "cellFaces")
	faceNodes, _ := op2.NewMap(faces, nodes, 2, []int32{0, 1, 1, 2, 2, 3}, "faceNodes")
	cellNodes, err := op2.NewComposedMap("cellNodes", faceNodes, cellFaces)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cellNodes.From().Name(), cellNodes.To().Name(), cellNodes.Arity(), cellNodes.Values())

	x, _ := op2.NewDat(nodes, 1, []float64{1, 10, 100, 1000}, "x")
	sum, _ := op2.NewDat[float64](cells, 1, nil, "sum")
	k := op2.NewKernel(`void add(const double **x, double *s) {
  double t = 0;
  for (int i = 0; i < 4; i++) t += *x[i];
  *s = t;
}`, "add")
	if err := op2.ParLoop(k, cells, x.ArgVec(op2.Read, cellNodes), sum.Arg(op2.Write)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sum.Data())

	// The maps must chain: faceNodes does not go to the cells.
	_, err = op2.NewComposedMap("wrong", cellFaces, faceNodes)
	fmt.Println(err)
	// Output:
	// cells nodes 4 [0 1 1 2 1 2 2 3]
	// [121 1210]
	// op2: composed map "wrong": map "faceNodes" goes to set "nodes", but map "cellFaces", which comes before it, goes from set "cells" (each map must go to the set the one before it comes from)
}
