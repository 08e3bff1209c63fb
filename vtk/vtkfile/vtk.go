// Package vtkfile is VTK's XML file formats, with no part of the GoOP2
// run time: meshes with data in the UnstructuredGrid format (.vtu), which
// ParaView and VisIt open: points (2-D coordinates are padded with z = 0),
// cells given by a cell-to-node table (of one kind, or of several kinds
// with a type per cell), and arrays of values on
// the cells (CellData) and on the points (PointData), each with any number
// of components; parallel files (.pvtu, PUnstructuredGrid) naming one .vtu
// piece per rank; and ParaView collections (.pvd) listing the files of a
// time series (Series).
//
// A Grid holds plain slices. Write produces ASCII or base64-encoded binary
// data inline in the XML (no compression, no appended section), so the
// file is well-formed XML that any XML parser reads. Read reads such files
// back, as written here or by VTK itself when they hold one piece of cells
// of the kinds CellType names, inline and uncompressed; ReadPVTUFile reads a .pvtu file's
// pieces and Merge joins them into one Grid.
//
// Package vtk builds Grids from GoOP2's Dats and Maps and writes them
// under MPI; it names this package's types as its own. A program that
// only reads or writes files (such as cmd/op2render) imports this one.
package vtkfile

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/goop2/op2/internal/regfile"
)

// CellType is a VTK cell type number.
type CellType uint8

// The cell types a Grid can hold (VTK's numbers).
const (
	Line       CellType = 3  // 2 nodes
	Triangle   CellType = 5  // 3 nodes
	Quad       CellType = 9  // 4 nodes in 2-D, in order around the cell
	Tetra      CellType = 10 // 4 nodes in 3-D
	Hexahedron CellType = 12 // 8 nodes
	// Wedge is a prism: 6 nodes, the triangle n0 n1 n2 and the triangle
	// n3 n4 n5 above it (n3 over n0), in VTK's order, where n0 n1 n2 turn
	// clockwise seen from n3 n4 n5 (the normal of n0 n1 n2 by the
	// right-hand rule points away from the other triangle). Gmsh lists a
	// prism's first triangle the other way round: VTK's n0..n5 are Gmsh's
	// n0 n2 n1 n3 n5 n4.
	Wedge CellType = 13
	// Pyramid has 5 nodes: the quadrilateral base n0..n3, counter-clockwise
	// seen from the apex n4 (its normal points toward the apex), as Gmsh's.
	Pyramid CellType = 14
)

// nodes is the number of nodes of each cell type.
var nodes = map[CellType]int{Line: 2, Triangle: 3, Quad: 4, Tetra: 4, Hexahedron: 8, Wedge: 6, Pyramid: 5}

// Nodes is the number of nodes of a cell of type t, 0 for a type a Grid
// cannot hold.
func (t CellType) Nodes() int { return nodes[t] }

// CellTypeFor chooses the cell type of cells with arity nodes in a mesh of
// dimension dim (2 or 3): 2 nodes make lines, 3 triangles, 4 quads in 2-D
// and tetrahedra in 3-D, 5 pyramids, 6 wedges and 8 hexahedra in 3-D.
func CellTypeFor(arity, dim int) (CellType, error) {
	switch {
	case arity == 2:
		return Line, nil
	case arity == 3:
		return Triangle, nil
	case arity == 4 && dim <= 2:
		return Quad, nil
	case arity == 4 && dim == 3:
		return Tetra, nil
	case arity == 5 && dim == 3:
		return Pyramid, nil
	case arity == 6 && dim == 3:
		return Wedge, nil
	case arity == 8 && dim == 3:
		return Hexahedron, nil
	}
	return 0, fmt.Errorf("vtk: no cell type for %d nodes per cell in %d dimensions (2: line, 3: triangle, 4: quad in 2-D or tetrahedron in 3-D, 5: pyramid, 6: wedge, 8: hexahedron in 3-D)", arity, dim)
}

// Encoding says how Write stores the values.
type Encoding int

// The encodings.
const (
	ASCII  Encoding = iota // decimal text, exact (shortest representation that reads back the same)
	Binary                 // base64 of the little-endian bytes: smaller and faster
)

// Array is a named array of values on the points or the cells of a Grid:
// Components values per point or cell, stored one point or cell after
// another. Values is a []float64, []float32, []int32, []int64, []uint32
// or []uint8.
type Array struct {
	Name       string
	Components int
	Values     any
}

// Len is the number of values in the array (0 for an unsupported type).
func (a *Array) Len() int {
	switch v := a.Values.(type) {
	case []float64:
		return len(v)
	case []float32:
		return len(v)
	case []int32:
		return len(v)
	case []int64:
		return len(v)
	case []uint32:
		return len(v)
	case []uint8:
		return len(v)
	}
	return 0
}

// Float64s returns the values converted to float64.
func (a *Array) Float64s() []float64 {
	switch v := a.Values.(type) {
	case []float64:
		return v
	case []float32:
		return convert[float32](v)
	case []int32:
		return convert[int32](v)
	case []int64:
		return convert[int64](v)
	case []uint32:
		return convert[uint32](v)
	case []uint8:
		return convert[uint8](v)
	}
	return nil
}

func convert[T float32 | int32 | int64 | uint32 | uint8](v []T) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// Grid is an unstructured mesh, and values on it. Its cells are of one
// kind (Type, with NodesPerCell nodes each) or, when Types is set, of
// several kinds.
type Grid struct {
	// Points holds Dim coordinates per point (Dim 1, 2 or 3; missing
	// coordinates are written as 0).
	Points []float64
	Dim    int
	// Cells holds each cell's point indices (0-based), one cell after
	// another: NodesPerCell per cell of the one Type, or for a grid of
	// mixed cells Types[i].Nodes() for cell i.
	Cells        []int32
	NodesPerCell int
	Type         CellType
	// Types holds the type of each cell of a grid of mixed cells (VTK's
	// per-cell types, with the offsets they imply); NodesPerCell and Type
	// are then 0. Nil for cells of one kind.
	Types []CellType

	PointData, CellData []Array
}

// Mixed says whether the grid's cells are given a type each (Types).
func (g *Grid) Mixed() bool { return g.Types != nil }

// Offsets returns where each cell's nodes start in Cells, and after the
// last cell len(Cells): cell i's nodes are Cells[o[i]:o[i+1]].
func (g *Grid) Offsets() []int {
	n := g.NumCells()
	o := make([]int, n+1)
	for i := range n {
		if g.Types != nil {
			o[i+1] = o[i] + g.Types[i].Nodes()
		} else {
			o[i+1] = o[i] + g.NodesPerCell
		}
	}
	return o
}

// CellTypeOf is the type of cell i.
func (g *Grid) CellTypeOf(i int) CellType {
	if g.Types != nil {
		return g.Types[i]
	}
	return g.Type
}

// NumPoints is the number of points.
func (g *Grid) NumPoints() int {
	if g.Dim <= 0 {
		return 0
	}
	return len(g.Points) / g.Dim
}

// NumCells is the number of cells.
func (g *Grid) NumCells() int {
	if g.Types != nil {
		return len(g.Types)
	}
	if g.NodesPerCell <= 0 {
		return 0
	}
	return len(g.Cells) / g.NodesPerCell
}

// CellArray returns the cell array with the given name, or nil.
func (g *Grid) CellArray(name string) *Array {
	for i := range g.CellData {
		if g.CellData[i].Name == name {
			return &g.CellData[i]
		}
	}
	return nil
}

// PointArray returns the point array with the given name, or nil.
func (g *Grid) PointArray(name string) *Array {
	for i := range g.PointData {
		if g.PointData[i].Name == name {
			return &g.PointData[i]
		}
	}
	return nil
}

// Validate checks the grid's shape: dimensions, lengths, the cell type
// against the nodes per cell, point indices in range, and every array's
// type and length.
func (g *Grid) Validate() error {
	if g.Dim < 1 || g.Dim > 3 {
		return fmt.Errorf("vtk: points of dimension %d; want 1, 2 or 3", g.Dim)
	}
	if len(g.Points)%g.Dim != 0 {
		return fmt.Errorf("vtk: %d coordinates is not a whole number of %d-D points", len(g.Points), g.Dim)
	}
	if g.Types != nil {
		if err := g.validateMixed(); err != nil {
			return err
		}
	} else {
		if n, ok := nodes[g.Type]; !ok || n != g.NodesPerCell {
			return fmt.Errorf("vtk: cell type %d with %d nodes per cell (known: line 3/2, triangle 5/3, quad 9/4, tetra 10/4, pyramid 14/5, wedge 13/6, hexahedron 12/8)", g.Type, g.NodesPerCell)
		}
		if len(g.Cells)%g.NodesPerCell != 0 {
			return fmt.Errorf("vtk: %d cell entries is not a whole number of %d-node cells", len(g.Cells), g.NodesPerCell)
		}
	}
	np := g.NumPoints()
	for i, p := range g.Cells {
		if p < 0 || int(p) >= np {
			c, k := g.cellOf(i)
			return fmt.Errorf("vtk: cell %d, node %d is point %d, outside [0,%d)", c, k, p, np)
		}
	}
	check := func(where string, arrays []Array, n int) error {
		seen := map[string]bool{}
		for _, a := range arrays {
			if a.Name == "" || seen[a.Name] {
				return fmt.Errorf("vtk: %s array %q: names must be present and distinct", where, a.Name)
			}
			seen[a.Name] = true
			if a.Components < 1 {
				return fmt.Errorf("vtk: %s array %q has %d components", where, a.Name, a.Components)
			}
			if _, ok := typeName(a.Values); !ok {
				return fmt.Errorf("vtk: %s array %q holds %T; want []float64, []float32, []int32, []int64, []uint32 or []uint8", where, a.Name, a.Values)
			}
			if a.Len() != n*a.Components {
				return fmt.Errorf("vtk: %s array %q has %d values, want %d (%d × %d components)", where, a.Name, a.Len(), n*a.Components, n, a.Components)
			}
		}
		return nil
	}
	if err := check("point", g.PointData, np); err != nil {
		return err
	}
	return check("cell", g.CellData, g.NumCells())
}

// validateMixed checks a grid of mixed cells' types against its
// connectivity.
func (g *Grid) validateMixed() error {
	if g.NodesPerCell != 0 || g.Type != 0 {
		return fmt.Errorf("vtk: a grid with a type per cell (Types) has NodesPerCell %d and Type %d; want 0", g.NodesPerCell, g.Type)
	}
	n := 0
	for i, t := range g.Types {
		k := t.Nodes()
		if k == 0 {
			return fmt.Errorf("vtk: cell %d has type %d (known: line 3, triangle 5, quad 9, tetra 10, hexahedron 12, wedge 13, pyramid 14)", i, t)
		}
		n += k
	}
	if n != len(g.Cells) {
		return fmt.Errorf("vtk: %d cell entries for %d cells whose types have %d nodes in all", len(g.Cells), len(g.Types), n)
	}
	return nil
}

// cellOf returns the cell and the node within it of entry i of Cells.
func (g *Grid) cellOf(i int) (int, int) {
	if g.Types == nil {
		return i / g.NodesPerCell, i % g.NodesPerCell
	}
	o := 0
	for c, t := range g.Types {
		if i < o+t.Nodes() {
			return c, i - o
		}
		o += t.Nodes()
	}
	return len(g.Types), 0
}

func typeName(v any) (string, bool) {
	switch v.(type) {
	case []float64:
		return "Float64", true
	case []float32:
		return "Float32", true
	case []int32:
		return "Int32", true
	case []int64:
		return "Int64", true
	case []uint32:
		return "UInt32", true
	case []uint8:
		return "UInt8", true
	}
	return "", false
}

// WriteFile writes the grid to path (by convention ending in .vtu),
// whole or not at all (regfile.Create): a write that fails leaves what
// path held.
func (g *Grid) WriteFile(path string, enc Encoding) error {
	return regfile.WriteWith(path, "vtk", func(w io.Writer) error { return g.Write(w, enc) })
}

// Write writes the grid as a VTK XML UnstructuredGrid file.
func (g *Grid) Write(w io.Writer, enc Encoding) error {
	if err := g.Validate(); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	np, nc := g.NumPoints(), g.NumCells()
	fmt.Fprintf(bw, "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n")
	fmt.Fprintf(bw, "  <UnstructuredGrid>\n    <Piece NumberOfPoints=\"%d\" NumberOfCells=\"%d\">\n", np, nc)
	section := func(tag string, arrays []Array) {
		if len(arrays) == 0 {
			return
		}
		fmt.Fprintf(bw, "      <%s>\n", tag)
		for _, a := range arrays {
			writeArray(bw, a.Name, a.Components, a.Values, enc)
		}
		fmt.Fprintf(bw, "      </%s>\n", tag)
	}
	section("PointData", g.PointData)
	section("CellData", g.CellData)
	pts := make([]float64, 3*np)
	for i := 0; i < np; i++ {
		copy(pts[3*i:3*i+g.Dim], g.Points[g.Dim*i:g.Dim*(i+1)])
	}
	fmt.Fprintf(bw, "      <Points>\n")
	writeArray(bw, "Points", 3, pts, enc)
	fmt.Fprintf(bw, "      </Points>\n      <Cells>\n")
	offsets := make([]int64, nc)
	types := make([]uint8, nc)
	end := int64(0)
	for i := range offsets {
		t := g.CellTypeOf(i)
		end += int64(t.Nodes())
		offsets[i] = end
		types[i] = uint8(t)
	}
	writeArray(bw, "connectivity", 1, g.Cells, enc)
	writeArray(bw, "offsets", 1, offsets, enc)
	writeArray(bw, "types", 1, types, enc)
	fmt.Fprintf(bw, "      </Cells>\n    </Piece>\n  </UnstructuredGrid>\n</VTKFile>\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("vtk: %w", err)
	}
	return nil
}

// writeArray writes one DataArray element.
func writeArray(w *bufio.Writer, name string, comps int, values any, enc Encoding) {
	typ, _ := typeName(values)
	w.WriteString(`        <DataArray type="` + typ + `" Name="`)
	xml.EscapeText(w, []byte(name))
	w.WriteString(`"`)
	if comps > 1 {
		fmt.Fprintf(w, ` NumberOfComponents="%d"`, comps)
	}
	if enc == Binary {
		w.WriteString(` format="binary">` + "\n          ")
		raw := littleEndian(values)
		buf := binary.LittleEndian.AppendUint64(make([]byte, 0, 8+len(raw)), uint64(len(raw)))
		e := base64.NewEncoder(base64.StdEncoding, w)
		e.Write(append(buf, raw...))
		e.Close()
		w.WriteString("\n        </DataArray>\n")
		return
	}
	w.WriteString(` format="ascii">`)
	var b []byte
	n := 0
	each(values, func(f func([]byte) []byte) {
		if n%(6*max(comps, 1)) == 0 || comps > 6 && n%comps == 0 {
			w.WriteString("\n         ")
		}
		b = f(append(b[:0], ' '))
		w.Write(b)
		n++
	})
	w.WriteString("\n        </DataArray>\n")
}

// each calls f once per value with a function appending its text.
func each(values any, f func(func([]byte) []byte)) {
	switch v := values.(type) {
	case []float64:
		for _, x := range v {
			f(func(b []byte) []byte { return strconv.AppendFloat(b, x, 'g', -1, 64) })
		}
	case []float32:
		for _, x := range v {
			f(func(b []byte) []byte { return strconv.AppendFloat(b, float64(x), 'g', -1, 32) })
		}
	case []int32:
		for _, x := range v {
			f(func(b []byte) []byte { return strconv.AppendInt(b, int64(x), 10) })
		}
	case []int64:
		for _, x := range v {
			f(func(b []byte) []byte { return strconv.AppendInt(b, x, 10) })
		}
	case []uint32:
		for _, x := range v {
			f(func(b []byte) []byte { return strconv.AppendUint(b, uint64(x), 10) })
		}
	case []uint8:
		for _, x := range v {
			f(func(b []byte) []byte { return strconv.AppendUint(b, uint64(x), 10) })
		}
	}
}

// littleEndian returns the values' bytes, little-endian.
func littleEndian(values any) []byte {
	var buf bytes.Buffer
	switch v := values.(type) {
	case []uint8:
		return v
	default:
		binary.Write(&buf, binary.LittleEndian, v) // a slice of fixed-size values: cannot fail
	}
	return buf.Bytes()
}

// The XML as Read sees it.
type xmlFile struct {
	XMLName    xml.Name `xml:"VTKFile"`
	Type       string   `xml:"type,attr"`
	ByteOrder  string   `xml:"byte_order,attr"`
	HeaderType string   `xml:"header_type,attr"`
	Compressor string   `xml:"compressor,attr"`
	Pieces     []struct {
		Points    int        `xml:"NumberOfPoints,attr"`
		Cells     int        `xml:"NumberOfCells,attr"`
		PointData []xmlArray `xml:"PointData>DataArray"`
		CellData  []xmlArray `xml:"CellData>DataArray"`
		Coords    []xmlArray `xml:"Points>DataArray"`
		Topology  []xmlArray `xml:"Cells>DataArray"`
	} `xml:"UnstructuredGrid>Piece"`
	// Others are the elements besides UnstructuredGrid (a .pvtu file's
	// PUnstructuredGrid, a PolyData...), for an error to count the
	// pieces of a file of another type.
	Others []struct {
		XMLName xml.Name
		Pieces  []struct{} `xml:"Piece"`
	} `xml:",any"`
}

type xmlArray struct {
	Type       string `xml:"type,attr"`
	Name       string `xml:"Name,attr"`
	Components int    `xml:"NumberOfComponents,attr"`
	Format     string `xml:"format,attr"`
	Text       string `xml:",chardata"`
}

// ReadFile reads a .vtu file (see Read). The path must name a regular
// file (directly or through symbolic links): a FIFO, a device, a socket or
// a directory is refused before it is opened, and no more than the file's
// size is read.
func ReadFile(path string) (*Grid, error) {
	f, err := regfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("vtk: %w", err)
	}
	defer f.Close()
	g, err := Read(bufio.NewReader(f.Reader()))
	if err != nil {
		return nil, fmt.Errorf("%w (reading %s)", err, path)
	}
	return g, nil
}

// appendedWatch reads r, noting whether an <AppendedData element went by
// (across reads too), for an error to say so.
type appendedWatch struct {
	r        io.Reader
	matched  int // the bytes of appendedTag that the last ones read match
	appended bool
}

var appendedTag = []byte("<AppendedData")

func (a *appendedWatch) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	for _, c := range p[:n] {
		a.note(c)
	}
	return n, err
}

// note watches byte c, read after those before. The tag's first byte
// appears in it only first, so a byte that breaks a match starts one
// only if it is that byte.
func (a *appendedWatch) note(c byte) {
	switch {
	case a.appended:
	case c == appendedTag[a.matched]:
		a.matched++
		if a.matched == len(appendedTag) {
			a.appended = true
		}
	case c == appendedTag[0]:
		a.matched = 1
	default:
		a.matched = 0
	}
}

// appendedByteWatch is appendedWatch of a reader that reads bytes too,
// which the XML decoder then reads from without a buffer of its own (a
// caller's bufio.Reader is not read past the XML).
type appendedByteWatch struct {
	appendedWatch
	br io.ByteReader
}

func (a *appendedByteWatch) ReadByte() (byte, error) {
	b, err := a.br.ReadByte()
	if err == nil {
		a.note(b)
	}
	return b, err
}

// Read reads a VTK XML UnstructuredGrid: one piece, cells of the types
// CellType names (of one type: a Grid with Type and NodesPerCell; of
// several: a Grid with Types), arrays inline in ASCII or uncompressed base64 binary, little-endian.
// Integer arrays of other widths are read as int64 (unsigned as uint32
// when they fit), and Int8/UInt8 arrays too.
func Read(r io.Reader) (*Grid, error) {
	var f xmlFile
	seen := &appendedWatch{r: r}
	var in io.Reader = seen
	if br, ok := r.(io.ByteReader); ok {
		bw := &appendedByteWatch{appendedWatch{r: r}, br}
		seen, in = &bw.appendedWatch, bw
	}
	if err := xml.NewDecoder(in).Decode(&f); err != nil {
		if seen.appended {
			return nil, fmt.Errorf("vtk: the data are appended raw after the XML (ParaView's default), which is not supported: save the file with the data mode ASCII or Binary (%w)", err)
		}
		return nil, fmt.Errorf("vtk: not a VTK XML file: %w", err)
	}
	if f.Type != "UnstructuredGrid" || len(f.Pieces) != 1 {
		n, hint := len(f.Pieces), ""
		if f.Type != "UnstructuredGrid" {
			n = 0 // the pieces of the file's type's element
			for _, o := range f.Others {
				if o.XMLName.Local == f.Type {
					n += len(o.Pieces)
				}
			}
		}
		if f.Type == "PUnstructuredGrid" {
			hint = " (a PUnstructuredGrid file is a .pvtu file, whose pieces ReadPVTUFile reads)"
		}
		return nil, fmt.Errorf("vtk: a %q file with %d pieces; want an UnstructuredGrid with one piece%s", f.Type, n, hint)
	}
	if f.ByteOrder == "BigEndian" || f.Compressor != "" {
		return nil, fmt.Errorf("vtk: big-endian or compressed data is not supported")
	}
	header := 4
	if f.HeaderType == "UInt64" {
		header = 8
	}
	p := f.Pieces[0]
	g := &Grid{Dim: 3}
	arrays := func(xs []xmlArray, n int, where string) ([]Array, error) {
		var out []Array
		for _, x := range xs {
			a, err := x.decode(header)
			if err != nil {
				return nil, err
			}
			if a.Len() != n*a.Components {
				return nil, fmt.Errorf("vtk: %s array %q: %d values for %d %ss × %d components", where, x.Name, a.Len(), n, where, a.Components)
			}
			out = append(out, a)
		}
		return out, nil
	}
	var err error
	if g.PointData, err = arrays(p.PointData, p.Points, "point"); err != nil {
		return nil, err
	}
	if g.CellData, err = arrays(p.CellData, p.Cells, "cell"); err != nil {
		return nil, err
	}
	if len(p.Coords) != 1 {
		return nil, fmt.Errorf("vtk: %d Points arrays; want one", len(p.Coords))
	}
	pts, err := arrays(p.Coords, p.Points, "point")
	if err != nil {
		return nil, err
	}
	g.Dim = pts[0].Components
	g.Points = pts[0].Float64s()
	topo := map[string][]int64{}
	for _, x := range p.Topology {
		a, err := x.decode(header)
		if err != nil {
			return nil, err
		}
		v := a.Float64s()
		iv := make([]int64, len(v))
		for i, f := range v {
			iv[i] = int64(f)
		}
		topo[x.Name] = iv
	}
	conn, offs, types := topo["connectivity"], topo["offsets"], topo["types"]
	if len(offs) != p.Cells || len(types) != p.Cells {
		return nil, fmt.Errorf("vtk: %d offsets and %d types for %d cells", len(offs), len(types), p.Cells)
	}
	mixed := false
	end := int64(0)
	for i := range types {
		t := CellType(types[i])
		if types[i] < 0 || types[i] > math.MaxUint8 || t.Nodes() == 0 {
			return nil, fmt.Errorf("vtk: cell type %d is not supported", types[i])
		}
		end += int64(t.Nodes())
		if offs[i] != end {
			return nil, fmt.Errorf("vtk: cell %d of type %d ends at offset %d; its nodes end at %d", i, types[i], offs[i], end)
		}
		mixed = mixed || types[i] != types[0]
	}
	switch {
	case p.Cells == 0:
		g.Type, g.NodesPerCell = Line, 2
	case mixed:
		g.Types = make([]CellType, p.Cells)
		for i, t := range types {
			g.Types[i] = CellType(t)
		}
	default:
		g.Type = CellType(types[0])
		g.NodesPerCell = nodes[g.Type]
	}
	if int64(len(conn)) != end {
		if !mixed {
			return nil, fmt.Errorf("vtk: %d connectivity entries for %d cells of %d nodes", len(conn), p.Cells, g.NodesPerCell)
		}
		return nil, fmt.Errorf("vtk: %d connectivity entries for %d cells of %d nodes in all", len(conn), p.Cells, end)
	}
	g.Cells = make([]int32, len(conn))
	for i, c := range conn {
		if c < 0 || c > math.MaxInt32 {
			return nil, fmt.Errorf("vtk: connectivity entry %d is %d", i, c)
		}
		g.Cells[i] = int32(c)
	}
	if err := g.Validate(); err != nil {
		return nil, err
	}
	return g, nil
}

// decode reads a DataArray's values.
func (x *xmlArray) decode(header int) (Array, error) {
	a := Array{Name: x.Name, Components: max(x.Components, 1)}
	size := map[string]int{"Float64": 8, "Float32": 4, "Int64": 8, "UInt64": 8, "Int32": 4, "UInt32": 4, "Int16": 2, "UInt16": 2, "Int8": 1, "UInt8": 1}[x.Type]
	if size == 0 {
		return a, fmt.Errorf("vtk: array %q of type %q is not supported", x.Name, x.Type)
	}
	var raw []byte
	switch x.Format {
	case "ascii":
		fields := bytes.Fields([]byte(x.Text))
		switch x.Type {
		case "Float64", "Float32":
			v := make([]float64, len(fields))
			for i, s := range fields {
				f, err := strconv.ParseFloat(string(s), 64)
				if err != nil {
					return a, fmt.Errorf("vtk: array %q, value %d: %q is not a number", x.Name, i, s)
				}
				v[i] = f
			}
			if x.Type == "Float32" {
				f32 := make([]float32, len(v))
				for i, f := range v {
					f32[i] = float32(f)
				}
				a.Values = f32
			} else {
				a.Values = v
			}
			return a, nil
		}
		v := make([]int64, len(fields))
		for i, s := range fields {
			n, err := strconv.ParseInt(string(s), 10, 64)
			if err != nil {
				return a, fmt.Errorf("vtk: array %q, value %d: %q is not an integer", x.Name, i, s)
			}
			v[i] = n
		}
		a.Values = narrow(x.Type, v)
		return a, nil
	case "binary":
		text := bytes.Join(bytes.Fields([]byte(x.Text)), nil)
		b, err := base64.StdEncoding.DecodeString(string(text))
		if err != nil {
			// Some writers encode the header separately from the data.
			hlen := base64.StdEncoding.EncodedLen(header)
			if len(text) < hlen {
				return a, fmt.Errorf("vtk: array %q: bad base64: %w", x.Name, err)
			}
			h, err1 := base64.StdEncoding.DecodeString(string(text[:hlen]))
			d, err2 := base64.StdEncoding.DecodeString(string(text[hlen:]))
			if err1 != nil || err2 != nil {
				return a, fmt.Errorf("vtk: array %q: bad base64: %w", x.Name, err)
			}
			b = append(h, d...)
		}
		if len(b) < header {
			return a, fmt.Errorf("vtk: array %q: %d bytes, shorter than the header", x.Name, len(b))
		}
		n := binary.LittleEndian.Uint32(b)
		if header == 8 {
			n64 := binary.LittleEndian.Uint64(b)
			if n64 > uint64(len(b)) {
				return a, fmt.Errorf("vtk: array %q: the header announces %d bytes, %d present", x.Name, n64, len(b)-header)
			}
			n = uint32(n64)
		}
		raw = b[header:]
		if int(n) > len(raw) || int(n)%size != 0 {
			return a, fmt.Errorf("vtk: array %q: the header announces %d bytes, %d present", x.Name, n, len(raw))
		}
		raw = raw[:n]
	default:
		return a, fmt.Errorf("vtk: array %q: format %q is not supported (ascii or binary)", x.Name, x.Format)
	}
	switch x.Type {
	case "Float64":
		v := make([]float64, len(raw)/8)
		binary.Decode(raw, binary.LittleEndian, v)
		a.Values = v
	case "Float32":
		v := make([]float32, len(raw)/4)
		binary.Decode(raw, binary.LittleEndian, v)
		a.Values = v
	case "Int32":
		v := make([]int32, len(raw)/4)
		binary.Decode(raw, binary.LittleEndian, v)
		a.Values = v
	case "UInt32":
		v := make([]uint32, len(raw)/4)
		binary.Decode(raw, binary.LittleEndian, v)
		a.Values = v
	default:
		v := make([]int64, len(raw)/size)
		for i := range v {
			c := raw[i*size : (i+1)*size]
			switch x.Type {
			case "Int64", "UInt64":
				v[i] = int64(binary.LittleEndian.Uint64(c))
			case "Int16":
				v[i] = int64(int16(binary.LittleEndian.Uint16(c)))
			case "UInt16":
				v[i] = int64(binary.LittleEndian.Uint16(c))
			case "Int8":
				v[i] = int64(int8(c[0]))
			case "UInt8":
				v[i] = int64(c[0])
			}
		}
		a.Values = v
	}
	return a, nil
}

// narrow stores ASCII integers in the slice type their VTK type names.
func narrow(typ string, v []int64) any {
	switch typ {
	case "Int32":
		out := make([]int32, len(v))
		for i, x := range v {
			out[i] = int32(x)
		}
		return out
	case "UInt32":
		out := make([]uint32, len(v))
		for i, x := range v {
			out[i] = uint32(x)
		}
		return out
	}
	return v
}
