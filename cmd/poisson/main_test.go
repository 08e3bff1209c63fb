package main

import (
	"path/filepath"
	"strings"
	"testing"

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
