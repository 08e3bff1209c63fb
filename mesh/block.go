package mesh

import (
	"fmt"
	"strconv"
)

// GenerateBlock returns rank's block (of ranks) of every set of
// Generate(I, J), split as Block splits them: the counts are the block's
// and the maps hold the whole mesh's node and cell indices, the
// representation ReadBlock and hdf5.ReadMeshBlock give. Every slice equals
// the corresponding slice of Generate(I, J) (coordinates bit for bit), but
// only the block is built: memory is in proportion to the block plus I
// and J, so under MPI no rank holds the whole mesh. GenerateBlock(I, J, 0,
// 1) equals Generate(I, J).
func GenerateBlock(I, J, rank, ranks int) (*Mesh, error) {
	if err := checkGrid(I, J); err != nil {
		return nil, fmt.Errorf("mesh: GenerateBlock(%d, %d, %d, %d): %v", I, J, rank, ranks, err)
	}
	if ranks < 1 || rank < 0 || rank >= ranks {
		return nil, fmt.Errorf("mesh: GenerateBlock(%d, %d, %d, %d): want 0 <= rank < ranks", I, J, rank, ranks)
	}
	ni := 3*I + 1 // nodes per grid line
	nc := 3 * I   // cells per grid row

	node := func(i, j int) int32 { return int32(i + j*ni) } // 0-based i, j
	cell := func(i, j int) int32 { return int32(i + j*nc) } // 0-based i, j
	nodeStart, nnode := Block(ni*(J+1), rank, ranks)
	cellStart, ncell := Block(nc*J, rank, ranks)
	edgeStart, nedge := Block(6*I*J-2*I-J, rank, ranks)
	bedgeStart, nbedge := Block(4*I+2*J, rank, ranks)
	m := &Mesh{
		NNode: nnode, NCell: ncell, NEdge: nedge, NBedge: nbedge,
		X:    make([]float64, 0, 2*nnode),
		Cell: make([]int32, 0, 4*ncell),
		Edge: make([]int32, 0, 2*nedge), Ecell: make([]int32, 0, 2*nedge),
		Bedge: make([]int32, 0, 2*nbedge), Becell: make([]int32, 0, nbedge), Bound: make([]int32, 0, nbedge),
	}

	// Nodes, as Generate places them: node (i,j) is the square of the point
	// (xb[i], y) of the transformed plane, y the j-th of J+1 values spread
	// from yb[i] to 3, rounded to the six decimals of the file.
	if nnode > 0 {
		sp := airfoilSpline()
		xb := linspace(-3, 3, ni)
		yb := make([]float64, ni)
		for i := I + 1; i <= 2*I-1; i++ {
			yb[i] = sp.eval(xb[i])
		}
		var buf []byte
		round := func(v float64) float64 {
			buf = appendFixed6(buf[:0], v)
			r, _ := strconv.ParseFloat(string(buf), 64)
			return r
		}
		for n := nodeStart; n < nodeStart+nnode; n++ {
			i, j := n%ni, n/ni
			a, b := xb[i], linspaceAt(yb[i], 3, J+1, j)
			r := float64(a*a) - float64(b*b)
			s := float64(a*b) + float64(b*a)
			m.X = append(m.X, round(r-float64(0*s)), round(s+float64(0*r)))
		}
	}

	for c := cellStart; c < cellStart+ncell; c++ {
		i, j := c%nc, c/nc
		m.Cell = append(m.Cell, node(i, j), node(i+1, j), node(i+1, j+1), node(i, j+1))
	}

	// Edges come row by row of cells, as Generate emits them: row 0
	// starts with the I wake edges interleaved with its others, every row
	// but the last has 2nc-1 edges (nc "horizontal" above the cells,
	// nc-1 "vertical" between them), the last row nc-1. Generate the rows
	// from the one holding the block's first edge, keeping the block.
	if nedge > 0 {
		k := 0 // number of the next edge emitted
		j0 := max(0, min((edgeStart-I)/(2*nc-1), J-1))
		if j0 > 0 {
			k = I + j0*(2*nc-1)
		}
		edgeEnd := edgeStart + nedge
		emit := func(n1, n2, c1, c2 int32) {
			if k >= edgeStart && k < edgeEnd {
				m.Edge = append(m.Edge, n1, n2)
				m.Ecell = append(m.Ecell, c1, c2)
			}
			k++
		}
		for j := j0; j < J && k < edgeEnd; j++ {
			for i := 0; i < nc && k < edgeEnd; i++ {
				if j == 0 && i < I {
					emit(node(i, 0), node(i+1, 0), cell(nc-1-i, 0), cell(i, 0))
				}
				if j < J-1 {
					emit(node(i, j+1), node(i+1, j+1), cell(i, j), cell(i, j+1))
				}
				if i < nc-1 {
					emit(node(i+1, j), node(i+1, j+1), cell(i+1, j), cell(i, j))
				}
			}
		}
	}

	// Boundary edges: the aerofoil (I), the last grid column upwards (J),
	// the top grid line right to left (3I), the first column downwards (J).
	for e := bedgeStart; e < bedgeStart+nbedge; e++ {
		var n1, n2, c int32
		kind := int32(BoundFarField)
		switch {
		case e < I:
			i := I + e
			n1, n2, c, kind = node(i+1, 0), node(i, 0), cell(i, 0), BoundWall
		case e < I+J:
			j := e - I
			n1, n2, c = node(ni-1, j+1), node(ni-1, j), cell(nc-1, j)
		case e < I+J+nc:
			i := nc - 1 - (e - I - J)
			n1, n2, c = node(i, J), node(i+1, J), cell(i, J-1)
		default:
			j := J - 1 - (e - I - J - nc)
			n1, n2, c = node(0, j), node(0, j+1), cell(0, j)
		}
		m.Bedge = append(m.Bedge, n1, n2)
		m.Becell = append(m.Becell, c)
		m.Bound = append(m.Bound, kind)
	}
	return m, nil
}

// linspaceAt returns element k of linspace(a, b, n), computed as
// linspaceInto computes it, without the others.
func linspaceAt(a, b float64, n, k int) float64 {
	switch {
	case n == 1 || k == n-1:
		return b
	case k == 0:
		return a
	case n%2 == 1 && k == n/2:
		if a == -b {
			return 0
		}
		return (a + b) / 2
	}
	d := (b - a) / float64(n-1)
	if k <= n/2-1 {
		return a + float64(float64(k)*d)
	}
	return b - float64(float64(n-1-k)*d)
}
