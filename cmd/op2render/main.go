// Command op2render draws a picture (PNG) of a field on the cells of a 2-D
// mesh stored in a VTK XML UnstructuredGrid file, such as the one
// `airfoil -vtk` writes, using nothing but Go's standard library: every
// cell is filled with the colour of its value on a viridis colour map,
// and a colour bar on the right gives the scale. The cells are triangles
// and quadrilaterals, of one kind or mixed (as `advect -vtk` writes a
// hybrid square); a .pvtu file's pieces are drawn together.
//
// Usage:
//
//	op2render [-field mach] [-component 0] [-window x0,x1,y0,y1] [-width 900]
//	          [-range lo,hi] [-o picture.png] FILE.vtu|FILE.pvtu
//
// -window chooses the part of the plane to draw (default: the whole mesh;
// the Airfoil aerofoil lies between x = 0 and x = 1 around y = 0, so
// -window -0.4,1.4,-0.45,0.45 focuses on it; a window that no cell of the
// mesh reaches into is refused); -range fixes the colour scale
// (default: the values of the cells inside the window).
//
// Example, from the repository root:
//
//	go run ./cmd/airfoil -backend openmp -vtk airfoil.vtu
//	go run ./cmd/op2render -field mach -window -0.4,1.4,-0.45,0.45 -o docs/airfoil-mach.png airfoil.vtu
package main

import (
	"flag"
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/goop2/op2/internal/regfile"
	"github.com/goop2/op2/vtk/vtkfile"
)

func main() {
	regfile.RemoveOnSignal() // ^C leaves no half-written output
	var (
		field  = flag.String("field", "mach", "name of the cell array to draw")
		comp   = flag.Int("component", 0, "component of the array to draw (0-based)")
		window = flag.String("window", "", "x0,x1,y0,y1: the part of the plane to draw (default: the whole mesh)")
		rng    = flag.String("range", "", "lo,hi: the values at the ends of the colour map (default: those of the cells in the window)")
		width  = flag.Int("width", 900, "width of the drawing in pixels (the colour bar is added on the right)")
		out    = flag.String("o", "picture.png", "PNG file to write")
	)
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: op2render [flags] FILE.vtu|FILE.pvtu\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if err := regfile.EmptyOutput(flag.CommandLine, "o"); err != nil {
		fmt.Fprintln(os.Stderr, "op2render:", err)
		os.Exit(2)
	}
	if flag.NArg() != 1 {
		switch {
		case flag.NArg() == 0:
			fmt.Fprintln(os.Stderr, "op2render: no file to draw")
		case strings.HasPrefix(flag.Arg(1), "-"):
			fmt.Fprintf(os.Stderr, "op2render: flags after the file (%s): put them before it\n", flag.Arg(1))
		default:
			fmt.Fprintf(os.Stderr, "op2render: one file at a time, not %q\n", flag.Args())
		}
		flag.Usage()
		os.Exit(2)
	}
	if err := render(flag.Arg(0), *out, *field, *comp, *window, *rng, *width); err != nil {
		fmt.Fprintln(os.Stderr, "op2render:", err)
		os.Exit(1)
	}
}

// numbers parses n comma-separated numbers.
func numbers(s string, n int, what string) ([]float64, error) {
	parts := strings.Split(s, ",")
	if len(parts) != n {
		return nil, fmt.Errorf("%s %q: want %d comma-separated numbers", what, s, n)
	}
	v := make([]float64, n)
	for i, p := range parts {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%s %q: %q is not a number", what, s, p)
		}
		v[i] = f
	}
	return v, nil
}

func render(in, out, field string, comp int, window, rng string, width int) error {
	if out == "" {
		return fmt.Errorf("-o \"\": an empty output path names no file")
	}
	if err := regfile.CheckOutputs([]regfile.Named{{Flag: "the file drawn", Path: in}}, []regfile.Named{{Flag: "-o", Path: out}}); err != nil {
		return err
	}
	g, err := read(in)
	if err != nil {
		return err
	}
	m, err := meshOf(g, field, comp)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	win := bounds(m)
	if window != "" {
		w, err := numbers(window, 4, "-window")
		if err != nil {
			return err
		}
		win = Window{w[0], w[1], w[2], w[3]}
	}
	if err := checkWindow(m, win, window); err != nil {
		return err
	}
	lo, hi := valueRange(m, win)
	if rng != "" {
		r, err := numbers(rng, 2, "-range")
		if err != nil {
			return err
		}
		if !(r[0] < r[1]) || math.IsInf(r[1]-r[0], 0) {
			return fmt.Errorf("-range %q: want lo < hi, hi - lo finite", rng)
		}
		lo, hi = r[0], r[1]
	}
	label := field
	if a := g.CellArray(field); a.Components > 1 {
		label = fmt.Sprintf("%s[%d]", field, comp)
	}
	img, err := Render(m, win, width, lo, hi, label)
	if err != nil {
		return err
	}
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	return regfile.WriteWith(out, "", func(w io.Writer) error { return enc.Encode(w, img) })
}

// read reads a .vtu file, or a .pvtu file's pieces merged into one grid.
func read(path string) (*vtkfile.Grid, error) {
	if !strings.HasSuffix(path, ".pvtu") {
		return vtkfile.ReadFile(path)
	}
	pieces, err := vtkfile.ReadPVTUFile(path)
	if err != nil {
		return nil, err
	}
	g, err := vtkfile.Merge(pieces)
	if err != nil {
		return nil, fmt.Errorf("%w (merging the pieces of %s)", err, path)
	}
	return g, nil
}

// meshOf takes the 2-D mesh and one component of a cell array from g.
func meshOf(g *vtkfile.Grid, field string, comp int) (*Mesh, error) {
	a := g.CellArray(field)
	if a == nil {
		var names []string
		for _, c := range g.CellData {
			names = append(names, c.Name)
		}
		have := "cell arrays: " + strings.Join(names, ", ")
		if len(names) == 0 {
			have = "the file has no cell arrays"
		}
		for _, p := range g.PointData {
			if p.Name == field {
				return nil, fmt.Errorf("%q is a point array; op2render draws a cell array (%s)", field, have)
			}
		}
		return nil, fmt.Errorf("no cell array %q (%s)", field, have)
	}
	if comp < 0 || comp >= a.Components {
		return nil, fmt.Errorf("cell array %q has %d components; -component %d is not one of them", field, a.Components, comp)
	}
	if g.NumCells() == 0 {
		return nil, fmt.Errorf("the mesh has no cells to draw")
	}
	if !g.Mixed() && g.NodesPerCell < 3 {
		return nil, fmt.Errorf("cells of %d nodes have no area to draw", g.NodesPerCell)
	}
	for c := range g.NumCells() {
		switch t := g.CellTypeOf(c); t {
		case vtkfile.Line:
			return nil, fmt.Errorf("cell %d is a line (VTK type %d): it has no area to draw", c, t)
		case vtkfile.Tetra, vtkfile.Pyramid, vtkfile.Wedge, vtkfile.Hexahedron:
			return nil, fmt.Errorf("cell %d is a 3-D cell (VTK type %d): op2render draws the triangles and quadrilaterals of 2-D meshes", c, t)
		}
	}
	np := g.NumPoints()
	m := &Mesh{XY: make([]float64, 2*np), Cells: g.Cells, Nodes: g.NodesPerCell, Values: make([]float64, g.NumCells())}
	if g.Mixed() {
		m.Start = g.Offsets()
	}
	for i := 0; i < np; i++ {
		m.XY[2*i] = g.Points[g.Dim*i]
		if g.Dim > 1 {
			m.XY[2*i+1] = g.Points[g.Dim*i+1]
		}
		for _, v := range m.XY[2*i : 2*i+2] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("point %d is at (%g, %g), not a place on the picture: its coordinates must be finite numbers", i, m.XY[2*i], m.XY[2*i+1])
			}
		}
	}
	v := a.Float64s()
	for c := range m.Values {
		m.Values[c] = v[c*a.Components+comp]
	}
	return m, nil
}

// checkWindow refuses a window with no area, or with no cell of m in it,
// which would draw a blank picture: window is -window as given, "" for
// win the mesh's bounds.
func checkWindow(m *Mesh, win Window, window string) error {
	if window != "" {
		for _, a := range []struct {
			lo, hi   float64
			loN, hiN string
		}{{win.X0, win.X1, "x0", "x1"}, {win.Y0, win.Y1, "y0", "y1"}} {
			if !(a.hi > a.lo) {
				return fmt.Errorf("-window %s: an empty window, %s %g not above %s %g (want x0,x1,y0,y1 with x0 < x1 and y0 < y1)", window, a.hiN, a.hi, a.loN, a.lo)
			}
		}
		if !overlaps(m, win) {
			return fmt.Errorf("no cell of the mesh is in window %s (-window; the mesh spans x0,x1,y0,y1 = %s)", window, bounds(m))
		}
		return nil
	}
	// The mesh's bounds: empty only if its cells have no area.
	switch {
	case !(win.X1 > win.X0) && !(win.Y1 > win.Y0):
		return fmt.Errorf("the mesh's points all lie at (%g, %g): its cells have no area to draw", win.X0, win.Y0)
	case !(win.X1 > win.X0):
		return fmt.Errorf("the mesh's points all have x = %g: its cells have no area to draw", win.X0)
	case !(win.Y1 > win.Y0):
		return fmt.Errorf("the mesh's points all have y = %g: its cells have no area to draw", win.Y0)
	}
	return nil
}

// overlaps reports whether a cell of m has its bounding box overlapping
// win (more than along an edge).
func overlaps(m *Mesh, win Window) bool {
	for c := range m.numCells() {
		b := Window{math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)}
		for _, p := range m.cell(c) {
			x, y := m.XY[2*p], m.XY[2*p+1]
			b.X0, b.X1 = min(b.X0, x), max(b.X1, x)
			b.Y0, b.Y1 = min(b.Y0, y), max(b.Y1, y)
		}
		if b.X0 < win.X1 && b.X1 > win.X0 && b.Y0 < win.Y1 && b.Y1 > win.Y0 {
			return true
		}
	}
	return false
}

// bounds is the smallest window holding every point.
func bounds(m *Mesh) Window {
	w := Window{math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)}
	for i := 0; i+1 < len(m.XY); i += 2 {
		w.X0, w.X1 = min(w.X0, m.XY[i]), max(w.X1, m.XY[i])
		w.Y0, w.Y1 = min(w.Y0, m.XY[i+1]), max(w.Y1, m.XY[i+1])
	}
	return w
}

// valueRange is the range of the values of the cells with a node inside
// the window (all cells when none has).
func valueRange(m *Mesh, win Window) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for c, v := range m.Values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue // drawn at the map's ends; the range is the finite values'
		}
		for _, p := range m.cell(c) {
			x, y := m.XY[2*p], m.XY[2*p+1]
			if x >= win.X0 && x <= win.X1 && y >= win.Y0 && y <= win.Y1 {
				lo, hi = min(lo, v), max(hi, v)
				break
			}
		}
	}
	if lo > hi {
		for _, v := range m.Values {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	if lo > hi {
		return 0, 1
	}
	return lo, hi
}
