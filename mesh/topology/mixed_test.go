package topology

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// checkMixed checks a mixed topology against its blocks: each facet's
// nodes are its first cell's local facet, its second cell's local facet
// holds the same nodes seen the other way, CellFacet and CellCell point
// back, every cell's facets close, a boundary facet points out of its
// cell, and the cells' volumes add up to volume.
func checkMixed(t *testing.T, top *Topology, blocks []Cells, x []float64, dim int, volume float64) {
	t.Helper()
	type cellRef struct {
		kind Kind
		row  []int32
	}
	var cells []cellRef
	total := 0.0
	for _, b := range blocks {
		nn := b.Kind.Nodes()
		for c := range b.Len() {
			cells = append(cells, cellRef{b.Kind, b.Nodes[c*nn : (c+1)*nn]})
		}
		vol, _, err := CellGeometry(b.Kind, b.Nodes, x, dim)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vol {
			if v <= 0 {
				t.Fatalf("a %v has volume %g: the test mesh is not oriented", b.Kind, v)
			}
			total += v
		}
	}
	if math.Abs(total-volume) > 1e-12 {
		t.Errorf("the cells' volumes add up to %.17g, want %g", total, volume)
	}
	if top.Cells != len(cells) || len(top.Offset) != len(cells)+1 {
		t.Fatalf("%d cells and %d offsets, want %d cells", top.Cells, len(top.Offset), len(cells))
	}
	nodesOf := func(c int32, l int8) []int32 {
		var out []int32
		for _, v := range LocalFacets(cells[c].kind)[l] {
			out = append(out, cells[c].row[v])
		}
		return out
	}
	seen := make([]int, top.Offset[len(cells)])
	for s := range top.Facets {
		fs := &top.Facets[s]
		fn := fs.Kind.Nodes()
		for f := range fs.Len() {
			a, b := fs.Cells[2*f], fs.Cells[2*f+1]
			la, lb := fs.Local[2*f], fs.Local[2*f+1]
			nodes := fs.Nodes[f*fn : (f+1)*fn]
			if !slices.Equal(nodes, nodesOf(a, la)) {
				t.Fatalf("facet %d/%d: nodes %v, but its first cell %d's local facet %d is %v", s, f, nodes, a, la, nodesOf(a, la))
			}
			ia := top.Start(int(a)) + int(la)
			seen[ia]++
			if top.CellFacet[2*ia] != int32(s) || top.CellFacet[2*ia+1] != int32(f) {
				t.Fatalf("CellFacet of cell %d, local %d is %v, want %d/%d", a, la, top.CellFacet[2*ia:2*ia+2], s, f)
			}
			na := areaVector(x, dim, nodes)
			if b < 0 {
				fc, cc := centroid(x, dim, nodes), centroid(x, dim, cells[a].row)
				if d := sub(fc, cc); d[0]*na[0]+d[1]*na[1]+d[2]*na[2] <= 0 || top.CellCell[ia] != -1 {
					t.Fatalf("boundary facet %d/%d points into its cell %d, or has a cell across (%d)", s, f, a, top.CellCell[ia])
				}
				continue
			}
			ib := top.Start(int(b)) + int(lb)
			seen[ib]++
			other := nodesOf(b, lb)
			nb := areaVector(x, dim, other)
			if !slices.Equal(slices.Sorted(slices.Values(other)), slices.Sorted(slices.Values(nodes))) {
				t.Fatalf("facet %d/%d: second cell %d (%v) local facet %d holds %v, not %v", s, f, b, cells[b].kind, lb, other, nodes)
			}
			for i := range 3 {
				if math.Abs(na[i]+nb[i]) > 1e-12 {
					t.Fatalf("facet %d/%d: area vectors %v and %v are not opposite", s, f, na, nb)
				}
			}
			if top.CellCell[ia] != b || top.CellCell[ib] != a || top.CellFacet[2*ib+1] != int32(f) {
				t.Fatalf("CellCell or CellFacet do not join cells %d and %d across facet %d/%d", a, b, s, f)
			}
		}
	}
	for i, n := range seen {
		if n != 1 {
			t.Fatalf("local facet entry %d is in %d facets", i, n)
		}
	}
	for c := range cells {
		var sum [3]float64
		for l := range LocalFacets(cells[c].kind) {
			a := areaVector(x, dim, nodesOf(int32(c), int8(l)))
			for i := range sum {
				sum[i] += a[i]
			}
		}
		if math.Abs(sum[0])+math.Abs(sum[1])+math.Abs(sum[2]) > 1e-12 {
			t.Fatalf("cell %d's facets do not close: %v", c, sum)
		}
	}
}

// counts gives each facet set's interior and boundary counts.
func counts(top *Topology) (interior, boundary []int) {
	for _, f := range top.Facets {
		interior = append(interior, f.Len()-len(f.Boundary))
		boundary = append(boundary, len(f.Boundary))
	}
	return interior, boundary
}

// TestDeriveMixed derives small hand meshes of several kinds: a
// quadrilateral beside a triangle; a prism, a pyramid on its
// quadrilateral face and a tetrahedron on the pyramid's triangle; and a
// grid of cubes, hexahedra on one side and two prisms each on the other.
func TestDeriveMixed(t *testing.T) {
	t.Run("quad and triangle", func(t *testing.T) {
		x := []float64{0, 0, 1, 0, 1, 1, 0, 1, 2, 0.5}
		blocks := []Cells{{Quadrilateral, []int32{0, 1, 2, 3}}, {Triangle, []int32{1, 4, 2}}}
		top, err := DeriveMixed(blocks, 5)
		if err != nil {
			t.Fatal(err)
		}
		checkMixed(t, top, blocks, x, 2, 1.5)
		if in, bd := counts(top); !slices.Equal(in, []int{1}) || !slices.Equal(bd, []int{5}) || top.Kind != 0 {
			t.Errorf("kind %v, facets %v interior and %v boundary, want 0, [1] and [5]", top.Kind, in, bd)
		}
		f := top.Facets[0]
		i := slices.Index(f.Cells, 1) / 2
		if f.Cells[2*i] != 0 || f.Local[2*i] != 1 || f.Local[2*i+1] != 2 {
			t.Errorf("the shared edge: cells %v, locals %v; want 0 and 1, locals 1 and 2", f.Cells[2*i:2*i+2], f.Local[2*i:2*i+2])
		}
		if got := top.CellCell[top.Start(1):top.Offset[2]]; !slices.Equal(got, []int32{-1, -1, 0}) {
			t.Errorf("the triangle's neighbours %v, want [-1 -1 0]", got)
		}
	})
	t.Run("prism, pyramid, tetrahedron", func(t *testing.T) {
		x := []float64{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 1, 0, 1, 1,
			1, 1, 0.5, // 6: the pyramid's apex, beyond the prism's face x+y=1
			0.5, 1.5, 1.5} // 7: the tetrahedron's apex
		pyr := []int32{1, 2, 5, 4, 6}
		if orient(x, []int32{pyr[0], pyr[1], pyr[3], pyr[4]}) < 0 {
			pyr[1], pyr[3] = pyr[3], pyr[1]
		}
		tet := []int32{2, 5, 6, 7}
		if orient(x, tet) < 0 {
			tet[1], tet[2] = tet[2], tet[1]
		}
		blocks := []Cells{{Prism, []int32{0, 1, 2, 3, 4, 5}}, {Pyramid, pyr}, {Tetrahedron, tet}}
		top, err := DeriveMixed(blocks, 8)
		if err != nil {
			t.Fatal(err)
		}
		vol := 0.5
		for _, b := range blocks[1:] {
			v, _, _ := CellGeometry(b.Kind, b.Nodes, x, 3)
			vol += v[0]
		}
		checkMixed(t, top, blocks, x, 3, vol)
		if in, bd := counts(top); !slices.Equal(in, []int{1, 1}) || !slices.Equal(bd, []int{8, 2}) {
			t.Errorf("facets %v interior and %v boundary, want [1 1] and [8 2]", in, bd)
		}
		if got := top.CellCell[top.Start(1):top.Offset[2]]; !slices.Contains(got, 0) || !slices.Contains(got, 2) {
			t.Errorf("the pyramid's neighbours %v, want the prism 0 and the tetrahedron 2", got)
		}
	})
	t.Run("hexahedra and prisms", func(t *testing.T) {
		const n = 4
		x := grid(n, 3)
		var hex, pri []int32
		for l := range n {
			for j := range n {
				for i := range n {
					h := cube(n, i, j, l)
					if i < n/2 {
						hex = append(hex, h[:]...)
					} else {
						pri = append(pri, h[0], h[1], h[2], h[4], h[5], h[6], h[0], h[2], h[3], h[4], h[6], h[7])
					}
				}
			}
		}
		blocks := []Cells{{Prism, pri}, {Hexahedron, hex}}
		top, err := DeriveMixed(blocks, len(x)/3)
		if err != nil {
			t.Fatal(err)
		}
		checkMixed(t, top, blocks, x, 3, 1)
		// Quadrilaterals: 3n²(n-1) interior faces of the cube grid, plus
		// the prisms' diagonal faces, one per cube; triangles: the prisms'
		// horizontal faces.
		half := n * n * n / 2
		in, bd := counts(top)
		wantIn := []int{2*half - n*n, 3*n*n*(n-1) - (n/2)*n*(n-1) + half}
		wantBd := []int{2 * n * n, 6*n*n - n*n}
		if !slices.Equal(in, wantIn) || !slices.Equal(bd, wantBd) {
			t.Errorf("facets %v interior and %v boundary, want %v and %v", in, bd, wantIn, wantBd)
		}
	})
	t.Run("one kind is Derive", func(t *testing.T) {
		x := grid(3, 3)
		cells := hexes(3)
		one, err := Derive(Hexahedron, cells, len(x)/3)
		if err != nil {
			t.Fatal(err)
		}
		mixed, err := DeriveMixed([]Cells{{Hexahedron, cells[:8*10]}, {Hexahedron, cells[8*10:]}}, len(x)/3)
		if err != nil {
			t.Fatal(err)
		}
		if mixed.Kind != Hexahedron || !slices.Equal(mixed.CellCell, one.CellCell) || !slices.Equal(mixed.CellFacet, one.CellFacet) ||
			!slices.Equal(mixed.Facets[0].Nodes, one.Facets[0].Nodes) || mixed.Offset[5] != 30 || one.Offset != nil {
			t.Errorf("DeriveMixed of hexahedra in two blocks differs from Derive")
		}
	})
}

func TestDeriveMixedErrors(t *testing.T) {
	for _, c := range []struct {
		name   string
		blocks []Cells
		nodes  int
		want   string
	}{
		{"dimensions", []Cells{{Triangle, []int32{0, 1, 2}}, {Tetrahedron, []int32{0, 1, 2, 3}}}, 4, "block 1: tetrahedron cells in a mesh of triangle cells"},
		{"node twice", []Cells{{Triangle, []int32{0, 1, 2}}, {Quadrilateral, []int32{0, 1, 3, 3}}}, 4, "cell 1 (quadrilateral) holds node 3 twice"},
		{"node out of range", []Cells{{Tetrahedron, []int32{0, 1, 2, 3}}, {Pyramid, []int32{0, 1, 2, 3, 9}}}, 5, "cell 1 (pyramid): node 4 is 9, outside [0,5)"},
		{"not whole", []Cells{{Prism, []int32{0, 1, 2, 3, 4}}}, 5, "block 0: 5 node entries are not whole prisms"},
		{"lines", []Cells{{Line, []int32{0, 1}}}, 2, "no facets"},
		{"three cells on a face", []Cells{{Tetrahedron, []int32{0, 1, 2, 3, 0, 2, 1, 4}}, {Pyramid, []int32{0, 1, 5, 6, 2}}}, 7, "shared by 3 cells"},
	} {
		if _, err := DeriveMixed(c.blocks, c.nodes); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}
