package poisson

import (
	"fmt"

	"github.com/goop2/op2/mesh/gmsh"
	"github.com/goop2/op2/mesh/topology"
)

// BoundaryGroup is the name of the physical group whose nodes FromGmsh
// and FromGmsh3 take as the Dirichlet boundary, when the mesh has one.
const BoundaryGroup = "boundary"

// FromGmsh takes a 2-D triangle mesh read by package mesh/gmsh: the
// nodes' x and y, the triangles (oriented counter-clockwise), and as the
// boundary the nodes of the lines of the physical group "boundary" when
// the mesh has one, else those of every edge with one triangle
// (mesh/topology). A node in no triangle is given a boundary value too,
// so that the system stays regular. Other cells (quadrangles, volume
// meshes) are refused: the solver's elements are linear triangles.
func FromGmsh(g *gmsh.Mesh) (*Mesh, error) {
	x := g.Coords(2)
	tri, bnd, err := gmshCells(g, gmsh.Triangle, topology.Triangle, x, 2)
	if err != nil {
		return nil, err
	}
	return &Mesh{Nodes: g.NumNodes(), X: x, Tri: tri, Boundary: bnd}, nil
}

// gmshCells returns g's cells, all of Gmsh type t (topology kind k, of
// dimension dim, x holding dim coordinates per node), each oriented
// positively (a cell of negative volume, CellGeometry's sign, gets two
// nodes swapped), and the boundary flag of every node: on the physical
// group "boundary" when g has one, else on a facet with one cell (Derive),
// and every node in no cell.
func gmshCells(g *gmsh.Mesh, t gmsh.Type, k topology.Kind, x []float64, dim int) (cells, boundary []int32, err error) {
	if g.Dim != dim {
		return nil, nil, fmt.Errorf("poisson: the Gmsh mesh is %d-D; this solver takes %d-D meshes of %vs", g.Dim, dim, k)
	}
	for _, b := range g.Cells() {
		if b.Type != t {
			return nil, nil, fmt.Errorf("poisson: the Gmsh mesh has %d %vs; the solver's elements are linear %vs", b.Len(), b.Type, k)
		}
		cells = append(cells, b.Nodes...)
	}
	vol, _, err := topology.CellGeometry(k, cells, x, dim)
	if err != nil {
		return nil, nil, fmt.Errorf("poisson: %w", err)
	}
	nn := k.Nodes()
	n := g.NumNodes()
	used := make([]bool, n)
	for c, v := range vol {
		row := cells[c*nn : (c+1)*nn]
		switch {
		case v == 0:
			return nil, nil, fmt.Errorf("poisson: Gmsh %v %d is degenerate (zero volume)", k, c)
		case v < 0:
			row[1], row[2] = row[2], row[1]
		}
		for _, i := range row {
			used[i] = true
		}
	}
	boundary = make([]int32, n)
	if blocks, err := g.Group(BoundaryGroup); err == nil {
		for _, b := range blocks {
			for _, i := range b.Nodes {
				boundary[i] = 1
			}
		}
	} else {
		top, err := topology.Derive(k, cells, n)
		if err != nil {
			return nil, nil, fmt.Errorf("poisson: %w", err)
		}
		facets := &top.Facets[0]
		fn := facets.Kind.Nodes()
		for _, f := range facets.Boundary {
			for _, i := range facets.Nodes[int(f)*fn : (int(f)+1)*fn] {
				boundary[i] = 1
			}
		}
	}
	for i, u := range used {
		if !u {
			boundary[i] = 1
		}
	}
	return cells, boundary, nil
}
