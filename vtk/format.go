package vtk

import (
	"io"

	"github.com/goop2/op2"
	"github.com/goop2/op2/vtk/vtkfile"
)

// The file formats are package vtkfile's, which imports no part of the
// GoOP2 run time (cmd/op2render reads .vtu files with it alone); this
// package names its types as its own and adds the MPI rank where a file
// depends on it.

// CellType is a VTK cell type number.
type CellType = vtkfile.CellType

// The cell types a Grid can hold (VTK's numbers).
const (
	Line       CellType = vtkfile.Line       // 2 nodes
	Triangle   CellType = vtkfile.Triangle   // 3 nodes
	Quad       CellType = vtkfile.Quad       // 4 nodes in 2-D, in order around the cell
	Tetra      CellType = vtkfile.Tetra      // 4 nodes in 3-D
	Hexahedron CellType = vtkfile.Hexahedron // 8 nodes
	Wedge      CellType = vtkfile.Wedge      // 6 nodes, a prism in VTK's order (see vtkfile.Wedge)
	Pyramid    CellType = vtkfile.Pyramid    // 5 nodes: the base, then the apex
)

// CellTypeFor chooses the cell type of cells with arity nodes in a mesh of
// dimension dim (2 or 3): 2 nodes make lines, 3 triangles, 4 quads in 2-D
// and tetrahedra in 3-D, 5 pyramids, 6 wedges and 8 hexahedra in 3-D.
func CellTypeFor(arity, dim int) (CellType, error) { return vtkfile.CellTypeFor(arity, dim) }

// Encoding says how Write stores the values.
type Encoding = vtkfile.Encoding

// The encodings.
const (
	ASCII  Encoding = vtkfile.ASCII  // decimal text, exact (shortest representation that reads back the same)
	Binary Encoding = vtkfile.Binary // base64 of the little-endian bytes: smaller and faster
)

// Array is a named array of values on the points or the cells of a Grid:
// Components values per point or cell, stored one point or cell after
// another. Values is a []float64, []float32, []int32, []int64, []uint32
// or []uint8.
type Array = vtkfile.Array

// Grid is an unstructured mesh, and values on it. Its cells are of one
// kind (Type, with NodesPerCell nodes each) or, when Types is set, of
// several kinds.
type Grid = vtkfile.Grid

// ReadFile reads a .vtu file (see Read). The path must name a regular
// file (directly or through symbolic links): a FIFO, a device, a socket or
// a directory is refused before it is opened, and no more than the file's
// size is read.
func ReadFile(path string) (*Grid, error) { return vtkfile.ReadFile(path) }

// Read reads a VTK XML UnstructuredGrid: one piece, cells of the types
// CellType names (of one type: a Grid with Type and NodesPerCell; of
// several: a Grid with Types), arrays inline in ASCII or uncompressed base64 binary, little-endian.
// Integer arrays of other widths are read as int64 (unsigned as uint32
// when they fit), and Int8/UInt8 arrays too.
func Read(r io.Reader) (*Grid, error) { return vtkfile.Read(r) }

// OutputPath is the file WriteParallel (and Writer.WriteFile) writes for
// path: on one process path itself, or path with .vtu for .pvtu; on
// several MPI ranks path with .pvtu for .vtu, or with .pvtu appended to
// any other name. So "out.vtu" names out.vtu on one process and out.pvtu
// under MPI.
func OutputPath(path string) string { return vtkfile.OutputPath(path, op2.Ranks()) }

// PiecePath is the file of rank's piece of the .pvtu file pvtu: for
// dir/out.pvtu, dir/out/out_<rank>.vtu (the layout ParaView's own parallel
// writer uses). The .pvtu names it relatively, as out/out_<rank>.vtu, so
// the .pvtu and its folder can be moved together.
func PiecePath(pvtu string, rank int) string { return vtkfile.PiecePath(pvtu, rank) }

// WriteParallel writes g, this process's grid, to OutputPath(path). It is
// collective under MPI: every rank calls it with its piece (as
// Writer.Piece gives it).
//
// On one process it writes g as a .vtu file. On several ranks each rank
// writes its piece to PiecePath (creating the folder), and rank 0 writes
// the .pvtu file (VTK's PUnstructuredGrid), which lists the points' and
// the cells' arrays as rank 0's piece has them (every piece must have the
// same arrays, of the same types and components) and names every rank's
// piece. Nothing is exchanged between the ranks: a rank's write error is
// that rank's alone, and says which rank and file (end the job with
// op2.Abort if a rank fails).
func WriteParallel(g *Grid, path string, enc Encoding) error {
	return vtkfile.WriteParallel(g, path, enc, op2.Rank(), op2.Ranks())
}

// ReadPVTUFile reads a .pvtu file and each of its pieces (with ReadFile,
// from paths relative to the .pvtu file's folder unless absolute), in the
// file's order, and checks that every piece has the arrays the .pvtu
// declares, with their components. Merge joins the pieces into one grid.
func ReadPVTUFile(path string) ([]*Grid, error) { return vtkfile.ReadPVTUFile(path) }

// Merge returns one grid holding the pieces one after another: their
// points (a point shared by two pieces appears twice), their cells (with
// the point numbers shifted) and their arrays, joined by name. When every
// piece with cells has cells of one and the same type, so has the grid;
// otherwise (pieces of mixed cells, or of different types) it has a type
// per cell (Types). Every piece must have the same arrays (names,
// components and value types) in the same order, as the pieces of one
// .pvtu file have; a piece without cells may lack a cell type.
func Merge(pieces []*Grid) (*Grid, error) { return vtkfile.Merge(pieces) }

// Series is a time series of VTK files, one per step (.vtu or .pvtu, as
// Writer.WriteFile writes them), listed in a ParaView data collection
// (.pvd) that opens them as one data set over time:
//
//	s := vtk.NewSeries("run.pvd")
//	for step := ... {
//		p := fmt.Sprintf("run_%04d.vtu", step)
//		err = w.WriteFile(p, vtk.Binary)
//		err = s.Add(t, vtk.OutputPath(p)) // rewrites run.pvd
//	}
//
// A run restarted from a checkpoint continues its series with OpenSeries
// in place of NewSeries. Under MPI every rank calls Add (nothing is
// exchanged) and rank 0 writes the .pvd file.
type Series = vtkfile.Series

// Step is one step of a Series: its time and its file, relative to the
// .pvd file's folder when it is inside it.
type Step = vtkfile.Step

// NewSeries returns an empty series to be written to path (by convention
// ending in .pvd). Nothing is written until the first Add.
func NewSeries(path string) *Series {
	s := vtkfile.NewSeries(path)
	s.Rank = op2.Rank
	return s
}

// OpenSeries returns the series that the .pvd file at path lists, to be
// continued: a program restarted from a checkpoint opens its series and
// Adds the steps that follow, and path is rewritten with the old steps
// and the new. The old steps keep their files as recorded (relative to
// the .pvd file's folder, or absolute); new ones are given to Add as the
// program names them, as always. A missing file gives an empty series,
// as NewSeries does. Steps the restarted run computes again (after the
// checkpoint's time) can be dropped first with Truncate.
func OpenSeries(path string) (*Series, error) {
	s, err := vtkfile.OpenSeries(path)
	if err != nil {
		return nil, err
	}
	s.Rank = op2.Rank
	return s, nil
}

// ReadSeriesFile reads the steps of a .pvd file: each DataSet's timestep
// and file, as written (relative to the .pvd file's folder or absolute).
// The program names such a file filepath.Join(filepath.Dir(path), File)
// when it is relative; to continue the series, use OpenSeries rather than
// passing these Files to Series.Add, which takes paths as the program
// names them.
func ReadSeriesFile(path string) ([]Step, error) { return vtkfile.ReadSeriesFile(path) }
