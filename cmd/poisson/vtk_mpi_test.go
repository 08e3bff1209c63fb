package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/vtk"
)

// TestVTKOnRanks: on 2 ranks -vtk u.vtu writes u.pvtu and a piece per
// rank, which together hold every triangle once and, at every point, the
// solution one process writes (to the solver's tolerance: the ranks sum
// in another order).
func TestVTKOnRanks(t *testing.T) {
	o := options{n: 6, jitter: 0.2, seed: 3, problem: "sine", method: "cg", precond: "jacobi", rtol: 1e-12}
	if mpitest.InRanks() {
		o.vtkPath = os.Getenv("POISSON_VTK")
		if err := run(o, io.Discard); err != nil {
			t.Fatal(err)
		}
		if err := op2.Finalize(); err != nil {
			t.Fatal(err)
		}
		return
	}
	dir := t.TempDir()
	o.vtkPath = filepath.Join(dir, "one.vtu")
	if err := run(o, io.Discard); err != nil {
		t.Fatal(err)
	}
	one, err := vtk.ReadFile(o.vtkPath)
	if err != nil {
		t.Fatal(err)
	}
	key := func(g *vtk.Grid, p int32) string { return fmt.Sprint(g.Points[3*p : 3*p+3]) }
	u1 := one.PointArray("u").Float64s()
	want := map[string]float64{}
	for p := range one.NumPoints() {
		want[key(one, int32(p))] = u1[p]
	}
	mpitest.Run(t, 2, 2*time.Minute, "POISSON_VTK="+filepath.Join(dir, "u.vtu"))
	pieces, err := vtk.ReadPVTUFile(filepath.Join(dir, "u.pvtu"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := vtk.Merge(pieces)
	if err != nil {
		t.Fatal(err)
	}
	if len(pieces) != 2 || g.NumCells() != one.NumCells() {
		t.Fatalf("%d pieces, %d triangles; want 2 pieces, %d triangles", len(pieces), g.NumCells(), one.NumCells())
	}
	u := g.PointArray("u").Float64s()
	for p := range g.NumPoints() {
		w, ok := want[key(g, int32(p))]
		if !ok || math.Abs(u[p]-w) > 1e-9 {
			t.Fatalf("point %v: u %g; one process: %g (present %v)", g.Points[3*p:3*p+3], u[p], w, ok)
		}
	}
}
