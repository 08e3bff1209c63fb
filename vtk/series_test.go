package vtk_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/goop2/op2/vtk"
)

const seriesPVD = `<?xml version="1.0"?>
<VTKFile type="Collection" version="0.1" byte_order="LittleEndian">
  <Collection>
    <DataSet timestep="0" group="" part="0" file="run_0000.vtu"/>
    <DataSet timestep="0.25" group="" part="0" file="steps/run_0001.pvtu"/>
  </Collection>
</VTKFile>
`

func TestSeries(t *testing.T) {
	dir := t.TempDir()
	pvd := filepath.Join(dir, "run.pvd")
	s := vtk.NewSeries(pvd)
	if err := s.Add(0, filepath.Join(dir, "run_0000.vtu")); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(0.25, filepath.Join(dir, "steps", "run_0001.pvtu")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pvd)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != seriesPVD {
		t.Errorf("got\n%s\nwant\n%s", b, seriesPVD)
	}
	wellFormed(t, b)
	steps, err := vtk.ReadSeriesFile(pvd)
	want := []vtk.Step{{Time: 0, File: "run_0000.vtu"}, {Time: 0.25, File: "steps/run_0001.pvtu"}}
	if err != nil || !reflect.DeepEqual(steps, want) || !reflect.DeepEqual(s.Steps(), want) {
		t.Errorf("read back %v, %v; Steps %v; want %v", steps, err, s.Steps(), want)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("files left in the folder: %v", ents)
	}
	if _, err := vtk.ReadSeriesFile(filepath.Join(dir, "none.pvd")); err == nil {
		t.Error("reading a missing .pvd: no error")
	}
}
