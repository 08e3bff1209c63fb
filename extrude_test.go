package op2_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// TestExtrudedDeclarationErrors: bad extruded sets, dats and maps are
// refused with a message naming what is wrong.
func TestExtrudedDeclarationErrors(t *testing.T) {
	cells := must(op2.NewSet(3, "cells"))
	nodes := must(op2.NewSet(4, "nodes"))
	other := must(op2.NewSet(4, "other"))
	cn := must(op2.NewMap(cells, nodes, 2, []int32{0, 1, 1, 2, 2, 3}, "cn"))
	prisms := must(op2.NewExtrudedSet(cells, 3, "prisms"))
	columns := must(op2.NewExtrudedSet(nodes, 4, "columns"))
	short := must(op2.NewExtrudedSet(nodes, 3, "short"))
	otherX := must(op2.NewExtrudedSet(other, 4, "otherX"))
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"nil base", second(op2.NewExtrudedSet(nil, 2, "x")), `extruded set "x": base set is nil`},
		{"no layers", second(op2.NewExtrudedSet(cells, 0, "x")), `extruded set "x" of set "cells": 0 layers`},
		{"dat on nil set", second(op2.NewExtrudedDat[float64](nil, 1, nil, "d")), `dat "d": extruded set is nil`},
		{"dat dim 0", second(op2.NewExtrudedDat[float64](prisms, 0, nil, "d")), `dim 0 must be at least 1`},
		{"dat values", second(op2.NewExtrudedDat(prisms, 2, make([]float64, 17), "d")), `17 values given, want 18 (3 columns × 3 layers × dim 2)`},
		{"map nil base", second(op2.NewExtrudedMap(prisms, columns, nil, nil, nil, "m")), `base map must not be nil`},
		{"map from", second(op2.NewExtrudedMap(columns, columns, cn, nil, nil, "m")), `base map "cn" goes from set "cells", not from the base set "nodes" of extruded set "columns"`},
		{"map to", second(op2.NewExtrudedMap(prisms, otherX, cn, nil, nil, "m")), `base map "cn" goes to set "nodes", not to the base set "other" of extruded set "otherX"`},
		{"map starts", second(op2.NewExtrudedMap(prisms, columns, cn, []int{0}, nil, "m")), `1 start layers given, want one per entry of base map "cn" (arity 2)`},
		{"map offsets", second(op2.NewExtrudedMap(prisms, columns, cn, nil, []int{1, 1, 1}, "m")), `3 layer offsets given`},
		{"map beyond top", second(op2.NewExtrudedMap(prisms, short, cn, []int{0, 1}, []int{1, 1}, "m")), `entry 1 (start 1, offset 1) reaches layers 1 to 3, outside the target's layers [0,3)`},
		{"map below bottom", second(op2.NewExtrudedMap(prisms, columns, cn, []int{0, 2}, []int{1, -2}, "m")), `entry 1 (start 2, offset -2) reaches layers 2 to -2`},
		{"map to plain set", second(op2.NewExtrudedMap(prisms, nil, cn, nil, []int{0, 1}, "m")), `to set "nodes": entry 1 (start 0, offset 1) reaches layers 0 to 2, outside the target's layers [0,1)`},
		{"subset", second(op2.NewSubset(prisms, []int32{0})), `subsets of extruded sets are not supported`},
		{"variable ranges count", second(op2.NewVariableExtrudedSet(cells, 3, []int32{0, 1, 0, 2}, "v")), `extruded set "v" of set "cells": 4 layer range values given, want 6`},
		{"variable range reversed", second(op2.NewVariableExtrudedSet(cells, 3, []int32{0, 1, 2, 1, 0, 3}, "v")), `column 1 has layers [2,1), not a range within [0,3)`},
		{"variable range too high", second(op2.NewVariableExtrudedSet(cells, 3, []int32{0, 1, 0, 4, 0, 3}, "v")), `column 1 has layers [0,4)`},
		{"variable range negative", second(op2.NewVariableExtrudedSet(cells, 3, []int32{-1, 1, 0, 3, 0, 3}, "v")), `column 0 has layers [-1,1)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.err == nil || !strings.HasPrefix(c.err.Error(), "op2: ") || !strings.Contains(c.err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", c.err, c.want)
			}
		})
	}
}

// TestExtrudedLoopErrors: loops mixing extruded and plain sets, maps and
// dats wrongly are refused before anything runs, with a *LoopError
// naming the loop, the argument and the objects, and change nothing.
func TestExtrudedLoopErrors(t *testing.T) {
	cells := must(op2.NewSet(3, "cells"))
	nodes := must(op2.NewSet(4, "nodes"))
	cn := must(op2.NewMap(cells, nodes, 2, []int32{0, 1, 1, 2, 2, 3}, "cn"))
	prisms := must(op2.NewExtrudedSet(cells, 3, "prisms"))
	slabs := must(op2.NewExtrudedSet(cells, 2, "slabs"))
	columns := must(op2.NewExtrudedSet(nodes, 4, "columns"))
	pc := must(op2.NewExtrudedMap(prisms, columns, cn, []int{0, 1}, []int{1, 1}, "pc"))
	sc := must(op2.NewExtrudedMap(slabs, columns, cn, nil, []int{1, 1}, "sc"))
	pn := must(op2.NewExtrudedMap(prisms, nil, cn, nil, nil, "pn"))
	onPrisms := must(op2.NewExtrudedDat(prisms, 1, slices.Repeat([]float64{1}, 9), "v"))
	onColumns := must(op2.NewExtrudedDat[float64](columns, 1, nil, "w"))
	onCells := must(op2.NewDat(cells, 1, []float64{5, 6, 7}, "c"))
	onNodes := must(op2.NewDat[float64](nodes, 1, nil, "n"))
	A := must(op2.NewMat[float64](must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: cn, Col: cn}}, "sp")), "A"))
	k1 := op2.NewKernel("void k1(double *a) { *a = 2; }", "k1")
	kIdx := op2.NewKernel("void kIdx(const int *l) { (void)l; }", "kIdx")
	for _, c := range []struct {
		name string
		k    *op2.Kernel
		set  op2.IterationSet
		arg  op2.Arg
		want string
	}{
		{"layer in a plain loop", kIdx, cells, op2.ArgLayer(), `loop "kIdx" over set "cells": argument 0: layer argument (ArgLayer) in a loop over set "cells", which is not extruded`},
		{"extruded dat directly in a plain loop", k1, cells, onPrisms.Arg(op2.Write), `dat "v" (float64, dim 1) on extruded set "prisms" (3 layers of set "cells") is passed directly but lives on extruded set "prisms", not on the loop's set "cells"`},
		{"extruded dat of another extruded set", k1, slabs, onPrisms.Arg(op2.Write), `lives on extruded set "prisms", not on the loop's set "slabs"`},
		{"extruded dat through a plain map", k1, cells, onColumns.ArgMap(op2.Inc, cn, 0), `lives on extruded set "columns": pass it through an extruded map`},
		{"plain map in an extruded loop", k1, prisms, onNodes.ArgMap(op2.Inc, cn, 0), `loop "k1" over set "prisms": argument 0: dat "n" (float64, dim 1) on set "nodes": map "cn" is not an extruded map`},
		{"extruded map in a plain loop", k1, cells, onColumns.ArgExtMap(op2.Inc, pc, 0), `extruded map "pc" in a loop over set "cells", which is not extruded`},
		{"extruded map from another set", k1, prisms, onColumns.ArgExtMap(op2.Inc, sc, 0), `extruded map "sc" goes from extruded set "slabs", not from the loop's set "prisms"`},
		{"plain target, extruded dat", k1, prisms, onColumns.ArgExtMap(op2.Inc, pn, 0), `extruded map "pn" goes to the plain set "nodes", but the dat lives on extruded set "columns"`},
		{"extruded target, plain dat", k1, prisms, onNodes.ArgExtMap(op2.Inc, pc, 0), `extruded map "pc" goes to extruded set "columns", but the dat does not live on it`},
		{"extruded map index out of range", k1, prisms, onColumns.ArgExtMap(op2.Inc, pc, 2), `index 2 is out of range for extruded map "pc" of arity 2`},
		{"base dat written directly", k1, prisms, onCells.Arg(op2.RW), `lives on the base set of the loop's extruded set "prisms": every layer of a column sees its values, so it may only be read (READ), not RW`},
		{"matrix", k1, prisms, A.Arg(op2.Inc, cn, cn), `matrices are not supported in loops over extruded sets`},
		{"nil extruded map", k1, prisms, onColumns.ArgExtVec(op2.Inc, nil), `map is nil`},
		{"nil dat through an extruded map", k1, prisms, (*op2.Dat[float64])(nil).ArgExtMap(op2.Inc, pc, 0), `the Dat is nil`},
		{"nil dat in an extruded loop", k1, prisms, (*op2.Dat[float64])(nil).Arg(op2.Write), `the Dat is nil`},
		{"nil extruded set", k1, (*op2.ExtrudedSet)(nil), onPrisms.Arg(op2.Write), `iteration set is nil`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := op2.ParLoop(c.k, c.set, c.arg)
			var le *op2.LoopError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want a *LoopError containing %q", err, c.want)
			}
		})
	}
	if got := onPrisms.DataRO(); !slices.Equal(got, slices.Repeat([]float64{1}, 9)) {
		t.Errorf("a refused loop changed the dat: %v", got)
	}
}

// TestExtrudedProgramsCached: a repeated extruded loop reuses its
// program; loops that differ only in their layer count or in the layers
// their map entries reach are other programs, and a loop over the base
// set is another.
func TestExtrudedProgramsCached(t *testing.T) {
	cells := must(op2.NewSet(5, "cells"))
	nodes := must(op2.NewSet(6, "nodes"))
	cn := must(op2.NewMap(cells, nodes, 2, []int32{0, 1, 1, 2, 2, 3, 3, 4, 4, 5}, "cn"))
	k := op2.NewKernel("void add(const int *l, double *w) { *w += *l + 1; }", "add")
	gen := func(layers int, start []int) string {
		x := must(op2.NewExtrudedSet(cells, layers, "x"))
		y := must(op2.NewExtrudedSet(nodes, layers+1, "y"))
		m := must(op2.NewExtrudedMap(x, y, cn, start, []int{1, 1}, "m"))
		w := must(op2.NewExtrudedDat[float64](y, 1, nil, "w"))
		src, err := op2.Generate("sequential", k, x, op2.ArgLayer(), w.ArgExtMap(op2.Inc, m, 1))
		check(t, err)
		check(t, op2.ParLoop(k, x, op2.ArgLayer(), w.ArgExtMap(op2.Inc, m, 1)))
		before := op2.ReadStats().Generations
		check(t, op2.ParLoop(k, x, op2.ArgLayer(), w.ArgExtMap(op2.Inc, m, 1)))
		if after := op2.ReadStats().Generations; after != before {
			t.Errorf("a repeated extruded loop generated code again (%d generations, was %d)", after, before)
		}
		// Node (n, l+start) gets l+1 twice for each of its cells' layers l.
		got := w.DataRO()
		want := make([]float64, len(got))
		for c := 0; c < 5; c++ {
			for l := 0; l < layers; l++ {
				want[(c+1)*(layers+1)+l+start[1]] += 2 * float64(l+1)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%d layers, start %v: %v, want %v", layers, start, got, want)
		}
		return src
	}
	a, b, c := gen(3, []int{0, 0}), gen(4, []int{0, 0}), gen(3, []int{0, 1})
	if a == b || a == c || !strings.Contains(a, "op2_layer < 3") || !strings.Contains(b, "op2_layer < 4") {
		t.Errorf("extruded loops with other layer counts or start layers share a source")
	}
	if a != gen(3, []int{0, 0}) {
		t.Errorf("the same extruded loop generated two sources")
	}
}

// An extruded mesh: two triangles extruded into two layers of prisms,
// with their nodes in three layers. A loop over the prisms computes each
// prism's volume (the triangle's coordinates are on the 2-D nodes, the
// heights on the extruded ones) and adds a share of it, weighted by its
// layer (ArgLayer), to its six nodes; the same loop over the same mesh built as plain 3-D
// sets and maps gives the same values.
func ExampleNewExtrudedSet() {
	tris, _ := op2.NewSet(2, "tris")
	verts, _ := op2.NewSet(4, "verts")
	tv, _ := op2.NewMap(tris, verts, 3, []int32{0, 1, 2, 2, 1, 3}, "tv")
	xy, _ := op2.NewDat(verts, 2, []float64{0, 0, 1, 0, 0, 1, 1, 1}, "xy")
	z := []float64{0, 1, 3} // the heights of the three node layers

	prisms, _ := op2.NewExtrudedSet(tris, 2, "prisms")
	nodes, _ := op2.NewExtrudedSet(verts, 3, "nodes")
	// Each prism's six nodes: its triangle's three at its layer and at
	// the layer above.
	six, _ := op2.NewMap(tris, verts, 6, []int32{0, 1, 2, 0, 1, 2, 2, 1, 3, 2, 1, 3}, "six")
	pn, _ := op2.NewExtrudedMap(prisms, nodes, six, []int{0, 0, 0, 1, 1, 1}, []int{1, 1, 1, 1, 1, 1}, "pn")
	pxy, _ := op2.NewExtrudedMap(prisms, nil, tv, nil, nil, "pxy") // to the 2-D nodes
	height, _ := op2.NewExtrudedDat(nodes, 1, slices.Concat(z, z, z, z), "height")
	vol, _ := op2.NewExtrudedDat[float64](prisms, 1, nil, "vol")
	share, _ := op2.NewExtrudedDat[float64](nodes, 1, nil, "share")

	k := op2.NewKernel(`
void prism(const double **xy, const double **h, const int *layer, double *vol, double **share) {
  double a = 0.5 * fabs((xy[1][0] - xy[0][0]) * (xy[2][1] - xy[0][1]) - (xy[2][0] - xy[0][0]) * (xy[1][1] - xy[0][1]));
  *vol = a * (h[3][0] - h[0][0]);
  for (int i = 0; i < 6; i++) share[i][0] += *vol * (*layer + 1) / 6;
}`, "prism")
	if err := op2.ParLoop(k, prisms, xy.ArgExtVec(op2.Read, pxy), height.ArgExtVec(op2.Read, pn), op2.ArgLayer(),
		vol.Arg(op2.Write), share.ArgExtVec(op2.Inc, pn)); err != nil {
		fmt.Println(err)
		return
	}

	// The same mesh as plain sets: prism (t, l) is t*2+l, node (v, l) v*3+l.
	prisms3, _ := op2.NewSet(4, "prisms3")
	nodes3, _ := op2.NewSet(12, "nodes3")
	pxy3, _ := op2.NewMap(prisms3, verts, 3, []int32{0, 1, 2, 0, 1, 2, 2, 1, 3, 2, 1, 3}, "pxy3")
	pn3, _ := op2.NewMap(prisms3, nodes3, 6, []int32{0, 3, 6, 1, 4, 7, 1, 4, 7, 2, 5, 8, 6, 3, 9, 7, 4, 10, 7, 4, 10, 8, 5, 11}, "pn3")
	height3, _ := op2.NewDat(nodes3, 1, slices.Concat(z, z, z, z), "height3")
	layer3, _ := op2.NewDat(prisms3, 1, []int32{0, 1, 0, 1}, "layer3")
	vol3, _ := op2.NewDat[float64](prisms3, 1, nil, "vol3")
	share3, _ := op2.NewDat[float64](nodes3, 1, nil, "share3")
	if err := op2.ParLoop(k, prisms3, xy.ArgVec(op2.Read, pxy3), height3.ArgVec(op2.Read, pn3), layer3.Arg(op2.Read),
		vol3.Arg(op2.Write), share3.ArgVec(op2.Inc, pn3)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("volumes", vol.Data())
	fmt.Printf("shares %.3f\n", share.Data())
	fmt.Println("same as the plain mesh:", slices.Equal(vol.Data(), vol3.Data()) && slices.Equal(share.Data(), share3.Data()))
	// Output:
	// volumes [0.5 1 0.5 1]
	// shares [0.083 0.417 0.333 0.167 0.833 0.667 0.167 0.833 0.667 0.083 0.417 0.333]
	// same as the plain mesh: true
}

// TestExtrudedRenumber: renumbering the base sets moves whole columns of
// extruded dats and the columns' layer ranges (variable layers), and the
// results, gathered in the declared numbering,
// are those of the mesh as declared.
func TestExtrudedRenumber(t *testing.T) {
	run := func(renumber bool) (vol, mass, vmass []float64, cols []int32) {
		tri, xy, z := extrudedMesh()
		ntri, nn, nz := len(tri)/3, len(xy)/2, extrudedLayers
		triangles := must(op2.NewSet(ntri, "triangles"))
		verts := must(op2.NewSet(nn, "verts"))
		mtri := must(op2.NewMap(triangles, verts, 3, tri, "tri"))
		var six []int32
		for c := range ntri {
			six = append(six, tri[3*c:3*c+3]...)
			six = append(six, tri[3*c:3*c+3]...)
		}
		msix := must(op2.NewMap(triangles, verts, 6, six, "six"))
		dxy := must(op2.NewDat(verts, 2, xy, "xy"))
		prisms := must(op2.NewExtrudedSet(triangles, nz, "prisms"))
		nodes := must(op2.NewExtrudedSet(verts, nz+1, "nodes"))
		dz := must(op2.NewExtrudedDat(nodes, 1, slices.Repeat(z, nn), "z"))
		pnodes := must(op2.NewExtrudedMap(prisms, nodes, msix, []int{0, 0, 0, 1, 1, 1}, []int{1, 1, 1, 1, 1, 1}, "pnodes"))
		pxy := must(op2.NewExtrudedMap(prisms, nil, mtri, nil, nil, "pxy"))
		v := must(op2.NewExtrudedDat[float64](prisms, 1, nil, "vol"))
		m := must(op2.NewExtrudedDat[float64](nodes, 1, nil, "mass"))
		c := must(op2.NewExtrudedDat[int32](prisms, 1, nil, "cols"))
		var ranges []int32
		for c := range ntri {
			ranges = append(ranges, int32(c%3), int32(nz-c%2))
		}
		vprisms := must(op2.NewVariableExtrudedSet(triangles, nz, ranges, "vprisms"))
		vpnodes := must(op2.NewExtrudedMap(vprisms, nodes, msix, []int{0, 0, 0, 1, 1, 1}, []int{1, 1, 1, 1, 1, 1}, "vpnodes"))
		vm := must(op2.NewExtrudedDat[float64](nodes, 1, nil, "vmass"))
		if renumber {
			must(op2.Renumber(op2.RCMOrdering(mtri)))
		}
		total := must(op2.NewGlobal(1, []float64{0}, "total"))
		lo := must(op2.NewGlobal(1, []float64{1e300}, "lo"))
		hi := must(op2.NewGlobal(1, []float64{-1e300}, "hi"))
		check(t, op2.ParLoop(op2.NewKernel(extrudedPrism, "prism"), prisms, dxy.ArgExtVec(op2.Read, pxy), dz.ArgExtMap(op2.Read, pnodes, 0),
			dz.ArgExtMap(op2.Read, pnodes, 3), op2.ArgLayer(), v.Arg(op2.Write), m.ArgExtVec(op2.Inc, pnodes), total.Arg(op2.Inc), lo.Arg(op2.Min), hi.Arg(op2.Max)))
		check(t, op2.ParLoop(op2.NewKernel(`void col(const int *c, int *o) { *o = *c; }`, "col"), prisms, op2.ArgIdx(), c.Arg(op2.Write)))
		check(t, op2.ParLoop(op2.NewKernel(`void vhit(const int *l, const int *c, double **m) { for (int i = 0; i < 6; i++) m[i][0] += *l + 1 + i + *c; }`, "vhit"),
			vprisms, op2.ArgLayer(), op2.ArgIdx(), vm.ArgExtVec(op2.Inc, vpnodes)))
		if renumber && slices.Equal(m.DataRO(), must(m.Gather())) {
			t.Errorf("Renumber left the nodes in their declared order: the test shows nothing")
		}
		return must(v.Gather()), must(m.Gather()), must(vm.Gather()), must(c.Gather())
	}
	v0, m0, vm0, c0 := run(false)
	v1, m1, vm1, c1 := run(true)
	if !slices.Equal(v0, v1) || !slices.Equal(m0, m1) || !slices.Equal(vm0, vm1) || !slices.Equal(c0, c1) {
		t.Errorf("after Renumber the gathered results differ from the declared mesh's")
	}
}

// Three columns of up to four layers, with layers [0,4), [1,3) and none:
// a loop over the set runs the kernel for the layers of each column's
// range only.
func ExampleNewVariableExtrudedSet() {
	cols, _ := op2.NewSet(3, "cols")
	x, _ := op2.NewVariableExtrudedSet(cols, 4, []int32{0, 4, 1, 3, 0, 0}, "x")
	d, _ := op2.NewExtrudedDat(x, 1, slices.Repeat([]int32{-1}, 12), "d")
	k := op2.NewKernel(`void k(const int *c, const int *l, int *d) { *d = 10 * *c + *l; }`, "k")
	if err := op2.ParLoop(k, x, op2.ArgIdx(), op2.ArgLayer(), d.Arg(op2.Write)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(x.Size(), "elements:", d.Data())
	// Output: 6 elements: [0 1 2 3 -1 11 12 -1 -1 -1 -1 -1]
}

// TestRepeatedExtrudedLoopAllocatesNothing: a repeated loop over an
// extruded set (variable layers, the layer argument, an extruded map)
// costs no allocation, as a plain loop does. Check mode is named off,
// whatever OP2_CHECK says (it copies every READ argument per loop).
func TestRepeatedExtrudedLoopAllocatesNothing(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		r := must(op2.NewRuntime(op2.Config{Backend: op2.Backend()}.Explicit("Check")))
		const n, nz = 1000, 5
		cols := must(op2.NewSet(n, "cols"))
		v := make([]int32, 2*n)
		ranges := make([]int32, 2*n)
		for i := range n {
			v[2*i], v[2*i+1] = int32(i), int32((i+1)%n)
			ranges[2*i], ranges[2*i+1] = int32(i%2), nz
		}
		nb := must(op2.NewMap(cols, cols, 2, v, "nb"))
		segs := must(op2.NewVariableExtrudedSet(cols, nz, ranges, "segs"))
		pts := must(op2.NewExtrudedSet(cols, nz+1, "pts"))
		m := must(op2.NewExtrudedMap(segs, pts, nb, []int{0, 1}, []int{1, 1}, "m"))
		d := must(op2.NewExtrudedDat[float64](pts, 1, nil, "d"))
		k := op2.NewKernel("void alloc_xinc(const int *l, double **a) { a[0][0] += *l; a[1][0] += 1; }", "alloc_xinc")
		run := func() {
			check(t, r.ParLoop(k, segs, op2.ArgLayer(), d.ArgExtVec(op2.Inc, m)))
		}
		for range 25 { // more than AllocsPerRun records (lazy mode's slots)
			run()
		}
		check(t, r.Wait())
		if a := testing.AllocsPerRun(20, run); a != 0 {
			t.Errorf("a repeated extruded loop allocates %v times per call, want 0", a)
		}
	})
}

// TestExtrudedCloneAndCopy: a clone of a dat on an extruded set lives on
// that set (a loop over it takes it), and CopyTo refuses to copy between
// a dat on an extruded set and one on its base set of the same shape.
func TestExtrudedCloneAndCopy(t *testing.T) {
	cols := must(op2.NewSet(4, "cols"))
	x := must(op2.NewExtrudedSet(cols, 3, "x"))
	d := must(op2.NewExtrudedDat(x, 1, iota32[float64](12), "d"))
	c := must(d.Clone("c"))
	if c.ExtrudedSet() != x || c.LayerDim() != 1 || !slices.Equal(c.DataRO(), d.DataRO()) {
		t.Fatalf("clone on %v, layer dim %d, values %v", c.ExtrudedSet(), c.LayerDim(), c.DataRO())
	}
	k := op2.NewKernel("void twice(const int *l, double *c) { *c = 2 * *l; }", "twice")
	check(t, op2.ParLoop(k, x, op2.ArgLayer(), c.Arg(op2.Write)))
	if got, want := c.DataRO(), slices.Repeat([]float64{0, 2, 4}, 4); !slices.Equal(got, want) {
		t.Errorf("loop over the clone: %v, want %v", got, want)
	}
	plain := must(op2.NewDat[float64](cols, 3, nil, "plain"))
	if err := d.CopyTo(plain); err == nil || !strings.Contains(err.Error(), "the dats live on different sets") {
		t.Errorf("copying an extruded dat to a base-set dat: %v, want a refusal", err)
	}
}

// TestTwoExtrudedMapsOverOneBase: a Dat written (RW) through the same
// column of two extruded maps over one base map with the same layers is
// one map's argument twice, with the host's result on every backend (a
// device gave the two no shared copy, and a kernel passing them to a
// helper did not build on opencl); through two that reach other layers
// it is refused alike everywhere, as two maps are.
func TestTwoExtrudedMapsOverOneBase(t *testing.T) {
	for _, backend := range allBackends {
		t.Run(backend, func(t *testing.T) {
			r := must(op2.NewRuntime(op2.Config{Backend: backend}))
			defer r.Close()
			bc := must(op2.NewSet(4, "bcells"))
			bn := must(op2.NewSet(4, "bnodes"))
			bm := must(op2.NewMap(bc, bn, 1, []int32{0, 1, 2, 3}, "bmap"))
			cells := must(op2.NewExtrudedSet(bc, 3, "cells"))
			nodes := must(op2.NewExtrudedSet(bn, 4, "nodes"))
			em1 := must(op2.NewExtrudedMap(cells, nodes, bm, []int{0}, []int{1}, "em1"))
			em2 := must(op2.NewExtrudedMap(cells, nodes, bm, []int{0}, []int{1}, "em2"))
			up := must(op2.NewExtrudedMap(cells, nodes, bm, []int{1}, []int{1}, "up"))
			x := must(op2.NewExtrudedDat[float64](nodes, 1, nil, "x"))
			k := op2.NewKernel(`static void xh(double *z, double v) { z[0] += v; }
void two_xm(double *a, double *b) { xh(a, 1); xh(b, 2); }`, "two_xm")
			check(t, r.ParLoop(k, cells, x.ArgExtMap(op2.RW, em1, 0), x.ArgExtMap(op2.RW, em2, 0)))
			if got, want := x.DataRO(), []float64{3, 3, 3, 0, 3, 3, 3, 0, 3, 3, 3, 0, 3, 3, 3, 0}; !slices.Equal(got, want) {
				t.Errorf("x = %v, want %v", got, want)
			}
			err := r.ParLoop(k, cells, x.ArgExtMap(op2.RW, em1, 0), x.ArgExtMap(op2.RW, up, 0))
			wantErr(t, err, `loop "two_xm"`, `not through two extruded maps over map "bmap" that reach other layers`)
		})
	}
}
