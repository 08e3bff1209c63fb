package poisson

import (
	"fmt"

	"github.com/goop2/op2/mesh/gmsh"
	"github.com/goop2/op2/mesh/topology"
)

// BoundaryGroup is the name of the physical group whose nodes FromGmsh
// takes as the Dirichlet boundary, when the mesh has one.
const BoundaryGroup = "boundary"

// FromGmsh takes a 2-D triangle mesh read by package mesh/gmsh: the
// nodes' x and y, the triangles (oriented counter-clockwise), and as the
// boundary the nodes of the lines of the physical group "boundary" when
// the mesh has one, else those of every edge with one triangle
// (mesh/topology). A node in no triangle is given a boundary value too,
// so that the system stays regular. Other cells (quadrangles, volume
// meshes) are refused: the solver's elements are linear triangles.
func FromGmsh(g *gmsh.Mesh) (*Mesh, error) {
	if g.Dim != 2 {
		return nil, fmt.Errorf("poisson: the Gmsh mesh is %d-D; this solver takes 2-D triangle meshes", g.Dim)
	}
	var tri []int32
	for _, b := range g.Cells() {
		if b.Type != gmsh.Triangle {
			return nil, fmt.Errorf("poisson: the Gmsh mesh has %d %vs; the solver's elements are linear triangles", b.Len(), b.Type)
		}
		tri = append(tri, b.Nodes...)
	}
	n := g.NumNodes()
	m := &Mesh{Nodes: n, X: g.Coords(2), Tri: tri, Boundary: make([]int32, n)}
	used := make([]bool, n)
	for t := 0; t < len(tri); t += 3 {
		v := tri[t : t+3]
		ax, ay := m.X[2*v[0]], m.X[2*v[0]+1]
		det := (m.X[2*v[1]]-ax)*(m.X[2*v[2]+1]-ay) - (m.X[2*v[2]]-ax)*(m.X[2*v[1]+1]-ay)
		if det == 0 {
			return nil, fmt.Errorf("poisson: Gmsh triangle %d (tag %d) is degenerate (zero area)", t/3, tagOf(g, t/3))
		}
		if det < 0 {
			v[1], v[2] = v[2], v[1]
		}
		for _, i := range v {
			used[i] = true
		}
	}
	if blocks, err := g.Group(BoundaryGroup); err == nil {
		for _, b := range blocks {
			for _, i := range b.Nodes {
				m.Boundary[i] = 1
			}
		}
	} else {
		top, err := topology.Derive(topology.Triangle, tri, n)
		if err != nil {
			return nil, fmt.Errorf("poisson: %w", err)
		}
		edges := &top.Facets[0]
		for _, e := range edges.Boundary {
			m.Boundary[edges.Nodes[2*e]] = 1
			m.Boundary[edges.Nodes[2*e+1]] = 1
		}
	}
	for i, u := range used {
		if !u {
			m.Boundary[i] = 1
		}
	}
	return m, nil
}

// tagOf is the file's tag of triangle k of g's cells.
func tagOf(g *gmsh.Mesh, k int) int64 {
	for _, b := range g.Cells() {
		if k < b.Len() {
			return b.Tags[k]
		}
		k -= b.Len()
	}
	return -1
}
