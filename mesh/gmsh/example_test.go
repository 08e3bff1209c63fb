package gmsh_test

import (
	"fmt"
	"log"

	"github.com/goop2/op2/mesh/gmsh"
)

// Read a unit square meshed by Gmsh (MSH 4.1, binary) and list its
// elements and the sizes of its physical groups.
func Example() {
	m, err := gmsh.ReadFile("testdata/square-41-binary.msh")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("dimension:", m.Dim)
	fmt.Println("nodes:", m.NumNodes())
	for _, b := range m.Blocks {
		fmt.Printf("%ss: %d\n", b.Type, b.Len())
	}
	for _, g := range m.Physical {
		blocks, err := m.Group(g.Name)
		if err != nil {
			log.Fatal(err)
		}
		for _, b := range blocks {
			fmt.Printf("group %q (dimension %d): %d %ss\n", g.Name, g.Dim, b.Len(), b.Type)
		}
	}
	xy := m.Coords(2) // x, y per node
	tri := m.Cells()[0]
	fmt.Printf("first triangle: nodes %v, first at (%.3g, %.3g)\n", tri.Nodes[:3], xy[2*tri.Nodes[0]], xy[2*tri.Nodes[0]+1])
	// Output:
	// dimension: 2
	// nodes: 30
	// lines: 16
	// triangles: 42
	// group "boundary" (dimension 1): 16 lines
	// group "domain" (dimension 2): 42 triangles
	// first triangle: nodes [21 22 19], first at (0.569, 0.494)
}
