package vtkfile_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/goop2/op2/vtk/vtkfile"
)

// mixed is one cell of each 3-D kind around the unit cube's corners:
// a tetrahedron, a pyramid, a wedge and a hexahedron (the cells overlap;
// only the file's contents matter here), with a value per cell.
func mixed() *vtkfile.Grid {
	return &vtkfile.Grid{
		Points: []float64{0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1},
		Dim:    3,
		Cells: []int32{
			0, 1, 3, 4, // tetra
			0, 1, 2, 3, 6, // pyramid
			0, 3, 1, 4, 7, 5, // wedge
			0, 1, 2, 3, 4, 5, 6, 7, // hexahedron
		},
		Types:     []vtkfile.CellType{vtkfile.Tetra, vtkfile.Pyramid, vtkfile.Wedge, vtkfile.Hexahedron},
		CellData:  []vtkfile.Array{{Name: "q", Components: 2, Values: []float64{1, -1, 2, -2, 3, -3, 4.5, 1e-300}}},
		PointData: []vtkfile.Array{{Name: "id", Components: 1, Values: []int32{0, 1, 2, 3, 4, 5, 6, 7}}},
	}
}

// TestMixedWriteRead: a grid of mixed cells is written with a type and an
// offset per cell and reads back equal in both encodings; a grid whose
// cells are all wedges or all pyramids reads back as a grid of one type.
func TestMixedWriteRead(t *testing.T) {
	for _, enc := range []vtkfile.Encoding{vtkfile.ASCII, vtkfile.Binary} {
		g := mixed()
		var b bytes.Buffer
		if err := g.Write(&b, enc); err != nil {
			t.Fatal(err)
		}
		if enc == vtkfile.ASCII && (!strings.Contains(b.String(), "4 9 15 23") || !strings.Contains(b.String(), "10 14 13 12")) {
			t.Errorf("offsets or types not written:\n%s", b.String())
		}
		got, err := vtkfile.Read(&b)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Mixed() || !reflect.DeepEqual(got.Types, g.Types) || !reflect.DeepEqual(got.Cells, g.Cells) ||
			!reflect.DeepEqual(got.Points, g.Points) || !reflect.DeepEqual(got.CellData, g.CellData) || !reflect.DeepEqual(got.PointData, g.PointData) {
			t.Errorf("encoding %d: read back %+v, wrote %+v", enc, got, g)
		}
		if o := got.Offsets(); !reflect.DeepEqual(o, []int{0, 4, 9, 15, 23}) || got.CellTypeOf(2) != vtkfile.Wedge {
			t.Errorf("offsets %v, cell 2 of type %d", o, got.CellTypeOf(2))
		}
	}
	for _, typ := range []vtkfile.CellType{vtkfile.Wedge, vtkfile.Pyramid} {
		g := &vtkfile.Grid{Points: mixed().Points, Dim: 3, Type: typ, NodesPerCell: typ.Nodes()}
		for i := range 2 * typ.Nodes() {
			g.Cells = append(g.Cells, int32(i%8))
		}
		var b bytes.Buffer
		if err := g.Write(&b, vtkfile.Binary); err != nil {
			t.Fatal(err)
		}
		got, err := vtkfile.Read(&b)
		if err != nil || got.Mixed() || got.Type != typ || got.NodesPerCell != typ.Nodes() || !reflect.DeepEqual(got.Cells, g.Cells) {
			t.Errorf("type %d: read back %+v, %v", typ, got, err)
		}
	}
}

// TestMixedMerge: pieces of different types, or of mixed cells, merge
// into a grid with a type per cell, in the pieces' order.
func TestMixedMerge(t *testing.T) {
	m := mixed()
	tet := &vtkfile.Grid{Points: m.Points[:12], Dim: 3, Cells: []int32{0, 1, 2, 3}, Type: vtkfile.Tetra, NodesPerCell: 4,
		CellData: []vtkfile.Array{{Name: "q", Components: 2, Values: []float64{7, 8}}}}
	m.PointData = nil
	for name, c := range map[string]struct {
		pieces []*vtkfile.Grid
		types  []vtkfile.CellType
	}{
		"tetra and mixed": {[]*vtkfile.Grid{tet, m}, []vtkfile.CellType{vtkfile.Tetra, vtkfile.Tetra, vtkfile.Pyramid, vtkfile.Wedge, vtkfile.Hexahedron}},
		"mixed and tetra": {[]*vtkfile.Grid{m, tet}, []vtkfile.CellType{vtkfile.Tetra, vtkfile.Pyramid, vtkfile.Wedge, vtkfile.Hexahedron, vtkfile.Tetra}},
		"tetra and quad": {[]*vtkfile.Grid{tet, {Points: m.Points[:12], Dim: 3, Cells: []int32{0, 1, 2, 3}, Type: vtkfile.Quad, NodesPerCell: 4,
			CellData: []vtkfile.Array{{Name: "q", Components: 2, Values: []float64{9, 9}}}}}, []vtkfile.CellType{vtkfile.Tetra, vtkfile.Quad}},
	} {
		g, err := vtkfile.Merge(c.pieces)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(g.Types, c.types) || g.NumPoints() != c.pieces[0].NumPoints()+c.pieces[1].NumPoints() {
			t.Errorf("%s: types %v, %d points", name, g.Types, g.NumPoints())
		}
		// The second piece's cells name its own points, shifted.
		o := g.Offsets()
		first := c.pieces[0].NumCells()
		if p := g.Cells[o[first]]; int(p) != c.pieces[0].NumPoints()+int(c.pieces[1].Cells[0]) {
			t.Errorf("%s: the second piece's first cell starts at point %d", name, p)
		}
	}
}

// TestMixedRejects: a grid of mixed cells whose types, connectivity or
// shape disagree is refused on writing, and a file whose offsets or types
// are wrong on reading, with errors saying what is wrong.
func TestMixedRejects(t *testing.T) {
	for name, c := range map[string]struct {
		spoil func(g *vtkfile.Grid)
		want  string
	}{
		"unknown type":   {func(g *vtkfile.Grid) { g.Types[1] = 42 }, "cell 1 has type 42"},
		"short cells":    {func(g *vtkfile.Grid) { g.Cells = g.Cells[:22] }, "22 cell entries for 4 cells"},
		"nodes per cell": {func(g *vtkfile.Grid) { g.NodesPerCell = 4 }, "NodesPerCell 4"},
		"point":          {func(g *vtkfile.Grid) { g.Cells[10] = 8 }, "cell 2, node 1 is point 8"},
		"cell values":    {func(g *vtkfile.Grid) { g.Types = g.Types[:3]; g.Cells = g.Cells[:15] }, `cell array "q" has 8 values, want 6`},
	} {
		g := mixed()
		c.spoil(g)
		if err := g.Write(&bytes.Buffer{}, vtkfile.ASCII); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error saying %q", name, err, c.want)
		}
	}
	var b bytes.Buffer
	if err := mixed().Write(&b, vtkfile.ASCII); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct{ old, new, want string }{
		"offset":   {"4 9 15 23", "4 9 14 23", "cell 2 of type 13 ends at offset 14; its nodes end at 15"},
		"type":     {"10 14 13 12", "10 14 42 12", "cell type 42 is not supported"},
		"polygon":  {"10 14 13 12", "10 14 7 12", "cell type 7 is not supported"},
		"too many": {"4 9 15 23", "4 9 15 22", "cell 3 of type 12 ends at offset 22"},
	} {
		s := b.String()
		if !strings.Contains(s, c.old) {
			t.Fatalf("%s: %q not in the file", name, c.old)
		}
		if _, err := vtkfile.Read(strings.NewReader(strings.Replace(s, c.old, c.new, 1))); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error saying %q", name, err, c.want)
		}
	}
}
