package vtk

import (
	"fmt"
	"strings"

	"github.com/goop2/op2"
)

// CellKind is the cells of one kind of a mesh whose cells are of several
// kinds (see NewMixedWriter), as OP2's maps of one arity declare them:
// a set of the cells of that kind with its map to the nodes and its map
// to the set of all cells (mesh/unstructured's CellKind has both).
type CellKind struct {
	// Nodes maps each cell of the kind to its nodes, the elements of the
	// coordinates' set, in Gmsh's order.
	Nodes *op2.Map
	// Cells maps each cell of the kind to its element of the set of all
	// cells, on which the cell Dats are (arity 1).
	Cells *op2.Map
	// Type is the kind's cell type, whose number of nodes is Nodes'
	// arity; 0 lets the arity and the coordinates' dim choose
	// (CellTypeFor), which takes 4 nodes in 3-D for a tetrahedron.
	Type CellType
}

// NewMixedWriter returns a Writer of a mesh whose cells are of several
// kinds: its points are the elements of coords' set, its cells the
// elements of cells, and kinds gives each kind's cells (Nodes and Cells
// from the same set; every element of cells is the image of one element
// of one kind). Cell Dats (CellDat) are on cells, point Dats (PointDat)
// on coords' set, as with NewWriter.
//
// The files hold a type per cell. On one process WriteFile writes the
// whole mesh in the declared numbering of cells (and of the points), as
// NewWriter's does; on several ranks each rank writes its piece: the
// owned cells of each kind, kind after kind, with the values their cells
// hold (read through each kind's map to cells, so that a cell owned by
// another rank is written with its up-to-date value), and the points they
// use. A mesh declared by mesh/unstructured is written as
//
//	kinds := make([]vtk.CellKind, len(m.CellKinds))
//	for i, ck := range m.CellKinds {
//		kinds[i] = vtk.CellKind{Nodes: ck.Nodes, Cells: ck.Cells}
//	}
//	w, err := vtk.NewMixedWriter(m.X, m.Cells, kinds)
//
// It reads no values and is not collective; the first Piece or WriteFile
// on several ranks checks, with loops over the kinds, that every cell is
// the image of one kind's element exactly.
func NewMixedWriter(coords *op2.Dat[float64], cells *op2.Set, kinds []CellKind) (*Writer, error) {
	if coords == nil || cells == nil || len(kinds) == 0 {
		return nil, fmt.Errorf("vtk: NewMixedWriter needs coordinates, the cells' set and at least one kind of cell")
	}
	w := &Writer{coords: coords, set: cells}
	for i, k := range kinds {
		if k.Nodes == nil || k.Cells == nil {
			return nil, fmt.Errorf("vtk: kind %d of cells has no map to the nodes or to the cells", i)
		}
		n, c := k.Nodes, k.Cells
		if n.To().Name() != coords.Set().Name() || n.To().GlobalSize() != coords.Set().GlobalSize() {
			return nil, fmt.Errorf("vtk: map %q goes to set %q, but the coordinates %q are on set %q", n.Name(), n.To().Name(), coords.Name(), coords.Set().Name())
		}
		if c.To().Name() != cells.Name() || c.To().GlobalSize() != cells.GlobalSize() || c.Arity() != 1 {
			return nil, fmt.Errorf("vtk: map %q (arity %d) goes to set %q; a kind's map to the cells goes to %q with arity 1", c.Name(), c.Arity(), c.To().Name(), cells.Name())
		}
		if c.From().Name() != n.From().Name() || c.From().GlobalSize() != n.From().GlobalSize() {
			return nil, fmt.Errorf("vtk: kind %d of cells: map %q is from set %q, map %q from set %q; want the same set", i, n.Name(), n.From().Name(), c.Name(), c.From().Name())
		}
		typ, err := cellType(k.Type, n.Arity(), coords.Dim())
		if err != nil {
			return nil, fmt.Errorf("%w (map %q, coordinates %q)", err, n.Name(), coords.Name())
		}
		w.kinds = append(w.kinds, kind{nodes: n, cells: c, typ: typ})
	}
	total := 0
	for _, k := range w.kinds {
		total += k.cells.From().GlobalSize()
	}
	if total != cells.GlobalSize() {
		return nil, fmt.Errorf("vtk: the kinds of cells (%s) hold %d cells; set %q has %d", w.kindSets(), total, cells.Name(), cells.GlobalSize())
	}
	return w, nil
}

// kindSets names the kinds' sets.
func (w *Writer) kindSets() string {
	var names []string
	for _, k := range w.kinds {
		names = append(names, fmt.Sprintf("%q", k.cells.From().Name()))
	}
	return strings.Join(names, ", ")
}

// wholeMixed is FromOP2 for a mesh of mixed cells: the gathered mesh,
// cells in the declared numbering of w.set, on rank 0 (nil elsewhere).
func (w *Writer) wholeMixed() (*Grid, error) {
	x, err := w.coords.Gather()
	if err != nil {
		return nil, err
	}
	tables := make([][]int32, len(w.kinds))
	images := make([][]int32, len(w.kinds))
	for k, kd := range w.kinds {
		if tables[k], err = kd.nodes.Gather(); err != nil {
			return nil, err
		}
		if images[k], err = kd.cells.Gather(); err != nil {
			return nil, err
		}
	}
	if op2.Rank() != 0 {
		return nil, nil
	}
	n := w.set.GlobalSize()
	// of[c] is the kind and the element of that kind of cell c.
	type source struct{ kind, elem int32 }
	of := make([]source, n)
	for c := range of {
		of[c].kind = -1
	}
	for k, img := range images {
		for e, c := range img {
			if c < 0 || int(c) >= n {
				return nil, fmt.Errorf("vtk: map %q, element %d is cell %d, outside the %d cells of set %q", w.kinds[k].cells.Name(), e, c, n, w.set.Name())
			}
			if p := of[c]; p.kind >= 0 {
				return nil, fmt.Errorf("vtk: cell %d of set %q is element %d of map %q and element %d of map %q; each cell must be in one kind", c, w.set.Name(), p.elem, w.kinds[p.kind].cells.Name(), e, w.kinds[k].cells.Name())
			}
			of[c] = source{int32(k), int32(e)}
		}
	}
	g := &Grid{Points: x, Dim: w.coords.Dim(), Types: make([]CellType, n)}
	for c, s := range of {
		if s.kind < 0 {
			return nil, fmt.Errorf("vtk: cell %d of set %q is in no kind of cell (%s)", c, w.set.Name(), w.kindSets())
		}
		kd := w.kinds[s.kind]
		a := kd.nodes.Arity()
		start := len(g.Cells)
		g.Cells = append(g.Cells, tables[s.kind][int(s.elem)*a:(int(s.elem)+1)*a]...)
		toVTKOrder(kd.typ, g.Cells[start:])
		g.Types[c] = kd.typ
	}
	if err := g.Validate(); err != nil {
		return nil, err
	}
	return g, nil
}

// checkCover checks, under MPI, that every cell is the image of one
// element of one kind exactly: a loop over each kind adds 1 to its cells,
// and a loop over the cells counts those with another count over all
// ranks, so that every rank returns an error or none. It is collective.
func (w *Writer) checkCover() error {
	count, err := op2.NewDat[int32](w.set, 1, nil, "vtk_cover_"+w.set.Name())
	if err != nil {
		return err
	}
	add := op2.NewKernel("void vtk_cover(int *n) { *n += 1; }", "vtk_cover")
	for _, kd := range w.kinds {
		if err := op2.ParLoop(add, kd.cells.From(), count.ArgMap(op2.Inc, kd.cells, 0)); err != nil {
			return err
		}
	}
	bad, err := op2.NewGlobal[int32](1, nil, "vtk_uncovered")
	if err != nil {
		return err
	}
	check := op2.NewKernel("void vtk_uncovered(const int *n, int *bad) { if (*n != 1) *bad += 1; }", "vtk_uncovered")
	if err := op2.ParLoop(check, w.set, count.Arg(op2.Read), bad.Arg(op2.Inc)); err != nil {
		return err
	}
	nbad, err := bad.ValueErr()
	if err != nil || nbad == 0 {
		return err
	}
	v, err := count.DataROErr()
	if err != nil {
		return err
	}
	nums := w.set.DeclaredNumbers64()
	for c, n := range v {
		if n != 1 {
			return fmt.Errorf("vtk: rank %d: cell %d of set %q is in %d kinds' elements (%s); each cell must be in one (%d such cells in all)", op2.Rank(), nums[c], w.set.Name(), n, w.kindSets(), nbad)
		}
	}
	return fmt.Errorf("vtk: rank %d: %d cells of set %q on other ranks are not in one kind's elements exactly (%s)", op2.Rank(), nbad, w.set.Name(), w.kindSets())
}
