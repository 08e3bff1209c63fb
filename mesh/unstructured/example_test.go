package unstructured_test

import (
	"fmt"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/mesh/unstructured"
)

// Load a Gmsh mesh, compute its geometry, and add up the cells' areas and
// the length of the boundary group "boundary" with loops.
func Example() {
	m, err := unstructured.Load("../gmsh/testdata/square-41-binary.msh", unstructured.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	geo, err := m.Geometry()
	if err != nil {
		fmt.Println(err)
		return
	}
	area, _ := op2.NewGlobal[float64](1, nil, "area")
	sum := op2.NewKernel("void add(const double *v, double *s) { *s += *v; }", "add")
	if err := op2.ParLoop(sum, m.Cells, geo.CellVolume.Arg(op2.Read), area.Arg(op2.Inc)); err != nil {
		fmt.Println(err)
		return
	}
	b, _ := m.Group("boundary")
	length, _ := op2.NewGlobal[float64](1, nil, "length")
	norm := op2.NewKernel("#include <math.h>\nvoid len(const double *a, double *s) { *s += sqrt(a[0] * a[0] + a[1] * a[1]); }", "len")
	if err := op2.ParLoop(norm, b.Boundary[0], geo.Boundary[0].Normal.Arg(op2.Read), length.Arg(op2.Inc)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d %s, %d interior and %d boundary edges\n", m.Cells.GlobalSize(), m.Cells.Name(), m.Interior[0].Set.GlobalSize(), m.Boundary[0].Set.GlobalSize())
	fmt.Printf("area %.12f, boundary length %.12f\n", area.Value(), length.Value())
	// Output:
	// 42 triangles, 55 interior and 16 boundary edges
	// area 1.000000000000, boundary length 4.000000000000
}
