package vtk_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/mesh"
	"github.com/goop2/op2/vtk"
)

// The mesh of TestMPIParallelWrite: Airfoil's generated mesh, small.
const mpiI, mpiJ = 4, 6

// mpiWrite declares the mesh (on rank 0; the other ranks declare empty
// sets), partitions it when on several ranks, changes the point dat's
// owned values so that its halo is stale, and writes dir/out.vtu (.pvtu
// under MPI) with a cell dat, two point dats and the declared numbers,
// adding the step to dir/run.pvd.
func mpiWrite(t *testing.T, dir string) {
	m, err := mesh.Generate(mpiI, mpiJ)
	if err != nil {
		t.Fatal(err)
	}
	nn, nc := m.NNode, m.NCell
	x, cellv, q, u, tag := m.X, m.Cell, make([]float64, 2*nc), make([]float64, nn), make([]int32, nn)
	for c := range nc {
		q[2*c], q[2*c+1] = float64(c), -0.5*float64(c*c)
	}
	for n := range nn {
		u[n] = x[2*n] + 2*x[2*n+1]
		tag[n] = int32(3 * n)
	}
	if op2.Rank() > 0 {
		nn, nc, x, cellv, q, u, tag = 0, 0, nil, nil, nil, nil, nil
	}
	nodes := must(op2.NewSet(nn, "nodes"))
	cells := must(op2.NewSet(nc, "cells"))
	pcell := must(op2.NewMap(cells, nodes, 4, cellv, "pcell"))
	dx := must(op2.NewDat(nodes, 2, x, "x"))
	dq := must(op2.NewDat(cells, 2, q, "q"))
	du := must(op2.NewDat(nodes, 1, u, "u"))
	dtag := must(op2.NewDat(nodes, 1, tag, "tag"))
	if op2.Ranks() > 1 {
		must(op2.Partition(op2.RCBPartitioner(dx)))
	}
	// u = 10 u + 1 on the owned nodes only: the halo goes stale.
	k := op2.NewKernel("void vtk_mpi_scale(double *u) { *u = 10 * *u + 1; }", "vtk_mpi_scale")
	if err := op2.ParLoop(k, nodes, du.Arg(op2.RW)); err != nil {
		t.Fatal(err)
	}
	w := must(vtk.NewWriter(dx, pcell))
	w.DeclaredNumbers = true
	for _, err := range []error{vtk.CellDat(w, dq), vtk.PointDat(w, du), vtk.PointDat(w, dtag)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "out.vtu")
	if err := w.WriteFile(path, vtk.Binary); err != nil {
		t.Fatal(err)
	}
	if err := vtk.NewSeries(filepath.Join(dir, "run.pvd")).Add(0.5, vtk.OutputPath(path)); err != nil {
		t.Fatal(err)
	}
}

// cellKeys returns, by declared number, what each cell of g is compared by:
// its nodes' coordinates in order, and its values and its nodes' values.
func cellKeys(t *testing.T, g *vtk.Grid) map[int32]string {
	t.Helper()
	num, q, u, tag := g.CellArray(vtk.DeclaredNumberArray), g.CellArray("q"), g.PointArray("u"), g.PointArray("tag")
	if num == nil || q == nil || u == nil || tag == nil || q.Components != 2 {
		t.Fatalf("arrays %v %v missing", g.CellData, g.PointData)
	}
	nums, qv, uv, tv := num.Float64s(), q.Float64s(), u.Float64s(), tag.Float64s()
	out := map[int32]string{}
	for c := range g.NumCells() {
		key := fmt.Sprintf("q %v %v:", qv[2*c], qv[2*c+1])
		for _, p := range g.Cells[4*c : 4*c+4] {
			key += fmt.Sprintf(" (%v %v %v) u %v tag %v", g.Points[3*p], g.Points[3*p+1], g.Points[3*p+2], uv[p], tv[p])
		}
		n := int32(nums[c])
		if _, dup := out[n]; dup {
			t.Errorf("cell %d written twice", n)
		}
		out[n] = key
	}
	return out
}

// TestMPIParallelWrite writes a partitioned mesh on 2 and 3 ranks and
// checks that the pieces of the .pvtu hold every cell exactly once, with
// the nodes' coordinates, the cell values and the point values (halo
// points' included) of the one-process write, and that rank 0 wrote the
// .pvd.
func TestMPIParallelWrite(t *testing.T) {
	if mpitest.InRanks() {
		os.Setenv("OP2_CACHE_DIR", os.Getenv("VTK_MPI_CACHE"))
		mpiWrite(t, os.Getenv("VTK_MPI_DIR"))
		if err := op2.Finalize(); err != nil {
			t.Fatal(err)
		}
		return
	}
	cache := os.Getenv("OP2_CACHE_DIR") // TestMain's, which the ranks share
	one := t.TempDir()
	mpiWrite(t, one)
	g1, err := vtk.ReadFile(filepath.Join(one, "out.vtu"))
	if err != nil {
		t.Fatal(err)
	}
	want := cellKeys(t, g1)
	m, _ := mesh.Generate(mpiI, mpiJ)
	if len(want) != m.NCell {
		t.Fatalf("one process wrote %d cells, want %d", len(want), m.NCell)
	}
	for _, np := range []int{2, 3} {
		t.Run(fmt.Sprintf("%d-ranks", np), func(t *testing.T) {
			dir := t.TempDir()
			mpitest.Run(t, np, 2*time.Minute, "VTK_MPI_DIR="+dir, "VTK_MPI_CACHE="+cache)
			if _, err := os.Stat(filepath.Join(dir, "out.vtu")); err == nil {
				t.Error("out.vtu written under MPI")
			}
			pieces, err := vtk.ReadPVTUFile(filepath.Join(dir, "out.pvtu"))
			if err != nil {
				t.Fatal(err)
			}
			if len(pieces) != np {
				t.Fatalf("%d pieces, want %d", len(pieces), np)
			}
			got := map[int32]string{}
			points := 0
			for r, p := range pieces {
				points += p.NumPoints()
				if p.NumCells() == 0 || p.NumPoints() >= g1.NumPoints() {
					t.Errorf("piece %d: %d cells, %d points: not a part of the mesh", r, p.NumCells(), p.NumPoints())
				}
				for n, k := range cellKeys(t, p) {
					if _, dup := got[n]; dup {
						t.Errorf("cell %d in two pieces", n)
					}
					got[n] = k
				}
			}
			// Points on the pieces' borders are in two pieces: some
			// piece holds halo points, whose values the check covers.
			if points <= g1.NumPoints() {
				t.Errorf("%d points in the pieces, %d in the mesh: no piece holds a halo point", points, g1.NumPoints())
			}
			if len(got) != len(want) {
				t.Errorf("%d cells in the pieces, want %d", len(got), len(want))
			}
			for n, k := range want {
				if got[n] != k {
					t.Errorf("cell %d:\n got %s\nwant %s", n, got[n], k)
				}
			}
			merged, err := vtk.Merge(pieces)
			if err != nil || merged.NumCells() != m.NCell {
				t.Errorf("Merge: %v", err)
			}
			steps, err := vtk.ReadSeriesFile(filepath.Join(dir, "run.pvd"))
			if err != nil || len(steps) != 1 || steps[0] != (vtk.Step{Time: 0.5, File: "out.pvtu"}) {
				t.Errorf(".pvd steps %v, %v", steps, err)
			}
		})
	}
}
