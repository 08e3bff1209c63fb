package vtkfile

import (
	"bufio"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/goop2/op2/internal/regfile"
)

// OutputPath is the file WriteParallel writes for path on ranks
// processes: on one process path itself, or path with .vtu for .pvtu; on
// several MPI ranks path with .pvtu for .vtu, or with .pvtu appended to
// any other name. So "out.vtu" names out.vtu on one process and out.pvtu
// under MPI.
func OutputPath(path string, ranks int) string {
	stem, ext := splitExt(path)
	if ranks > 1 {
		return stem + ".pvtu"
	}
	if ext == ".pvtu" {
		return stem + ".vtu"
	}
	return path
}

// PiecePath is the file of rank's piece of the .pvtu file pvtu: for
// dir/out.pvtu, dir/out/out_<rank>.vtu (the layout ParaView's own parallel
// writer uses). The .pvtu names it relatively, as out/out_<rank>.vtu, so
// the .pvtu and its folder can be moved together.
func PiecePath(pvtu string, rank int) string {
	stem, _ := splitExt(pvtu)
	return filepath.Join(stem, pieceName(filepath.Base(stem), rank))
}

func pieceName(base string, rank int) string { return base + "_" + strconv.Itoa(rank) + ".vtu" }

// splitExt returns path without a .vtu or .pvtu extension, and that
// extension ("" for another name).
func splitExt(path string) (string, string) {
	for _, ext := range []string{".pvtu", ".vtu"} {
		if s, ok := strings.CutSuffix(path, ext); ok && s != "" && !strings.HasSuffix(s, string(filepath.Separator)) {
			return s, ext
		}
	}
	return path, ""
}

// WriteParallel writes g, the grid of rank (of ranks processes), to
// OutputPath(path, ranks). It is collective under MPI: every rank calls
// it with its piece.
//
// On one process it writes g as a .vtu file. On several ranks each rank
// writes its piece to PiecePath (creating the folder), and rank 0 writes
// the .pvtu file (VTK's PUnstructuredGrid), which lists the points' and
// the cells' arrays as rank 0's piece has them (every piece must have the
// same arrays, of the same types and components) and names every rank's
// piece, and removes the pieces of ranks past the last that an earlier
// write on more ranks left. Nothing is exchanged between the ranks: a rank's write error is
// that rank's alone, and says which rank and file (end the job with
// op2.Abort if a rank fails).
func WriteParallel(g *Grid, path string, enc Encoding, rank, ranks int) error {
	out := OutputPath(path, ranks)
	if g == nil {
		return fmt.Errorf("vtk: rank %d has no grid to write to %s", rank, out)
	}
	if ranks == 1 {
		return g.WriteFile(out, enc)
	}
	piece := PiecePath(out, rank)
	// The pieces' folder, in the .pvtu's: a folder of out that is
	// missing is an error, as on one process.
	if err := os.Mkdir(filepath.Dir(piece), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("vtk: rank %d: %w", rank, err)
	}
	if err := g.WriteFile(piece, enc); err != nil {
		return fmt.Errorf("%w (rank %d's piece of %s)", err, rank, out)
	}
	if rank != 0 {
		return nil
	}
	stem, _ := splitExt(out)
	base := filepath.Base(stem)
	sources := make([]string, ranks)
	for r := range sources {
		sources[r] = base + "/" + pieceName(base, r)
	}
	if err := regfile.WriteWith(out, "vtk", func(w io.Writer) error { return g.WritePVTU(w, sources) }); err != nil {
		return err
	}
	// The pieces an earlier write on more ranks left in the folder, which
	// the .pvtu no longer names (whichever of them it left).
	ents, err := os.ReadDir(stem)
	if err != nil {
		return nil
	}
	for _, e := range ents {
		n, ok := strings.CutPrefix(e.Name(), base+"_")
		if !ok {
			continue
		}
		n, ok = strings.CutSuffix(n, ".vtu")
		if r, err := strconv.Atoi(n); ok && err == nil && r >= ranks && e.Name() == pieceName(base, r) {
			os.Remove(filepath.Join(stem, e.Name()))
		}
	}
	return nil
}

// WritePVTU writes a VTK XML PUnstructuredGrid file (.pvtu) whose pieces
// are the .vtu files sources (relative to the .pvtu file's folder, or
// absolute) and whose arrays are g's: the names, types and components of
// its point and cell arrays, and 3-D Float64 points, as Write writes
// them. g's values are not written; g is the layout every piece shares.
func (g *Grid) WritePVTU(w io.Writer, sources []string) error {
	if err := g.Validate(); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	bw.WriteString("<?xml version=\"1.0\"?>\n<VTKFile type=\"PUnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n")
	bw.WriteString("  <PUnstructuredGrid GhostLevel=\"0\">\n")
	section := func(tag string, arrays []Array) {
		if len(arrays) == 0 {
			return
		}
		fmt.Fprintf(bw, "    <%s>\n", tag)
		for _, a := range arrays {
			typ, _ := typeName(a.Values)
			writePArray(bw, typ, a.Name, a.Components)
		}
		fmt.Fprintf(bw, "    </%s>\n", tag)
	}
	section("PPointData", g.PointData)
	section("PCellData", g.CellData)
	bw.WriteString("    <PPoints>\n")
	writePArray(bw, "Float64", "Points", 3)
	bw.WriteString("    </PPoints>\n")
	for _, s := range sources {
		bw.WriteString(`    <Piece Source="`)
		xml.EscapeText(bw, []byte(s))
		bw.WriteString("\"/>\n")
	}
	bw.WriteString("  </PUnstructuredGrid>\n</VTKFile>\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("vtk: %w", err)
	}
	return nil
}

func writePArray(w *bufio.Writer, typ, name string, comps int) {
	w.WriteString(`      <PDataArray type="` + typ + `" Name="`)
	xml.EscapeText(w, []byte(name))
	w.WriteString(`"`)
	if comps > 1 {
		fmt.Fprintf(w, ` NumberOfComponents="%d"`, comps)
	}
	w.WriteString("/>\n")
}

// The .pvtu XML as ReadPVTUFile sees it.
type xmlPFile struct {
	XMLName xml.Name `xml:"VTKFile"`
	Type    string   `xml:"type,attr"`
	Grid    struct {
		PointData []xmlArray `xml:"PPointData>PDataArray"`
		CellData  []xmlArray `xml:"PCellData>PDataArray"`
		Pieces    []struct {
			Source string `xml:"Source,attr"`
		} `xml:"Piece"`
	} `xml:"PUnstructuredGrid"`
}

// ReadPVTUFile reads a .pvtu file and each of its pieces (with ReadFile,
// from paths relative to the .pvtu file's folder unless absolute), in the
// file's order, and checks that every piece has the arrays the .pvtu
// declares, with their components. Merge joins the pieces into one grid.
func ReadPVTUFile(path string) ([]*Grid, error) {
	f, err := regfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("vtk: %w", err)
	}
	var p xmlPFile
	err = xml.NewDecoder(bufio.NewReader(f.Reader())).Decode(&p)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("vtk: %s is not a VTK XML file: %w", path, err)
	}
	if p.Type != "PUnstructuredGrid" {
		return nil, fmt.Errorf("vtk: %s is a %q file; want a PUnstructuredGrid", path, p.Type)
	}
	var out []*Grid
	for i, pc := range p.Grid.Pieces {
		if pc.Source == "" {
			return nil, fmt.Errorf("vtk: %s: piece %d has no Source", path, i)
		}
		src := filepath.FromSlash(pc.Source)
		if !filepath.IsAbs(src) {
			src = filepath.Join(filepath.Dir(path), src)
		}
		g, err := ReadFile(src)
		if err != nil {
			return nil, fmt.Errorf("%w (piece %d of %s)", err, i, path)
		}
		for _, want := range []struct {
			where  string
			arrays []xmlArray
			get    func(string) *Array
		}{{"point", p.Grid.PointData, g.PointArray}, {"cell", p.Grid.CellData, g.CellArray}} {
			for _, x := range want.arrays {
				a := want.get(x.Name)
				if a == nil || a.Components != max(x.Components, 1) {
					return nil, fmt.Errorf("vtk: %s: piece %d (%s) lacks the %s array %q of %d components the .pvtu declares", path, i, src, want.where, x.Name, max(x.Components, 1))
				}
			}
		}
		out = append(out, g)
	}
	return out, nil
}

// Merge returns one grid holding the pieces one after another: their
// points (a point shared by two pieces appears twice), their cells (with
// the point numbers shifted) and their arrays, joined by name. When every
// piece with cells has cells of one and the same type, so has the grid;
// otherwise (pieces of mixed cells, or of different types) it has a type
// per cell (Types). Every piece must have the same arrays (names,
// components and value types) in the same order, as the pieces of one
// .pvtu file have; a piece without cells may lack a cell type.
func Merge(pieces []*Grid) (*Grid, error) {
	if len(pieces) == 0 {
		return nil, fmt.Errorf("vtk: merging no pieces")
	}
	first := pieces[0]
	for _, p := range pieces {
		if p.NumCells() > 0 {
			first = p
			break
		}
	}
	out := &Grid{Dim: first.Dim, NodesPerCell: first.NodesPerCell, Type: first.Type}
	mixed := false
	for _, p := range pieces {
		if p.NumCells() > 0 && (p.Mixed() || p.Type != first.Type || p.NodesPerCell != first.NodesPerCell) {
			mixed = true
		}
	}
	if mixed {
		out.NodesPerCell, out.Type, out.Types = 0, 0, []CellType{}
	}
	for i, p := range pieces {
		if p.Dim != out.Dim {
			return nil, fmt.Errorf("vtk: piece %d has %d-D points, piece 0 %d-D", i, p.Dim, out.Dim)
		}
		if mixed {
			for c := range p.NumCells() {
				out.Types = append(out.Types, p.CellTypeOf(c))
			}
		}
		shift := int32(out.NumPoints())
		for _, c := range p.Cells {
			out.Cells = append(out.Cells, c+shift)
		}
		out.Points = append(out.Points, p.Points...)
		var err error
		if out.PointData, err = join(out.PointData, p.PointData, i, i == 0, "point"); err != nil {
			return nil, err
		}
		if out.CellData, err = join(out.CellData, p.CellData, i, i == 0, "cell"); err != nil {
			return nil, err
		}
	}
	if err := out.Validate(); err != nil {
		return nil, err
	}
	return out, nil
}

// join appends piece i's arrays to dst, array by array.
func join(dst, src []Array, i int, start bool, where string) ([]Array, error) {
	if start {
		for _, a := range src {
			dst = append(dst, Array{Name: a.Name, Components: a.Components, Values: appendValues(nil, a.Values)})
		}
		return dst, nil
	}
	if len(src) != len(dst) {
		return nil, fmt.Errorf("vtk: piece %d has %d %s arrays, piece 0 %d", i, len(src), where, len(dst))
	}
	for k, a := range src {
		d := &dst[k]
		if a.Name != d.Name || a.Components != d.Components {
			return nil, fmt.Errorf("vtk: piece %d's %s array %d is %q of %d components; piece 0's is %q of %d", i, where, k, a.Name, a.Components, d.Name, d.Components)
		}
		v := appendValues(d.Values, a.Values)
		if v == nil {
			return nil, fmt.Errorf("vtk: piece %d's %s array %q holds %T, piece 0's %T", i, where, a.Name, a.Values, d.Values)
		}
		d.Values = v
	}
	return dst, nil
}

// appendValues appends src to dst, slices of one type (dst nil: a copy of
// src); nil when the types differ.
func appendValues(dst, src any) any {
	switch s := src.(type) {
	case []float64:
		return appendTyped(dst, s)
	case []float32:
		return appendTyped(dst, s)
	case []int32:
		return appendTyped(dst, s)
	case []int64:
		return appendTyped(dst, s)
	case []uint32:
		return appendTyped(dst, s)
	case []uint8:
		return appendTyped(dst, s)
	}
	return nil
}

func appendTyped[T any](dst any, src []T) any {
	if dst == nil {
		return append([]T{}, src...)
	}
	d, ok := dst.([]T)
	if !ok {
		return nil
	}
	return append(d, src...)
}
