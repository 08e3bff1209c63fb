package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2"
	cgnsapi "github.com/goop2/op2/internal/cgns"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/internal/petsc"
	"github.com/goop2/op2/internal/testreq"
	"github.com/goop2/op2/mesh/unstructured"
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
	testreq.Check(t, "petsc", petsc.Load(), petsc.ErrUnavailable)
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

// gmshFixture is the path of mesh/gmsh's fixture name.
func gmshFixture(name string) string {
	return filepath.Join("..", "..", "mesh", "gmsh", "testdata", name)
}

// convert writes the HDF5 file `op2mesh convert` makes of the Gmsh mesh
// in path to a temporary folder, and returns its path.
func convert(t *testing.T, path string) string {
	t.Helper()
	h5 := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(path), ".msh")+".h5")
	if err := unstructured.Convert(path, h5); err != nil {
		t.Fatal(err)
	}
	return h5
}

// TestRunGmsh runs the command on Gmsh's fixtures and their HDF5
// conversions: a square of triangles and a box of tetrahedra (the 3-D
// problem), where the linear problem is exact to rounding; -vtk writes
// either mesh with u.
func TestRunGmsh(t *testing.T) {
	for _, c := range []struct {
		file         string
		nodes, cells int
		kind         string
	}{
		{"square-41-binary.msh", 30, 42, "triangles"},
		{"box-22-ascii.msh", 45, 101, "tetrahedra"},
	} {
		msh := gmshFixture(c.file)
		for _, path := range []string{msh, convert(t, msh)} {
			var out strings.Builder
			vtu := filepath.Join(t.TempDir(), "u.vtu")
			if err := run(options{problem: "linear", method: "cg", precond: "jacobi", rtol: 1e-12, meshPath: path, vtkPath: vtu}, &out); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if len(lines) != 3 || lines[0] != fmt.Sprintf("mesh: %s, %d nodes, %d %s", path, c.nodes, c.cells, c.kind) || !strings.HasSuffix(lines[1], ", converged") {
				t.Fatalf("%s: output:\n%s", path, out.String())
			}
			var l2 float64
			if _, err := fmt.Sscanf(strings.TrimPrefix(lines[2], "error: L2 "), "%g", &l2); err != nil || l2 > 1e-9 {
				t.Errorf("%s: %q: want an L2 error below 1e-9", path, lines[2])
			}
			g, err := vtk.ReadFile(vtu)
			if err != nil {
				t.Fatal(err)
			}
			if g.NumPoints() != c.nodes || g.NumCells() != c.cells || g.PointArray("u") == nil {
				t.Errorf("%s: VTK file of %d points, %d cells; want %d and %d, with u", path, g.NumPoints(), g.NumCells(), c.nodes, c.cells)
			}
		}
	}
}

// TestRunOtherCells: a mesh of quadrilaterals is refused, naming its
// cells, before any line calls them triangles.
func TestRunOtherCells(t *testing.T) {
	path := filepath.Join(t.TempDir(), "quad.msh")
	quads := "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n6\n1 0 0 0\n2 0.5 0 0\n3 1 0 0\n4 0 1 0\n5 0.5 1 0\n6 1 1 0\n$EndNodes\n" +
		"$Elements\n2\n1 3 2 0 1 1 2 5 4\n2 3 2 0 1 2 3 6 5\n$EndElements\n"
	if err := os.WriteFile(path, []byte(quads), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	err := run(options{problem: "linear", method: "cg", precond: "jacobi", rtol: 1e-12, meshPath: path}, &out)
	if err == nil || !strings.Contains(err.Error(), "cells are quadrilaterals") || strings.Contains(out.String(), "triangles") {
		t.Errorf("a quadrilateral mesh: error %v, output %q; want a refusal naming quadrilaterals, no triangles", err, out.String())
	}
}

// TestMeshNames: -mesh takes every mesh mesh/unstructured reads, a CGNS
// file too, and Triangle's files by BASE, BASE.node or BASE.ele
// (-write-mesh BASE.node writes BASE.node, not BASE.node.node); a name
// that is neither a file nor Triangle's BASE is refused naming both.
func TestMeshNames(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ path, want string }{
		{"a.msh", ""}, {"a.h5", ""}, {"a.hdf5", ""}, {"a.cgns", ""},
		{filepath.Join(dir, "tri"), filepath.Join(dir, "tri")},
		{filepath.Join(dir, "tri.node"), filepath.Join(dir, "tri")},
		{filepath.Join(dir, "tri.ele"), filepath.Join(dir, "tri")},
	} {
		base, triangle := triangleBase(c.path)
		if triangle != (c.want != "") || triangle && base != c.want {
			t.Errorf("triangleBase(%q) = %q, %v; want %q", c.path, base, triangle, c.want)
		}
	}
	o := options{n: 4, problem: "linear", method: "cg", precond: "jacobi", rtol: 1e-12, writeMesh: filepath.Join(dir, "sq.node")}
	if err := run(o, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"sq.node", "sq.ele"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("-write-mesh sq.node: %v", err)
		}
	}
	var want string
	for _, path := range []string{filepath.Join(dir, "sq"), filepath.Join(dir, "sq.node"), filepath.Join(dir, "sq.ele")} {
		var out strings.Builder
		if err := run(options{problem: "linear", method: "cg", precond: "jacobi", rtol: 1e-12, meshPath: path}, &out); err != nil {
			t.Fatalf("-mesh %s: %v", path, err)
		}
		got := strings.SplitN(out.String(), "\n", 2)[1]
		if want == "" {
			want = got
		} else if got != want {
			t.Errorf("-mesh %s printed\n%s\nwant\n%s", path, got, want)
		}
	}
	if err := run(options{problem: "linear", rtol: 1e-12, meshPath: filepath.Join(dir, "none")}, io.Discard); err == nil || !strings.Contains(err.Error(), "no such file, nor Triangle's") {
		t.Errorf("-mesh of nothing: %v", err)
	}
	cgns := filepath.Join("..", "..", "mesh", "cgns", "testdata", "box.cgns")
	var out strings.Builder
	if err := run(options{problem: "linear", method: "cg", precond: "jacobi", rtol: 1e-12, meshPath: cgns}, &out); err != nil {
		testreq.Check(t, "cgns", err, cgnsapi.ErrUnavailable)
	} else if !strings.Contains(out.String(), "tetrahedra") || !strings.Contains(out.String(), "converged") {
		t.Errorf("-mesh box.cgns printed\n%s", out.String())
	}
}

// TestSolverLimits: -rtol 0 (or below, or NaN) and a negative -maxits
// are refused before anything is solved, naming the flag, rather than
// taking the defaults silently; a solve that did not converge within
// -maxits prints how it ended and then fails.
func TestSolverLimits(t *testing.T) {
	base := options{n: 8, problem: "sine", method: "cg", precond: "jacobi", rtol: 1e-10}
	for _, c := range []struct {
		name   string
		change func(*options)
		want   string
	}{
		{"rtol 0", func(o *options) { o.rtol = 0 }, "-rtol 0"},
		{"rtol negative", func(o *options) { o.rtol = -1 }, "-rtol -1"},
		{"rtol NaN", func(o *options) { o.rtol = math.NaN() }, "-rtol NaN"},
		{"rtol 1", func(o *options) { o.rtol = 1 }, "-rtol 1: want a relative tolerance above 0 and below 1"},
		{"rtol 2", func(o *options) { o.rtol = 2 }, "-rtol 2"},
		{"rtol +Inf", func(o *options) { o.rtol = math.Inf(1) }, "-rtol +Inf"},
		{"maxits negative", func(o *options) { o.maxits = -1 }, "-maxits -1"},
	} {
		o := base
		c.change(&o)
		var out strings.Builder
		if err := run(o, &out); err == nil || !strings.Contains(err.Error(), c.want) || out.Len() > 0 {
			t.Errorf("%s: error %v, output %q; want an error naming %q before any output", c.name, err, out.String(), c.want)
		}
	}
	o := base
	o.maxits = 1
	var out strings.Builder
	err := run(o, &out)
	if err == nil || !strings.Contains(err.Error(), "did not converge") || !strings.Contains(out.String(), "solve: cg/jacobi, 1 iterations") {
		t.Errorf("-maxits 1: error %v, output\n%s\nwant the solve's line, then an error saying it did not converge", err, out.String())
	}
}

// TestMeshFlags: -n, -jitter and -seed, which shape the generated mesh,
// are refused with -mesh, which replaces it, naming both; alone, or left
// at their defaults, they pass.
func TestMeshFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-mesh", "m.msh", "-n", "4"}, "-n 4 with -mesh m.msh: -n shapes the generated mesh, which -mesh replaces"},
		{[]string{"-mesh", "m.msh", "-jitter", "0.3"}, "-jitter 0.3 with -mesh m.msh"},
		{[]string{"-seed", "7", "-mesh", "base"}, "-seed 7 with -mesh base"},
		{[]string{"-mesh", "m.msh", "-write-mesh", "out", "-rtol", "1e-8"}, ""},
		{[]string{"-n", "4", "-jitter", "0.3", "-seed", "2"}, ""},
		{nil, ""},
	} {
		fs := flag.NewFlagSet("poisson", flag.ContinueOnError)
		var o options
		defineFlags(fs, &o)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		err := checkMeshFlags(fs)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}

// TestOutputOverInput: -write-mesh or -vtk naming a file the mesh is
// read from (Triangle's BASE.node and BASE.ele, or a Gmsh file), or each
// other's, is refused, naming both flags, before anything is written.
func TestOutputOverInput(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "sq")
	if err := run(options{n: 4, problem: "linear", method: "cg", precond: "jacobi", rtol: 1e-12, writeMesh: base}, io.Discard); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(base + ".node")
	msh := gmshFixture("square-22-ascii.msh")
	for _, c := range []struct {
		o    options
		want string
	}{
		{options{meshPath: base, writeMesh: base + ".node"}, "-write-mesh and -mesh both name " + base + ".node"},
		{options{meshPath: base + ".ele", vtkPath: base + ".ele"}, "-vtk and -mesh both name " + base + ".ele"},
		{options{meshPath: msh, vtkPath: "./" + msh}, "-vtk ./" + msh + " and -mesh " + msh + " are the same file"},
		{options{n: 4, writeMesh: filepath.Join(dir, "w"), vtkPath: filepath.Join(dir, "w.node")}, "-vtk and -write-mesh both name"},
	} {
		o := c.o
		o.problem, o.method, o.precond, o.rtol = "linear", "cg", "jacobi", 1e-12
		var out strings.Builder
		if err := run(o, &out); err == nil || !strings.Contains(err.Error(), c.want) || out.Len() > 0 {
			t.Errorf("%+v: error %v, output %q; want a refusal saying %q", c.o, err, out.String(), c.want)
		}
	}
	if after, _ := os.ReadFile(base + ".node"); !slices.Equal(after, before) {
		t.Error("the mesh file changed")
	}
}

// TestRunGmshWriteMesh: -write-mesh writes a Gmsh mesh in Triangle's
// format with its Dirichlet nodes as markers, which solved again (by the
// plain-slice path, whose boundary comes from the markers) prints what
// the Gmsh mesh printed; a 3-D mesh and a mesh of two cell kinds are
// refused.
func TestRunGmshWriteMesh(t *testing.T) {
	base := filepath.Join(t.TempDir(), "square")
	o := options{problem: "sine", method: "cg", precond: "jacobi", rtol: 1e-12, meshPath: gmshFixture("square-22-ascii.msh"), writeMesh: base}
	var a, b strings.Builder
	if err := run(o, &a); err != nil {
		t.Fatal(err)
	}
	o.meshPath, o.writeMesh = base, ""
	if err := run(o, &b); err != nil {
		t.Fatal(err)
	}
	if ra, rb := strings.SplitN(a.String(), "\n", 2)[1], strings.SplitN(b.String(), "\n", 2)[1]; ra != rb {
		t.Fatalf("from Triangle's files:\n%s\nfrom Gmsh's:\n%s", rb, ra)
	}
	for _, c := range []struct{ file, want string }{
		{"box-41-binary.msh", "-write-mesh writes Triangle's 2-D format"},
		{"mixed-41-ascii.msh", "of 2 kinds"},
	} {
		o := options{problem: "linear", method: "cg", precond: "jacobi", rtol: 1e-10, meshPath: gmshFixture(c.file), writeMesh: base}
		if err := run(o, io.Discard); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error saying %q", c.file, err, c.want)
		}
	}
}

// TestRunGmshOnRanks: on 2 and 3 MPI ranks the command prints, for a
// Gmsh square and box and their HDF5 conversions, the mesh and the
// errors one process prints.
func TestRunGmshOnRanks(t *testing.T) {
	const meshEnv, wantEnv = "POISSON_GMSH", "POISSON_GMSH_WANT"
	lines := func(path string) string {
		var out strings.Builder
		if err := run(options{problem: "sine", method: "cg", precond: "jacobi", rtol: 1e-12, meshPath: path, renumber: "auto"}, &out); err != nil {
			t.Fatal(err)
		}
		l := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(l) != 3 {
			t.Fatalf("output:\n%s", out.String())
		}
		return l[0] + "\n" + l[2]
	}
	if mpitest.InRanks() {
		got := lines(os.Getenv(meshEnv))
		if want := os.Getenv(wantEnv); op2.Rank() == 0 && got != want {
			t.Errorf("%d ranks printed\n%s\none process\n%s", op2.Ranks(), got, want)
		}
		if err := op2.Finalize(); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, file := range []string{"square-41-ascii.msh", "box-41-binary.msh"} {
		msh := gmshFixture(file)
		h5 := convert(t, msh)
		want := lines(msh)
		for _, path := range []string{msh, h5} {
			for _, ranks := range []int{2, 3} {
				t.Run(fmt.Sprintf("%s/%d", filepath.Base(path), ranks), func(t *testing.T) {
					w := strings.Replace(want, msh, path, 1)
					mpitest.Run(t, ranks, 2*time.Minute, meshEnv+"="+path, wantEnv+"="+w)
				})
			}
		}
	}
}
