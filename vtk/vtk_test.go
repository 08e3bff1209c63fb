package vtk_test

import (
	"math"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/vtk"
)

// tiny is two quads side by side: points 0..5, x in {0,1,2}, y in {0,1}.
func tiny() *vtk.Grid {
	return &vtk.Grid{
		Points:       []float64{0, 0, 1, 0, 2, 0, 0, 1, 1, 1, 2, 1},
		Dim:          2,
		Cells:        []int32{0, 1, 4, 3, 1, 2, 5, 4},
		NodesPerCell: 4,
		Type:         vtk.Quad,
		CellData: []vtk.Array{
			{Name: "q", Components: 4, Values: []float64{1, 0.5, 0, 2.5, 1, -0.25, 1e-30, 3}},
			{Name: "id & <kind>", Components: 1, Values: []int32{7, -8}},
		},
		PointData: []vtk.Array{{Name: "t", Components: 1, Values: []float32{0.5, 1, 1.5, 2, 2.5, 3}}},
	}
}

// A mesh declared to GoOP2, with a loop's result as cell data.
func TestFromOP2(t *testing.T) {
	g0 := tiny()
	nodes, _ := op2.NewSet(6, "nodes")
	cells, _ := op2.NewSet(2, "cells")
	pcell, err := op2.NewMap(cells, nodes, 4, g0.Cells, "pcell")
	if err != nil {
		t.Fatal(err)
	}
	x, _ := op2.NewDat(nodes, 2, g0.Points, "x")
	area, _ := op2.NewDat[float64](cells, 1, nil, "area")
	tag, _ := op2.NewDat(nodes, 1, []uint32{1, 2, 3, 4, 5, 6}, "tag")
	k := op2.NewKernel(`void area(double *x[4], double *a) {
  *a = 0;
  for (int i = 0; i < 4; i++) { int j = (i + 1) % 4; *a += 0.5 * (x[i][0] * x[j][1] - x[j][0] * x[i][1]); }
}`, "area")
	if err := op2.ParLoop(k, cells, x.ArgVec(op2.Read, pcell), area.Arg(op2.Write)); err != nil {
		t.Fatal(err)
	}
	g, err := vtk.FromOP2(x, pcell)
	if err != nil {
		t.Fatal(err)
	}
	if err := vtk.AddCellDat(g, area); err != nil {
		t.Fatal(err)
	}
	if err := vtk.AddPointDat(g, tag); err != nil {
		t.Fatal(err)
	}
	if err := vtk.AddPointDat(g, area); err == nil {
		t.Error("a cell dat added as point data: no error")
	}
	// Refused arrays leave the grid as it was.
	unnamed, _ := op2.NewDat[float64](cells, 1, nil, "")
	if err := vtk.AddCellDat(g, unnamed); err == nil {
		t.Error("an unnamed dat added: no error")
	}
	if err := vtk.AddCellDat(g, area); err == nil {
		t.Error("a dat added twice: no error")
	}
	if len(g.CellData) != 1 || len(g.PointData) != 1 {
		t.Errorf("after refused additions the grid has %d cell and %d point arrays, want 1 and 1", len(g.CellData), len(g.PointData))
	}
	path := filepath.Join(t.TempDir(), "m.vtu")
	if err := g.WriteFile(path, vtk.Binary); err != nil {
		t.Fatal(err)
	}
	back, err := vtk.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Type != vtk.Quad || !reflect.DeepEqual(back.CellArray("area").Values, []float64{1, 1}) ||
		!reflect.DeepEqual(back.PointArray("tag").Values, []uint32{1, 2, 3, 4, 5, 6}) {
		t.Errorf("read back %+v", back)
	}
	if math.Abs(back.Points[3*5]-2) > 0 {
		t.Errorf("points %v", back.Points)
	}
}

// TestFromOP2InChain: a Dat written by a loop recorded in an op2.Chain is
// added with the loop's values: reading it runs the recorded loop first.
func TestFromOP2InChain(t *testing.T) {
	g0 := tiny()
	nodes, _ := op2.NewSet(6, "nodes")
	cells, _ := op2.NewSet(2, "cells")
	pcell, err := op2.NewMap(cells, nodes, 4, g0.Cells, "pcell")
	if err != nil {
		t.Fatal(err)
	}
	x, _ := op2.NewDat(nodes, 2, g0.Points, "x")
	area, _ := op2.NewDat[float64](cells, 1, nil, "area")
	k := op2.NewKernel(`void chain_area(double *x[4], double *a) {
  *a = 0;
  for (int i = 0; i < 4; i++) { int j = (i + 1) % 4; *a += 0.5 * (x[i][0] * x[j][1] - x[j][0] * x[i][1]); }
}`, "chain_area")
	var got any
	err = op2.Chain(func() error {
		if err := op2.ParLoop(k, cells, x.ArgVec(op2.Read, pcell), area.Arg(op2.Write)); err != nil {
			return err
		}
		g, err := vtk.FromOP2(x, pcell)
		if err != nil {
			return err
		}
		if err := vtk.AddCellDat(g, area); err != nil {
			return err
		}
		got = g.CellArray("area").Values
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []float64{1, 1}) {
		t.Errorf("area in the grid %v, want [1 1]", got)
	}
}
