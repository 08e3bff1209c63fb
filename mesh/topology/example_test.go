package topology_test

import (
	"fmt"

	"github.com/goop2/op2/mesh/topology"
)

// Two triangles sharing the edge 1–2 of the unit square.
func ExampleDerive() {
	cells := []int32{0, 1, 2, 2, 1, 3}
	t, err := topology.Derive(topology.Triangle, cells, 4)
	if err != nil {
		fmt.Println(err)
		return
	}
	edges := &t.Facets[0]
	fmt.Println("edges:", edges.Len(), "boundary:", len(edges.Boundary))
	for e := range edges.Len() {
		fmt.Println(edges.Nodes[2*e:2*e+2], "cells", edges.Cells[2*e:2*e+2])
	}
	fmt.Println("neighbours of triangle 0:", t.CellCell[0:3])
	// Output:
	// edges: 5 boundary: 4
	// [0 1] cells [0 -1]
	// [2 0] cells [0 -1]
	// [1 2] cells [0 1]
	// [1 3] cells [1 -1]
	// [3 2] cells [1 -1]
	// neighbours of triangle 0: [-1 1 -1]
}

// A quadrilateral beside a triangle: one set of edges, the shared one
// interior, with its local number in each cell's own kind.
func ExampleDeriveMixed() {
	t, err := topology.DeriveMixed([]topology.Cells{
		{Kind: topology.Quadrilateral, Nodes: []int32{0, 1, 2, 3}},
		{Kind: topology.Triangle, Nodes: []int32{1, 4, 2}},
	}, 5)
	if err != nil {
		fmt.Println(err)
		return
	}
	e := t.Facets[0]
	for f := range e.Len() {
		if e.Cells[2*f+1] >= 0 {
			fmt.Println("interior edge", e.Nodes[2*f:2*f+2], "cells", e.Cells[2*f:2*f+2], "local", e.Local[2*f:2*f+2])
		}
	}
	fmt.Println("neighbours of the triangle (cell 1):", t.CellCell[t.Start(1):t.Offset[2]])
	// Output:
	// interior edge [1 2] cells [0 1] local [1 2]
	// neighbours of the triangle (cell 1): [-1 -1 0]
}
