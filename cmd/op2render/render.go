package main

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"strconv"
)

// viridis is matplotlib's viridis colour map sampled at nine evenly spaced
// points; colours in between are interpolated linearly.
var viridis = [...][3]float64{
	{68, 1, 84}, {71, 44, 122}, {59, 81, 139}, {44, 113, 142}, {33, 144, 141},
	{39, 173, 129}, {92, 200, 99}, {170, 220, 50}, {253, 231, 37},
}

// colormap returns the colour of t in [0,1] (clamped).
func colormap(t float64) color.RGBA {
	if !(t > 0) { // also NaN
		t = 0
	}
	t = min(t, 1) * float64(len(viridis)-1)
	i := min(int(t), len(viridis)-2)
	f := t - float64(i)
	var c [3]uint8
	for k := range c {
		c[k] = uint8(math.Round(viridis[i][k]*(1-f) + viridis[i+1][k]*f))
	}
	return color.RGBA{c[0], c[1], c[2], 255}
}

// Palette indices: levels colours of the map, then the background and ink.
const (
	levels     = 254
	background = levels
	ink        = levels + 1
)

func palette() color.Palette {
	p := make(color.Palette, 0, levels+2)
	for i := 0; i < levels; i++ {
		p = append(p, colormap(float64(i)/(levels-1)))
	}
	return append(p, color.RGBA{255, 255, 255, 255}, color.RGBA{0, 0, 0, 255})
}

// level maps v in [lo,hi] to a palette index.
func level(v, lo, hi float64) uint8 {
	t := 0.5
	if hi > lo {
		t = (v - lo) / (hi - lo)
	}
	if !(t > 0) {
		t = 0
	}
	return uint8(math.Round(min(t, 1) * (levels - 1)))
}

// Window is the part of the plane drawn: x from X0 to X1, y from Y0 to Y1.
type Window struct{ X0, X1, Y0, Y1 float64 }

// String writes w as -window takes it: x0,x1,y0,y1.
func (w Window) String() string {
	return fmt.Sprintf("%g,%g,%g,%g", w.X0, w.X1, w.Y0, w.Y1)
}

// Mesh is what the rasteriser draws: 2-D points, cells as point indices
// (Nodes per cell, or for cells of several kinds from Start), and one
// value per cell.
type Mesh struct {
	XY    []float64 // x, y per point
	Cells []int32
	Nodes int
	// Start holds, for cells of several kinds, where each cell's nodes
	// start in Cells, then len(Cells); nil for cells of Nodes nodes each.
	Start  []int
	Values []float64
}

// numCells is the number of cells.
func (m *Mesh) numCells() int {
	if m.Start != nil {
		return len(m.Start) - 1
	}
	return len(m.Cells) / m.Nodes
}

// cell returns cell c's nodes.
func (m *Mesh) cell(c int) []int32 {
	if m.Start != nil {
		return m.Cells[m.Start[c]:m.Start[c+1]]
	}
	return m.Cells[c*m.Nodes : (c+1)*m.Nodes]
}

// Raster fills the plot area of img (the rectangle r) with the cells of m
// seen through win, coloured by value between lo and hi. A cell is split
// into a fan of triangles from its first node; a pixel belongs to a
// triangle when its centre does (edges included).
func Raster(img *image.Paletted, r image.Rectangle, m *Mesh, win Window, lo, hi float64) {
	w, h := float64(r.Dx()), float64(r.Dy())
	sx, sy := w/(win.X1-win.X0), h/(win.Y1-win.Y0)
	toPixel := func(p int32) (float64, float64) {
		return (m.XY[2*p] - win.X0) * sx, (win.Y1 - m.XY[2*p+1]) * sy
	}
	nc := m.numCells()
	for c := 0; c < nc; c++ {
		idx := level(m.Values[c], lo, hi)
		nodes := m.cell(c)
		ax, ay := toPixel(nodes[0])
		for k := 1; k+1 < len(nodes); k++ {
			bx, by := toPixel(nodes[k])
			cx, cy := toPixel(nodes[k+1])
			fillTriangle(img, r, ax, ay, bx, by, cx, cy, idx)
		}
	}
}

// fillTriangle sets the pixels of r whose centres lie in the triangle
// (coordinates in pixels relative to r's corner) to palette index idx.
func fillTriangle(img *image.Paletted, r image.Rectangle, ax, ay, bx, by, cx, cy float64, idx uint8) {
	x0 := max(int(math.Floor(min(ax, bx, cx)-0.5)), 0)
	x1 := min(int(math.Ceil(max(ax, bx, cx)-0.5)), r.Dx()-1)
	y0 := max(int(math.Floor(min(ay, by, cy)-0.5)), 0)
	y1 := min(int(math.Ceil(max(ay, by, cy)-0.5)), r.Dy()-1)
	if x0 > x1 || y0 > y1 {
		return
	}
	area := (bx-ax)*(cy-ay) - (by-ay)*(cx-ax)
	if area == 0 {
		return
	}
	for y := y0; y <= y1; y++ {
		py := float64(y) + 0.5
		row := img.Pix[(r.Min.Y+y-img.Rect.Min.Y)*img.Stride:]
		for x := x0; x <= x1; x++ {
			px := float64(x) + 0.5
			w0 := (bx-px)*(cy-py) - (by-py)*(cx-px)
			w1 := (cx-px)*(ay-py) - (cy-py)*(ax-px)
			w2 := (ax-px)*(by-py) - (ay-py)*(bx-px)
			if area < 0 {
				w0, w1, w2 = -w0, -w1, -w2
			}
			if w0 >= 0 && w1 >= 0 && w2 >= 0 {
				row[r.Min.X+x-img.Rect.Min.X] = idx
			}
		}
	}
}

// ColourBar draws a vertical colour bar in r (hi at the top) with the
// values lo, the middle and hi written beside it.
func ColourBar(img *image.Paletted, r image.Rectangle, lo, hi float64, label string) {
	bar := image.Rect(r.Min.X, r.Min.Y+24, r.Min.X+24, r.Max.Y-12)
	for y := bar.Min.Y; y < bar.Max.Y; y++ {
		t := float64(bar.Max.Y-1-y) / float64(max(bar.Dy()-1, 1))
		idx := uint8(math.Round(t * (levels - 1)))
		for x := bar.Min.X; x < bar.Max.X; x++ {
			img.SetColorIndex(x, y, idx)
		}
	}
	for x := bar.Min.X - 1; x <= bar.Max.X; x++ {
		img.SetColorIndex(x, bar.Min.Y-1, ink)
		img.SetColorIndex(x, bar.Max.Y, ink)
	}
	for y := bar.Min.Y - 1; y <= bar.Max.Y; y++ {
		img.SetColorIndex(bar.Min.X-1, y, ink)
		img.SetColorIndex(bar.Max.X, y, ink)
	}
	text(img, r.Min.X, r.Min.Y+4, label, 2)
	for _, f := range []float64{1, 0.5, 0} {
		y := bar.Min.Y + int(math.Round((1-f)*float64(bar.Dy()-1)))
		for x := bar.Max.X; x < bar.Max.X+5; x++ {
			img.SetColorIndex(x, y, ink)
		}
		v := lo + f*(hi-lo)
		text(img, bar.Max.X+8, y-5, strconv.FormatFloat(v, 'g', 4, 64), 2)
	}
}

// font is a 3×5 pixel font for numbers and short names: each glyph is
// five rows of three bits, the high bit on the left.
var font = map[rune][5]uint8{
	'0': {7, 5, 5, 5, 7}, '1': {2, 6, 2, 2, 7}, '2': {7, 1, 7, 4, 7}, '3': {7, 1, 3, 1, 7},
	'4': {5, 5, 7, 1, 1}, '5': {7, 4, 7, 1, 7}, '6': {7, 4, 7, 5, 7}, '7': {7, 1, 1, 2, 2},
	'8': {7, 5, 7, 5, 7}, '9': {7, 5, 7, 1, 7}, '.': {0, 0, 0, 0, 2}, '-': {0, 0, 7, 0, 0},
	'+': {0, 2, 7, 2, 0}, 'e': {0, 7, 7, 4, 7}, ' ': {}, '_': {0, 0, 0, 0, 7},
	'a': {0, 6, 3, 5, 7}, 'b': {4, 4, 7, 5, 7}, 'c': {0, 7, 4, 4, 7}, 'd': {1, 1, 7, 5, 7},
	'f': {3, 4, 6, 4, 4}, 'g': {7, 5, 7, 1, 6}, 'h': {4, 4, 7, 5, 5}, 'i': {2, 0, 2, 2, 2},
	'j': {1, 0, 1, 5, 7}, 'k': {4, 5, 6, 6, 5}, 'l': {6, 2, 2, 2, 7}, 'm': {0, 7, 7, 5, 5},
	'n': {0, 6, 5, 5, 5}, 'o': {0, 7, 5, 5, 7}, 'p': {0, 7, 5, 7, 4}, 'q': {0, 7, 5, 7, 1},
	'r': {0, 7, 4, 4, 4}, 's': {0, 7, 6, 1, 7}, 't': {2, 7, 2, 2, 3}, 'u': {0, 5, 5, 5, 7},
	'v': {0, 5, 5, 5, 2}, 'w': {0, 5, 5, 7, 7}, 'x': {0, 5, 2, 2, 5}, 'y': {5, 5, 7, 1, 6},
	'z': {0, 7, 1, 4, 7}, '[': {6, 4, 4, 4, 6}, ']': {3, 1, 1, 1, 3},
}

// text writes s at (x, y) in the 3×5 font scaled by scale; characters
// without a glyph are left blank.
func text(img *image.Paletted, x, y int, s string, scale int) {
	for _, ch := range s {
		g := font[ch]
		if ch >= 'A' && ch <= 'Z' {
			g = font[ch-'A'+'a']
		}
		for row := 0; row < 5; row++ {
			for col := 0; col < 3; col++ {
				if g[row]&(4>>col) == 0 {
					continue
				}
				for dy := 0; dy < scale; dy++ {
					for dx := 0; dx < scale; dx++ {
						img.SetColorIndex(x+col*scale+dx, y+row*scale+dy, ink)
					}
				}
			}
		}
		x += 4 * scale
	}
}

// Render draws m through win into a new image: a plot area width pixels
// wide (the height follows the window's aspect ratio) and, on its right,
// a colour bar labelled with label and the range lo..hi.
func Render(m *Mesh, win Window, width int, lo, hi float64, label string) (*image.Paletted, error) {
	if !(win.X1 > win.X0) || !(win.Y1 > win.Y0) {
		return nil, fmt.Errorf("empty window %s (x0,x1,y0,y1: want x0 < x1 and y0 < y1)", win)
	}
	if width < 16 || width > 20000 {
		return nil, fmt.Errorf("width %d: want 16 to 20000 pixels", width)
	}
	height := int(math.Round(float64(width) * (win.Y1 - win.Y0) / (win.X1 - win.X0)))
	if height < 16 || height > 20000 {
		return nil, fmt.Errorf("the window's aspect ratio makes the picture %d pixels high: want 16 to 20000", height)
	}
	const bar = 130
	barHeight := max(min(height, 400), 120)
	img := image.NewPaletted(image.Rect(0, 0, width+bar, max(height, barHeight)), palette())
	for i := range img.Pix {
		img.Pix[i] = background
	}
	Raster(img, image.Rect(0, 0, width, height), m, win, lo, hi)
	ColourBar(img, image.Rect(width+16, 8, width+bar, barHeight-8), lo, hi, label)
	return img, nil
}
