package vtkfile_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/goop2/op2/vtk/vtkfile"
)

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
		if got := vtkfile.PiecePath(c.in, c.rank); got != filepath.FromSlash(c.want) {
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
func split() []*vtkfile.Grid {
	g := tiny()
	left := &vtkfile.Grid{Points: []float64{0, 0, 1, 0, 1, 1, 0, 1}, Dim: 2, Cells: []int32{0, 1, 2, 3}, NodesPerCell: 4, Type: vtkfile.Quad,
		CellData: []vtkfile.Array{
			{Name: "q", Components: 4, Values: g.CellData[0].Values.([]float64)[:4]},
			{Name: "id & <kind>", Components: 1, Values: []int32{7}}},
		PointData: []vtkfile.Array{{Name: "t", Components: 1, Values: []float32{0.5, 1, 2.5, 2}}}}
	right := &vtkfile.Grid{Points: []float64{1, 0, 2, 0, 2, 1, 1, 1}, Dim: 2, Cells: []int32{0, 1, 2, 3}, NodesPerCell: 4, Type: vtkfile.Quad,
		CellData: []vtkfile.Array{
			{Name: "q", Components: 4, Values: g.CellData[0].Values.([]float64)[4:]},
			{Name: "id & <kind>", Components: 1, Values: []int32{-8}}},
		PointData: []vtkfile.Array{{Name: "t", Components: 1, Values: []float32{1, 1.5, 3, 2.5}}}}
	return []*vtkfile.Grid{left, right}
}

// writePieces writes pieces as dir/m.pvtu and dir/m/m_<i>.vtu.
func writePieces(t *testing.T, dir string, pieces []*vtkfile.Grid, enc vtkfile.Encoding) string {
	t.Helper()
	pvtu := filepath.Join(dir, "m.pvtu")
	var src []string
	for i, p := range pieces {
		path := vtkfile.PiecePath(pvtu, i)
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
	for _, enc := range []vtkfile.Encoding{vtkfile.ASCII, vtkfile.Binary} {
		dir := t.TempDir()
		pvtu := writePieces(t, dir, split(), enc)
		// The set of files moves as one.
		moved := filepath.Join(t.TempDir(), "moved")
		if err := os.Rename(dir, moved); err != nil {
			t.Fatal(err)
		}
		pieces, err := vtkfile.ReadPVTUFile(filepath.Join(moved, filepath.Base(pvtu)))
		if err != nil {
			t.Fatal(err)
		}
		if len(pieces) != 2 {
			t.Fatalf("%d pieces, want 2", len(pieces))
		}
		g, err := vtkfile.Merge(pieces)
		if err != nil {
			t.Fatal(err)
		}
		if g.NumPoints() != 8 || !reflect.DeepEqual(g.Cells, []int32{0, 1, 2, 3, 4, 5, 6, 7}) || g.Type != vtkfile.Quad {
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
			return g.WriteFile(filepath.Join(dir, "m", "m_1.vtu"), vtkfile.ASCII)
		}, `lacks the cell array "id & <kind>"`},
		"not parallel": {func(_, pvtu string) error { return tiny().WriteFile(pvtu, vtkfile.ASCII) }, "PUnstructuredGrid"},
		"no source": {func(_, pvtu string) error {
			return os.WriteFile(pvtu, []byte(`<VTKFile type="PUnstructuredGrid"><PUnstructuredGrid><Piece/></PUnstructuredGrid></VTKFile>`), 0o644)
		}, "no Source"},
	}
	for name, c := range cases {
		dir := t.TempDir()
		pvtu := writePieces(t, dir, split(), vtkfile.ASCII)
		if err := c.spoil(dir, pvtu); err != nil {
			t.Fatal(err)
		}
		_, err := vtkfile.ReadPVTUFile(pvtu)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, c.want)
		}
	}
}

func TestMergeRejects(t *testing.T) {
	cases := map[string]func(p []*vtkfile.Grid){
		"array name": func(p []*vtkfile.Grid) { p[1].CellData[0].Name = "r" },
		"arrays":     func(p []*vtkfile.Grid) { p[1].PointData = nil },
		"value type": func(p []*vtkfile.Grid) { p[1].PointData[0].Values = []float64{1, 1.5, 3, 2.5} },
	}
	for name, spoil := range cases {
		p := split()
		spoil(p)
		if _, err := vtkfile.Merge(p); err == nil || !strings.HasPrefix(err.Error(), "vtk: ") {
			t.Errorf("%s: Merge gave %v, want an error", name, err)
		}
	}
	if _, err := vtkfile.Merge(nil); err == nil {
		t.Error("Merge(nil): no error")
	}
	// A piece without cells (a rank that owns none) merges with any type.
	p := split()
	empty := &vtkfile.Grid{Dim: 2, Type: vtkfile.Line, NodesPerCell: 2,
		CellData:  []vtkfile.Array{{Name: "q", Components: 4, Values: []float64{}}, {Name: "id & <kind>", Components: 1, Values: []int32{}}},
		PointData: []vtkfile.Array{{Name: "t", Components: 1, Values: []float32{}}}}
	if g, err := vtkfile.Merge([]*vtkfile.Grid{empty, p[0], p[1]}); err != nil || g.NumCells() != 2 || g.Type != vtkfile.Quad {
		t.Errorf("merging an empty piece: %v", err)
	}
}

func TestOutputPath(t *testing.T) {
	for _, c := range []struct {
		in    string
		ranks int
		want  string
	}{
		{"out.vtu", 1, "out.vtu"},
		{"dir/out.pvtu", 1, "dir/out.vtu"},
		{"out", 1, "out"},
		{"a.b.vtu", 1, "a.b.vtu"},
		{".pvtu", 1, ".pvtu"},
		{"out.vtu", 2, "out.pvtu"},
		{"dir/out.pvtu", 4, "dir/out.pvtu"},
		{"out", 2, "out.pvtu"},
	} {
		if got := vtkfile.OutputPath(c.in, c.ranks); got != c.want {
			t.Errorf("OutputPath(%q, %d) = %q, want %q", c.in, c.ranks, got, c.want)
		}
	}
}

// TestWriteParallelMissingFolder: a folder of the path that is missing is
// an error on every rank, as on one process, and is not made.
func TestWriteParallelMissingFolder(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "missing", "out.vtu")
	for _, rank := range []int{0, 1} {
		if err := vtkfile.WriteParallel(tiny(), path, vtkfile.ASCII, rank, 2); err == nil {
			t.Errorf("rank %d of 2 wrote under a missing folder", rank)
		}
	}
	if err := vtkfile.WriteParallel(tiny(), path, vtkfile.ASCII, 0, 1); err == nil {
		t.Error("one process wrote under a missing folder")
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); err == nil {
		t.Error("the missing folder was made")
	}
}

// TestWriteParallelRemovesStalePieces: the pieces of ranks past the last
// that a write on more ranks left are removed with the new .pvtu, which
// no longer names them; other files in the folder stay.
func TestWriteParallelRemovesStalePieces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.vtu")
	write := func(ranks int) {
		t.Helper()
		for rank := range ranks {
			if err := vtkfile.WriteParallel(tiny(), path, vtkfile.ASCII, rank, ranks); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(5)
	if err := os.Remove(filepath.Join(dir, "out", "out_3.vtu")); err != nil { // a gap: rank 3 failed
		t.Fatal(err)
	}
	other := filepath.Join(dir, "out", "notes.txt")
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	write(2)
	ents, err := os.ReadDir(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want := []string{"notes.txt", "out_0.vtu", "out_1.vtu"}; !reflect.DeepEqual(names, want) {
		t.Errorf("the pieces' folder after writes on 5 (rank 3's piece missing) and 2 ranks: %v, want %v", names, want)
	}
	pieces, err := vtkfile.ReadPVTUFile(filepath.Join(dir, "out.pvtu"))
	if err != nil || len(pieces) != 2 {
		t.Errorf("the .pvtu: %d pieces, %v; want 2", len(pieces), err)
	}
}
