package op2_test

import (
	"fmt"

	"github.com/goop2/op2"
)

// A map declared from 64-bit values, as a mesh numbered beyond 2³¹ over
// MPI ranks declares its maps before Partition; in one process the
// values index the target set as NewMap's do.
func ExampleNewMap64() {
	nodes, _ := op2.NewSet(3, "nodes")
	edges, _ := op2.NewSet(2, "edges")
	pedge, err := op2.NewMap64(edges, nodes, 2, []int64{0, 1, 1, 2}, "pedge")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(pedge.Values(), nodes.DeclaredNumbers64())
	_, err = op2.NewMap64(edges, nodes, 2, []int64{0, 1, 1, 1 << 33}, "bad")
	fmt.Println(err)
	// Output:
	// [0 1 1 2] [0 1 2]
	// op2: map "bad" from "edges" to "nodes": entry 3 (element 1, column 1) is 8589934592, outside the target set [0,3)
}
