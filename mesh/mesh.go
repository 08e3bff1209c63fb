// Package mesh provides two-dimensional unstructured quadrilateral meshes in
// the layout used by OP2's Airfoil benchmark: a node set with coordinates,
// a cell set (four nodes per cell), an interior edge set (two nodes and the
// two neighbouring cells per edge) and a boundary edge set (two nodes, one
// cell and a boundary kind per boundary edge).
//
// The package can
//
//   - generate the NACA0012 C-grid that OP2 ships as new_grid.dat
//     (Generate(400, 600) reproduces that file byte for byte),
//   - read meshes in OP2's ASCII format, plain or gzip-compressed (Read,
//     ReadFile), rejecting malformed input with errors that name the line,
//   - read or generate one rank's block of every set, for MPI runs where no
//     rank may hold the whole mesh (ReadBlock, ReadBlockFrom,
//     GenerateBlock; Block gives the split), in memory proportional to
//     the block,
//   - write meshes in exactly the ASCII format OP2 writes (Write, WriteFile),
//   - check a mesh for internal consistency (Validate).
//
// All connectivity is stored as 0-based int32 indices in flat row-major
// slices, so that Cell[4*c+k] is the k-th node of cell c, Ecell[2*e+1] is the
// second cell of edge e, and so on.
package mesh

import (
	"fmt"
	"math"
	"slices"
)

// Boundary kinds stored in Mesh.Bound by Generate. Read accepts any int32
// value in the bound column; only these two are produced by the generator.
const (
	BoundWall     = 1 // solid wall (the airfoil surface)
	BoundFarField = 2 // far-field boundary
)

// Mesh is an unstructured 2-D mesh in OP2's Airfoil layout. All index
// arrays are 0-based int32 and stored row-major.
type Mesh struct {
	NNode, NCell, NEdge, NBedge int

	X      []float64 // 2*NNode: x,y per node
	Cell   []int32   // 4*NCell: nodes of each cell (counter-clockwise)
	Edge   []int32   // 2*NEdge: nodes of each edge
	Ecell  []int32   // 2*NEdge: the two cells of each edge
	Bedge  []int32   // 2*NBedge: nodes of each boundary edge
	Becell []int32   // NBedge: the cell of each boundary edge
	Bound  []int32   // NBedge: boundary kind (1 wall, 2 far field)
}

// maxCount is the largest element count of any set: indices are int32, so
// a set can hold at most math.MaxInt32 elements (fewer on 32-bit platforms,
// where 4*count must still fit in an int).
const maxCount = min(math.MaxInt32, math.MaxInt/4)

// Validate checks that the counts are non-negative and representable, that
// every slice has the length the counts imply, and that every node and cell
// index lies in range. Boundary kinds are not restricted. It does not check
// geometry (orientation, duplicate nodes, finiteness of coordinates).
func (m *Mesh) Validate() error {
	if m == nil {
		return fmt.Errorf("mesh: nil mesh")
	}
	counts := [4]struct {
		name string
		n    int
	}{{"nnode", m.NNode}, {"ncell", m.NCell}, {"nedge", m.NEdge}, {"nbedge", m.NBedge}}
	for _, c := range counts {
		if c.n < 0 || c.n > maxCount {
			return fmt.Errorf("mesh: %s = %d out of range [0,%d]", c.name, c.n, maxCount)
		}
	}
	lengths := [...]struct {
		name      string
		got, want int
	}{
		{"X", len(m.X), 2 * m.NNode},
		{"Cell", len(m.Cell), 4 * m.NCell},
		{"Edge", len(m.Edge), 2 * m.NEdge},
		{"Ecell", len(m.Ecell), 2 * m.NEdge},
		{"Bedge", len(m.Bedge), 2 * m.NBedge},
		{"Becell", len(m.Becell), m.NBedge},
		{"Bound", len(m.Bound), m.NBedge},
	}
	for _, l := range lengths {
		if l.got != l.want {
			return fmt.Errorf("mesh: len(%s) = %d, want %d", l.name, l.got, l.want)
		}
	}
	checks := [...]struct {
		name  string // slice name
		what  string // kind of the indexed set
		elem  string // kind of the owning element
		per   int    // indices per element
		idx   []int32
		limit int
	}{
		{"Cell", "node", "cell", 4, m.Cell, m.NNode},
		{"Edge", "node", "edge", 2, m.Edge, m.NNode},
		{"Ecell", "cell", "edge", 2, m.Ecell, m.NCell},
		{"Bedge", "node", "bedge", 2, m.Bedge, m.NNode},
		{"Becell", "cell", "bedge", 1, m.Becell, m.NCell},
	}
	for _, c := range checks {
		lim := uint32(c.limit)
		for i, v := range c.idx {
			if uint32(v) >= lim {
				return fmt.Errorf("mesh: %s %d: %s index %d out of range [0,%d)",
					c.elem, i/c.per, c.what, v, c.limit)
			}
		}
	}
	return nil
}

// Equal reports whether m and o have the same counts and identical
// contents. Coordinates are compared bit for bit, so +0 and -0 differ and
// a NaN equals a NaN with the same payload.
func (m *Mesh) Equal(o *Mesh) bool {
	if m == nil || o == nil {
		return m == o
	}
	if m.NNode != o.NNode || m.NCell != o.NCell || m.NEdge != o.NEdge || m.NBedge != o.NBedge {
		return false
	}
	if len(m.X) != len(o.X) {
		return false
	}
	for i, v := range m.X {
		if math.Float64bits(v) != math.Float64bits(o.X[i]) {
			return false
		}
	}
	return slices.Equal(m.Cell, o.Cell) && slices.Equal(m.Edge, o.Edge) &&
		slices.Equal(m.Ecell, o.Ecell) && slices.Equal(m.Bedge, o.Bedge) &&
		slices.Equal(m.Becell, o.Becell) && slices.Equal(m.Bound, o.Bound)
}
