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

// Read the second of three blocks of the square's nodes and triangles, as
// rank 1 of 3 would, without holding the rest of the file.
func ExampleReadFilePart() {
	const path = "testdata/square-41-binary.msh"
	scan, err := gmsh.ScanFile(path) // the counts; nothing kept
	if err != nil {
		log.Fatal(err)
	}
	third := func(n int64) gmsh.Range { return gmsh.Range{Start: n / 3, Count: n/3*2 - n/3} }
	p, err := gmsh.ReadFilePart(path, gmsh.Keep{
		Nodes:    third(scan.NumNodes),
		Elements: map[gmsh.Type]gmsh.Range{gmsh.Triangle: third(scan.Counts[gmsh.Triangle])},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("file:", scan.NumNodes, "nodes,", scan.Counts[gmsh.Triangle], "triangles, tags 1..N:", scan.DenseTags)
	tri := p.Blocks[0]
	fmt.Printf("kept: nodes %d to %d, %ss %d to %d\n", p.FirstNode, p.FirstNode+int64(len(p.NodeTags))-1, tri.Type, tri.First, tri.First+int64(tri.Len())-1)
	fmt.Println("its first triangle's node tags:", tri.Nodes[:3])
	// Output:
	// file: 30 nodes, 42 triangles, tags 1..N: true
	// kept: nodes 10 to 19, triangles 14 to 27
	// its first triangle's node tags: [15 25 14]
}
