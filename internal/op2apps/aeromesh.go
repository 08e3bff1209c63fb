package op2apps

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
)

// AeroMesh is a mesh in the layout OP2's aero reads from FE_grid.dat:
// nodes with coordinates, quadrilateral cells of four nodes, and the
// boundary nodes on which the potential is held (a Dirichlet condition).
type AeroMesh struct {
	NNode, NCell, NBnode int
	// X holds each node's x and y.
	X []float64
	// Cell holds each cell's four nodes in the order of aero's bilinear
	// shape functions (Ng2_xi): (ξ,η) = (0,0), (1,0), (0,1), (1,1).
	Cell []int32
	// Bnode holds the boundary nodes.
	Bnode []int32
}

// ChannelBump generates an aero mesh: a channel 3 long and 1 high, with a
// bump of height 0.1 (0.1·sin²(π(x-1)) for 1 ≤ x ≤ 2) on its lower wall,
// in ni×nj quadrilateral cells, the lines of constant x evenly spaced and
// each divided evenly between the walls. The boundary nodes are those of
// the inflow and outflow ends; the walls are left free (aero's natural
// condition, no flow through them), so the bump deflects the flow and the
// solve has work to do. Node (i,j) is i+j·(ni+1); cells are numbered the
// same way, i fastest.
func ChannelBump(ni, nj int) (*AeroMesh, error) {
	if ni < 1 || nj < 1 {
		return nil, fmt.Errorf("op2apps: a channel of %d×%d cells", ni, nj)
	}
	m := &AeroMesh{NNode: (ni + 1) * (nj + 1), NCell: ni * nj}
	for j := 0; j <= nj; j++ {
		for i := 0; i <= ni; i++ {
			x := 3 * float64(i) / float64(ni)
			y0 := 0.0
			if x > 1 && x < 2 {
				s := math.Sin(math.Pi * (x - 1))
				y0 = 0.1 * s * s
			}
			y := y0 + (1-y0)*float64(j)/float64(nj)
			m.X = append(m.X, x, y)
			if i == 0 || i == ni {
				m.Bnode = append(m.Bnode, int32(i+j*(ni+1)))
			}
		}
	}
	for j := 0; j < nj; j++ {
		for i := 0; i < ni; i++ {
			n := int32(i + j*(ni+1))
			m.Cell = append(m.Cell, n, n+1, n+int32(ni+1), n+int32(ni+2))
		}
	}
	m.NBnode = len(m.Bnode)
	return m, nil
}

// Write writes the mesh as FE_grid.dat, the file OP2's aero reads: a line
// "nnode ncell nbnodes", a line "x y" per node (each value as Go's
// shortest decimal that reads back as the same double), a line of four
// nodes per cell and one node per boundary node, all 0-based.
func (m *AeroMesh) Write(w io.Writer) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "%d %d %d\n", m.NNode, m.NCell, m.NBnode)
	for n := 0; n < m.NNode; n++ {
		fmt.Fprintf(b, "%s %s\n", strconv.FormatFloat(m.X[2*n], 'g', -1, 64), strconv.FormatFloat(m.X[2*n+1], 'g', -1, 64))
	}
	for c := 0; c < m.NCell; c++ {
		fmt.Fprintf(b, "%d %d %d %d\n", m.Cell[4*c], m.Cell[4*c+1], m.Cell[4*c+2], m.Cell[4*c+3])
	}
	for _, n := range m.Bnode {
		fmt.Fprintf(b, "%d\n", n)
	}
	return b.Flush()
}

// The meshes the tests give aero and reduction, and OP2's builds read
// (testdata/gengrids writes them): a 24×8 channel, and the Airfoil C-grid
// of 3·6×5 cells.
const (
	AeroNI, AeroNJ         = 24, 8
	ReductionI, ReductionJ = 6, 5
)
