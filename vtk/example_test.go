package vtk_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/goop2/op2"
	"github.com/goop2/op2/vtk"
)

// One triangle with a value on its cell, written as ASCII.
func ExampleGrid_Write() {
	g := &vtk.Grid{
		Points: []float64{0, 0, 1, 0, 0, 1}, Dim: 2,
		Cells: []int32{0, 1, 2}, NodesPerCell: 3, Type: vtk.Triangle,
		CellData: []vtk.Array{{Name: "area", Components: 1, Values: []float64{0.5}}},
	}
	if err := g.Write(os.Stdout, vtk.ASCII); err != nil {
		fmt.Println(err)
	}
	// Output:
	// <?xml version="1.0"?>
	// <VTKFile type="UnstructuredGrid" version="1.0" byte_order="LittleEndian" header_type="UInt64">
	//   <UnstructuredGrid>
	//     <Piece NumberOfPoints="3" NumberOfCells="1">
	//       <CellData>
	//         <DataArray type="Float64" Name="area" format="ascii">
	//           0.5
	//         </DataArray>
	//       </CellData>
	//       <Points>
	//         <DataArray type="Float64" Name="Points" NumberOfComponents="3" format="ascii">
	//           0 0 0 1 0 0 0 1 0
	//         </DataArray>
	//       </Points>
	//       <Cells>
	//         <DataArray type="Int32" Name="connectivity" format="ascii">
	//           0 1 2
	//         </DataArray>
	//         <DataArray type="Int64" Name="offsets" format="ascii">
	//           3
	//         </DataArray>
	//         <DataArray type="UInt8" Name="types" format="ascii">
	//           5
	//         </DataArray>
	//       </Cells>
	//     </Piece>
	//   </UnstructuredGrid>
	// </VTKFile>
}

// The .pvtu file of two pieces with a cell array: what rank 0 writes
// under MPI (WriteParallel), the layout taken from a piece.
func ExampleGrid_WritePVTU() {
	piece := &vtk.Grid{
		Points: []float64{0, 0, 1, 0, 0, 1}, Dim: 2,
		Cells: []int32{0, 1, 2}, NodesPerCell: 3, Type: vtk.Triangle,
		CellData: []vtk.Array{{Name: "q", Components: 4, Values: []float64{1, 0, 0, 2}}},
	}
	if err := piece.WritePVTU(os.Stdout, []string{"out/out_0.vtu", "out/out_1.vtu"}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// <?xml version="1.0"?>
	// <VTKFile type="PUnstructuredGrid" version="1.0" byte_order="LittleEndian" header_type="UInt64">
	//   <PUnstructuredGrid GhostLevel="0">
	//     <PCellData>
	//       <PDataArray type="Float64" Name="q" NumberOfComponents="4"/>
	//     </PCellData>
	//     <PPoints>
	//       <PDataArray type="Float64" Name="Points" NumberOfComponents="3"/>
	//     </PPoints>
	//     <Piece Source="out/out_0.vtu"/>
	//     <Piece Source="out/out_1.vtu"/>
	//   </PUnstructuredGrid>
	// </VTKFile>
}

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
