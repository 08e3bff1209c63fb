package probe_test

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/vtk"
)

func TestVTKEmptyMesh(t *testing.T) {
	nodes := must(op2.NewSet(0, "n"))
	cells := must(op2.NewSet(0, "c"))
	m := must(op2.NewMap(cells, nodes, 3, nil, "m"))
	x := must(op2.NewDat[float64](nodes, 2, nil, "x"))
	q := must(op2.NewDat[float64](cells, 4, nil, "q"))
	g, err := vtk.FromOP2(x, m)
	check(t, err)
	check(t, vtk.AddCellDat(g, q))
	for _, enc := range []vtk.Encoding{vtk.ASCII, vtk.Binary} {
		var buf bytes.Buffer
		check(t, g.Write(&buf, enc))
		g2, err := vtk.Read(&buf)
		if err != nil {
			t.Fatalf("reading an empty mesh back (enc %d): %v\n%s", enc, err, buf.String())
		}
		if g2.NumCells() != 0 || g2.NumPoints() != 0 || g2.CellArray("q") == nil {
			t.Errorf("empty round trip: %+v", g2)
		}
	}
}

func TestVTKSpecialValuesAndNames(t *testing.T) {
	for _, enc := range []vtk.Encoding{vtk.ASCII, vtk.Binary} {
		g := &vtk.Grid{Points: []float64{0, 0, 1, 0, 0, 1}, Dim: 2, Cells: []int32{0, 1, 2}, NodesPerCell: 3, Type: vtk.Triangle}
		nan := math.NaN()
		g.CellData = []vtk.Array{
			{Name: `a "quoted" <name> & more`, Components: 3, Values: []float64{nan, math.Inf(1), -math.MaxFloat64}},
			{Name: "i64", Components: 1, Values: []int64{math.MinInt64}},
			{Name: "u32", Components: 1, Values: []uint32{math.MaxUint32}},
			{Name: "f32", Components: 2, Values: []float32{float32(math.Inf(-1)), math.SmallestNonzeroFloat32}},
		}
		g.PointData = []vtk.Array{{Name: "p", Components: 1, Values: []float64{5e-324, math.Copysign(0, -1), 1e308}}}
		var buf bytes.Buffer
		check(t, g.Write(&buf, enc))
		g2, err := vtk.Read(&buf)
		if err != nil {
			t.Fatalf("enc %d: %v\n%s", enc, err, buf.String())
		}
		a := g2.CellArray(`a "quoted" <name> & more`)
		if a == nil {
			t.Fatalf("enc %d: name lost: %+v", enc, g2.CellData)
		}
		v := a.Float64s()
		if !math.IsNaN(v[0]) || !math.IsInf(v[1], 1) || v[2] != -math.MaxFloat64 {
			t.Errorf("enc %d: special doubles %v", enc, v)
		}
		if got := g2.CellArray("i64").Values; !slices.Equal(got.([]int64), []int64{math.MinInt64}) {
			t.Errorf("enc %d: int64 %v", enc, got)
		}
		if got := g2.CellArray("u32").Values; !slices.Equal(got.([]uint32), []uint32{math.MaxUint32}) {
			t.Errorf("enc %d: uint32 %v", enc, got)
		}
		f := g2.CellArray("f32").Values.([]float32)
		if !math.IsInf(float64(f[0]), -1) || f[1] != math.SmallestNonzeroFloat32 {
			t.Errorf("enc %d: float32 %v", enc, f)
		}
		p := g2.PointArray("p").Float64s()
		if p[0] != 5e-324 || p[2] != 1e308 {
			t.Errorf("enc %d: point values %v", enc, p)
		}
	}
}

// A dat whose name needs escaping, written via FromOP2 and AddCellDat, from the opencl backend.
func TestVTKFromDeviceDat(t *testing.T) {
	each(t, func(t *testing.T, b bk) {
		nodes := must(op2.NewSet(4, "n"))
		cells := must(op2.NewSet(2, "c"))
		m := must(op2.NewMap(cells, nodes, 3, []int32{0, 1, 2, 1, 3, 2}, "m"))
		x := must(op2.NewDat(nodes, 2, []float64{0, 0, 1, 0, 0, 1, 1, 1}, "x"))
		q := must(op2.NewDat(cells, 1, []float64{1, 2}, "q&<"))
		check(t, op2.ParLoop(kScale, cells, q.Arg(op2.RW))) // 3 5, device-only on opencl
		g, err := vtk.FromOP2(x, m)
		check(t, err)
		check(t, vtk.AddCellDat(g, q))
		var buf bytes.Buffer
		check(t, g.Write(&buf, vtk.Binary))
		g2, err := vtk.Read(&buf)
		check(t, err)
		if a := g2.CellArray("q&<"); a == nil || !slices.Equal(a.Float64s(), []float64{3, 5}) {
			t.Errorf("cell array %+v", a)
		}
		if g2.Type != vtk.Triangle {
			t.Errorf("type %v", g2.Type)
		}
	})
}

func buildTool(t *testing.T, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	out, err := exec.Command("go", "build", "-o", bin, "github.com/goop2/op2/"+pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// op2render on tiny meshes: must either draw or say why, never crash.
func TestOp2RenderTinyMeshes(t *testing.T) {
	bin := buildTool(t, "cmd/op2render")
	dir := t.TempDir()
	cases := map[string]*vtk.Grid{
		"one-triangle": {Points: []float64{0, 0, 1, 0, 0, 1}, Dim: 2, Cells: []int32{0, 1, 2}, NodesPerCell: 3, Type: vtk.Triangle,
			CellData: []vtk.Array{{Name: "f", Components: 1, Values: []float64{7}}}},
		"one-quad-nan": {Points: []float64{0, 0, 1, 0, 1, 1, 0, 1}, Dim: 2, Cells: []int32{0, 1, 2, 3}, NodesPerCell: 4, Type: vtk.Quad,
			CellData: []vtk.Array{{Name: "f", Components: 1, Values: []float64{math.NaN()}}}},
		"no-cells": {Points: []float64{0, 0, 1, 1}, Dim: 2, Cells: nil, NodesPerCell: 3, Type: vtk.Triangle,
			CellData: []vtk.Array{{Name: "f", Components: 1, Values: []float64{}}}},
		"empty": {Points: nil, Dim: 2, Cells: nil, NodesPerCell: 3, Type: vtk.Triangle,
			CellData: []vtk.Array{{Name: "f", Components: 1, Values: []float64{}}}},
		"flat": {Points: []float64{0, 0, 1, 0, 2, 0}, Dim: 2, Cells: []int32{0, 1, 2}, NodesPerCell: 3, Type: vtk.Triangle,
			CellData: []vtk.Array{{Name: "f", Components: 1, Values: []float64{1}}}},
		"thin": {Points: []float64{0, 0, 1, 0, 0, 1e-3}, Dim: 2, Cells: []int32{0, 1, 2}, NodesPerCell: 3, Type: vtk.Triangle,
			CellData: []vtk.Array{{Name: "f", Components: 1, Values: []float64{1}}}},
		"tet3d": {Points: []float64{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1}, Dim: 3, Cells: []int32{0, 1, 2, 3}, NodesPerCell: 4, Type: vtk.Tetra,
			CellData: []vtk.Array{{Name: "f", Components: 1, Values: []float64{1}}}},
		"inf-value": {Points: []float64{0, 0, 1, 0, 0, 1, 1, 1}, Dim: 2, Cells: []int32{0, 1, 2, 1, 3, 2}, NodesPerCell: 3, Type: vtk.Triangle,
			CellData: []vtk.Array{{Name: "f", Components: 1, Values: []float64{math.Inf(1), 0}}}},
		"int-field": {Points: []float64{0, 0, 1, 0, 0, 1}, Dim: 2, Cells: []int32{0, 1, 2}, NodesPerCell: 3, Type: vtk.Triangle,
			CellData: []vtk.Array{{Name: "f", Components: 1, Values: []uint8{3}}}},
	}
	for name, g := range cases {
		t.Run(name, func(t *testing.T) {
			in := filepath.Join(dir, name+".vtu")
			if err := g.WriteFile(in, vtk.ASCII); err != nil {
				t.Skipf("grid refused by vtk: %v", err)
			}
			out := filepath.Join(dir, name+".png")
			res, err := exec.Command(bin, "-field", "f", "-o", out, in).CombinedOutput()
			t.Logf("%s: err=%v %s", name, err, res)
			if strings.Contains(string(res), "panic") || strings.Contains(string(res), "goroutine") {
				t.Errorf("op2render crashed on %s:\n%s", name, res)
			}
			if err == nil {
				if _, serr := os.Stat(out); serr != nil {
					t.Errorf("success but no picture")
				}
			}
		})
	}
	// extreme -range / -window / -width flags on a good mesh
	in := filepath.Join(dir, "one-triangle.vtu")
	for _, args := range [][]string{
		{"-range", "5,5"}, {"-range", "9,1"}, {"-range", "nan,1"}, {"-range", "-inf,inf"},
		{"-window", "0,1e-300,0,1e-300"}, {"-window", "-1e300,1e300,-1e300,1e300"}, {"-window", "0.2,0.3,0.2,0.3"},
		{"-window", "nan,1,0,1"}, {"-component", "1"}, {"-component", "-1"}, {"-width", "16"}, {"-width", "0"}, {"-field", "nope"},
	} {
		res, err := exec.Command(bin, append(append([]string{"-field", "f", "-o", filepath.Join(dir, "x.png")}, args...), in)...).CombinedOutput()
		t.Logf("%v: err=%v %s", args, err, res)
		if strings.Contains(string(res), "panic") || strings.Contains(string(res), "goroutine") {
			t.Errorf("op2render crashed with %v:\n%s", args, res)
		}
	}
}
