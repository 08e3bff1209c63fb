package hdf5

import (
	"github.com/goop2/op2/mesh"
)

// The names of the Airfoil mesh in OP2's new_grid.h5.
const (
	SetNodes    = "nodes"
	SetEdges    = "edges"
	SetBedges   = "bedges"
	SetCells    = "cells"
	MapPedge    = "pedge"   // edges → nodes, arity 2
	MapPecell   = "pecell"  // edges → cells, arity 2
	MapPbedge   = "pbedge"  // bedges → nodes, arity 2
	MapPbecell  = "pbecell" // bedges → cells, arity 1
	MapPcell    = "pcell"   // cells → nodes, arity 4
	DatX        = "p_x"     // node coordinates, 2 doubles
	DatBound    = "p_bound" // boundary kind of each bedge, 1 int
	meshSetsLen = 4
)

// WriteMesh writes an Airfoil mesh in OP2's layout under the names of
// OP2's new_grid.h5: the sets nodes, edges, bedges and cells, the maps
// pedge, pecell, pbedge, pbecell and pcell, and the dats p_bound and p_x.
// (OP2's file also holds the flow fields p_q, p_qold, p_adt, p_res and the
// constants; cmd/op2mesh writes those.)
func WriteMesh(f *File, m *mesh.Mesh) error {
	if err := m.Validate(); err != nil {
		return f.errorf("%v", err)
	}
	sets := [meshSetsLen]struct {
		name string
		n    int
	}{{SetNodes, m.NNode}, {SetEdges, m.NEdge}, {SetBedges, m.NBedge}, {SetCells, m.NCell}}
	for _, s := range sets {
		if err := f.WriteSetSize(s.name, s.n); err != nil {
			return err
		}
	}
	maps := [...]struct {
		name  string
		arity int
		v     []int32
	}{{MapPedge, 2, m.Edge}, {MapPecell, 2, m.Ecell}, {MapPbedge, 2, m.Bedge}, {MapPbecell, 1, m.Becell}, {MapPcell, 4, m.Cell}}
	for _, mp := range maps {
		if err := f.WriteMapTable(mp.name, mp.arity, mp.v); err != nil {
			return err
		}
	}
	if err := WriteArray(f, DatBound, 1, m.Bound); err != nil {
		return err
	}
	return WriteArray(f, DatX, 2, m.X)
}

// ReadMesh reads a whole Airfoil mesh written by WriteMesh or by OP2 (its
// new_grid.h5) and validates it.
func ReadMesh(f *File) (*mesh.Mesh, error) {
	m, err := ReadMeshBlock(f, 0, 1)
	if err != nil {
		return nil, err
	}
	if err := m.Validate(); err != nil {
		return nil, f.errorf("%v", err)
	}
	return m, nil
}

// ReadMeshBlock reads rank's block (of ranks) of every set of an Airfoil
// mesh, split as Block does: the counts are the block's, and the maps
// hold indices in the file's (global) numbering — the declaration that
// op2.Partition expects from each rank. An index outside its set is an
// error naming the file, the element (its global number) and the set.
func ReadMeshBlock(f *File, rank, ranks int) (*mesh.Mesh, error) {
	var totals, starts, sizes [meshSetsLen]int
	for i, name := range meshSetNames {
		n, err := f.SetSize(name)
		if err != nil {
			if _, uerr := f.Info("unstructured"); uerr == nil {
				// mesh/unstructured's layout (op2mesh convert of a Gmsh
				// file) shares "nodes" and "cells" with OP2's.
				return nil, f.errorf("a mesh written by unstructured.WriteHDF5 (op2mesh convert), not an Airfoil mesh in OP2's layout (%v)", err)
			}
			return nil, err
		}
		totals[i] = n
		starts[i], sizes[i] = Block(n, rank, ranks)
	}
	m := &mesh.Mesh{NNode: sizes[0], NEdge: sizes[1], NBedge: sizes[2], NCell: sizes[3]}
	var err error
	rows := func(name string, dim, set int) []int32 {
		if err == nil {
			err = f.checkRows(name, meshSetNames[set], totals[set])
		}
		if err != nil {
			return nil
		}
		var v []int32
		v, err = readRows[int32](f, name, dim, starts[set], sizes[set])
		return v
	}
	m.Edge = rows(MapPedge, 2, 1)
	m.Ecell = rows(MapPecell, 2, 1)
	m.Bedge = rows(MapPbedge, 2, 2)
	m.Becell = rows(MapPbecell, 1, 2)
	m.Cell = rows(MapPcell, 4, 3)
	m.Bound = rows(DatBound, 1, 2)
	if err == nil {
		err = f.checkRows(DatX, SetNodes, totals[0])
	}
	if err != nil {
		return nil, err
	}
	if m.X, err = readRows[float64](f, DatX, 2, starts[0], sizes[0]); err != nil {
		return nil, err
	}
	for _, c := range [...]struct {
		elem, what string // the owning element's kind, the indexed set's
		per        int    // indices per element
		idx        []int32
		from, to   int // the sets (meshSetNames' order)
	}{
		{"cell", "node", 4, m.Cell, 3, 0},
		{"edge", "node", 2, m.Edge, 1, 0},
		{"edge", "cell", 2, m.Ecell, 1, 3},
		{"bedge", "node", 2, m.Bedge, 2, 0},
		{"bedge", "cell", 1, m.Becell, 2, 3},
	} {
		for i, v := range c.idx {
			if v < 0 || int(v) >= totals[c.to] {
				return nil, f.errorf("mesh: %s %d: %s index %d out of range [0,%d)", c.elem, starts[c.from]+i/c.per, c.what, v, totals[c.to])
			}
		}
	}
	return m, nil
}

var meshSetNames = [meshSetsLen]string{SetNodes, SetEdges, SetBedges, SetCells}
