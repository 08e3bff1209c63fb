package plan

// Synthetic meshes shared by the tests and benchmarks.

const (
	gridNX   = 1200
	gridNY   = 600
	gridWrap = 400 // rows whose last cell is joined to the first (a C-mesh cut)
)

// airfoilEdges builds an edge set resembling OP2's Airfoil mesh: the
// interior faces of a gridNX x gridNY quad grid, numbered row by row, plus
// gridWrap faces joining the two ends of the first rows. It returns the
// edge-to-node and edge-to-cell maps (arity 2 each) and the node and cell
// counts. With the constants above there are 1,438,600 edges, 721,801
// nodes and 720,000 cells, the sizes of the Airfoil benchmark mesh.
func airfoilEdges() (edgeNode, edgeCell []int32, nnode, ncell int) {
	nx, ny := gridNX, gridNY
	node := func(i, j int) int32 { return int32(j*(nx+1) + i) }
	cell := func(i, j int) int32 { return int32(j*nx + i) }
	for j := 0; j < ny; j++ {
		for i := 0; i < nx; i++ {
			if i+1 < nx {
				edgeNode = append(edgeNode, node(i+1, j), node(i+1, j+1))
				edgeCell = append(edgeCell, cell(i, j), cell(i+1, j))
			}
			if j+1 < ny {
				edgeNode = append(edgeNode, node(i, j+1), node(i+1, j+1))
				edgeCell = append(edgeCell, cell(i, j), cell(i, j+1))
			}
		}
		if j < gridWrap {
			edgeNode = append(edgeNode, node(0, j), node(0, j+1))
			edgeCell = append(edgeCell, cell(nx-1, j), cell(0, j))
		}
	}
	return edgeNode, edgeCell, (nx + 1) * (ny + 1), nx * ny
}

// airfoilInput is the benchmark loop: coordinates read through the node map
// (dataset 0), a cell dat read through the cell map (dataset 1) and the
// residual incremented through the cell map (dataset 2).
func airfoilInput(edgeNode, edgeCell []int32, nnode, ncell int) Input {
	n := len(edgeNode) / 2
	return Input{
		Core: n, Owned: n, Exec: n,
		Args: []Arg{
			{Ind: 0, Map: edgeNode, Arity: 2, Idx: 0, ElemBytes: 16},
			{Ind: 0, Map: edgeNode, Arity: 2, Idx: 1, ElemBytes: 16},
			{Ind: 1, Map: edgeCell, Arity: 2, Idx: 0, ElemBytes: 32},
			{Ind: 1, Map: edgeCell, Arity: 2, Idx: 1, ElemBytes: 32},
			{Ind: 2, Map: edgeCell, Arity: 2, Idx: 0, ElemBytes: 32, Modifies: true},
			{Ind: 2, Map: edgeCell, Arity: 2, Idx: 1, ElemBytes: 32, Modifies: true},
		},
		NInds:      3,
		IndSetSize: []int{nnode, ncell, ncell},
	}
}
