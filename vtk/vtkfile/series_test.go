package vtkfile_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/goop2/op2/vtk/vtkfile"
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
	s := vtkfile.NewSeries(pvd)
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
	steps, err := vtkfile.ReadSeriesFile(pvd)
	want := []vtkfile.Step{{Time: 0, File: "run_0000.vtu"}, {Time: 0.25, File: "steps/run_0001.pvtu"}}
	if err != nil || !reflect.DeepEqual(steps, want) || !reflect.DeepEqual(s.Steps(), want) {
		t.Errorf("read back %v, %v; Steps %v; want %v", steps, err, s.Steps(), want)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("files left in the folder: %v", ents)
	}
	if _, err := vtkfile.ReadSeriesFile(filepath.Join(dir, "none.pvd")); err == nil {
		t.Error("reading a missing .pvd: no error")
	}
}

// TestSeriesContinued: a series written into a subfolder, with its files
// named relative to the working folder, is opened again after a
// "restart" (OpenSeries), truncated to the checkpoint's time and
// continued: the .pvd lists every step once, in order, and every file it
// names resolves, from the .pvd's folder, to a file the program wrote.
func TestSeriesContinued(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.Mkdir("out", 0o755); err != nil {
		t.Fatal(err)
	}
	const pvd = "out/run.pvd"
	write := func(s *vtkfile.Series, step int) {
		t.Helper()
		p := fmt.Sprintf("out/run_%04d.vtu", step)
		if err := os.WriteFile(p, []byte("<VTKFile/>\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := s.Add(float64(step)/10, p); err != nil {
			t.Fatal(err)
		}
	}
	s := vtkfile.NewSeries(pvd)
	for step := range 3 {
		write(s, step)
	}
	// The run stopped after step 2; it restarts from a checkpoint of
	// step 1 and writes step 2 again, then step 3.
	s, err := vtkfile.OpenSeries(pvd)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Steps()) != 3 {
		t.Fatalf("opened %v, want 3 steps", s.Steps())
	}
	s.Truncate(0.1)
	for step := 2; step < 4; step++ {
		write(s, step)
	}
	steps, err := vtkfile.ReadSeriesFile(pvd)
	if err != nil {
		t.Fatal(err)
	}
	var want []vtkfile.Step
	for step := range 4 {
		want = append(want, vtkfile.Step{Time: float64(step) / 10, File: fmt.Sprintf("run_%04d.vtu", step)})
	}
	if !reflect.DeepEqual(steps, want) {
		t.Errorf("read back %v, want %v", steps, want)
	}
	for _, st := range steps {
		if _, err := os.Stat(filepath.Join(filepath.Dir(pvd), st.File)); err != nil {
			t.Errorf("step %g: file %q does not resolve from the .pvd's folder: %v", st.Time, st.File, err)
		}
	}
	// A series that does not exist yet opens empty.
	if s, err := vtkfile.OpenSeries("out/none.pvd"); err != nil || len(s.Steps()) != 0 {
		t.Errorf("OpenSeries of a missing file: %v, %v", s.Steps(), err)
	}
	if err := os.WriteFile("out/bad.pvd", []byte("not xml"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := vtkfile.OpenSeries("out/bad.pvd"); err == nil {
		t.Error("OpenSeries of a broken file: no error")
	}
}

// TestSeriesRank: with Rank set, only rank 0 writes the .pvd file; every
// rank keeps the steps.
func TestSeriesRank(t *testing.T) {
	dir := t.TempDir()
	for rank, want := range []bool{true, false} {
		pvd := filepath.Join(dir, fmt.Sprintf("rank%d.pvd", rank))
		s := vtkfile.NewSeries(pvd)
		s.Rank = func() int { return rank }
		if err := s.Add(0, "a.vtu"); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(pvd); (err == nil) != want || len(s.Steps()) != 1 {
			t.Errorf("rank %d: %s written: %v, want %v; steps %v", rank, pvd, err == nil, want, s.Steps())
		}
	}
}
