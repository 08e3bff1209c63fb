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

// A mixed mesh (mesh/gmsh's fixture: prisms beside hexahedra): cell data
// is one Dat on m.Cells; a loop that needs a cell's nodes runs over each
// kind's set, reading the nodes through CellKind.Nodes and writing the
// cell's value through CellKind.Cells. Here each cell's lowest z, then the
// cells whose lowest z is 0 counted over m.Cells.
func ExampleCellKind() {
	m, err := unstructured.Load("../gmsh/testdata/mixed-41-binary.msh", unstructured.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	low, _ := op2.NewDat[float64](m.Cells, 1, nil, "low")
	for _, ck := range m.CellKinds {
		n := ck.Kind.Nodes()
		src := fmt.Sprintf(`void low_%[1]d(const double *x[%[1]d], double *z) {
  *z = x[0][2];
  for (int i = 1; i < %[1]d; i++) *z = x[i][2] < *z ? x[i][2] : *z;
}`, n)
		k := op2.NewKernel(src, fmt.Sprintf("low_%d", n))
		if err := op2.ParLoop(k, ck.Set, m.X.ArgVec(op2.Read, ck.Nodes), low.ArgMap(op2.Write, ck.Cells, 0)); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%d %s\n", ck.Set.GlobalSize(), ck.Kind.Plural())
	}
	bottom, _ := op2.NewGlobal[float64](1, nil, "bottom")
	count := op2.NewKernel("void on_bottom(const double *z, double *n) { if (*z == 0) *n += 1; }", "on_bottom")
	if err := op2.ParLoop(count, m.Cells, low.Arg(op2.Read), bottom.Arg(op2.Inc)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d %s (kind %d), %g on the bottom\n", m.Cells.GlobalSize(), m.Cells.Name(), m.Kind, bottom.Value())
	// Output:
	// 4 hexahedra
	// 14 prisms
	// 18 cells (kind 0), 18 on the bottom
}
