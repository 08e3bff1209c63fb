package plan_test

import (
	"fmt"

	"github.com/goop2/op2/internal/plan"
)

// A loop over the 6 edges of a path of 7 nodes that increments both end
// nodes, cut into blocks of 3 edges.
func ExampleBuild() {
	edgeNode := []int32{0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6}
	in := plan.Input{
		Core: 6, Owned: 6, Exec: 6,
		Args: []plan.Arg{
			{Ind: 0, Map: edgeNode, Arity: 2, Idx: 0, Modifies: true, ElemBytes: 8},
			{Ind: 0, Map: edgeNode, Arity: 2, Idx: 1, Modifies: true, ElemBytes: 8},
		},
		NInds:      1,
		IndSetSize: []int{7},
		BlockSize:  3,
	}
	p, err := plan.Build(in)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := p.Check(in); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("blocks:", p.NBlocks, "offsets:", p.Offset)
	for b := 0; b < p.NBlocks; b++ {
		o, n := p.IndOffs[0][b], p.IndSizes[0][b]
		fmt.Println("block", b, "nodes:", p.IndMap[0][o:o+n])
	}
	fmt.Println("local index of first node:", p.LocMap[0])
	fmt.Println("thread colours:", p.ThrCol)
	fmt.Println("block colours:", p.BlkCol, "blocks by colour:", p.BlkMap)
	// Output:
	// blocks: 2 offsets: [0 3]
	// block 0 nodes: [0 1 2 3]
	// block 1 nodes: [3 4 5 6]
	// local index of first node: [0 1 2 0 1 2]
	// thread colours: [0 1 0 0 1 0]
	// block colours: [0 1] blocks by colour: [0 1]
}

// Running the blocks of a plan colour by colour, as an OpenMP-style backend
// would (here sequentially).
func ExamplePlan_colours() {
	m := make([]int32, 10) // every element increments target 0
	in := plan.Input{
		Core: 10, Owned: 10, Exec: 10, BlockSize: 4,
		Args:  []plan.Arg{{Ind: 0, Map: m, Arity: 1, Idx: 0, Modifies: true, ElemBytes: 8}},
		NInds: 1, IndSetSize: []int{1},
	}
	p, _ := plan.Build(in)
	for c := 0; c < p.NColors; c++ {
		for _, b := range p.BlkMap[p.ColOffset[c]:p.ColOffset[c+1]] {
			s := p.Offset[b]
			fmt.Printf("colour %d: block %d elements [%d,%d)\n", c, b, s, s+p.NElems[b])
		}
	}
	// Output:
	// colour 0: block 0 elements [0,4)
	// colour 1: block 1 elements [4,8)
	// colour 2: block 2 elements [8,10)
}
