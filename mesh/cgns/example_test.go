package cgns_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/goop2/op2/mesh/cgns"
)

// Read a CGNS mesh (made by libcgns's aflr3_to_cgns from a Gmsh mesh,
// testdata/make.py), list its element blocks and boundary conditions,
// and write a cell-centred solution into a copy of it.
func Example() {
	const path = "testdata/box.cgns"
	m, err := cgns.Read(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d nodes\n", m.NumNodes())
	for _, b := range m.Blocks {
		fmt.Printf("%v: %d\n", b.Type, b.Len())
	}
	for _, g := range m.Physical {
		faces := 0
		for _, b := range m.GroupTag(g.Dim, g.Tag) {
			faces += b.Len()
		}
		fmt.Printf("%q: %d faces\n", g.Name, faces)
	}
	cells := m.Cells()[0]
	rank := make([]float64, cells.Len())
	for i := range rank {
		rank[i] = float64(i)
	}
	dir, err := os.MkdirTemp("", "cgns-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "solution.cgns")
	if err := cgns.WriteSolution(out, path, "FlowSolution", cgns.Field{Name: "Index", Values: rank}); err != nil {
		fmt.Println(err)
		return
	}
	back, err := cgns.ReadField(out, "FlowSolution", "Index")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("Index of the last cell: %g\n", back[len(back)-1])
	// Output:
	// 81 nodes
	// triangle: 156
	// tetrahedron: 184
	// "UserDefined 1": 52 faces
	// "UserDefined 2": 26 faces
	// "UserDefined 3": 78 faces
	// Index of the last cell: 183
}
