package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/internal/petsc"
	"github.com/goop2/op2/vtk"
)

// TestRun runs the command on small meshes and checks what it prints and
// writes.
func TestRun(t *testing.T) {
	var out strings.Builder
	path := filepath.Join(t.TempDir(), "u.vtu")
	o := options{n: 8, jitter: 0.2, seed: 3, problem: "linear", method: "cg", precond: "jacobi", rtol: 1e-12, vtkPath: path}
	if err := run(o, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || lines[0] != "mesh: 8×8 squares, 81 nodes, 128 triangles (jitter 0.2)" ||
		!strings.HasPrefix(lines[1], "solve: cg/jacobi, ") || !strings.HasSuffix(lines[1], ", converged") {
		t.Fatalf("output:\n%s", out.String())
	}
	g, err := vtk.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if g.NumPoints() != 81 || g.NumCells() != 128 || g.PointArray("u") == nil {
		t.Fatalf("VTK file: %d points, %d cells", g.NumPoints(), g.NumCells())
	}
	// The mesh written and read back gives the same output.
	base := filepath.Join(t.TempDir(), "sq")
	var a, b strings.Builder
	o = options{n: 5, jitter: 0.2, seed: 3, problem: "sine", method: "cg", precond: "jacobi", rtol: 1e-12, writeMesh: base}
	if err := run(o, &a); err != nil {
		t.Fatal(err)
	}
	o.writeMesh, o.meshPath = "", base
	if err := run(o, &b); err != nil {
		t.Fatal(err)
	}
	if ra, rb := strings.SplitN(a.String(), "\n", 2)[1], strings.SplitN(b.String(), "\n", 2)[1]; ra != rb {
		t.Fatalf("from the file:\n%s\ngenerated:\n%s", rb, ra)
	}
	if err := run(options{n: 4, problem: "cubic", method: "cg", precond: "jacobi"}, &out); err == nil || !strings.Contains(err.Error(), `unknown problem "cubic"`) {
		t.Fatalf("unknown problem: %v", err)
	}
}

// TestRunPETSc: with -solver petsc the command prints the same errors as
// with the native solver, in one process and on 2 MPI ranks.
func TestRunPETSc(t *testing.T) {
	if err := petsc.Load(); err != nil {
		t.Skipf("PETSc is not installed, so its tests cannot run (Debian: apt-get install libpetsc-real3.18 libopenmpi-dev): %v", err)
	}
	o := options{n: 12, jitter: 0.2, seed: 3, problem: "sine", method: "cg", precond: "jacobi", rtol: 1e-12}
	lines := func(o options) []string {
		var out strings.Builder
		if err := run(o, &out); err != nil {
			t.Fatal(err)
		}
		l := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(l) != 3 {
			t.Fatalf("output:\n%s", out.String())
		}
		return l
	}
	petscOptions := o
	petscOptions.solver = "petsc"
	if mpitest.InRanks() {
		got := lines(petscOptions)
		if want := os.Getenv("POISSON_ERROR_LINE"); got[2] != want {
			t.Errorf("rank %d of %d: %q; one process printed %q", op2.Rank(), op2.Ranks(), got[2], want)
		}
		if err := op2.Finalize(); err != nil {
			t.Fatal(err)
		}
		return
	}
	native, got := lines(o), lines(petscOptions)
	if got[2] != native[2] || !strings.HasPrefix(got[1], "solve: PETSc cg/jacobi, ") || !strings.HasSuffix(got[1], ", converged") {
		t.Fatalf("-solver petsc printed\n%s\nnative\n%s", strings.Join(got, "\n"), strings.Join(native, "\n"))
	}
	petscOptions.petscOptions = "-ksp_type gmres"
	if g := lines(petscOptions); !strings.HasPrefix(g[1], "solve: PETSc gmres/jacobi, ") || g[2] != native[2] {
		t.Fatalf("-petsc-options '-ksp_type gmres' printed\n%s", strings.Join(g, "\n"))
	}
	mpitest.Run(t, 2, 2*time.Minute, "POISSON_ERROR_LINE="+native[2])
}

// TestRunRenumbered: -renumber rcm, rcb and auto (the default: rcm in one
// process) print what the mesh's own numbering (none) prints and write
// the same solution to VTK (which is in the declared numbering).
func TestRunRenumbered(t *testing.T) {
	run1 := func(renumber string) ([]string, []float64) {
		var out strings.Builder
		path := filepath.Join(t.TempDir(), "u.vtu")
		o := options{n: 10, jitter: 0.2, seed: 4, problem: "sine", method: "cg", precond: "jacobi", rtol: 1e-12, vtkPath: path, renumber: renumber}
		if err := run(o, &out); err != nil {
			t.Fatal(err)
		}
		g, err := vtk.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		u, ok := g.PointArray("u").Values.([]float64)
		if !ok {
			t.Fatalf("VTK u: %T", g.PointArray("u").Values)
		}
		return strings.Split(strings.TrimSpace(out.String()), "\n"), u
	}
	want, wantU := run1("none")
	for _, r := range []string{"rcm", "rcb", "auto"} {
		got, u := run1(r)
		if !slices.Equal(got, want) {
			t.Errorf("-renumber %s printed\n%s\nwant\n%s", r, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		for i := range wantU {
			if math.Abs(u[i]-wantU[i]) > 1e-10 {
				t.Fatalf("-renumber %s: u of point %d is %v, want %v", r, i, u[i], wantU[i])
			}
		}
	}
}

// TestRunGmsh runs the command on Gmsh's fixtures: a square of triangles
// and a box of tetrahedra (the 3-D problem), where the linear problem is
// exact to rounding.
func TestRunGmsh(t *testing.T) {
	for _, c := range []struct{ file, mesh string }{
		{"square-41-binary.msh", "30 nodes, 42 triangles"},
		{"box-22-ascii.msh", "45 nodes, 101 tetrahedra"},
	} {
		var out strings.Builder
		path := filepath.Join("..", "..", "mesh", "gmsh", "testdata", c.file)
		if err := run(options{problem: "linear", method: "cg", precond: "jacobi", rtol: 1e-12, meshPath: path}, &out); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 3 || lines[0] != "mesh: "+path+", "+c.mesh || !strings.HasSuffix(lines[1], ", converged") {
			t.Fatalf("%s: output:\n%s", c.file, out.String())
		}
		var l2 float64
		if _, err := fmt.Sscanf(strings.TrimPrefix(lines[2], "error: L2 "), "%g", &l2); err != nil || l2 > 1e-9 {
			t.Errorf("%s: %q: want an L2 error below 1e-9", c.file, lines[2])
		}
	}
}
