package mesh_test

import (
	"fmt"
	"log"

	"github.com/goop2/op2/mesh"
)

func ExampleGenerate() {
	m, err := mesh.Generate(4, 6)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("nodes:", m.NNode)
	fmt.Println("cells:", m.NCell)
	fmt.Println("edges:", m.NEdge)
	fmt.Println("boundary edges:", m.NBedge)
	// Output:
	// nodes: 91
	// cells: 72
	// edges: 130
	// boundary edges: 28
}
