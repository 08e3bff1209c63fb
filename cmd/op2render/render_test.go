package main

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goop2/op2/vtk/vtkfile"
)

// Two unit squares side by side, values 0 and 1, and a triangle above
// them with value 0.5.
func squares() *vtkfile.Grid {
	return &vtkfile.Grid{
		Points: []float64{0, 0, 1, 0, 2, 0, 0, 1, 1, 1, 2, 1},
		Dim:    2, Cells: []int32{0, 1, 4, 3, 1, 2, 5, 4}, NodesPerCell: 4, Type: vtkfile.Quad,
		CellData:  []vtkfile.Array{{Name: "v", Components: 2, Values: []float64{0, 9, 1, 9}}},
		PointData: []vtkfile.Array{{Name: "u", Components: 1, Values: []float64{0, 1, 2, 3, 4, 5}}},
	}
}

func rgba(c color.Color) color.RGBA {
	r, g, b, a := c.RGBA()
	return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), uint8(a >> 8)}
}

func TestRasterPixels(t *testing.T) {
	m, err := meshOf(squares(), "v", 0)
	if err != nil {
		t.Fatal(err)
	}
	// x from 0 to 2, y from -0.5 to 1.5: 200×200 pixels, 100 per unit.
	img, err := Render(m, Window{0, 2, -0.5, 1.5}, 200, 0, 1, "v")
	if err != nil {
		t.Fatal(err)
	}
	white := color.RGBA{255, 255, 255, 255}
	for _, p := range []struct {
		x, y int
		want color.RGBA
	}{
		{50, 100, colormap(0)},  // (0.5, 0.5): left square
		{150, 100, colormap(1)}, // (1.5, 0.5): right square
		{1, 149, colormap(0)},   // (0.015, 0.005): just inside the corner
		{199, 51, colormap(1)},  // (1.995, 0.985)
		{100, 20, white},        // (1.0, 1.3): above the mesh
		{100, 180, white},       // below the mesh
	} {
		if got := rgba(img.At(p.x, p.y)); got != p.want {
			t.Errorf("pixel (%d,%d) = %v, want %v", p.x, p.y, got, p.want)
		}
	}
	// No gaps: every pixel whose centre lies inside the squares is coloured.
	for y := 50; y < 150; y++ {
		for x := 0; x < 200; x++ {
			if rgba(img.At(x, y)) == white {
				t.Fatalf("pixel (%d,%d) inside the mesh is not drawn", x, y)
			}
		}
	}
	// The colour bar: its top is the top of the map, its bottom the bottom.
	bar := image.Rect(200+16, 8+24, 200+16+24, 200-8-12) // the bar is as high as the plot, up to 400 pixels
	if got := rgba(img.At(bar.Min.X+5, bar.Min.Y)); got != colormap(1) {
		t.Errorf("top of the colour bar %v, want %v", got, colormap(1))
	}
	if got := rgba(img.At(bar.Min.X+5, bar.Max.Y-1)); got != colormap(0) {
		t.Errorf("bottom of the colour bar %v, want %v", got, colormap(0))
	}
}

// A triangle mesh, a value range that clamps, and a mid value.
func TestRasterTriangles(t *testing.T) {
	m := &Mesh{XY: []float64{0, 0, 4, 0, 0, 4}, Cells: []int32{0, 1, 2}, Nodes: 3, Values: []float64{5}}
	img, err := Render(m, Window{0, 4, 0, 4}, 40, 0, 10, "t")
	if err != nil {
		t.Fatal(err)
	}
	mid := rgba(img.Palette[level(5, 0, 10)])
	if got := rgba(img.At(5, 35)); got != mid {
		t.Errorf("inside the triangle %v, want %v", got, mid)
	}
	if got := rgba(img.At(35, 5)); got != (color.RGBA{255, 255, 255, 255}) {
		t.Errorf("outside the triangle (above the diagonal) %v, want white", got)
	}
	if level(-3, 0, 10) != 0 || level(12, 0, 10) != levels-1 || level(7, 7, 7) != level(0.5, 0, 1) {
		t.Error("level does not clamp, or a flat range is not mid-scale")
	}
}

func TestColormapEnds(t *testing.T) {
	if colormap(0) != (color.RGBA{68, 1, 84, 255}) || colormap(1) != (color.RGBA{253, 231, 37, 255}) || colormap(-1) != colormap(0) || colormap(2) != colormap(1) {
		t.Error("viridis ends wrong")
	}
}

// The command end to end: a .vtu in, a PNG out.
func TestRenderFile(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "m.vtu"), filepath.Join(dir, "m.png")
	if err := squares().WriteFile(in, vtkfile.Binary); err != nil {
		t.Fatal(err)
	}
	if err := render(in, out, "v", 1, "", "", 100); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	// Component 1 is 9 everywhere: a flat range, drawn mid-scale.
	if got, want := rgba(img.At(25, 25)), rgba(palette()[level(9, 9, 9)]); got != want {
		t.Errorf("pixel %v, want %v", got, want)
	}
	for _, c := range []struct{ field, window, rng, want string }{
		{"w", "", "", `no cell array "w" (cell arrays: v)`},
		{"u", "", "", `"u" is a point array; op2render draws a cell array (cell arrays: v)`},
		{"v", "0,1,2", "", "-window"},
		{"v", "0,0,0,1", "", "-window 0,0,0,1: an empty window, x1 0 not above x0 0"},
		// As written, saying why (it was Go's struct: {X0:1 X1:0 Y0:0 Y1:1}).
		{"v", "1,0,0,1", "", "-window 1,0,0,1: an empty window, x1 0 not above x0 1 (want x0,x1,y0,y1 with x0 < x1 and y0 < y1)"},
		{"v", "0,1,0.5,-2", "", "-window 0,1,0.5,-2: an empty window, y1 -2 not above y0 0.5"},
		// A window with no cell in it (it drew a blank picture coloured
		// by the whole mesh's range), or touching the mesh along an edge.
		{"v", "100,101,100,101", "", "no cell of the mesh is in window 100,101,100,101 (-window; the mesh spans x0,x1,y0,y1 = 0,2,0,1)"},
		{"v", "100,101,100,101", "0,1", "no cell of the mesh is in window 100,101,100,101"},
		{"v", "2,3,0,1", "", "no cell of the mesh is in window 2,3,0,1"},
		{"v", "", "a,b", "-range"},
		{"v", "", "5,1", "want lo < hi"},
		{"v", "", "1,1", "want lo < hi"},
		{"v", "", "-1e308,1e308", "hi - lo finite"},
	} {
		if err := render(in, out, c.field, 0, c.window, c.rng, 100); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	// A window within one cell, or overlapping the mesh's edge, is drawn.
	for _, w := range []string{"0.2,0.4,0.2,0.4", "1.5,3,-1,0.5"} {
		if err := render(in, out, "v", 0, w, "", 100); err != nil {
			t.Errorf("-window %s: %v", w, err)
		}
	}
	if err := render(in, out, "v", 2, "", "", 100); err == nil || !strings.Contains(err.Error(), "2 components") {
		t.Errorf("component out of range: %v", err)
	}
	if err := render(in, "", "v", 0, "", "", 100); err == nil || !strings.Contains(err.Error(), `-o "": an empty output path`) {
		t.Errorf("-o \"\": %v", err)
	}
	// -o naming the file drawn is refused, the file left as it was.
	before, _ := os.ReadFile(in)
	if err := render(in, dir+"/./m.vtu", "v", 0, "", "", 100); err == nil || !strings.Contains(err.Error(), "-o") || !strings.Contains(err.Error(), "the file drawn "+in) {
		t.Errorf("-o over the input: %v", err)
	}
	if after, _ := os.ReadFile(in); !bytes.Equal(after, before) {
		t.Error("the file drawn changed")
	}
}

// TestDegenerateMesh: a mesh whose points all coincide, or all lie on a
// line x = c or y = c, has no area to draw, and without -window it says
// so in words (it printed Go's struct {X0:0 X1:0 Y0:0 Y1:0}); Render's
// own refusal writes the window as -window takes it.
func TestDegenerateMesh(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		points []float64
		want   string
	}{
		{[]float64{0, 0, 0, 0, 0, 0}, "the mesh's points all lie at (0, 0): its cells have no area to draw"},
		{[]float64{2, 0, 2, 1, 2, 3}, "the mesh's points all have x = 2: its cells have no area to draw"},
		{[]float64{0, -1, 1, -1, 5, -1}, "the mesh's points all have y = -1: its cells have no area to draw"},
		{[]float64{0, 0, math.NaN(), 1, 1, 1}, "point 1 is at (NaN, 1), not a place on the picture: its coordinates must be finite numbers"},
	} {
		g := &vtkfile.Grid{Points: c.points, Dim: 2, Cells: []int32{0, 1, 2}, Type: vtkfile.Triangle, NodesPerCell: 3,
			CellData: []vtkfile.Array{{Name: "mach", Components: 1, Values: []float64{1}}}}
		in := filepath.Join(dir, "d.vtu")
		if err := g.WriteFile(in, vtkfile.ASCII); err != nil {
			t.Fatal(err)
		}
		if err := render(in, filepath.Join(dir, "d.png"), "mach", 0, "", "", 100); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("points %v: %v, want an error saying %q", c.points, err, c.want)
		}
	}
	m := &Mesh{XY: []float64{0, 0, 4, 0, 0, 4}, Cells: []int32{0, 1, 2}, Nodes: 3, Values: []float64{5}}
	if _, err := Render(m, Window{1, 0, 0, 1}, 100, 0, 1, "t"); err == nil || !strings.Contains(err.Error(), "empty window 1,0,0,1 (x0,x1,y0,y1") {
		t.Errorf("Render through an empty window: %v", err)
	}
}

// TestValueRangeSkipsInfinities: a field with an infinite value is
// coloured by its finite values' range (an infinity made every cell the
// lowest colour).
func TestValueRangeSkipsInfinities(t *testing.T) {
	m := &Mesh{XY: []float64{0, 0, 1, 0, 1, 1, 0, 1}, Cells: []int32{0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3}, Nodes: 4,
		Values: []float64{1, math.Inf(1), 3}}
	if lo, hi := valueRange(m, bounds(m)); lo != 1 || hi != 3 {
		t.Errorf("range %v..%v, want 1..3", lo, hi)
	}
}

// TestRenderMixed: a mesh of a quadrilateral and two triangles (VTK's
// cells of mixed types, as `advect -vtk` writes a hybrid square) is drawn
// cell by cell, from a .vtu file and from a .pvtu file of two pieces;
// 3-D cells are refused, saying so.
func TestRenderMixed(t *testing.T) {
	g := &vtkfile.Grid{
		Points: []float64{0, 0, 1, 0, 2, 0, 0, 1, 1, 1, 2, 1}, Dim: 2,
		Cells:    []int32{0, 1, 4, 3, 1, 2, 5, 1, 5, 4},
		Types:    []vtkfile.CellType{vtkfile.Quad, vtkfile.Triangle, vtkfile.Triangle},
		CellData: []vtkfile.Array{{Name: "v", Components: 1, Values: []float64{0, 1, 0.5}}},
	}
	dir := t.TempDir()
	vtu := filepath.Join(dir, "m.vtu")
	if err := g.WriteFile(vtu, vtkfile.Binary); err != nil {
		t.Fatal(err)
	}
	// The pieces: the quadrilateral, and the triangles.
	pieces := []*vtkfile.Grid{
		{Points: []float64{0, 0, 1, 0, 1, 1, 0, 1}, Dim: 2, Cells: []int32{0, 1, 2, 3}, Type: vtkfile.Quad, NodesPerCell: 4,
			CellData: []vtkfile.Array{{Name: "v", Components: 1, Values: []float64{0}}}},
		{Points: []float64{1, 0, 2, 0, 2, 1, 1, 1}, Dim: 2, Cells: []int32{0, 1, 2, 0, 2, 3}, Type: vtkfile.Triangle, NodesPerCell: 3,
			CellData: []vtkfile.Array{{Name: "v", Components: 1, Values: []float64{1, 0.5}}}},
	}
	pvtu := filepath.Join(dir, "p.pvtu")
	for r, p := range pieces {
		if err := vtkfile.WriteParallel(p, pvtu, vtkfile.ASCII, r, 2); err != nil {
			t.Fatal(err)
		}
	}
	for _, in := range []string{vtu, pvtu} {
		out := filepath.Join(dir, "m.png")
		if err := render(in, out, "v", 0, "", "0,1", 100); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		f, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		// (x, y) = (0.5, 0.5) is in the quadrilateral, (1.8, 0.2) in the
		// first triangle, (1.2, 0.8) in the second.
		for _, c := range []struct {
			px, py int
			v      float64
		}{{25, 25, 0}, {90, 40, 1}, {60, 10, 0.5}} {
			if got, want := rgba(img.At(c.px, c.py)), rgba(palette()[level(c.v, 0, 1)]); got != want {
				t.Errorf("%s: pixel (%d, %d) %v, want %v (value %g)", filepath.Base(in), c.px, c.py, got, want, c.v)
			}
		}
	}
	// The .pvtu file under a .vtu name: refused, its pieces counted (it
	// once said "with 0 pieces").
	b, err := os.ReadFile(pvtu)
	if err != nil {
		t.Fatal(err)
	}
	misnamed := filepath.Join(dir, "p.vtu")
	if err := os.WriteFile(misnamed, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := render(misnamed, filepath.Join(dir, "p.png"), "v", 0, "", "", 100); err == nil || !strings.Contains(err.Error(), `a "PUnstructuredGrid" file with 2 pieces`) {
		t.Errorf("a .pvtu file named .vtu: %v, want an error counting its 2 pieces", err)
	}
	tet := &vtkfile.Grid{Points: []float64{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1}, Dim: 3, Cells: []int32{0, 1, 2, 3}, Type: vtkfile.Tetra, NodesPerCell: 4,
		CellData: []vtkfile.Array{{Name: "v", Components: 1, Values: []float64{1}}}}
	in := filepath.Join(dir, "tet.vtu")
	if err := tet.WriteFile(in, vtkfile.ASCII); err != nil {
		t.Fatal(err)
	}
	if err := render(in, filepath.Join(dir, "tet.png"), "v", 0, "", "", 100); err == nil || !strings.Contains(err.Error(), "cell 0 is a 3-D cell (VTK type 10)") {
		t.Errorf("a tetrahedron: %v", err)
	}
}
