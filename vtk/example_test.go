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

// A Writer of mixed cells writes a mesh whose cells are of several kinds,
// with one Dat over all its cells: here a square of a quadrilateral and
// two triangles, declared as mesh/unstructured declares a hybrid mesh (a
// set of all cells, and per kind a set with its maps to the nodes and to
// the cells).
func ExampleNewMixedWriter() {
	nodes, _ := op2.NewSet(6, "mixed_nodes")
	x, _ := op2.NewDat(nodes, 2, []float64{0, 0, 1, 0, 2, 0, 0, 1, 1, 1, 2, 1}, "mixed_x")
	cells, _ := op2.NewSet(3, "mixed_cells")
	q, _ := op2.NewDat(cells, 1, []float64{10, 20, 30}, "q")
	quads, _ := op2.NewSet(1, "mixed_quads")
	tris, _ := op2.NewSet(2, "mixed_tris")
	quadNodes, _ := op2.NewMap(quads, nodes, 4, []int32{0, 1, 4, 3}, "quad_nodes")
	quadCells, _ := op2.NewMap(quads, cells, 1, []int32{1}, "quad_cells")
	triNodes, _ := op2.NewMap(tris, nodes, 3, []int32{1, 2, 5, 1, 5, 4}, "tri_nodes")
	triCells, _ := op2.NewMap(tris, cells, 1, []int32{0, 2}, "tri_cells")

	w, err := vtk.NewMixedWriter(x, cells, []vtk.CellKind{{Nodes: quadNodes, Cells: quadCells}, {Nodes: triNodes, Cells: triCells}})
	if err == nil {
		err = vtk.CellDat(w, q)
	}
	dir, _ := os.MkdirTemp("", "vtk")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "square.vtu")
	if err == nil {
		err = w.WriteFile(path, vtk.ASCII)
	}
	g, err2 := vtk.ReadFile(path)
	if err != nil || err2 != nil {
		fmt.Println(err, err2)
		return
	}
	o, v := g.Offsets(), g.CellArray("q").Float64s()
	for c := range g.NumCells() {
		fmt.Println("cell", c, "type", g.CellTypeOf(c), "nodes", g.Cells[o[c]:o[c+1]], "q", v[c])
	}
	// Output:
	// cell 0 type 5 nodes [1 2 5] q 10
	// cell 1 type 9 nodes [0 1 4 3] q 20
	// cell 2 type 5 nodes [1 5 4] q 30
}
