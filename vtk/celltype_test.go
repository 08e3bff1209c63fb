package vtk_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/mesh/topology"
	"github.com/goop2/op2/mesh/unstructured"
	"github.com/goop2/op2/vtk"
)

// TestNewWriterOfQuadsIn3D: the quadrilateral boundary faces of a 3-D
// mesh, which NewWriter takes for tetrahedra (4 nodes in 3-D), are
// written as quads by NewWriterOf, with their tags, and read back so.
func TestNewWriterOfQuadsIn3D(t *testing.T) {
	m, err := unstructured.Load("../mesh/gmsh/testdata/mixed-41-binary.msh", unstructured.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range m.Boundary {
		if f.Kind != topology.Quadrilateral {
			continue
		}
		w, err := vtk.NewWriterOf(m.X, f.Nodes, vtk.Quad)
		if err != nil {
			t.Fatal(err)
		}
		if err := vtk.CellDat(w, f.Tags); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "quads.vtu")
		if err := w.WriteFile(path, vtk.Binary); err != nil {
			t.Fatal(err)
		}
		g, err := vtk.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if g.Type != vtk.Quad || g.NumCells() != f.Nodes.From().GlobalSize() {
			t.Errorf("read back %d cells of type %d, want %d of type %d (quad)", g.NumCells(), g.Type, f.Nodes.From().GlobalSize(), vtk.Quad)
		}
		if w, err := vtk.NewWriter(m.X, f.Nodes); err != nil {
			t.Fatal(err)
		} else if g, err := w.Piece(); err != nil || g.Type != vtk.Tetra {
			t.Errorf("NewWriter of 4 nodes in 3-D: %v, %v; want tetrahedra (CellTypeFor)", g, err)
		}
		return
	}
	t.Fatal("the mesh has no boundary quadrilaterals")
}

// TestCellKindType: a mixed writer's kind of 4 nodes in 3-D is written
// as quads when its Type says so; a type that does not fit the map or the
// coordinates is refused, naming it.
func TestCellKindType(t *testing.T) {
	nodes := must(op2.NewSet(5, "ck_nodes"))
	x := must(op2.NewDat(nodes, 3, []float64{0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 2, 0, 0}, "ck_x"))
	x2 := must(op2.NewDat(nodes, 2, []float64{0, 0, 1, 0, 1, 1, 0, 1, 2, 0}, "ck_x2"))
	faces := must(op2.NewSet(2, "ck_faces"))
	quads := must(op2.NewSet(1, "ck_quads"))
	tris := must(op2.NewSet(1, "ck_tris"))
	kinds := []vtk.CellKind{
		{Nodes: must(op2.NewMap(quads, nodes, 4, []int32{0, 1, 2, 3}, "ck_qn")), Cells: must(op2.NewMap(quads, faces, 1, []int32{0}, "ck_qc")), Type: vtk.Quad},
		{Nodes: must(op2.NewMap(tris, nodes, 3, []int32{1, 4, 2}, "ck_tn")), Cells: must(op2.NewMap(tris, faces, 1, []int32{1}, "ck_tc"))},
	}
	w, err := vtk.NewMixedWriter(x, faces, kinds)
	if err != nil {
		t.Fatal(err)
	}
	g, err := w.Piece()
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Types) != 2 || g.Types[0] != vtk.Quad || g.Types[1] != vtk.Triangle {
		t.Errorf("types %v, want [%d %d]", g.Types, vtk.Quad, vtk.Triangle)
	}
	for _, c := range []struct {
		coords *op2.Dat[float64]
		typ    vtk.CellType
		want   string
	}{
		{x, vtk.Triangle, "has 3 nodes; the map has 4"},
		{x2, vtk.Tetra, "need 3 coordinates"},
		{x, vtk.CellType(99), "none a Grid holds"},
	} {
		if _, err := vtk.NewWriterOf(c.coords, kinds[0].Nodes, c.typ); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `map "ck_qn"`) {
			t.Errorf("NewWriterOf type %d on %q: %v, want an error saying %q", c.typ, c.coords.Name(), err, c.want)
		}
		k := kinds[0]
		k.Type = c.typ
		if _, err := vtk.NewMixedWriter(c.coords, faces, []vtk.CellKind{k, kinds[1]}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewMixedWriter kind of type %d on %q: %v, want an error saying %q", c.typ, c.coords.Name(), err, c.want)
		}
	}
}
