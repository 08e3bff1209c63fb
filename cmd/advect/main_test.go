package main

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/gmshtest"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/internal/regfile"
	"github.com/goop2/op2/internal/testcache"
	"github.com/goop2/op2/internal/testreq"
	"github.com/goop2/op2/vtk"
)

func TestMain(m *testing.M) { os.Exit(testcache.Run(m, "goop2-advect-cache-")) }

// meshes returns the meshes the tests advect on: the generated cube (""),
// the Gmsh fixtures (a square of triangles, a box of tetrahedra) and, where
// Gmsh's Python module is installed, a cube of prisms Gmsh makes and two
// hybrid meshes (hybridMesh): the cube with a boundary layer and the
// square of quadrilaterals and triangles.
func meshes(t *testing.T) []string {
	t.Helper()
	list := []string{"", "../../mesh/gmsh/testdata/square-41-ascii.msh", "../../mesh/gmsh/testdata/box-41-binary.msh"}
	if py := gmshtest.Python(); py != "" {
		path := filepath.Join(t.TempDir(), "prism.msh")
		if out, err := exec.Command(py, "../../mesh/unstructured/testdata/extrude.py", "prism", path).CombinedOutput(); err != nil {
			t.Fatalf("gmsh: %v\n%s", err, out)
		}
		return append(list, path, hybridMesh(t, py, "layer"), hybridMesh(t, py, "square"))
	}
	t.Log("no python3 with Gmsh's module (Debian: apt-get install python3-gmsh): no prism mesh")
	return list
}

// hybridMesh writes Gmsh's hybrid mesh kind (mesh/unstructured's
// testdata/hybrid.py): "layer", the unit cube with a boundary layer of
// hexahedra and prisms on its bottom and tetrahedra above, pyramids
// between; "square", quadrilaterals beside triangles.
func hybridMesh(t *testing.T, py, kind string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), kind+".msh")
	if out, err := exec.Command(py, "../../mesh/unstructured/testdata/hybrid.py", kind, path, "0.25").CombinedOutput(); err != nil {
		t.Fatalf("gmsh: %v\n%s", err, out)
	}
	return path
}

// meshName names a mesh of meshes in subtests.
func meshName(path string) string {
	if path == "" {
		return "cube"
	}
	return strings.TrimSuffix(filepath.Base(path), ".msh")
}

func gathered(t *testing.T, q *op2.Dat[float64]) []float64 {
	t.Helper()
	v, err := q.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestConservesOnEveryBackend advects on each mesh on every backend: the
// total stays what it was to round-off, q stays in [0, 1], and the values
// equal the sequential backend's to round-off.
func TestConservesOnEveryBackend(t *testing.T) {
	for _, path := range meshes(t) {
		var want []float64
		for _, b := range []string{"sequential", "openmp", "opencl"} {
			t.Run(fmt.Sprintf("%s/%s", meshName(path), b), func(t *testing.T) {
				res, err := run(options{mesh: path, n: 5, steps: 60, every: 20, cfl: 0.9, backend: b}, io.Discard)
				if b == "opencl" {
					testreq.Check(t, b, err, op2.ErrBackendUnavailable)
				} else if err != nil {
					t.Fatal(err)
				}
				if d := math.Abs(res.last-res.total0) / res.total0; d > 1e-13 || res.total0 <= 0 {
					t.Errorf("total %.17g then %.17g: relative change %.1e", res.total0, res.last, d)
				}
				if res.lo < -1e-15 || res.hi > 1+1e-15 {
					t.Errorf("q in [%g, %g], outside [0, 1]", res.lo, res.hi)
				}
				q := gathered(t, res.q)
				if want == nil {
					want = q
					return
				}
				for i := range q {
					if math.Abs(q[i]-want[i]) > 1e-12 {
						t.Fatalf("cell %d: q %.17g, sequential %.17g", i, q[i], want[i])
					}
				}
			})
		}
	}
}

// TestDivergenceFree: on each mesh the fluxes out of every cell add up to
// zero (to round-off against the largest outflow), which keeps q in
// [0, 1]; on a finer cube too.
func TestDivergenceFree(t *testing.T) {
	for _, path := range meshes(t) {
		t.Run(meshName(path), func(t *testing.T) {
			res, err := run(options{mesh: path, n: 12, steps: 150, every: 150, cfl: 1}, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			m := res.mesh
			div, err := op2.NewDat[float64](m.Cells, 1, nil, "div")
			if err != nil {
				t.Fatal(err)
			}
			k := op2.NewKernel("void divergence(const double *un, double *d0, double *d1) { *d0 += *un; *d1 -= *un; }", "divergence")
			for i, f := range m.Interior {
				if err := op2.ParLoop(k, f.Set, res.un[i].Arg(op2.Read), div.ArgMap(op2.Inc, f.Cells, 0), div.ArgMap(op2.Inc, f.Cells, 1)); err != nil {
					t.Fatal(err)
				}
			}
			scale := slices.Max(res.outflow.DataRO())
			for c, d := range div.DataRO() {
				if math.Abs(d) > 1e-13*scale {
					t.Fatalf("cell %d: the fluxes add up to %g (largest outflow %g)", c, d, scale)
				}
			}
			if res.lo < 0 || res.hi > 1+1e-14 {
				t.Errorf("q in [%g, %g], outside [0, 1]", res.lo, res.hi)
			}
		})
	}
}

// TestOnRanks advects on 2, 3 and 4 MPI ranks and compares q, gathered in
// the file's numbering, and the .pvtu file's cell values with one
// process's.
func TestOnRanks(t *testing.T) {
	const meshEnv, wantEnv, dirEnv = "ADVECT_MESH", "ADVECT_WANT", "ADVECT_DIR"
	opts := func(path string) options {
		return options{mesh: path, n: 4, steps: 40, every: 40, cfl: 0.9}
	}
	if mpitest.InRanks() {
		o := opts(os.Getenv(meshEnv))
		if dir := os.Getenv(dirEnv); dir != "" {
			o.vtk = filepath.Join(dir, fmt.Sprintf("q%d.vtu", op2.Ranks()))
		}
		res, err := run(o, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		q := gathered(t, res.q)
		if op2.Rank() == 0 {
			b, err := os.ReadFile(os.Getenv(wantEnv))
			if err != nil {
				t.Fatal(err)
			}
			want := make([]float64, len(b)/8)
			for i := range want {
				want[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
			}
			if len(q) != len(want) {
				t.Fatalf("%d cells, one process %d", len(q), len(want))
			}
			for i := range q {
				if math.Abs(q[i]-want[i]) > 1e-12 {
					t.Fatalf("%d ranks: cell %d: q %.17g, one process %.17g", op2.Ranks(), i, q[i], want[i])
				}
			}
		}
		if err := op2.Finalize(); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, path := range meshes(t)[:3] {
		t.Run(meshName(path), func(t *testing.T) {
			res, err := run(opts(path), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			q := gathered(t, res.q)
			dir := t.TempDir()
			want := filepath.Join(dir, "q.bin")
			b := make([]byte, 8*len(q))
			for i, v := range q {
				binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
			}
			if err := os.WriteFile(want, b, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, ranks := range []int{2, 3, 4} {
				mpitest.Run(t, ranks, 2*time.Minute, meshEnv+"="+path, wantEnv+"="+want, dirEnv+"="+dir)
				pieces, err := vtk.ReadPVTUFile(filepath.Join(dir, fmt.Sprintf("q%d.pvtu", ranks)))
				if err != nil {
					t.Fatal(err)
				}
				if len(pieces) != ranks {
					t.Errorf("%d ranks: %d pieces", ranks, len(pieces))
				}
				n := 0
				for _, p := range pieces {
					n += p.NumCells()
					if a := p.CellArray("q"); a == nil {
						t.Errorf("%d ranks: a piece has no cell array q", ranks)
					}
				}
				if n != len(q) {
					t.Errorf("%d ranks: %d cells in the pieces, want %d", ranks, n, len(q))
				}
			}
		})
	}
}

// TestHybridOnRanks advects on Gmsh's cube with a boundary layer
// (hexahedra, prisms, pyramids and tetrahedra) on 2, 3 and 4 MPI ranks:
// q, gathered in the file's numbering, equals one process's to round-off,
// and so does the total, conserved; the cells of the .pvtu file's pieces
// (-vtk) are those of one process's .vtu file, with their types and q.
func TestHybridOnRanks(t *testing.T) {
	const meshEnv, wantEnv, dirEnv = "ADVECT_MESH", "ADVECT_WANT", "ADVECT_DIR"
	if mpitest.InRanks() {
		TestOnRanks(t)
		return
	}
	path := hybridMesh(t, gmshtest.Need(t), "layer")
	dir := t.TempDir()
	res, err := run(options{mesh: path, n: 4, steps: 40, every: 40, cfl: 0.9, vtk: filepath.Join(dir, "q1.vtu")}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if d := math.Abs(res.last-res.total0) / res.total0; d > 1e-13 {
		t.Errorf("one process: the total changed by %.1e", d)
	}
	q := gathered(t, res.q)
	want := filepath.Join(t.TempDir(), "q.bin")
	b := make([]byte, 8*len(q))
	for i, v := range q {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
	}
	if err := os.WriteFile(want, b, 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := vtk.ReadFile(filepath.Join(dir, "q1.vtu"))
	if err != nil {
		t.Fatal(err)
	}
	one := cellsOf(t, g)
	for _, ranks := range []int{2, 3, 4} {
		mpitest.Run(t, ranks, 2*time.Minute, meshEnv+"="+path, wantEnv+"="+want, dirEnv+"="+dir)
		pieces, err := vtk.ReadPVTUFile(filepath.Join(dir, fmt.Sprintf("q%d.pvtu", ranks)))
		if err != nil {
			t.Fatal(err)
		}
		got := cellsOf(t, pieces...)
		if len(got) != len(one) {
			t.Errorf("%d ranks: %d cells in the pieces, one process wrote %d", ranks, len(got), len(one))
		}
		for k, v := range one {
			if w, ok := got[k]; !ok || math.Abs(w-v) > 1e-12 {
				t.Fatalf("%d ranks: cell %s has q %v (present %v); one process wrote %v", ranks, k, w, ok, v)
			}
		}
	}
}

// cellsOf returns q on each cell of the grids by the cell's type and its
// nodes' coordinates, failing on a cell written twice.
func cellsOf(t *testing.T, gs ...*vtk.Grid) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, g := range gs {
		q := g.CellArray("q")
		if q == nil {
			t.Fatal("no cell array q")
		}
		qv, o := q.Float64s(), g.Offsets()
		for c := range g.NumCells() {
			key := fmt.Sprint(g.CellTypeOf(c))
			for _, p := range g.Cells[o[c]:o[c+1]] {
				key += fmt.Sprint(g.Points[3*p : 3*p+3])
			}
			if _, dup := out[key]; dup {
				t.Fatalf("cell %s written twice", key)
			}
			out[key] = qv[c]
		}
	}
	return out
}

// TestVTKMixed: -vtk writes a mesh of mixed cells (mesh/gmsh's fixture of
// hexahedra and prisms) with a type per cell, in the file's numbering,
// with q's gathered values.
func TestVTKMixed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.vtu")
	res, err := run(options{mesh: "../../mesh/gmsh/testdata/mixed-41-ascii.msh", steps: 3, every: 3, cfl: 0.5, vtk: path}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	g, err := vtk.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	count := map[vtk.CellType]int{}
	for c := range g.NumCells() {
		count[g.CellTypeOf(c)]++
	}
	if !g.Mixed() || count[vtk.Hexahedron] != 4 || count[vtk.Wedge] != 14 || len(count) != 2 {
		t.Errorf("cells of types %v, want 4 hexahedra (12) and 14 wedges (13)", count)
	}
	if q := g.CellArray("q"); q == nil || !slices.Equal(q.Float64s(), gathered(t, res.q)) {
		t.Errorf("q written %v, gathered %v", q, gathered(t, res.q))
	}
}

// TestOptions: bad options are errors saying which.
func TestOptions(t *testing.T) {
	for _, c := range []struct {
		o    options
		want string
	}{
		{options{n: 2, steps: 1, every: 1, cfl: 1.5}, "-cfl 1.5"},
		{options{n: 0, steps: 1, every: 1, cfl: 0.5}, "-n 0"},
		{options{n: 2, steps: 1, every: 0, cfl: 0.5}, "-every 0"},
	} {
		if _, err := run(c.o, io.Discard); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want an error saying %q", c.o, err, c.want)
		}
	}
}

// TestZeroTotal: on a mesh where no cell's centre lies in the initial
// ball (-n 1) the total starts at 0, and the change of the total is
// printed as an absolute one, never as NaN.
func TestZeroTotal(t *testing.T) {
	var out strings.Builder
	if _, err := run(options{n: 1, steps: 2, every: 1, cfl: 0.5, backend: "sequential"}, &out); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); strings.Contains(got, "NaN") || !strings.Contains(got, "total changed by 0.0e+00 (absolute: the initial total is 0") {
		t.Errorf("-n 1 printed\n%s\nwant the absolute change of a total starting at 0, no NaN", got)
	}
	for _, c := range []struct {
		total0, last float64
		want         string
	}{
		{0, 0, "0.0e+00 (absolute"},
		{0, 1e-3, "1.0e-03 (absolute"},
		{2, 2.002, "1.0e-03 (relative)"},
	} {
		if got := change(c.total0, c.last); !strings.HasPrefix(got, c.want) {
			t.Errorf("change(%g, %g) = %q, want %q...", c.total0, c.last, got, c.want)
		}
	}
}

// TestOutputOverInput: -vtk naming the mesh read (by another spelling)
// is refused, naming both flags, and the mesh is left as it was.
func TestOutputOverInput(t *testing.T) {
	dir := t.TempDir()
	msh := filepath.Join(dir, "square.msh")
	b, err := os.ReadFile(filepath.Join("..", "..", "mesh", "gmsh", "testdata", "square-22-ascii.msh"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(msh, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = run(options{mesh: msh, vtk: dir + "/./square.msh", steps: 1, every: 1, cfl: 0.5}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-vtk") || !strings.Contains(err.Error(), "-mesh "+msh) {
		t.Errorf("-vtk over -mesh: %v", err)
	}
	if after, _ := os.ReadFile(msh); !bytes.Equal(after, b) {
		t.Error("the mesh file changed")
	}
}

// TestEmptyOutput: -vtk "" is refused, naming the flag; left out, it
// writes nothing.
func TestEmptyOutput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-vtk", ""}, `-vtk ""`},
		{[]string{"-vtk="}, `-vtk ""`},
		{[]string{"-vtk", "u.vtu"}, ""},
		{nil, ""},
	} {
		fs := flag.NewFlagSet("advect", flag.ContinueOnError)
		var o options
		defineFlags(fs, &o)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		err := regfile.EmptyOutput(fs, "vtk")
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}

// TestMeshFlags: -n, which sizes the generated mesh, is refused with
// -mesh, which replaces it, naming both; either alone, or -n left at its
// default, passes.
func TestMeshFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-mesh", "m.msh", "-n", "4"}, "-n 4 with -mesh m.msh: -n shapes the generated mesh, which -mesh replaces"},
		{[]string{"-n", "16", "-mesh", "m.h5"}, "-n 16 with -mesh m.h5"},
		{[]string{"-mesh", "m.msh"}, ""},
		{[]string{"-n", "4"}, ""},
		{[]string{"-mesh", "", "-n", "4"}, ""},
		{nil, ""},
	} {
		fs := flag.NewFlagSet("advect", flag.ContinueOnError)
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

// TestFlagPlaceholders: -help names each flag's argument with one word
// (Go's flag package takes the first backquoted text of a usage string as
// the placeholder: -mesh once showed "op2mesh convert"); -mesh's is FILE.
func TestFlagPlaceholders(t *testing.T) {
	fs := flag.NewFlagSet("advect", flag.ContinueOnError)
	var o options
	defineFlags(fs, &o)
	fs.VisitAll(func(f *flag.Flag) {
		name, _ := flag.UnquoteUsage(f)
		if strings.ContainsAny(name, " \t") {
			t.Errorf("-%s's placeholder is %q", f.Name, name)
		}
	})
	if name, _ := flag.UnquoteUsage(fs.Lookup("mesh")); name != "FILE" {
		t.Errorf("-mesh's placeholder is %q, want FILE", name)
	}
}

// TestBadNumbers: a CFL number or a step count out of range, NaN
// included, is refused before anything runs.
func TestBadNumbers(t *testing.T) {
	for _, o := range []options{{n: 2, steps: 1, every: 1, cfl: math.NaN()}, {n: 2, steps: 1, every: 1, cfl: 1.5},
		{n: 2, steps: 1, every: 1, cfl: 0}, {n: 2, steps: -1, every: 1, cfl: 0.5}, {n: 2000, steps: 1, every: 1, cfl: 0.5}} {
		if _, err := run(o, io.Discard); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}
