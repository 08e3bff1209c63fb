package unstructured_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2/mesh/gmsh"
	"github.com/goop2/op2/mesh/unstructured"
)

// cubeWithBottom is Cube(1) (8 nodes, 6 tetrahedra) with one boundary
// triangle of the face z = 0 in a physical group "bottom": a hand-built
// mesh whose slices agree.
func cubeWithBottom() *gmsh.Mesh {
	g := unstructured.Cube(1)
	g.Physical = []gmsh.PhysicalGroup{{Dim: 2, Tag: 1, Name: "bottom"}}
	g.Blocks = append([]gmsh.Block{{Type: gmsh.Triangle, Nodes: []int32{0, 1, 3}, Tags: []int64{100}, Physical: []int32{1}, Entity: []int32{1}}}, g.Blocks...)
	return g
}

// shorter returns s without its last element: with spare capacity (the
// element is still there past the length, so reading past the end would
// not panic) or clipped (reading past the end panics).
func shorter[T any](s []T, spare bool) []T {
	s = slices.Clone(s)[:len(s)-1]
	if spare {
		return s
	}
	return slices.Clip(s)
}

// TestDeclareMalformed hands Declare and WriteHDF5 meshes whose slices
// disagree, each with the slice cut short both clipped and with spare
// capacity behind it (where a read past the length would go unnoticed):
// each is an error naming the block (or X) and the lengths found and
// wanted, neither panics, nothing is declared (Declare returns no mesh;
// the check comes before the first op2 call) and WriteHDF5 writes no
// file. The well-formed mesh they are made from declares.
func TestDeclareMalformed(t *testing.T) {
	if _, err := unstructured.Declare(cubeWithBottom(), unstructured.Options{}); err != nil {
		t.Fatalf("the well-formed mesh: %v", err)
	}
	const tri, tet = 0, 1 // cubeWithBottom's blocks
	type variant struct {
		name  string
		bad   func(g *gmsh.Mesh, spare bool)
		wants []string // in the error
	}
	var cases []variant
	for _, spare := range []bool{false, true} {
		sfx := ""
		if spare {
			sfx = ", spare capacity"
		}
		cases = append(cases,
			variant{"cell nodes one short" + sfx, func(g *gmsh.Mesh, spare bool) {
				g.Blocks[tet].Nodes = shorter(g.Blocks[tet].Nodes, spare)
			}, []string{"block 1 (tetrahedron)", "Nodes", "23", "24"}},
			variant{"X one coordinate short" + sfx, func(g *gmsh.Mesh, spare bool) {
				g.X = shorter(g.X, spare)
			}, []string{"X", "23", "24", "8 nodes"}},
			variant{"cell tags one short" + sfx, func(g *gmsh.Mesh, spare bool) {
				b := &g.Blocks[tet]
				b.Tags, b.Physical, b.Entity = shorter(b.Tags, spare), shorter(b.Physical, spare), shorter(b.Entity, spare)
			}, []string{"block 1 (tetrahedron)", "Nodes", "24", "20", "5 elements"}},
			variant{"cell tags alone one short" + sfx, func(g *gmsh.Mesh, spare bool) {
				g.Blocks[tet].Tags = shorter(g.Blocks[tet].Tags, spare)
			}, []string{"block 1 (tetrahedron)", "24", "20"}},
			variant{"cell physical one short" + sfx, func(g *gmsh.Mesh, spare bool) {
				g.Blocks[tet].Physical = shorter(g.Blocks[tet].Physical, spare)
			}, []string{"block 1 (tetrahedron)", "Physical", "5", "6"}},
			variant{"cell entity one short" + sfx, func(g *gmsh.Mesh, spare bool) {
				g.Blocks[tet].Entity = shorter(g.Blocks[tet].Entity, spare)
			}, []string{"block 1 (tetrahedron)", "Entity", "5", "6"}},
			variant{"facet nodes one short" + sfx, func(g *gmsh.Mesh, spare bool) {
				g.Blocks[tri].Nodes = shorter(g.Blocks[tri].Nodes, spare)
			}, []string{"block 0 (triangle)", "Nodes", "2", "3"}},
			variant{"facet physical one short" + sfx, func(g *gmsh.Mesh, spare bool) {
				g.Blocks[tri].Physical = shorter(g.Blocks[tri].Physical, spare)
			}, []string{"block 0 (triangle)", "Physical", "0", "1"}},
			variant{"node tags one short" + sfx, func(g *gmsh.Mesh, spare bool) {
				g.NodeTags = shorter(g.NodeTags, spare)
			}, []string{"X", "24", "21", "7 nodes"}},
		)
	}
	cases = append(cases,
		variant{"cell node out of range", func(g *gmsh.Mesh, _ bool) {
			g.Blocks[tet].Nodes[5] = 8
		}, []string{"block 1 (tetrahedron)", "element 1", "node 1 is 8", "[0,8)"}},
		variant{"facet node negative", func(g *gmsh.Mesh, _ bool) {
			g.Blocks[tri].Nodes[2] = -1
		}, []string{"block 0 (triangle)", "element 0", "node 2 is -1"}},
		variant{"Dim below the cells'", func(g *gmsh.Mesh, _ bool) {
			g.Dim = 2
		}, []string{"Dim is 2", "block 1 (tetrahedron)", "dimension 3"}},
		variant{"unsupported type", func(g *gmsh.Mesh, _ bool) {
			g.Blocks[tri].Type = 9
		}, []string{"block 0", "type 9"}},
	)
	dir := t.TempDir()
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := cubeWithBottom()
			c.bad(g, strings.HasSuffix(c.name, "spare capacity"))
			check := func(what string, call func() error) {
				t.Helper()
				var err error
				func() {
					defer func() {
						if p := recover(); p != nil {
							err = fmt.Errorf("panic: %v", p)
						}
					}()
					err = call()
				}()
				if err == nil {
					t.Errorf("%s: no error", what)
					return
				}
				for _, w := range c.wants {
					if !strings.Contains(err.Error(), w) || strings.HasPrefix(err.Error(), "panic") {
						t.Errorf("%s: %v; want an error saying %q", what, err, w)
						return
					}
				}
			}
			check("Declare", func() error {
				m, err := unstructured.Declare(g, unstructured.Options{})
				if err != nil && m != nil {
					t.Errorf("Declare returned a mesh with its error")
				}
				return err
			})
			h5 := filepath.Join(dir, fmt.Sprintf("%d.h5", i))
			check("WriteHDF5", func() error { return unstructured.WriteHDF5(h5, g) })
			if _, err := os.Stat(h5); err == nil {
				t.Errorf("WriteHDF5 left %s", h5)
			}
			check("Group", func() error { _, err := g.Group("bottom"); return err })
		})
	}
}
