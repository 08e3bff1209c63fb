package topology

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// grid returns the nodes of an (n+1)^d grid on the unit square or cube,
// node (i,j[,l]) numbered i + (n+1)(j + (n+1) l).
func grid(n, d int) []float64 {
	var x []float64
	m := n + 1
	count := m * m
	if d == 3 {
		count *= m
	}
	for v := range count {
		i, j, l := v%m, v/m%m, v/(m*m)
		x = append(x, float64(i)/float64(n), float64(j)/float64(n))
		if d == 3 {
			x = append(x, float64(l)/float64(n))
		}
	}
	return x
}

func quads(n int) []int32 {
	m := int32(n + 1)
	var c []int32
	for j := range int32(n) {
		for i := range int32(n) {
			a := i + j*m
			c = append(c, a, a+1, a+1+m, a+m)
		}
	}
	return c
}

func triangles(n int) []int32 {
	q := quads(n)
	var c []int32
	for k := 0; k < len(q); k += 4 {
		c = append(c, q[k], q[k+1], q[k+2], q[k], q[k+2], q[k+3])
	}
	return c
}

// cube returns the node numbers of the cube with corner (i,j,l), in
// hexahedron order.
func cube(n, i, j, l int) [8]int32 {
	m := n + 1
	v := func(a, b, c int) int32 { return int32(a + m*(b+m*c)) }
	return [8]int32{v(i, j, l), v(i+1, j, l), v(i+1, j+1, l), v(i, j+1, l), v(i, j, l+1), v(i+1, j, l+1), v(i+1, j+1, l+1), v(i, j+1, l+1)}
}

func hexes(n int) []int32 {
	var c []int32
	for l := range n {
		for j := range n {
			for i := range n {
				h := cube(n, i, j, l)
				c = append(c, h[:]...)
			}
		}
	}
	return c
}

func prisms(n int) []int32 {
	var c []int32
	for l := range n {
		for j := range n {
			for i := range n {
				h := cube(n, i, j, l)
				c = append(c, h[0], h[1], h[2], h[4], h[5], h[6], h[0], h[2], h[3], h[4], h[6], h[7])
			}
		}
	}
	return c
}

// tets splits each cube into the six tetrahedra around its main diagonal
// (the same in every cube, so faces match), each positively oriented.
func tets(n int, x []float64) []int32 {
	var c []int32
	paths := [][3]int{{1, 2, 6}, {1, 5, 6}, {3, 2, 6}, {3, 7, 6}, {4, 5, 6}, {4, 7, 6}}
	for l := range n {
		for j := range n {
			for i := range n {
				h := cube(n, i, j, l)
				for _, p := range paths {
					t := []int32{h[0], h[p[0]], h[p[1]], h[p[2]]}
					if orient(x, t) < 0 {
						t[1], t[2] = t[2], t[1]
					}
					c = append(c, t...)
				}
			}
		}
	}
	return c
}

// pyramidFaces are the six faces of a cube (hexahedron node numbers),
// each listed counter-clockwise seen from the cube's centre.
var pyramidFaces = [6][4]int{{0, 1, 2, 3}, {4, 7, 6, 5}, {0, 4, 5, 1}, {1, 5, 6, 2}, {2, 6, 7, 3}, {3, 7, 4, 0}}

// pyramids splits each cube of the grid x (grid(n, 3)) into pyramids, one
// on each face listed in faces (pyramidFaces' indices) with its apex at
// the cube's centre, a node added after the grid's; a pyramid oriented
// negatively ((n1-n0)×(n3-n0)·(n4-n0) < 0) gets n1 and n3 swapped. It
// returns the cells and the nodes with the centres.
func pyramids(n int, x []float64, faces []int) ([]int32, []float64) {
	var c []int32
	x = slices.Clone(x)
	for l := range n {
		for j := range n {
			for i := range n {
				h := cube(n, i, j, l)
				apex := int32(len(x) / 3)
				cc := centroid(x, 3, h[:])
				x = append(x, cc[:]...)
				for _, f := range faces {
					q := pyramidFaces[f]
					p := []int32{h[q[0]], h[q[1]], h[q[2]], h[q[3]], apex}
					if orient(x, []int32{p[0], p[1], p[3], p[4]}) < 0 {
						p[1], p[3] = p[3], p[1]
					}
					c = append(c, p...)
				}
			}
		}
	}
	return c, x
}

func orient(x []float64, t []int32) float64 {
	p := func(k int) [3]float64 { return point(x, 3, t[k]) }
	a, b, c, d := p(0), p(1), p(2), p(3)
	n := cross(sub(b, a), sub(c, a))
	e := sub(d, a)
	return n[0]*e[0] + n[1]*e[1] + n[2]*e[2]
}

// relabel numbers the nodes and orders the cells at random.
func relabel(k Kind, cells []int32, x []float64, dim int, seed uint64) ([]int32, []float64) {
	r := rand.New(rand.NewPCG(seed, 1))
	nodes := len(x) / dim
	perm := r.Perm(nodes)
	x2 := make([]float64, len(x))
	for v, p := range perm {
		copy(x2[p*dim:(p+1)*dim], x[v*dim:(v+1)*dim])
	}
	nn := k.Nodes()
	order := r.Perm(len(cells) / nn)
	c2 := make([]int32, 0, len(cells))
	for _, c := range order {
		for _, v := range cells[c*nn : (c+1)*nn] {
			c2 = append(c2, int32(perm[v]))
		}
	}
	return c2, x2
}

func TestDerive(t *testing.T) {
	const n = 4
	x2, x3 := grid(n, 2), grid(n, 3)
	pyr6, xp6 := pyramids(n, x3, []int{0, 1, 2, 3, 4, 5})
	pyr2, xp2 := pyramids(n, x3, []int{0, 1})
	cases := []struct {
		kind          Kind
		cells         []int32
		x             []float64
		dim           int
		facets        []int // per facet set
		boundary      []int
		volume        float64
		facetsPerCell int
	}{
		{Quadrilateral, quads(n), x2, 2, []int{2 * n * (n + 1)}, []int{4 * n}, 1, 4},
		{Triangle, triangles(n), x2, 2, []int{(n+1)*(n+1) + 2*n*n - 1}, []int{4 * n}, 1, 3},
		{Hexahedron, hexes(n), x3, 3, []int{3 * n * n * (n + 1)}, []int{6 * n * n}, 1, 6},
		{Tetrahedron, tets(n, x3), x3, 3, nil, []int{12 * n * n}, 1, 4},
		{Prism, prisms(n), x3, 3, nil, []int{4 * n * n, 4 * n * n}, 1, 5},
		// Six pyramids per cube: every triangle is shared.
		{Pyramid, pyr6, xp6, 3, []int{12 * n * n * n, 3 * n * n * (n + 1)}, []int{0, 6 * n * n}, 1, 5},
		// The two on the cube's bottom and top: every triangle on the
		// boundary, bases shared across the cubes' horizontal faces.
		{Pyramid, pyr2, xp2, 3, []int{8 * n * n * n, n * n * (n + 1)}, []int{8 * n * n * n, 2 * n * n}, 1.0 / 3, 5},
	}
	for _, c := range cases {
		for _, seed := range []uint64{0, 1, 2} {
			t.Run(fmt.Sprintf("%v-%d/%d", c.kind, len(c.cells)/c.kind.Nodes(), seed), func(t *testing.T) {
				cells, x := c.cells, c.x
				if seed > 0 {
					cells, x = relabel(c.kind, cells, x, c.dim, seed)
				}
				top, err := Derive(c.kind, cells, len(x)/c.dim)
				if err != nil {
					t.Fatal(err)
				}
				if got := top.FacetsPerCell(); got != c.facetsPerCell {
					t.Errorf("FacetsPerCell %d, want %d", got, c.facetsPerCell)
				}
				for s, fs := range top.Facets {
					if c.facets != nil && fs.Len() != c.facets[s] {
						t.Errorf("set %d (%v): %d facets, want %d", s, fs.Kind, fs.Len(), c.facets[s])
					}
					if len(fs.Boundary) != c.boundary[s] {
						t.Errorf("set %d (%v): %d boundary facets, want %d", s, fs.Kind, len(fs.Boundary), c.boundary[s])
					}
				}
				checkTopology(t, top, cells, x, c.dim)
				vol, _, err := CellGeometry(c.kind, cells, x, c.dim)
				if err != nil {
					t.Fatal(err)
				}
				sum := 0.0
				for i, v := range vol {
					if v <= 0 {
						t.Fatalf("cell %d has volume %g", i, v)
					}
					sum += v
				}
				if math.Abs(sum-c.volume) > 1e-12 {
					t.Errorf("total volume %.17g, want %g", sum, c.volume)
				}
			})
		}
	}
}

// checkTopology checks every relation Derive gives against the others
// and against the geometry: each facet's nodes are its first cell's
// local facet; an interior facet's second cell sees the same nodes the
// other way round (opposite area vectors); each cell's facets close
// (their outward area vectors sum to zero); boundary facets point out of
// their cell; the boundary closes.
func checkTopology(t *testing.T, top *Topology, cells []int32, x []float64, dim int) {
	t.Helper()
	lf := LocalFacets(top.Kind)
	F, nn := len(lf), top.Kind.Nodes()
	nodesOf := func(c int32, l int8) []int32 {
		var out []int32
		for _, v := range lf[l] {
			out = append(out, cells[int(c)*nn+v])
		}
		return out
	}
	var bsum [3]float64
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
			if got := top.CellFacet[2*(int(a)*F+int(la)) : 2*(int(a)*F+int(la))+2]; got[0] != int32(s) || got[1] != int32(f) {
				t.Fatalf("CellFacet of cell %d, local %d is %v, want %d/%d", a, la, got, s, f)
			}
			na := areaVector(x, dim, nodes)
			if b < 0 {
				if !slices.Contains(fs.Boundary, int32(f)) || lb != -1 {
					t.Fatalf("facet %d/%d has one cell but is not in Boundary (local %d)", s, f, lb)
				}
				if top.CellCell[int(a)*F+int(la)] != -1 {
					t.Fatalf("cell %d across its boundary facet %d: %d, want -1", a, la, top.CellCell[int(a)*F+int(la)])
				}
				fc := centroid(x, dim, nodes)
				cc := centroid(x, dim, cells[int(a)*nn:(int(a)+1)*nn])
				if d := sub(fc, cc); d[0]*na[0]+d[1]*na[1]+d[2]*na[2] <= 0 {
					t.Fatalf("boundary facet %d/%d points into its cell", s, f)
				}
				for i := range bsum {
					bsum[i] += na[i]
				}
				continue
			}
			other := nodesOf(b, lb)
			if x, y := slices.Sorted(slices.Values(other)), slices.Sorted(slices.Values(nodes)); !slices.Equal(x, y) {
				t.Fatalf("facet %d/%d: second cell %d's local facet %d holds %v, not %v", s, f, b, lb, other, nodes)
			}
			nb := areaVector(x, dim, other)
			for i := range 3 {
				if math.Abs(na[i]+nb[i]) > 1e-12 {
					t.Fatalf("facet %d/%d: the two cells see area vectors %v and %v, not opposite", s, f, na, nb)
				}
			}
			if top.CellCell[int(a)*F+int(la)] != b || top.CellCell[int(b)*F+int(lb)] != a {
				t.Fatalf("CellCell does not join cells %d and %d across facet %d/%d", a, b, s, f)
			}
		}
	}
	for i := range bsum {
		if math.Abs(bsum[i]) > 1e-12 {
			t.Errorf("the boundary does not close: its area vectors sum to %v", bsum)
		}
	}
	for c := range top.Cells {
		var sum [3]float64
		for l := range F {
			a := areaVector(x, dim, nodesOf(int32(c), int8(l)))
			for i := range sum {
				sum[i] += a[i]
			}
		}
		for i := range sum {
			if math.Abs(sum[i]) > 1e-12 {
				t.Fatalf("cell %d's facets do not close: %v", c, sum)
			}
		}
	}
}

func TestDeriveErrors(t *testing.T) {
	cases := []struct {
		name  string
		kind  Kind
		cells []int32
		nodes int
		want  string
	}{
		{"three cells on an edge", Triangle, []int32{0, 1, 2, 1, 0, 3, 0, 1, 4}, 5, "shared by 3 cells"},
		{"node twice", Triangle, []int32{0, 1, 1}, 3, "holds node 1 twice"},
		{"node out of range", Quadrilateral, []int32{0, 1, 2, 7}, 4, "node 3 is 7, outside [0,4)"},
		{"not whole cells", Tetrahedron, []int32{0, 1, 2}, 4, "not whole"},
		{"lines", Line, []int32{0, 1}, 2, "no facets"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Derive(c.kind, c.cells, c.nodes); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Derive: %v, want an error saying %q", err, c.want)
			}
		})
	}
}

func TestFacetGeometry(t *testing.T) {
	x := grid(2, 2)
	top, err := Derive(Quadrilateral, quads(2), len(x)/2)
	if err != nil {
		t.Fatal(err)
	}
	normals, centroids, err := top.Facets[0].Geometry(x, 2)
	if err != nil {
		t.Fatal(err)
	}
	for f := range top.Facets[0].Len() {
		length := math.Hypot(normals[2*f], normals[2*f+1])
		if math.Abs(length-0.5) > 1e-15 {
			t.Errorf("facet %d: normal %v, length %g, want 0.5", f, normals[2*f:2*f+2], length)
		}
		// An edge's midpoint on the 2×2 grid has one coordinate an odd
		// multiple of 1/4 and the other a multiple of 1/2.
		cx, cy := centroids[2*f]*4, centroids[2*f+1]*4
		odd := func(v float64) bool { return math.Mod(v, 2) == 1 }
		whole := func(v float64) bool { return math.Mod(v, 1) == 0 }
		if !whole(cx) || !whole(cy) || odd(cx) == odd(cy) {
			t.Errorf("facet %d: centroid (%g, %g) is not an edge's midpoint", f, cx/4, cy/4)
		}
	}
}

// TestFacetsMalformed hands Geometry and Find Facets built by hand whose
// slices disagree, the short slice clipped and with spare capacity behind
// it (where reading past its length would not panic): each is an error
// naming the lengths, never a panic or a read past the end.
func TestFacetsMalformed(t *testing.T) {
	x := grid(2, 2)
	top, err := Derive(Quadrilateral, quads(2), len(x)/2)
	if err != nil {
		t.Fatal(err)
	}
	good := top.Facets[0]
	clone := func(spare bool, s []int32, drop int) []int32 {
		s = slices.Clone(s)[:len(s)-drop]
		if spare {
			return s
		}
		return slices.Clip(s)
	}
	for _, spare := range []bool{false, true} {
		for _, c := range []struct {
			name string
			f    Facets
			want string
		}{
			{"nodes one facet short", Facets{Kind: Line, Nodes: clone(spare, good.Nodes, 2), Cells: good.Cells}, fmt.Sprintf("Nodes has %d entries, want %d", len(good.Nodes)-2, len(good.Nodes))},
			{"nodes one short", Facets{Kind: Line, Nodes: clone(spare, good.Nodes, 1), Cells: good.Cells}, fmt.Sprintf("Nodes has %d entries, want %d", len(good.Nodes)-1, len(good.Nodes))},
			{"cells odd", Facets{Kind: Line, Nodes: good.Nodes, Cells: clone(spare, good.Cells, 1)}, fmt.Sprintf("Cells has %d entries", len(good.Cells)-1)},
			{"node negative", Facets{Kind: Line, Nodes: append([]int32{-1}, good.Nodes[1:]...), Cells: good.Cells}, "node -1 has no coordinates"},
		} {
			t.Run(fmt.Sprintf("%s/spare=%v", c.name, spare), func(t *testing.T) {
				call := func(what string, fn func() error) {
					var err error
					func() {
						defer func() {
							if p := recover(); p != nil {
								err = fmt.Errorf("panic: %v", p)
							}
						}()
						err = fn()
					}()
					if err == nil || !strings.Contains(err.Error(), c.want) {
						t.Errorf("%s: %v; want an error saying %q", what, err, c.want)
					}
				}
				call("Geometry", func() error { _, _, err := c.f.Geometry(x, 2); return err })
				if c.name != "node negative" { // Find looks nodes up, reading no coordinates
					call("Find", func() error { _, err := c.f.Find(good.Nodes[:2]); return err })
				}
			})
		}
	}
}

func BenchmarkDeriveTets(b *testing.B) {
	const n = 40 // 384 000 tetrahedra
	x := grid(n, 3)
	cells := tets(n, x)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Derive(Tetrahedron, cells, len(x)/3); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(cells)/4), "cells")
}

// TestFind finds the boundary facets of a hexahedron grid from their
// nodes, given in another order, and refuses a facet the mesh lacks.
func TestFind(t *testing.T) {
	x := grid(2, 3)
	top, err := Derive(Hexahedron, hexes(2), len(x)/3)
	if err != nil {
		t.Fatal(err)
	}
	fs := &top.Facets[0]
	var list []int32
	for _, b := range fs.Boundary {
		v := fs.Nodes[4*b : 4*b+4]
		list = append(list, v[2], v[0], v[3], v[1])
	}
	got, err := fs.Find(list)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, fs.Boundary) {
		t.Errorf("Find gave %v, want %v", got, fs.Boundary)
	}
	if _, err := fs.Find([]int32{0, 1, 2, 26}); err == nil || !strings.Contains(err.Error(), "facet 0 of the list") {
		t.Errorf("a facet the mesh lacks: %v", err)
	}
}

// TestKinds checks each kind's node count, dimension and name, and that
// its local facets, on the positively oriented reference cell (Gmsh's
// reference nodes; its pyramid's base is the square [-1,1]² at z = 0,
// counter-clockwise seen from its apex (0,0,1)), point out of the cell
// and close, and that the cell's volume is the reference cell's.
func TestKinds(t *testing.T) {
	cases := []struct {
		kind   Kind
		nodes  int
		dim    int
		name   string
		facets []int // nodes per local facet
		x      []float64
		volume float64
	}{
		{Triangle, 3, 2, "triangle", []int{2, 2, 2}, []float64{0, 0, 1, 0, 0, 1}, 0.5},
		{Quadrilateral, 4, 2, "quadrilateral", []int{2, 2, 2, 2}, []float64{-1, -1, 1, -1, 1, 1, -1, 1}, 4},
		{Tetrahedron, 4, 3, "tetrahedron", []int{3, 3, 3, 3}, []float64{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1}, 1.0 / 6},
		{Hexahedron, 8, 3, "hexahedron", []int{4, 4, 4, 4, 4, 4},
			[]float64{-1, -1, -1, 1, -1, -1, 1, 1, -1, -1, 1, -1, -1, -1, 1, 1, -1, 1, 1, 1, 1, -1, 1, 1}, 8},
		{Prism, 6, 3, "prism", []int{3, 3, 4, 4, 4},
			[]float64{0, 0, -1, 1, 0, -1, 0, 1, -1, 0, 0, 1, 1, 0, 1, 0, 1, 1}, 1},
		{Pyramid, 5, 3, "pyramid", []int{4, 3, 3, 3, 3},
			[]float64{-1, -1, 0, 1, -1, 0, 1, 1, 0, -1, 1, 0, 0, 0, 1}, 4.0 / 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := c.kind
			if k.Nodes() != c.nodes || k.Dim() != c.dim || k.String() != c.name {
				t.Fatalf("Nodes %d, Dim %d, String %q; want %d, %d, %q", k.Nodes(), k.Dim(), k, c.nodes, c.dim, c.name)
			}
			lf := LocalFacets(k)
			var sizes []int
			for _, f := range lf {
				sizes = append(sizes, len(f))
			}
			if !slices.Equal(sizes, c.facets) {
				t.Fatalf("local facets %v, want sizes %v", lf, c.facets)
			}
			cell := make([]int32, c.nodes)
			for i := range cell {
				cell[i] = int32(i)
			}
			top, err := Derive(k, cell, c.nodes)
			if err != nil {
				t.Fatal(err)
			}
			checkTopology(t, top, cell, c.x, c.dim)
			vol, _, err := CellGeometry(k, cell, c.x, c.dim)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(vol[0]-c.volume) > 1e-15 {
				t.Errorf("volume %g, want %g", vol[0], c.volume)
			}
		})
	}
	if s := Kind(0).String(); s != "kind 0" {
		t.Errorf("Kind(0) is %q", s)
	}
}

// jiggle moves every node of x (dim 3) by up to a in each coordinate,
// at random.
func jiggle(x []float64, a float64, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 2))
	x = slices.Clone(x)
	for i := range x {
		x[i] += a * (2*r.Float64() - 1)
	}
	return x
}

// hexVolume is the volume of the trilinear map of the reference cube
// onto the hexahedron with nodes p (hexahedron order), by 2×2×2-point
// Gauss quadrature of its Jacobian, a polynomial of degree 2 in each
// variable: exact. A pyramid, prism or tetrahedron is the hexahedron
// with nodes repeated (a pyramid's apex four times), the map's image
// being the cell bounded by flat triangles and bilinear quadrilaterals.
func hexVolume(p [8][3]float64) float64 {
	g := [2]float64{0.5 - 0.5/math.Sqrt(3), 0.5 + 0.5/math.Sqrt(3)}
	v := 0.0
	for _, u := range g {
		for _, w := range g {
			for _, s := range g {
				var du, dw, ds [3]float64
				for i := range 3 {
					du[i] = (1-w)*(1-s)*(p[1][i]-p[0][i]) + w*(1-s)*(p[2][i]-p[3][i]) + (1-w)*s*(p[5][i]-p[4][i]) + w*s*(p[6][i]-p[7][i])
					dw[i] = (1-u)*(1-s)*(p[3][i]-p[0][i]) + u*(1-s)*(p[2][i]-p[1][i]) + (1-u)*s*(p[7][i]-p[4][i]) + u*s*(p[6][i]-p[5][i])
					ds[i] = (1-u)*(1-w)*(p[4][i]-p[0][i]) + u*(1-w)*(p[5][i]-p[1][i]) + u*w*(p[6][i]-p[2][i]) + (1-u)*w*(p[7][i]-p[3][i])
				}
				n := cross(du, dw)
				v += (n[0]*ds[0] + n[1]*ds[1] + n[2]*ds[2]) / 8
			}
		}
	}
	return v
}

// TestCellGeometryExact checks CellGeometry's volumes of cells with
// non-planar quadrilateral faces (the nodes of a reference cell moved at
// random) against the volume of the first-order element's map, and a
// pyramid's against the average of its two splittings into tetrahedra.
func TestCellGeometryExact(t *testing.T) {
	cube := []float64{0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1}
	cases := []struct {
		kind Kind
		x    []float64
		hex  [8]int // the cell's nodes as a hexahedron's
	}{
		{Hexahedron, cube, [8]int{0, 1, 2, 3, 4, 5, 6, 7}},
		{Prism, []float64{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 1, 0, 1, 1}, [8]int{0, 1, 2, 2, 3, 4, 5, 5}},
		{Pyramid, []float64{0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0.5, 0.5, 1}, [8]int{0, 1, 2, 3, 4, 4, 4, 4}},
		{Tetrahedron, []float64{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1}, [8]int{0, 1, 2, 2, 3, 3, 3, 3}},
	}
	for _, c := range cases {
		for seed := range uint64(20) {
			x := jiggle(c.x, 0.25, seed)
			cell := make([]int32, c.kind.Nodes())
			for i := range cell {
				cell[i] = int32(i)
			}
			vol, _, err := CellGeometry(c.kind, cell, x, 3)
			if err != nil {
				t.Fatal(err)
			}
			var p [8][3]float64
			for i, v := range c.hex {
				p[i] = point(x, 3, int32(v))
			}
			if want := hexVolume(p); math.Abs(vol[0]-want) > 1e-14 {
				t.Errorf("%v %d: volume %.17g, the element's %.17g", c.kind, seed, vol[0], want)
			}
			if c.kind != Pyramid {
				continue
			}
			tet := func(a, b, c, d int32) float64 { return orient(x, []int32{a, b, c, d}) / 6 }
			split := (tet(0, 1, 2, 4) + tet(0, 2, 3, 4) + tet(0, 1, 3, 4) + tet(1, 2, 3, 4)) / 2
			if math.Abs(vol[0]-split) > 1e-14 {
				t.Errorf("pyramid %d: volume %.17g, its splittings' average %.17g", seed, vol[0], split)
			}
		}
	}
}

// TestPyramidsFillHexahedra splits the cubes of a grid whose nodes were
// moved at random (so the pyramids' bases are not planar) into six
// pyramids each, and checks the topology against the geometry and that
// each cube's pyramids have the volume CellGeometry gives the hexahedron.
func TestPyramidsFillHexahedra(t *testing.T) {
	const n = 3
	x := jiggle(grid(n, 3), 0.2/n, 7)
	cells, xp := pyramids(n, x, []int{0, 1, 2, 3, 4, 5})
	hv, _, err := CellGeometry(Hexahedron, hexes(n), x, 3)
	if err != nil {
		t.Fatal(err)
	}
	top, err := Derive(Pyramid, cells, len(xp)/3)
	if err != nil {
		t.Fatal(err)
	}
	checkTopology(t, top, cells, xp, 3)
	pv, _, err := CellGeometry(Pyramid, cells, xp, 3)
	if err != nil {
		t.Fatal(err)
	}
	for c, v := range hv {
		sum := 0.0
		for _, p := range pv[6*c : 6*c+6] {
			if p <= 0 {
				t.Fatalf("cube %d: a pyramid of volume %g", c, p)
			}
			sum += p
		}
		if math.Abs(sum-v) > 1e-15 {
			t.Errorf("cube %d: its pyramids' volumes sum to %.17g, the hexahedron's %.17g", c, sum, v)
		}
	}
}
