package unstructured

import (
	"fmt"

	"github.com/goop2/op2/mesh/gmsh"
)

// MaxCube is the largest n Cube takes: its 6n³ tetrahedra are numbered
// in int32.
const MaxCube = 710

// Cube returns the unit cube cut into n³ cubes of six tetrahedra each,
// positively oriented, as a Gmsh mesh without physical groups: nodes
// numbered x fastest, then y, then z. Cube panics for n above MaxCube.
func Cube(n int) *gmsh.Mesh {
	if n > MaxCube {
		panic(fmt.Sprintf("unstructured.Cube(%d): n must be at most %d", n, MaxCube))
	}
	m := n + 1
	g := &gmsh.Mesh{Dim: 3}
	for l := range m {
		for j := range m {
			for i := range m {
				g.X = append(g.X, float64(i)/float64(n), float64(j)/float64(n), float64(l)/float64(n))
				g.NodeTags = append(g.NodeTags, int64(len(g.NodeTags)+1))
			}
		}
	}
	v := func(i, j, l int) int32 { return int32(i + m*(j+m*l)) }
	b := gmsh.Block{Type: gmsh.Tetrahedron}
	for l := range n {
		for j := range n {
			for i := range n {
				q := [8]int32{v(i, j, l), v(i+1, j, l), v(i+1, j+1, l), v(i, j+1, l), v(i, j, l+1), v(i+1, j, l+1), v(i+1, j+1, l+1), v(i, j+1, l+1)}
				for _, p := range [][3]int{{1, 2, 6}, {1, 5, 6}, {3, 2, 6}, {3, 7, 6}, {4, 5, 6}, {4, 7, 6}} {
					b.Nodes = append(b.Nodes, q[0], q[p[0]], q[p[1]], q[p[2]])
					b.Tags = append(b.Tags, int64(len(b.Tags)+1))
					b.Physical = append(b.Physical, 0)
					b.Entity = append(b.Entity, 1)
				}
			}
		}
	}
	g.Blocks = []gmsh.Block{b}
	return g
}
