package vtk_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/goop2/op2"
	"github.com/goop2/op2/vtk"
)

// A Writer writes a mesh declared to GoOP2 the same way on one process
// (out.vtu) and under MPI (out.pvtu and a piece per rank), here each
// step of a time series listed in run.pvd.
func ExampleWriter() {
	nodes, _ := op2.NewSet(4, "example_nodes")
	cells, _ := op2.NewSet(2, "example_cells")
	tri, _ := op2.NewMap(cells, nodes, 3, []int32{0, 1, 2, 1, 3, 2}, "tri")
	x, _ := op2.NewDat(nodes, 2, []float64{0, 0, 1, 0, 0, 1, 1, 1}, "x")
	u, _ := op2.NewDat(nodes, 1, []float64{0, 1, 2, 3}, "u")

	w, err := vtk.NewWriter(x, tri)
	if err == nil {
		err = vtk.PointDat(w, u)
	}
	dir, _ := os.MkdirTemp("", "vtk")
	defer os.RemoveAll(dir)
	s := vtk.NewSeries(filepath.Join(dir, "run.pvd"))
	for step := 0; step < 3 && err == nil; step++ {
		// ... loops changing u ...
		path := filepath.Join(dir, fmt.Sprintf("run_%04d.vtu", step))
		if err = w.WriteFile(path, vtk.Binary); err == nil {
			err = s.Add(float64(step)*0.1, vtk.OutputPath(path))
		}
	}
	if err != nil {
		fmt.Println(err)
	}
	for _, st := range s.Steps() {
		fmt.Println(st.Time, st.File)
	}
	// Output:
	// 0 run_0000.vtu
	// 0.1 run_0001.vtu
	// 0.2 run_0002.vtu
}
