package vtk

import (
	"fmt"

	"github.com/goop2/op2"
)

// FromOP2 builds a grid from a mesh declared to GoOP2: the points are the
// elements of coords' set, with coords' dim (1, 2 or 3) values as their
// coordinates, and the cells are the source elements of cells, a map to
// that set whose arity and coords' dim choose the cell type (see
// CellTypeFor; a Writer of NewWriterOf writes other types). The map lists each cell's nodes in Gmsh's order, as
// mesh/unstructured declares them; the grid has them in VTK's (a prism's
// first triangle turned round: see Wedge). Values on the mesh are added
// with AddCellDat and AddPointDat.
//
// Under MPI it is collective (every rank calls it, and the Add functions,
// in the same order): rank 0 gets the whole mesh in its declared
// numbering, the other ranks a nil Grid, which the Add functions accept.
func FromOP2(coords *op2.Dat[float64], cells *op2.Map) (*Grid, error) {
	return fromOP2(coords, cells, 0)
}

// fromOP2 is FromOP2 with cells of type typ (0: CellTypeFor's).
func fromOP2(coords *op2.Dat[float64], cells *op2.Map, typ CellType) (*Grid, error) {
	if coords == nil || cells == nil {
		return nil, fmt.Errorf("vtk: FromOP2 needs coordinates and a cell map")
	}
	if cells.To().Name() != coords.Set().Name() || cells.To().GlobalSize() != coords.Set().GlobalSize() {
		return nil, fmt.Errorf("vtk: map %q goes to set %q, but the coordinates %q are on set %q", cells.Name(), cells.To().Name(), coords.Name(), coords.Set().Name())
	}
	typ, err := cellType(typ, cells.Arity(), coords.Dim())
	if err != nil {
		return nil, err
	}
	x, err := coords.Gather()
	if err != nil {
		return nil, err
	}
	table, err := cells.Gather()
	if err != nil {
		return nil, err
	}
	if op2.Rank() != 0 {
		return nil, nil
	}
	toVTKOrder(typ, table)
	g := &Grid{Points: x, Dim: coords.Dim(), Cells: table, NodesPerCell: cells.Arity(), Type: typ}
	if err := g.Validate(); err != nil {
		return nil, err
	}
	return g, nil
}

// AddCellDat adds d's values as a cell array named after d, with d's dim
// as its number of components. d must be on the cells' set. Under MPI it
// is collective and g is nil on every rank but 0.
func AddCellDat[T op2.Scalar](g *Grid, d *op2.Dat[T]) error {
	return add(g, d, true)
}

// AddPointDat adds d's values as a point array named after d. d must be on
// the points' set. Like AddCellDat it is collective under MPI.
func AddPointDat[T op2.Scalar](g *Grid, d *op2.Dat[T]) error {
	return add(g, d, false)
}

func add[T op2.Scalar](g *Grid, d *op2.Dat[T], cell bool) error {
	v, err := d.Gather()
	if err != nil || op2.Rank() != 0 {
		return err
	}
	if g == nil {
		return fmt.Errorf("vtk: adding dat %q to a nil grid", d.Name())
	}
	n, where := g.NumPoints(), "points"
	if cell {
		n, where = g.NumCells(), "cells"
	}
	if len(v) != n*d.Dim() {
		return fmt.Errorf("vtk: dat %q on set %q has %d elements; the grid has %d %s", d.Name(), d.Set().Name(), len(v)/max(d.Dim(), 1), n, where)
	}
	a := Array{Name: d.Name(), Components: d.Dim(), Values: plain(v)}
	arrays := &g.PointData
	if cell {
		arrays = &g.CellData
	}
	*arrays = append(*arrays, a)
	if err := g.Validate(); err != nil {
		*arrays = (*arrays)[:len(*arrays)-1] // the grid stays as it was
		return err
	}
	return nil
}

// plain returns v as Array holds it: the slice itself for the five
// element types, float64 values for types defined on them.
func plain[T op2.Scalar](v []T) any {
	switch s := any(v).(type) {
	case []float64, []float32, []int32, []int64, []uint32:
		return s
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// vtkOrder gives, for the cell types whose node order is not Gmsh's, VTK's
// order: VTK's node j is Gmsh's node vtkOrder[t][j]. A wedge's first
// triangle turns clockwise seen from its second in VTK, counter-clockwise
// in Gmsh (and in mesh/topology's positive orientation).
var vtkOrder = map[CellType][]int{Wedge: {0, 2, 1, 3, 5, 4}}

// toVTKOrder reorders, in place, the nodes of cells of type t listed one
// cell after another in Gmsh's order into VTK's.
func toVTKOrder(t CellType, conn []int32) {
	order := vtkOrder[t]
	if order == nil {
		return
	}
	n := len(order)
	var tmp [8]int32
	for c := 0; c+n <= len(conn); c += n {
		copy(tmp[:n], conn[c:c+n])
		for j, k := range order {
			conn[c+j] = tmp[k]
		}
	}
}
