package vtkfile_test

import (
	"fmt"
	"os"

	"github.com/goop2/op2/vtk/vtkfile"
)

// One triangle with a value on its cell, written as ASCII.
func ExampleGrid_Write() {
	g := &vtkfile.Grid{
		Points: []float64{0, 0, 1, 0, 0, 1}, Dim: 2,
		Cells: []int32{0, 1, 2}, NodesPerCell: 3, Type: vtkfile.Triangle,
		CellData: []vtkfile.Array{{Name: "area", Components: 1, Values: []float64{0.5}}},
	}
	if err := g.Write(os.Stdout, vtkfile.ASCII); err != nil {
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
	piece := &vtkfile.Grid{
		Points: []float64{0, 0, 1, 0, 0, 1}, Dim: 2,
		Cells: []int32{0, 1, 2}, NodesPerCell: 3, Type: vtkfile.Triangle,
		CellData: []vtkfile.Array{{Name: "q", Components: 4, Values: []float64{1, 0, 0, 2}}},
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
