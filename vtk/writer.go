package vtk

import (
	"fmt"
	"math"
	"reflect"
	"sync"

	"github.com/goop2/op2"
)

// DeclaredNumberArray is the name of the Int32 cell array a Writer adds
// when its DeclaredNumbers field is set: each cell's number in the
// numbering its set was declared with (Int64 for a set numbered beyond
// 2³¹, op2.NewMap64).
const DeclaredNumberArray = "op2_declared_number"

// Writer writes a mesh declared to GoOP2, with Dats on its cells and
// points, as one .vtu file on one process and as a parallel .pvtu file
// with one .vtu piece per rank under MPI, so that a program writes its
// output the same way on any number of ranks:
//
//	w, err := vtk.NewWriter(x, pcell) // coordinates Dat, cell→node Map
//	err = vtk.CellDat(w, q)           // q's values on the cells, at each write
//	err = vtk.PointDat(w, u)          // u's values on the nodes
//	err = w.WriteFile("out.vtu", vtk.Binary)
//
// On one process WriteFile writes the whole mesh in its declared numbering,
// as FromOP2 and AddCellDat do. On several ranks it writes out.pvtu and
// this rank's piece (see WriteParallel): no rank gathers the whole mesh.
//
// A Writer keeps the Dats, not their values: each WriteFile or Piece reads
// the values the Dats hold then, so one Writer serves a time series (see
// Series).
type Writer struct {
	// DeclaredNumbers adds the cell array DeclaredNumberArray (Int32):
	// each cell's number in the declared numbering, which tells where a
	// piece's cells are in the whole mesh.
	DeclaredNumbers bool

	coords *op2.Dat[float64]
	// cells is the cell-to-node map of a mesh of one kind; nil for a
	// mesh of mixed cells (NewMixedWriter).
	cells *op2.Map
	// set is the cells' set.
	set *op2.Set
	// kinds is the kinds of cell: one, whose nodes map is cells and whose
	// cells map is nil (the identity), for a mesh of one kind.
	kinds  []kind
	fields []field
	// covered records that every cell was found in one kind's cells
	// exactly (mixed cells under MPI, checked once).
	covered bool
}

// kind is one kind of cell a Writer writes.
type kind struct {
	nodes, cells *op2.Map
	typ          CellType
}

// field is a Dat added to a Writer, with the ways to read it.
type field struct {
	name string
	cell bool
	// whole adds the dat to the grid of the whole mesh (collective
	// under MPI: Gather).
	whole func(g *Grid) error
	// piece returns this rank's array: the values of the owned cells of
	// each kind, kind after kind, for a cell dat; for a point dat, the
	// values at the corners corner of the cells.
	piece func(w *Writer, corner []cornerRef) (Array, error)
}

// cornerRef names a corner of a cell: the entry (cell × arity + column)
// of the owned rows of the nodes map of the writer's kind kind.
type cornerRef struct {
	kind  int32
	entry int32
}

// NewWriter returns a Writer of the mesh whose points are the elements of
// coords' set, with coords' dim (1, 2 or 3) values as coordinates, and
// whose cells are the source elements of cells, a map to that set; the
// map's arity and the dim choose the cell type (see CellTypeFor: 4 nodes
// in 3-D make tetrahedra; NewWriterOf writes quadrilaterals there). The
// map lists each cell's nodes in Gmsh's order, as mesh/unstructured
// declares them, and the files have them in VTK's (see Wedge). It reads
// no values and is not collective.
func NewWriter(coords *op2.Dat[float64], cells *op2.Map) (*Writer, error) {
	return newWriter("NewWriter", coords, cells, 0)
}

// NewWriterOf is NewWriter with cells of type typ, whose number of nodes
// must be the map's arity: for the cells the arity and dim do not tell,
// as the quadrilateral faces of a 3-D mesh (Quad; mesh/unstructured's
// Facets of kind topology.Quadrilateral, or a group's).
func NewWriterOf(coords *op2.Dat[float64], cells *op2.Map, typ CellType) (*Writer, error) {
	return newWriter("NewWriterOf", coords, cells, typ)
}

// newWriter is NewWriter (typ 0: by the arity) and NewWriterOf (caller).
func newWriter(caller string, coords *op2.Dat[float64], cells *op2.Map, typ CellType) (*Writer, error) {
	if coords == nil || cells == nil {
		return nil, fmt.Errorf("vtk: %s needs coordinates and a cell map", caller)
	}
	if cells.To().Name() != coords.Set().Name() || cells.To().GlobalSize() != coords.Set().GlobalSize() {
		return nil, fmt.Errorf("vtk: map %q goes to set %q, but the coordinates %q are on set %q", cells.Name(), cells.To().Name(), coords.Name(), coords.Set().Name())
	}
	typ, err := cellType(typ, cells.Arity(), coords.Dim())
	if err != nil {
		return nil, fmt.Errorf("%w (map %q, coordinates %q)", err, cells.Name(), coords.Name())
	}
	return &Writer{coords: coords, cells: cells, set: cells.From(), kinds: []kind{{nodes: cells, typ: typ}}}, nil
}

// cellType returns typ, checked against cells of arity nodes in dim
// dimensions, or when typ is 0 the type CellTypeFor chooses.
func cellType(typ CellType, arity, dim int) (CellType, error) {
	switch {
	case typ == 0:
		return CellTypeFor(arity, dim)
	case typ.Nodes() == 0:
		return 0, fmt.Errorf("vtk: cell type %d is none a Grid holds (Line, Triangle, Quad, Tetra, Hexahedron, Wedge, Pyramid)", typ)
	case typ.Nodes() != arity:
		return 0, fmt.Errorf("vtk: a cell of type %d has %d nodes; the map has %d per cell", typ, typ.Nodes(), arity)
	case dim < 3 && (typ == Tetra || typ == Hexahedron || typ == Wedge || typ == Pyramid):
		return 0, fmt.Errorf("vtk: cells of type %d need 3 coordinates; the coordinates have %d", typ, dim)
	}
	return typ, nil
}

// CellDat adds d, a Dat on the cells' set, to what w writes: a cell array
// named after d with d's dim as its number of components.
func CellDat[T op2.Scalar](w *Writer, d *op2.Dat[T]) error {
	return w.add(d.Name(), d.Set(), true, func(g *Grid) error { return AddCellDat(g, d) },
		func(w *Writer, _ []cornerRef) (Array, error) {
			if w.cells == nil {
				v, err := cellsByKind(w, d)
				return Array{Name: d.Name(), Components: d.Dim(), Values: plain(v)}, err
			}
			if err := d.Sync(); err != nil {
				return Array{}, err
			}
			return Array{Name: d.Name(), Components: d.Dim(), Values: plain(d.DataRO())}, nil
		})
}

// PointDat adds d, a Dat on the points' set, to what w writes: a point
// array named after d with d's dim as its number of components.
func PointDat[T op2.Scalar](w *Writer, d *op2.Dat[T]) error {
	return w.add(d.Name(), d.Set(), false, func(g *Grid) error { return AddPointDat(g, d) },
		func(w *Writer, corner []cornerRef) (Array, error) {
			v, err := pointValues(w, d, corner)
			return Array{Name: d.Name(), Components: d.Dim(), Values: plain(v)}, err
		})
}

func (w *Writer) add(name string, set *op2.Set, cell bool, whole func(*Grid) error, piece func(*Writer, []cornerRef) (Array, error)) error {
	if w == nil {
		return fmt.Errorf("vtk: adding dat %q to a nil Writer", name)
	}
	want, where := w.coords.Set(), "points"
	if cell {
		want, where = w.set, "cells"
	}
	if set.Name() != want.Name() || set.GlobalSize() != want.GlobalSize() {
		return fmt.Errorf("vtk: dat %q is on set %q; the %s are set %q", name, set.Name(), where, want.Name())
	}
	if name == "" {
		return fmt.Errorf("vtk: a dat on set %q has no name, which its array takes: declare it with one", set.Name())
	}
	if name == DeclaredNumberArray && cell {
		return fmt.Errorf("vtk: cell dat %q: the name is the Writer's own (DeclaredNumberArray)", name)
	}
	for _, f := range w.fields {
		if f.name == name && f.cell == cell {
			return fmt.Errorf("vtk: dat %q added twice to the %s", name, where)
		}
	}
	w.fields = append(w.fields, field{name: name, cell: cell, whole: whole, piece: piece})
	return nil
}

// Piece returns the grid this process writes, with the current values of
// the Dats added to w. It is collective: every rank calls it (as it calls
// the Writer's other methods) in the same order.
//
// On one process it is the whole mesh in its declared numbering, as
// FromOP2 and the Add functions give. On several ranks, after
// op2.Partition, it is this rank's piece: its owned cells (the first
// Size() elements of the cells' set, in the rank's order, with their
// owned values) and the points they use, renumbered 0, 1, ... in the
// order the cells first use them, with their coordinates and values (halo
// points included: their values are brought up to date by a loop reading
// each Dat through the map, which exchanges the halo). A piece holds no
// ghost cells, so nothing is marked with vtkGhostType; points shared by
// pieces appear in each of them.
//
// On several ranks it runs those loops and reads their results at once,
// so call it outside op2.Chain there (inside, reading is refused with the
// chain's error).
//
// A program may add arrays to the grid (values derived from its arrays,
// the same names on every rank) before writing it with WriteParallel.
func (w *Writer) Piece() (*Grid, error) {
	if op2.Ranks() == 1 {
		return w.whole()
	}
	if !op2.Partitioned() {
		return nil, fmt.Errorf("vtk: rank %d of %d: writing map %q before op2.Partition; partition the mesh first", op2.Rank(), op2.Ranks(), w.kinds[0].nodes.Name())
	}
	if w.cells == nil && !w.covered {
		if err := w.checkCover(); err != nil {
			return nil, err
		}
		w.covered = true
	}
	to := w.coords.Set()
	total := to.TotalSize()
	// Number the points the owned cells use, in order of first use;
	// corner[p] is the first map entry naming point p.
	id := make([]int32, total)
	for i := range id {
		id[i] = -1
	}
	var conn []int32
	var corner []cornerRef
	types := []CellType{} // not nil: mixed cells, though this rank may own none
	for k, kd := range w.kinds {
		owned, arity := kd.nodes.From().Size(), kd.nodes.Arity()
		table := kd.nodes.Values()
		if len(table) < owned*arity {
			return nil, fmt.Errorf("vtk: rank %d: map %q has %d entries for %d owned cells of %d nodes", op2.Rank(), kd.nodes.Name(), len(table), owned, arity)
		}
		table = table[:owned*arity]
		start := len(conn)
		for i, n := range table {
			if n < 0 || int(n) >= total {
				return nil, fmt.Errorf("vtk: rank %d: map %q, cell %d, column %d is node %d, outside the %d nodes of set %q (halo included)", op2.Rank(), kd.nodes.Name(), i/arity, i%arity, n, total, to.Name())
			}
			if id[n] < 0 {
				id[n] = int32(len(corner))
				corner = append(corner, cornerRef{int32(k), int32(i)})
			}
			conn = append(conn, id[n])
		}
		toVTKOrder(kd.typ, conn[start:])
		if w.cells == nil {
			for range owned {
				types = append(types, kd.typ)
			}
		}
	}
	x, err := pointValues(w, w.coords, corner)
	if err != nil {
		return nil, err
	}
	g := &Grid{Points: x, Dim: w.coords.Dim(), Cells: conn}
	if w.cells != nil {
		g.NodesPerCell, g.Type = w.cells.Arity(), w.kinds[0].typ
	} else {
		g.Types = types
	}
	for _, f := range w.fields {
		a, err := f.piece(w, corner)
		if err != nil {
			return nil, fmt.Errorf("vtk: rank %d: dat %q: %w", op2.Rank(), f.name, err)
		}
		if f.cell {
			g.CellData = append(g.CellData, a)
		} else {
			g.PointData = append(g.PointData, a)
		}
	}
	if w.DeclaredNumbers {
		var nums any = declaredNumbers(w.set)
		if w.cells == nil {
			d, err := op2.NewDat[int64](w.set, 1, nil, "vtk_declared_"+w.set.Name())
			if err != nil {
				return nil, err
			}
			copy(d.Data(), w.set.DeclaredNumbers64())
			v, err := cellsByKind(w, d)
			if err != nil {
				return nil, err
			}
			nums = narrow(v)
		}
		g.CellData = append(g.CellData, Array{Name: DeclaredNumberArray, Components: 1, Values: nums})
	}
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("%w (rank %d's piece)", err, op2.Rank())
	}
	return g, nil
}

// whole is Piece on one process: the gathered mesh.
func (w *Writer) whole() (*Grid, error) {
	var g *Grid
	var err error
	if w.cells != nil {
		g, err = fromOP2(w.coords, w.cells, w.kinds[0].typ)
	} else {
		g, err = w.wholeMixed()
	}
	if err != nil {
		return nil, err
	}
	for _, f := range w.fields {
		if err := f.whole(g); err != nil {
			return nil, err
		}
	}
	if w.DeclaredNumbers && g != nil {
		n := make([]int32, g.NumCells())
		for i := range n {
			n[i] = int32(i)
		}
		g.CellData = append(g.CellData, Array{Name: DeclaredNumberArray, Components: 1, Values: n})
	}
	return g, nil
}

// WriteFile writes the mesh and the Dats' current values (see Piece) with
// WriteParallel: to OutputPath(path), a .vtu file on one process, a .pvtu
// file and one piece per rank under MPI. It is collective.
func (w *Writer) WriteFile(path string, enc Encoding) error {
	g, err := w.Piece()
	if err != nil {
		return err
	}
	return WriteParallel(g, path, enc)
}

// pointValues returns the values of d, a Dat on the points, at the
// corners corner of the owned cells of w's kinds (see corners).
func pointValues[T op2.Scalar](w *Writer, d *op2.Dat[T], corner []cornerRef) ([]T, error) {
	vals := make([][]T, len(w.kinds))
	for k, kd := range w.kinds {
		v, err := corners(d, kd.nodes)
		if err != nil {
			return nil, err
		}
		vals[k] = v
	}
	dim := d.Dim()
	out := make([]T, 0, len(corner)*dim)
	for _, c := range corner {
		e := int(c.entry)
		out = append(out, vals[c.kind][e*dim:(e+1)*dim]...)
	}
	return out, nil
}

// cellsByKind returns the values of d, a Dat on the cells of a mesh of
// mixed cells, at the owned cells of each kind, kind after kind, read
// through each kind's map to the cells (whose halo the loops bring up to
// date).
func cellsByKind[T op2.Scalar](w *Writer, d *op2.Dat[T]) ([]T, error) {
	var out []T
	for _, kd := range w.kinds {
		v, err := corners(d, kd.cells)
		if err != nil {
			return nil, err
		}
		out = append(out, v...)
	}
	return out, nil
}

// corners returns, for each owned cell of m's source set, the values of d
// at the cell's arity nodes (arity × dim values per cell), halo nodes
// included: a loop over the cells reads d through m, which brings d's halo
// up to date under MPI, and writes them to a temporary Dat on the cells.
func corners[T op2.Scalar](d *op2.Dat[T], m *op2.Map) ([]T, error) {
	k, err := cornerKernel[T](d.Dim(), m.Arity())
	if err != nil {
		return nil, err
	}
	tmp, err := op2.NewDat[T](m.From(), m.Arity()*d.Dim(), nil, "vtk_corners_"+d.Name())
	if err != nil {
		return nil, err
	}
	if err := op2.ParLoop(k, m.From(), d.ArgVec(op2.Read, m), tmp.Arg(op2.Write)); err != nil {
		return nil, err
	}
	if err := tmp.Sync(); err != nil {
		return nil, err
	}
	return tmp.DataRO(), nil
}

// kernels holds the corner-copying kernels made so far, by name.
var kernels sync.Map

// cornerKernel returns the kernel copying dim values of type T from each
// of arity nodes to a cell.
func cornerKernel[T op2.Scalar](dim, arity int) (*op2.Kernel, error) {
	var z T
	ctype, tag := "", ""
	switch reflect.TypeOf(z).Kind() {
	case reflect.Float64:
		ctype, tag = "double", "f64"
	case reflect.Float32:
		ctype, tag = "float", "f32"
	case reflect.Int32:
		ctype, tag = "int", "i32"
	case reflect.Int64:
		ctype, tag = "long long", "i64"
	case reflect.Uint32:
		ctype, tag = "unsigned", "u32"
	default:
		return nil, fmt.Errorf("vtk: no kernel for values of type %T", z)
	}
	name := fmt.Sprintf("vtk_corners_%s_%d_%d", tag, dim, arity)
	if k, ok := kernels.Load(name); ok {
		return k.(*op2.Kernel), nil
	}
	src := fmt.Sprintf(`void %s(const %s **v, %s *out) {
  for (int c = 0; c < %d; c++)
    for (int k = 0; k < %d; k++)
      out[c * %d + k] = v[c][k];
}`, name, ctype, ctype, arity, dim, dim)
	k, _ := kernels.LoadOrStore(name, op2.NewKernel(src, name))
	return k.(*op2.Kernel), nil
}

// declaredNumbers is the declared number of each of set's owned elements:
// []int32 where they fit, else []int64 (a set numbered beyond 2³¹).
func declaredNumbers(set *op2.Set) any {
	return narrow(set.DeclaredNumbers64())
}

// narrow returns d as []int32 where every value fits, else d.
func narrow(d []int64) any {
	out := make([]int32, len(d))
	for i, v := range d {
		if v > math.MaxInt32 {
			return d
		}
		out[i] = int32(v)
	}
	return out
}
