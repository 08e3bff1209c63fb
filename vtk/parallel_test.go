package vtk_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/vtk"
)

func TestOutputPathOneProcess(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"out.vtu", "out.vtu"},
		{"dir/out.pvtu", "dir/out.vtu"},
		{"out", "out"},
		{"a.b.vtu", "a.b.vtu"},
		{".pvtu", ".pvtu"},
	} {
		if got := vtk.OutputPath(c.in); got != c.want {
			t.Errorf("OutputPath(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestPiecePath(t *testing.T) {
	for _, c := range []struct {
		in   string
		rank int
		want string
	}{
		{"out.pvtu", 0, "out/out_0.vtu"},
		{"dir/run_0003.pvtu", 12, "dir/run_0003/run_0003_12.vtu"},
		{"dir/out", 1, "dir/out/out_1.vtu"},
	} {
		if got := vtk.PiecePath(c.in, c.rank); got != filepath.FromSlash(c.want) {
			t.Errorf("PiecePath(%q, %d) = %q, want %q", c.in, c.rank, got, c.want)
		}
	}
}

const tinyPVTU = `<?xml version="1.0"?>
<VTKFile type="PUnstructuredGrid" version="1.0" byte_order="LittleEndian" header_type="UInt64">
  <PUnstructuredGrid GhostLevel="0">
    <PPointData>
      <PDataArray type="Float32" Name="t"/>
    </PPointData>
    <PCellData>
      <PDataArray type="Float64" Name="q" NumberOfComponents="4"/>
      <PDataArray type="Int32" Name="id &amp; &lt;kind&gt;"/>
    </PCellData>
    <PPoints>
      <PDataArray type="Float64" Name="Points" NumberOfComponents="3"/>
    </PPoints>
    <Piece Source="m/m_0.vtu"/>
    <Piece Source="m/m_1.vtu"/>
  </PUnstructuredGrid>
</VTKFile>
`

func TestWritePVTU(t *testing.T) {
	var b bytes.Buffer
	if err := tiny().WritePVTU(&b, []string{"m/m_0.vtu", "m/m_1.vtu"}); err != nil {
		t.Fatal(err)
	}
	if b.String() != tinyPVTU {
		t.Errorf("got\n%s\nwant\n%s", b.String(), tinyPVTU)
	}
	want := "VTKFile PUnstructuredGrid PPointData PDataArray PCellData PDataArray PDataArray PPoints PDataArray Piece Piece"
	if names := strings.Join(wellFormed(t, b.Bytes()), " "); names != want {
		t.Errorf("elements %s, want %s", names, want)
	}
}

// split returns tiny's two quads as two pieces of one quad each, with
// the points each uses (the middle column in both).
func split() []*vtk.Grid {
	g := tiny()
	left := &vtk.Grid{Points: []float64{0, 0, 1, 0, 1, 1, 0, 1}, Dim: 2, Cells: []int32{0, 1, 2, 3}, NodesPerCell: 4, Type: vtk.Quad,
		CellData: []vtk.Array{
			{Name: "q", Components: 4, Values: g.CellData[0].Values.([]float64)[:4]},
			{Name: "id & <kind>", Components: 1, Values: []int32{7}}},
		PointData: []vtk.Array{{Name: "t", Components: 1, Values: []float32{0.5, 1, 2.5, 2}}}}
	right := &vtk.Grid{Points: []float64{1, 0, 2, 0, 2, 1, 1, 1}, Dim: 2, Cells: []int32{0, 1, 2, 3}, NodesPerCell: 4, Type: vtk.Quad,
		CellData: []vtk.Array{
			{Name: "q", Components: 4, Values: g.CellData[0].Values.([]float64)[4:]},
			{Name: "id & <kind>", Components: 1, Values: []int32{-8}}},
		PointData: []vtk.Array{{Name: "t", Components: 1, Values: []float32{1, 1.5, 3, 2.5}}}}
	return []*vtk.Grid{left, right}
}

// writePieces writes pieces as dir/m.pvtu and dir/m/m_<i>.vtu.
func writePieces(t *testing.T, dir string, pieces []*vtk.Grid, enc vtk.Encoding) string {
	t.Helper()
	pvtu := filepath.Join(dir, "m.pvtu")
	var src []string
	for i, p := range pieces {
		path := vtk.PiecePath(pvtu, i)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := p.WriteFile(path, enc); err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, path)
		src = append(src, filepath.ToSlash(rel))
	}
	f, err := os.Create(pvtu)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pieces[0].WritePVTU(f, src); err != nil {
		t.Fatal(err)
	}
	return pvtu
}

func TestReadPVTUAndMerge(t *testing.T) {
	for _, enc := range []vtk.Encoding{vtk.ASCII, vtk.Binary} {
		dir := t.TempDir()
		pvtu := writePieces(t, dir, split(), enc)
		// The set of files moves as one.
		moved := filepath.Join(t.TempDir(), "moved")
		if err := os.Rename(dir, moved); err != nil {
			t.Fatal(err)
		}
		pieces, err := vtk.ReadPVTUFile(filepath.Join(moved, filepath.Base(pvtu)))
		if err != nil {
			t.Fatal(err)
		}
		if len(pieces) != 2 {
			t.Fatalf("%d pieces, want 2", len(pieces))
		}
		g, err := vtk.Merge(pieces)
		if err != nil {
			t.Fatal(err)
		}
		if g.NumPoints() != 8 || !reflect.DeepEqual(g.Cells, []int32{0, 1, 2, 3, 4, 5, 6, 7}) || g.Type != vtk.Quad {
			t.Errorf("encoding %d: merged %d points, cells %v", enc, g.NumPoints(), g.Cells)
		}
		want := tiny()
		if !reflect.DeepEqual(g.CellData, want.CellData) {
			t.Errorf("encoding %d: cell data %v, want %v", enc, g.CellData, want.CellData)
		}
		if v := g.PointArray("t").Values; !reflect.DeepEqual(v, []float32{0.5, 1, 2.5, 2, 1, 1.5, 3, 2.5}) {
			t.Errorf("encoding %d: point data %v", enc, v)
		}
	}
}

func TestReadPVTURejects(t *testing.T) {
	cases := map[string]struct {
		spoil func(dir, pvtu string) error
		want  string
	}{
		"missing piece": {func(dir, _ string) error { return os.Remove(filepath.Join(dir, "m", "m_1.vtu")) }, "piece 1"},
		"piece lacks an array": {func(dir, _ string) error {
			g := split()[1]
			g.CellData = g.CellData[:1]
			return g.WriteFile(filepath.Join(dir, "m", "m_1.vtu"), vtk.ASCII)
		}, `lacks the cell array "id & <kind>"`},
		"not parallel": {func(_, pvtu string) error { return tiny().WriteFile(pvtu, vtk.ASCII) }, "PUnstructuredGrid"},
		"no source": {func(_, pvtu string) error {
			return os.WriteFile(pvtu, []byte(`<VTKFile type="PUnstructuredGrid"><PUnstructuredGrid><Piece/></PUnstructuredGrid></VTKFile>`), 0o644)
		}, "no Source"},
	}
	for name, c := range cases {
		dir := t.TempDir()
		pvtu := writePieces(t, dir, split(), vtk.ASCII)
		if err := c.spoil(dir, pvtu); err != nil {
			t.Fatal(err)
		}
		_, err := vtk.ReadPVTUFile(pvtu)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, c.want)
		}
	}
}

func TestMergeRejects(t *testing.T) {
	cases := map[string]func(p []*vtk.Grid){
		"cell type": func(p []*vtk.Grid) {
			p[1].Type, p[1].NodesPerCell, p[1].Cells = vtk.Triangle, 3, []int32{0, 1, 2}
			p[1].CellData = nil
		},
		"array name": func(p []*vtk.Grid) { p[1].CellData[0].Name = "r" },
		"arrays":     func(p []*vtk.Grid) { p[1].PointData = nil },
		"value type": func(p []*vtk.Grid) { p[1].PointData[0].Values = []float64{1, 1.5, 3, 2.5} },
	}
	for name, spoil := range cases {
		p := split()
		spoil(p)
		if _, err := vtk.Merge(p); err == nil || !strings.HasPrefix(err.Error(), "vtk: ") {
			t.Errorf("%s: Merge gave %v, want an error", name, err)
		}
	}
	if _, err := vtk.Merge(nil); err == nil {
		t.Error("Merge(nil): no error")
	}
	// A piece without cells (a rank that owns none) merges with any type.
	p := split()
	empty := &vtk.Grid{Dim: 2, Type: vtk.Line, NodesPerCell: 2,
		CellData:  []vtk.Array{{Name: "q", Components: 4, Values: []float64{}}, {Name: "id & <kind>", Components: 1, Values: []int32{}}},
		PointData: []vtk.Array{{Name: "t", Components: 1, Values: []float32{}}}}
	if g, err := vtk.Merge([]*vtk.Grid{empty, p[0], p[1]}); err != nil || g.NumCells() != 2 || g.Type != vtk.Quad {
		t.Errorf("merging an empty piece: %v", err)
	}
}

// TestWriterOneProcess: on one process a Writer writes what FromOP2 and
// the Add functions give, to the .vtu file OutputPath names, with the
// values the Dats hold at each write.
func TestWriterOneProcess(t *testing.T) {
	os.Setenv("OP2_CACHE_DIR", t.TempDir())
	g0 := tiny()
	nodes, _ := op2.NewSet(6, "wnodes")
	cells, _ := op2.NewSet(2, "wcells")
	pcell, err := op2.NewMap(cells, nodes, 4, g0.Cells, "wpcell")
	if err != nil {
		t.Fatal(err)
	}
	x, _ := op2.NewDat(nodes, 2, g0.Points, "x")
	q, _ := op2.NewDat(cells, 4, g0.CellData[0].Values.([]float64), "q")
	tag, _ := op2.NewDat(nodes, 1, []int32{1, 2, 3, 4, 5, 6}, "tag")
	w, err := vtk.NewWriter(x, pcell)
	if err != nil {
		t.Fatal(err)
	}
	w.DeclaredNumbers = true
	for name, err := range map[string]error{
		"cell dat":            vtk.CellDat(w, q),
		"point dat":           vtk.PointDat(w, tag),
		"twice":               vtk.PointDat(w, tag),
		"cell dat as points":  vtk.PointDat(w, q),
		"point dat as cells":  vtk.CellDat(w, x),
		"declared number dat": vtk.CellDat(w, must(op2.NewDat[int32](cells, 1, nil, vtk.DeclaredNumberArray))),
	} {
		if bad := name != "cell dat" && name != "point dat"; (err != nil) != bad {
			t.Errorf("%s: error %v", name, err)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "m.pvtu")
	if err := w.WriteFile(path, vtk.Binary); err != nil {
		t.Fatal(err)
	}
	q.Data()[0] = 42
	if err := w.WriteFile(filepath.Join(dir, "later.vtu"), vtk.ASCII); err != nil {
		t.Fatal(err)
	}
	for file, q0 := range map[string]float64{"m.vtu": 1, "later.vtu": 42} {
		g, err := vtk.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		if g.NumPoints() != 6 || !reflect.DeepEqual(g.Cells, g0.Cells) {
			t.Errorf("%s: %d points, cells %v", file, g.NumPoints(), g.Cells)
		}
		if v := g.CellArray("q").Float64s(); v[0] != q0 || v[1] != 0.5 {
			t.Errorf("%s: q %v", file, v)
		}
		if v := g.PointArray("tag"); v == nil || !reflect.DeepEqual(v.Values, []int32{1, 2, 3, 4, 5, 6}) {
			t.Errorf("%s: tag %v", file, v)
		}
		if v := g.CellArray(vtk.DeclaredNumberArray); v == nil || !reflect.DeepEqual(v.Values, []int32{0, 1}) {
			t.Errorf("%s: declared numbers %v", file, v)
		}
	}
	if _, err := vtk.NewWriter(x, nil); err == nil {
		t.Error("NewWriter without a map: no error")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
