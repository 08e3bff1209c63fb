package vtkfile_test

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/regfile/regfiletest"
	"github.com/goop2/op2/vtk/vtkfile"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// tiny is two quads side by side: points 0..5, x in {0,1,2}, y in {0,1}.
func tiny() *vtkfile.Grid {
	return &vtkfile.Grid{
		Points:       []float64{0, 0, 1, 0, 2, 0, 0, 1, 1, 1, 2, 1},
		Dim:          2,
		Cells:        []int32{0, 1, 4, 3, 1, 2, 5, 4},
		NodesPerCell: 4,
		Type:         vtkfile.Quad,
		CellData: []vtkfile.Array{
			{Name: "q", Components: 4, Values: []float64{1, 0.5, 0, 2.5, 1, -0.25, 1e-30, 3}},
			{Name: "id & <kind>", Components: 1, Values: []int32{7, -8}},
		},
		PointData: []vtkfile.Array{{Name: "t", Components: 1, Values: []float32{0.5, 1, 1.5, 2, 2.5, 3}}},
	}
}

func TestGolden(t *testing.T) {
	var b bytes.Buffer
	if err := tiny().Write(&b, vtkfile.ASCII); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "two-quads.vtu")
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("output differs from %s (go test -run TestGolden -update rewrites it):\n%s", golden, b.String())
	}
}

// wellFormed parses the whole document with encoding/xml and returns the
// element names in order.
func wellFormed(t *testing.T, b []byte) []string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	var names []string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		if s, ok := tok.(xml.StartElement); ok {
			names = append(names, s.Name.Local)
		}
	}
	return names
}

// TestWriteFileWholeOrNot: a grid that cannot be written leaves the file
// at the path as it was, and no other file.
func TestWriteFileWholeOrNot(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "g.vtu")
	if err := tiny().WriteFile(path, vtkfile.Binary); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	bad := tiny()
	bad.Cells[0] = 99 // no such point
	if err := bad.WriteFile(path, vtkfile.Binary); err == nil {
		t.Fatal("a grid with a cell naming point 99 of 6 was written")
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) || len(after) == 0 {
		t.Errorf("the failed write left %d bytes at the path, want the %d of the file before", len(after), len(before))
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the folder holds %d entries, want the file alone", len(ents))
	}
}

func TestWriteReadBothEncodings(t *testing.T) {
	for _, enc := range []vtkfile.Encoding{vtkfile.ASCII, vtkfile.Binary} {
		var b bytes.Buffer
		g := tiny()
		if err := g.Write(&b, enc); err != nil {
			t.Fatal(err)
		}
		names := strings.Join(wellFormed(t, b.Bytes()), " ")
		want := "VTKFile UnstructuredGrid Piece PointData DataArray CellData DataArray DataArray Points DataArray Cells DataArray DataArray DataArray"
		if names != want {
			t.Errorf("encoding %d: elements %s, want %s", enc, names, want)
		}
		back, err := vtkfile.Read(&b)
		if err != nil {
			t.Fatalf("encoding %d: %v", enc, err)
		}
		// Points come back 3-D, padded with z = 0.
		if back.Dim != 3 || back.NumPoints() != 6 || back.Points[3*4] != 1 || back.Points[3*4+1] != 1 || back.Points[3*4+2] != 0 {
			t.Errorf("encoding %d: points %v (dim %d)", enc, back.Points, back.Dim)
		}
		if back.Type != vtkfile.Quad || !reflect.DeepEqual(back.Cells, g.Cells) {
			t.Errorf("encoding %d: cells %v type %d", enc, back.Cells, back.Type)
		}
		if !reflect.DeepEqual(back.CellData, g.CellData) || !reflect.DeepEqual(back.PointData, g.PointData) {
			t.Errorf("encoding %d: arrays\n%v %v\nwant\n%v %v", enc, back.CellData, back.PointData, g.CellData, g.PointData)
		}
	}
}

// VTK's own writer and others differ in whether the base64 header is
// encoded apart from the data; Read takes both.
func TestReadSeparateHeader(t *testing.T) {
	var b bytes.Buffer
	if err := tiny().Write(&b, vtkfile.ASCII); err != nil {
		t.Fatal(err)
	}
	// Replace the int32 array with a binary one encoded in two parts.
	raw := []byte{7, 0, 0, 0, 0xf8, 0xff, 0xff, 0xff}
	hdr := []byte{8, 0, 0, 0, 0, 0, 0, 0}
	enc := b64(hdr) + b64(raw)
	s := b.String()
	i := strings.Index(s, `<DataArray type="Int32" Name="id &amp; &lt;kind&gt;" format="ascii">`)
	j := strings.Index(s[i:], "</DataArray>") + i
	s = s[:i] + `<DataArray type="Int32" Name="id &amp; &lt;kind&gt;" format="binary">` + enc + s[j:]
	g, err := vtkfile.Read(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	if v := g.CellArray("id & <kind>").Values; !reflect.DeepEqual(v, []int32{7, -8}) {
		t.Errorf("read %v", v)
	}
}

func b64(b []byte) string {
	var w strings.Builder
	e := base64Encoder(&w)
	e.Write(b)
	e.Close()
	return w.String()
}

func TestCellTypeFor(t *testing.T) {
	for _, c := range []struct {
		arity, dim int
		want       vtkfile.CellType
	}{{2, 2, vtkfile.Line}, {3, 2, vtkfile.Triangle}, {3, 3, vtkfile.Triangle}, {4, 2, vtkfile.Quad}, {4, 3, vtkfile.Tetra}, {5, 3, vtkfile.Pyramid}, {6, 3, vtkfile.Wedge}, {8, 3, vtkfile.Hexahedron}} {
		got, err := vtkfile.CellTypeFor(c.arity, c.dim)
		if err != nil || got != c.want {
			t.Errorf("CellTypeFor(%d, %d) = %d, %v; want %d", c.arity, c.dim, got, err, c.want)
		}
	}
	for _, c := range [][2]int{{5, 2}, {6, 2}, {7, 3}} {
		if _, err := vtkfile.CellTypeFor(c[0], c[1]); err == nil {
			t.Errorf("CellTypeFor(%d, %d): no error", c[0], c[1])
		}
	}
}

func TestValidate(t *testing.T) {
	cases := map[string]func(g *vtkfile.Grid){
		"dim":        func(g *vtkfile.Grid) { g.Dim = 4 },
		"points":     func(g *vtkfile.Grid) { g.Points = g.Points[:5] },
		"type":       func(g *vtkfile.Grid) { g.Type = vtkfile.Triangle },
		"node":       func(g *vtkfile.Grid) { g.Cells[3] = 6 },
		"components": func(g *vtkfile.Grid) { g.CellData[0].Components = 3 },
		"values":     func(g *vtkfile.Grid) { g.CellData[1].Values = []string{"a", "b"} },
		"name":       func(g *vtkfile.Grid) { g.PointData[0].Name = "q"; g.CellData = append(g.CellData, g.CellData[0]) },
	}
	for name, spoil := range cases {
		g := tiny()
		spoil(g)
		if err := g.Write(io.Discard, vtkfile.ASCII); err == nil || !strings.HasPrefix(err.Error(), "vtk: ") {
			t.Errorf("%s: Write gave %v, want an error", name, err)
		}
	}
}

func TestReadRejects(t *testing.T) {
	// ParaView's default: the arrays' bytes raw after the XML, which the
	// XML reader cannot take; the error says so (it said "not a VTK XML
	// file"), also when the tag ends a read.
	raw := `<?xml version="1.0"?>
<VTKFile type="UnstructuredGrid" version="1.0" byte_order="LittleEndian" header_type="UInt64">
  <UnstructuredGrid><Piece NumberOfPoints="1" NumberOfCells="0">
    <Points><DataArray type="Float64" NumberOfComponents="3" format="appended" offset="0"/></Points>
  </Piece></UnstructuredGrid>
  <AppendedData encoding="raw">
   _` + "\x18\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xf0\x3f\xff\xfe\x00<\x01" + `
  </AppendedData>
</VTKFile>`
	for name, c := range map[string]struct{ s, want string }{
		"not xml":  {"hello", "not a VTK XML file"},
		"polydata": {`<VTKFile type="PolyData"><PolyData><Piece/></PolyData></VTKFile>`, `a "PolyData" file with 1 pieces; want an UnstructuredGrid`},
		// A .pvtu file's pieces are counted (it once said 0 pieces).
		"pvtu": {`<VTKFile type="PUnstructuredGrid"><PUnstructuredGrid><PPoints/><Piece Source="p/p_0.vtu"/><Piece Source="p/p_1.vtu"/></PUnstructuredGrid></VTKFile>`,
			`a "PUnstructuredGrid" file with 2 pieces; want an UnstructuredGrid with one piece (a PUnstructuredGrid file is a .pvtu file`},
		"two pieces": {`<VTKFile type="UnstructuredGrid"><UnstructuredGrid><Piece/><Piece/></UnstructuredGrid></VTKFile>`, `a "UnstructuredGrid" file with 2 pieces`},
		"compressed": {`<VTKFile type="UnstructuredGrid" compressor="vtkZLibDataCompressor"><UnstructuredGrid><Piece/></UnstructuredGrid></VTKFile>`, "compressed"},
		"appended":   {raw, "appended raw after the XML"},
	} {
		for _, chunk := range []int{1, 7, 4096} {
			if _, err := vtkfile.Read(&chunkReader{s: c.s, n: chunk}); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s (reads of %d bytes): %v, want an error saying %q", name, chunk, err, c.want)
			}
		}
		// A reader of bytes, which the XML decoder reads byte by byte.
		if _, err := vtkfile.Read(strings.NewReader(c.s)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s (a byte reader): %v, want an error saying %q", name, err, c.want)
		}
	}
}

// TestReadLeavesWhatFollows: Read of a bufio.Reader takes the XML and
// leaves what follows it in the reader.
func TestReadLeavesWhatFollows(t *testing.T) {
	var b bytes.Buffer
	if err := tiny().Write(&b, vtkfile.ASCII); err != nil {
		t.Fatal(err)
	}
	b.WriteString("\nwhat follows")
	br := bufio.NewReader(&b)
	if _, err := vtkfile.Read(br); err != nil {
		t.Fatal(err)
	}
	if rest, _ := io.ReadAll(br); !strings.Contains(string(rest), "what follows") {
		t.Errorf("left %q in the reader", rest)
	}
}

// chunkReader gives s in reads of at most n bytes.
type chunkReader struct {
	s string
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.s)
	c.s = c.s[k:]
	return k, nil
}

// TestReadFileRefusesSpecialFiles: a FIFO, a link to /dev/zero or a
// directory given as the .vtu file is refused at once, naming the path and
// what it is (a FIFO used to block ReadFile for ever).
func TestReadFileRefusesSpecialFiles(t *testing.T) {
	for _, s := range regfiletest.Make(t, "grid.vtu") {
		t.Run(s.Name, func(t *testing.T) {
			regfiletest.Refused(t, s, func() error { _, err := vtkfile.ReadFile(s.Path); return err })
		})
	}
}
