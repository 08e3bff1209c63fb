package vtk_test

import (
	"fmt"
	"os"

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
