package vtk_test

import (
	"path/filepath"
	"reflect"
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

// TestWriterOneProcess: on one process a Writer writes what FromOP2 and
// the Add functions give, to the .vtu file OutputPath names, with the
// values the Dats hold at each write.
func TestWriterOneProcess(t *testing.T) {
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
		"no name":             vtk.CellDat(w, must(op2.NewDat[float64](cells, 1, nil, ""))),
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
