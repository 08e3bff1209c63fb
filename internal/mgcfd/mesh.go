// Package mgcfd is MG-CFD's multigrid cycle written against GoOP2, a
// second benchmark beside Airfoil. MG-CFD (warwick-hpsc/MG-CFD-app-OP2) is
// a 3-D finite-volume Euler solver on unstructured meshes: fluxes are
// computed per edge of the dual mesh and per boundary node, the solution
// is advanced by a three-stage Runge–Kutta scheme with a local time step,
// and a multigrid V-cycle restricts the solution from each level to the
// next coarser one and prolongs the residual back.
//
// This package writes that algorithm anew from the original's published
// description and loop sequence (sets, maps, dats and the arithmetic of
// its kernels; none of its code): Generate builds a multigrid box mesh,
// WriteHDF5 and ReadHDF5 store it in the original's HDF5 layout (so the
// original binary reads the same mesh), and Solver runs the cycle on any
// GoOP2 backend. cmd/op2bench times it against the original built on
// OP2-Common.
package mgcfd

import (
	"fmt"
	"math"
)

// Level is one level of a multigrid mesh, in MG-CFD's unstructured
// representation. Maps are 0-based.
type Level struct {
	// NNodes, NEdges and NBnd are the sizes of the node, edge and
	// boundary-node sets.
	NNodes, NEdges, NBnd int
	// Coords holds each node's x, y, z.
	Coords []float64
	// EdgeNodes holds each edge's two nodes, a then b.
	EdgeNodes []int32
	// EdgeWeights holds each edge's weight: the area vector of the dual
	// face between its nodes, pointing from a to b.
	EdgeWeights []float64
	// BndNodes holds each boundary node's node. A node on several faces
	// of the boundary has one boundary node per face.
	BndNodes []int32
	// BndGroups holds each boundary node's group: 0 to 2 a solid
	// surface (the pressure flux), 3 to 7 the far field; the solver adds
	// nothing for other groups.
	BndGroups []int32
	// BndWeights holds each boundary node's outward area vector.
	BndWeights []float64
	// MGNodes maps each node to its node on the next coarser level; nil
	// on the coarsest level.
	MGNodes []int32
}

// Mesh is a multigrid mesh: Levels[0] is the finest.
type Mesh struct {
	Levels []Level
}

// The boundary groups Generate gives the box's faces: the two faces normal
// to z are solid walls, the other four far field.
const (
	GroupWall     = 1
	GroupFarField = 3
)

// Generate builds a multigrid mesh of the unit cube with levels levels: the
// finest is a structured grid of n×n×n nodes, each coarser one has every
// other node of the one below in each direction ((n−1)/2+1 per side), and
// every level is given as an unstructured mesh (nodes, edges between
// neighbours along x, y and z, boundary nodes with their face normals).
// The edge weights are the areas of the dual (median) cells' faces, so each
// node's dual cell is closed: for every node the weights of its edges
// (+ where it is a, − where it is b) and of its boundary nodes sum to
// zero. Each fine node maps to the coarse node at its coordinates halved
// and rounded down. n−1 must be divisible by 2^(levels−1) and the coarsest
// level have at least 2 nodes per side. n = 65 with 4 levels gives the
// issue's figure: 274 625 nodes and 811 200 edges on the finest level.
func Generate(n, levels int) (*Mesh, error) {
	if err := CheckSize(n, levels); err != nil {
		switch err.Fault {
		case FaultLevels:
			return nil, fmt.Errorf("mgcfd: %d levels: the mesh needs %s levels", levels, err.Want)
		case FaultN:
			return nil, fmt.Errorf("mgcfd: %d nodes per side: the finest level needs %s", n, err.Want)
		}
		return nil, fmt.Errorf("mgcfd: %d nodes per side and %d levels: %s", n, levels, err.Want)
	}
	m := &Mesh{Levels: make([]Level, levels)}
	for l := range m.Levels {
		side := (n-1)>>l + 1
		m.Levels[l] = boxLevel(side, 1/float64(side-1))
		if l+1 < levels {
			m.Levels[l].MGNodes = coarseMap(side)
		}
	}
	return m, nil
}

// boxLevel builds one level: side³ nodes h apart.
func boxLevel(side int, h float64) Level {
	n := side
	id := func(i, j, k int) int32 { return int32(i + n*(j+n*k)) }
	// half is 0.5 on the boundary, where a dual face is half as wide.
	half := func(i int) float64 {
		if i == 0 || i == n-1 {
			return 0.5
		}
		return 1
	}
	lv := Level{NNodes: n * n * n, NEdges: 3 * n * n * (n - 1), NBnd: 6 * n * n}
	lv.Coords = make([]float64, 0, 3*lv.NNodes)
	lv.EdgeNodes = make([]int32, 0, 2*lv.NEdges)
	lv.EdgeWeights = make([]float64, 0, 3*lv.NEdges)
	for k := 0; k < n; k++ {
		for j := 0; j < n; j++ {
			for i := 0; i < n; i++ {
				lv.Coords = append(lv.Coords, float64(i)*h, float64(j)*h, float64(k)*h)
				a := id(i, j, k)
				if i+1 < n {
					lv.EdgeNodes = append(lv.EdgeNodes, a, id(i+1, j, k))
					lv.EdgeWeights = append(lv.EdgeWeights, h*h*half(j)*half(k), 0, 0)
				}
				if j+1 < n {
					lv.EdgeNodes = append(lv.EdgeNodes, a, id(i, j+1, k))
					lv.EdgeWeights = append(lv.EdgeWeights, 0, h*h*half(i)*half(k), 0)
				}
				if k+1 < n {
					lv.EdgeNodes = append(lv.EdgeNodes, a, id(i, j, k+1))
					lv.EdgeWeights = append(lv.EdgeWeights, 0, 0, h*h*half(i)*half(j))
				}
			}
		}
	}
	lv.BndNodes = make([]int32, 0, lv.NBnd)
	lv.BndGroups = make([]int32, 0, lv.NBnd)
	lv.BndWeights = make([]float64, 0, 3*lv.NBnd)
	// The six faces: the axis normal to it, and the side it is on.
	for axis := 0; axis < 3; axis++ {
		for _, hi := range []bool{false, true} {
			group := int32(GroupFarField)
			if axis == 2 {
				group = GroupWall
			}
			at, sign := 0, -1.0
			if hi {
				at, sign = n-1, 1
			}
			for v := 0; v < n; v++ {
				for u := 0; u < n; u++ {
					var node int32
					switch axis {
					case 0:
						node = id(at, u, v)
					case 1:
						node = id(u, at, v)
					default:
						node = id(u, v, at)
					}
					w := [3]float64{}
					w[axis] = sign * h * h * half(u) * half(v)
					lv.BndNodes = append(lv.BndNodes, node)
					lv.BndGroups = append(lv.BndGroups, group)
					lv.BndWeights = append(lv.BndWeights, w[:]...)
				}
			}
		}
	}
	return lv
}

// coarseMap maps each node of a side³ level to the node of the next
// coarser level at its indices halved.
func coarseMap(side int) []int32 {
	cs := (side-1)/2 + 1
	mg := make([]int32, 0, side*side*side)
	for k := 0; k < side; k++ {
		for j := 0; j < side; j++ {
			for i := 0; i < side; i++ {
				mg = append(mg, int32(i/2+cs*(j/2+cs*(k/2))))
			}
		}
	}
	return mg
}

// Check verifies that the mesh is consistent: every table's length agrees
// with its level's sizes, every map entry is in range, no edge joins a
// node to itself, and every value is finite. ReadHDF5 checks what it
// reads; Solver declares only checked meshes.
func (m *Mesh) Check() error { return m.check(nil, 0) }

// A table of a level: its name in errors about a mesh in memory, its
// dataset's name in MG-CFD's files, and its columns.
type table struct {
	desc, ds string
	cols     int
}

var (
	tCoords     = table{"node coordinates", dsCoords, 3}
	tEdgeNodes  = table{"edge-->node", dsEdgeNodes, 2}
	tEdgeWeight = table{"edge weights", dsEdgeWeight, 3}
	tBndNodes   = table{"bnd_node-->node", dsBndNodes, 1}
	tBndGroups  = table{"bnd_node groups", dsBndGroups, 1}
	tBndWeight  = table{"bnd_node weights", dsBndWeight, 3}
	tMGNodes    = table{"node-->mg_node", dsMGNodes, 1}
)

// check is Check. With files, the levels' files as ReadHDF5 read them
// with base_array_index base, its errors name the level's file and the
// dataset as the file names it, its rows and columns, and map entries as
// the file holds them (base added).
func (m *Mesh) check(files []string, base int) error {
	if m == nil || len(m.Levels) == 0 {
		return fmt.Errorf("mgcfd: the mesh has no levels")
	}
	for l := range m.Levels {
		lv := &m.Levels[l]
		// where is the level, name a table's name, at entry i of a
		// table, val a map's entry x, span the range of a map's
		// entries into a set of n.
		where := func(l int) string { return fmt.Sprintf("level %d", l) }
		name := func(t table) string { return t.desc }
		at := func(t table, i int) string { return fmt.Sprintf("%s entry %d", t.desc, i) }
		val := func(x int32) int { return int(x) }
		span := func(n int) string { return fmt.Sprintf("[0,%d)", n) }
		if files != nil {
			where = func(l int) string { return fmt.Sprintf("%s (level %d)", files[l], l) }
			name = func(t table) string { return fmt.Sprintf("dataset %q", t.ds) }
			at = func(t table, i int) string {
				if t.cols == 1 {
					return fmt.Sprintf("dataset %q row %d", t.ds, i)
				}
				return fmt.Sprintf("dataset %q row %d column %d", t.ds, i/t.cols, i%t.cols)
			}
			val = func(x int32) int { return int(x) + base }
			span = func(n int) string { return fmt.Sprintf("[%d,%d) (base_array_index=%d)", base, n+base, base) }
		}
		if lv.NNodes < 1 {
			if files != nil {
				return fmt.Errorf("mgcfd: %s: %s has no rows", where(l), name(tCoords))
			}
			return fmt.Errorf("mgcfd: level %d has no nodes", l)
		}
		for _, t := range []struct {
			t         table
			got, want int
			per       table // the table with a row per row of t
			unit      string
		}{
			{tCoords, len(lv.Coords), 3 * lv.NNodes, tCoords, "node"},
			{tEdgeNodes, len(lv.EdgeNodes), 2 * lv.NEdges, tEdgeNodes, "edge"},
			{tEdgeWeight, len(lv.EdgeWeights), 3 * lv.NEdges, tEdgeNodes, "edge"},
			{tBndNodes, len(lv.BndNodes), lv.NBnd, tBndNodes, "boundary node"},
			{tBndGroups, len(lv.BndGroups), lv.NBnd, tBndNodes, "boundary node"},
			{tBndWeight, len(lv.BndWeights), 3 * lv.NBnd, tBndNodes, "boundary node"},
		} {
			if t.got == t.want {
				continue
			}
			if files != nil {
				return fmt.Errorf("mgcfd: %s: %s has %d rows, want %d, one per %s (the rows of %s)", where(l), name(t.t), t.got/t.t.cols, t.want/t.t.cols, t.unit, name(t.per))
			}
			return fmt.Errorf("mgcfd: level %d: %s has %d values, want %d", l, t.t.desc, t.got, t.want)
		}
		if err := inRange(lv.EdgeNodes, lv.NNodes, tEdgeNodes, where(l), at, val, span); err != nil {
			return err
		}
		for e := 0; e < lv.NEdges; e++ {
			if a := lv.EdgeNodes[2*e]; a == lv.EdgeNodes[2*e+1] {
				if files != nil {
					return fmt.Errorf("mgcfd: %s: %s row %d joins node %d to itself", where(l), name(tEdgeNodes), e, val(a))
				}
				return fmt.Errorf("mgcfd: level %d: edge %d joins node %d to itself", l, e, a)
			}
		}
		if err := inRange(lv.BndNodes, lv.NNodes, tBndNodes, where(l), at, val, span); err != nil {
			return err
		}
		for _, t := range []struct {
			t table
			v []float64
		}{{tCoords, lv.Coords}, {tEdgeWeight, lv.EdgeWeights}, {tBndWeight, lv.BndWeights}} {
			for i, x := range t.v {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					if files != nil {
						return fmt.Errorf("mgcfd: %s: %s is %v", where(l), at(t.t, i), x)
					}
					return fmt.Errorf("mgcfd: level %d: %s value %d is %v", l, t.t.desc, i, x)
				}
			}
		}
		if l+1 < len(m.Levels) {
			if len(lv.MGNodes) != lv.NNodes {
				if files != nil {
					return fmt.Errorf("mgcfd: %s: %s has %d rows, want %d, one per node (the rows of %s)", where(l), name(tMGNodes), len(lv.MGNodes), lv.NNodes, name(tCoords))
				}
				return fmt.Errorf("mgcfd: level %d: node-->mg_node has %d entries, want %d (one per node)", l, len(lv.MGNodes), lv.NNodes)
			}
			next := func(n int) string { return span(n) + ", the nodes of " + where(l+1) }
			if err := inRange(lv.MGNodes, m.Levels[l+1].NNodes, tMGNodes, where(l), at, val, next); err != nil {
				return err
			}
		} else if lv.MGNodes != nil {
			return fmt.Errorf("mgcfd: level %d is the coarsest but has a node-->mg_node map", l)
		}
	}
	return nil
}

// inRange refuses an entry of the map v, table t of the level where,
// outside [0,n), naming it with at, its value with val and the range
// with span.
func inRange(v []int32, n int, t table, where string, at func(table, int) string, val func(int32) int, span func(int) string) error {
	for i, x := range v {
		if x < 0 || int(x) >= n {
			return fmt.Errorf("mgcfd: %s: %s is %d, outside %s", where, at(t, i), val(x), span(n))
		}
	}
	return nil
}

// SizeError is why Generate refuses a mesh size: which of n and levels is
// at fault (or both together), and what is wanted.
type SizeError struct {
	Fault SizeFault
	Want  string
}

// SizeFault says what a SizeError is about.
type SizeFault int

// The faults of a SizeError.
const (
	FaultLevels SizeFault = iota // the number of levels
	FaultN                       // the nodes per side
	FaultBoth                    // n−1 against the levels
)

func (e *SizeError) Error() string { return e.Want }

// CheckSize returns why Generate would refuse n nodes per side in levels
// levels, or nil: 1 to 20 levels, 2 to 1291 nodes per side (3n²(n−1)
// edges fit an int32 index), n−1 a positive multiple of 2^(levels−1).
func CheckSize(n, levels int) *SizeError {
	if levels < 1 || levels > 20 {
		return &SizeError{FaultLevels, "1 to 20"}
	}
	if n < 2 || n > 1291 {
		return &SizeError{FaultN, "2 to 1291"}
	}
	if f := 1 << (levels - 1); (n-1)%f != 0 || (n-1)/f < 1 {
		return &SizeError{FaultBoth, fmt.Sprintf("n−1 must be a positive multiple of 2^(levels−1) = %d", f)}
	}
	return nil
}
