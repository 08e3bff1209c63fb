package poisson

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/gmshtest"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/internal/testreq"
	"github.com/goop2/op2/mesh/gmsh"
	"github.com/goop2/op2/mesh/unstructured"
)

// fixture is the path of mesh/gmsh's fixture name.
func fixture(name string) string {
	return filepath.Join("..", "..", "mesh", "gmsh", "testdata", name)
}

// toHDF5 converts the Gmsh mesh in path to the HDF5 file `op2mesh
// convert` writes, in a temporary folder, and returns its path.
func toHDF5(t *testing.T, path string) string {
	t.Helper()
	h5 := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(path), ".msh")+".h5")
	if err := unstructured.Convert(path, h5); err != nil {
		t.Fatal(err)
	}
	return h5
}

// solveFile loads the mesh in path in its own numbering and solves the
// problem called name on it, in 2-D or 3-D as the mesh is.
func solveFile(t *testing.T, path, name string, opts op2.SolverOptions) (*unstructured.Mesh, *Result) {
	t.Helper()
	return solveOrdered(t, path, "", name, opts)
}

// solveOrdered is solveFile with the mesh renumbered as ordering says
// (Load).
func solveOrdered(t *testing.T, path, ordering, name string, opts op2.SolverOptions) (*unstructured.Mesh, *Result) {
	t.Helper()
	m, err := Load(path, ordering)
	if err != nil {
		t.Fatal(err)
	}
	var res *Result
	if m.Dim == 2 {
		res, err = SolveMesh(m, Problems[name], opts)
	} else {
		res, err = SolveMesh3(m, Problems3[name], opts)
	}
	if err != nil {
		t.Fatal(err)
	}
	return m, res
}

// gathered gathers d's values in the declared numbering.
func gathered[T op2.Scalar](t *testing.T, d *op2.Dat[T]) []T {
	t.Helper()
	v, err := d.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestMeshFixtures solves the linear problem, which P1 elements reproduce
// to rounding, on the unit square Gmsh wrote in its four encodings
// (mesh/gmsh's fixtures) and on its HDF5 conversion, the boundary being
// the physical group "boundary": the Dirichlet nodes are those on the
// square's sides.
func TestMeshFixtures(t *testing.T) {
	var paths []string
	for _, enc := range []string{"22-ascii", "22-binary", "41-ascii", "41-binary"} {
		paths = append(paths, fixture("square-"+enc+".msh"))
	}
	paths = append(paths, toHDF5(t, paths[3]))
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			m, res := solveFile(t, path, "linear", op2.SolverOptions{})
			x, bnd := gathered(t, m.X), gathered(t, res.Boundary)
			onBoundary := 0
			for i, b := range bnd {
				x, y := x[2*i], x[2*i+1]
				edge := x < 1e-12 || y < 1e-12 || x > 1-1e-12 || y > 1-1e-12
				if (b != 0) != edge {
					t.Errorf("node %d at (%g, %g): boundary %d", i, x, y, b)
				}
				onBoundary += int(b)
			}
			if res.L2Error > 1e-9 || res.MaxNode > 1e-9 {
				t.Errorf("linear problem: L2 error %g, largest nodal %g on %d nodes (%d on the boundary)", res.L2Error, res.MaxNode, len(bnd), onBoundary)
			}
		})
	}
}

// gmshScript makes, with Gmsh, a unit square of triangles ("square",
// written in ASCII) or a unit box of tetrahedra ("box", binary) of mesh
// size h, with the physical groups "boundary" (its boundary) and "domain"
// or "volume" when groups is "1".
const gmshScript = `
import sys, gmsh
kind, h, path, groups = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
dim = 2 if kind == "square" else 3
gmsh.initialize()
gmsh.option.setNumber("General.Terminal", 0)
gmsh.model.add(kind)
tag = gmsh.model.occ.addRectangle(0, 0, 0, 1, 1) if dim == 2 else gmsh.model.occ.addBox(0, 0, 0, 1, 1, 1)
gmsh.model.occ.synchronize()
if groups:
    bnd = [t for _, t in gmsh.model.getBoundary([(dim, tag)], oriented=False)]
    g = gmsh.model.addPhysicalGroup(dim - 1, bnd)
    gmsh.model.setPhysicalName(dim - 1, g, "boundary")
    g = gmsh.model.addPhysicalGroup(dim, [tag])
    gmsh.model.setPhysicalName(dim, g, "domain" if dim == 2 else "volume")
else:
    gmsh.option.setNumber("Mesh.SaveAll", 1)
gmsh.model.mesh.setSize(gmsh.model.getEntities(0), h)
gmsh.model.mesh.generate(dim)
gmsh.option.setNumber("Mesh.MshFileVersion", 4.1)
gmsh.option.setNumber("Mesh.Binary", 1 if dim == 3 else 0)
gmsh.write(path)
gmsh.finalize()
`

// gmshFile writes gmshScript's mesh of kind "square" or "box" with size
// h (and its groups when groups is set) to a temporary .msh file, and
// returns its path.
func gmshFile(t *testing.T, kind string, h float64, groups bool) string {
	t.Helper()
	py := gmshtest.Need(t)
	path := filepath.Join(t.TempDir(), fmt.Sprintf("%s-%g.msh", kind, h))
	g := "0"
	if groups {
		g = "1"
	}
	if out, err := exec.Command(py, "-c", gmshScript, kind, fmt.Sprint(h), path, g).CombinedOutput(); err != nil {
		t.Fatalf("gmsh: %v\n%s", err, out)
	}
	return path
}

// TestGmshConvergence solves the sine problem on unit squares Gmsh
// meshes with sizes 0.1, 0.05 and 0.025: the L2 error falls at second
// order (by about 4 per halving). Without a boundary group, the boundary
// comes from the mesh's boundary facets and the linear problem is exact.
func TestGmshConvergence(t *testing.T) {
	var errs []float64
	for _, h := range []float64{0.1, 0.05, 0.025} {
		m, res := solveFile(t, gmshFile(t, "square", h, true), "sine", op2.SolverOptions{})
		errs = append(errs, res.L2Error)
		t.Logf("h %g: %d nodes, %d triangles, L2 error %.3e, %d iterations", h, m.Nodes.Size(), m.Cells.Size(), res.L2Error, res.Info.Iterations)
	}
	for i := 1; i < len(errs); i++ {
		if rate := math.Log2(errs[i-1] / errs[i]); rate < 1.8 {
			t.Errorf("L2 errors %v: order %.2f from h/%d to h/%d, want about 2", errs, rate, 1<<(i-1), 1<<i)
		}
	}
	_, res := solveFile(t, gmshFile(t, "square", 0.1, false), "linear", op2.SolverOptions{})
	if res.L2Error > 1e-9 {
		t.Errorf("linear problem, boundary from the boundary facets: L2 error %g", res.L2Error)
	}
}

// TestGmsh3DConvergence solves the 3-D sine problem on unit boxes Gmsh
// meshes with sizes 0.2, 0.1 and 0.05 (the boundary applied with
// ZeroRowsColumns, the nodes renumbered by RCM): the L2 error falls at
// second order. The linear
// problem is exact, with the boundary from the group and from the
// boundary facets.
func TestGmsh3DConvergence(t *testing.T) {
	var errs []float64
	for _, h := range []float64{0.2, 0.1, 0.05} {
		m, res := solveOrdered(t, gmshFile(t, "box", h, true), "rcm", "sine", op2.SolverOptions{})
		errs = append(errs, res.L2Error)
		t.Logf("h %g: %d nodes, %d tetrahedra, L2 error %.3e, %d iterations", h, m.Nodes.Size(), m.Cells.Size(), res.L2Error, res.Info.Iterations)
	}
	// Gmsh's sizes are targets, not exact halvings: each step's order
	// is at least 1.6, and the overall one at least 1.8.
	for i := 1; i < len(errs); i++ {
		if rate := math.Log2(errs[i-1] / errs[i]); rate < 1.6 {
			t.Errorf("L2 errors %v: order %.2f from h/%d to h/%d, want about 2", errs, rate, 1<<(i-1), 1<<i)
		}
	}
	if rate := math.Log2(errs[0]/errs[len(errs)-1]) / float64(len(errs)-1); rate < 1.8 {
		t.Errorf("L2 errors %v: order %.2f overall, want about 2", errs, rate)
	}
	for _, groups := range []bool{true, false} {
		_, res := solveFile(t, gmshFile(t, "box", 0.3, groups), "linear", op2.SolverOptions{})
		if res.L2Error > 1e-9 {
			t.Errorf("linear problem (boundary group %v): L2 error %g", groups, res.L2Error)
		}
	}
}

// TestMesh3Fixture: the linear problem on the box Gmsh wrote (its group
// is "walls": the boundary is every boundary facet), from two encodings
// and the HDF5 conversion; every node on the box's faces is a Dirichlet
// node.
func TestMesh3Fixture(t *testing.T) {
	paths := []string{fixture("box-22-ascii.msh"), fixture("box-41-binary.msh")}
	for _, path := range append(paths, toHDF5(t, paths[1])) {
		m, res := solveFile(t, path, "linear", op2.SolverOptions{})
		if res.L2Error > 1e-9 {
			t.Errorf("%s: linear problem: L2 error %g", path, res.L2Error)
		}
		x, bnd := gathered(t, m.X), gathered(t, res.Boundary)
		for i, b := range bnd {
			face := false
			for _, v := range x[3*i : 3*i+3] {
				face = face || v < 1e-12 || v > 1-1e-12
			}
			if (b != 0) != face {
				t.Errorf("%s: node %d at %v: boundary %d", path, i, x[3*i:3*i+3], b)
			}
		}
	}
}

// TestDirichletNodeInNoCell: a node that no cell has (added to the
// square fixture, outside the square) is a Dirichlet node, so that the
// system stays regular, and takes the boundary value.
func TestDirichletNodeInNoCell(t *testing.T) {
	g, err := gmsh.ReadFile(fixture("square-41-binary.msh"))
	if err != nil {
		t.Fatal(err)
	}
	g.X = append(g.X, 2, 3, 0)
	g.NodeTags = append(g.NodeTags, g.NodeTags[len(g.NodeTags)-1]+1)
	m, err := unstructured.Declare(g, unstructured.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := SolveMesh(m, Problems["linear"], op2.SolverOptions{RTol: 1e-13})
	if err != nil {
		t.Fatal(err)
	}
	bnd, u := gathered(t, res.Boundary), gathered(t, res.U)
	last := len(bnd) - 1
	if bnd[last] != 1 || math.Abs(u[last]-Problems["linear"].Exact(2, 3)) > 1e-12 {
		t.Errorf("the node in no cell: boundary %d, u %g; want 1, %g", bnd[last], u[last], Problems["linear"].Exact(2, 3))
	}
	if res.L2Error > 1e-9 || res.MaxNode > 1e-9 {
		t.Errorf("linear problem: L2 error %g, largest nodal %g", res.L2Error, res.MaxNode)
	}
}

// TestMeshErrors: a boundary group of the cells' dimension, a 3-D mesh
// for the 2-D solver (and the other way round), a renumbering under a
// wrong name are errors saying so.
func TestMeshErrors(t *testing.T) {
	g, err := gmsh.ReadFile(fixture("square-41-binary.msh"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range g.Physical {
		switch g.Physical[i].Name {
		case "boundary":
			g.Physical[i].Name = "sides"
		case "domain":
			g.Physical[i].Name = "boundary"
		}
	}
	m, err := unstructured.Declare(g, unstructured.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SolveMesh(m, Problems["linear"], op2.SolverOptions{}); err == nil || !strings.Contains(err.Error(), `"boundary" is 2-D`) {
		t.Errorf("a 2-D group \"boundary\": %v", err)
	}
	if _, err := SolveMesh3(m, Problems3["linear"], op2.SolverOptions{}); err == nil || !strings.Contains(err.Error(), "linear tetrahedra") {
		t.Errorf("triangles for SolveMesh3: %v", err)
	}
	box, err := Load(fixture("box-41-binary.msh"), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SolveMesh(box, Problems["linear"], op2.SolverOptions{}); err == nil || !strings.Contains(err.Error(), "3-D tetrahedra") {
		t.Errorf("tetrahedra for SolveMesh: %v", err)
	}
	if _, err := Load(fixture("box-41-binary.msh"), "metis"); err == nil || !strings.Contains(err.Error(), `unknown renumbering "metis"`) {
		t.Errorf("Load with renumbering metis: %v", err)
	}
}

// TestMeshRenumbered: the mesh loaded renumbered by RCM or RCB gives the
// solution and the Dirichlet nodes of the file's numbering (in the
// declared numbering), in 2-D and 3-D.
func TestMeshRenumbered(t *testing.T) {
	for _, path := range []string{fixture("square-41-ascii.msh"), fixture("box-41-ascii.msh")} {
		var wantU []float64
		var wantB []int32
		var wantL2 float64
		for _, ordering := range []string{"", "rcm", "rcb"} {
			m, err := Load(path, ordering)
			if err != nil {
				t.Fatal(err)
			}
			var res *Result
			if m.Dim == 2 {
				res, err = SolveMesh(m, Problems["sine"], op2.SolverOptions{RTol: 1e-13})
			} else {
				res, err = SolveMesh3(m, Problems3["sine"], op2.SolverOptions{RTol: 1e-13})
			}
			if err != nil {
				t.Fatal(err)
			}
			u, b := gathered(t, res.U), gathered(t, res.Boundary)
			if ordering == "" {
				wantU, wantB, wantL2 = u, b, res.L2Error
				continue
			}
			if math.Abs(res.L2Error-wantL2) > 1e-12 {
				t.Errorf("%s, %s: L2 error %g, file's numbering %g", path, ordering, res.L2Error, wantL2)
			}
			for i := range wantU {
				if math.Abs(u[i]-wantU[i]) > 1e-10 || b[i] != wantB[i] {
					t.Fatalf("%s, %s: node %d (declared): u %v, boundary %d; file's numbering %v, %d", path, ordering, i, u[i], b[i], wantU[i], wantB[i])
				}
			}
		}
	}
}

// TestMeshSameOnEveryBackend: openmp and opencl (both device schemes)
// give the Dirichlet nodes and, to the solver's tolerance, the solution
// sequential gives, on a 2-D and a 3-D Gmsh mesh.
func TestMeshSameOnEveryBackend(t *testing.T) {
	paths := []string{fixture("square-41-binary.msh"), fixture("box-41-binary.msh")}
	if gmshtest.Python() != "" {
		paths = []string{gmshFile(t, "square", 0.05, true), gmshFile(t, "box", 0.15, false)}
	}
	for _, path := range paths {
		solve := func(t *testing.T, cfg op2.Config) ([]float64, []int32) {
			cfg.CacheDir = os.Getenv("OP2_CACHE_DIR")
			if err := op2.Configure(cfg); err != nil {
				if cfg.Backend == "opencl" {
					testreq.Check(t, "opencl", err, op2.ErrBackendUnavailable)
				}
				t.Fatal(err)
			}
			defer op2.Configure(op2.Config{CacheDir: cfg.CacheDir})
			_, res := solveFile(t, path, "sine", op2.SolverOptions{RTol: 1e-13})
			return gathered(t, res.U), gathered(t, res.Boundary)
		}
		seqU, seqB := solve(t, op2.Config{Backend: "sequential"})
		for _, cfg := range []op2.Config{
			{Backend: "openmp"},
			{Backend: "opencl", DeviceScheme: "staged"},
			{Backend: "opencl", DeviceScheme: "atomics"},
		} {
			t.Run(filepath.Base(path)+"/"+cfg.Backend+cfg.DeviceScheme, func(t *testing.T) {
				u, b := solve(t, cfg)
				for i := range seqU {
					if d := seqU[i] - u[i]; d > 1e-11 || d < -1e-11 || b[i] != seqB[i] {
						t.Fatalf("node %d: sequential u %v, boundary %d; %s u %v, boundary %d", i, seqU[i], seqB[i], cfg.Backend, u[i], b[i])
					}
				}
			})
		}
	}
}

// TestMeshOnRanks solves on a 2-D and a 3-D Gmsh mesh (written by the
// test where Gmsh's Python module is installed, else mesh/gmsh's
// fixtures), read from the .msh file and from its HDF5 conversion, on 2,
// 3 and 4 MPI ranks, and on the square fixture with a node in no cell:
// the L2 and largest nodal errors equal one process's to 1e-10 and the
// Dirichlet nodes are the same.
func TestMeshOnRanks(t *testing.T) {
	const meshEnv, l2Env, maxEnv, bndEnv = "POISSON_MESH", "POISSON_L2", "POISSON_MAX", "POISSON_BOUNDARY"
	opts := op2.SolverOptions{RTol: 1e-13}
	flags := func(b []int32) string {
		var s strings.Builder
		for _, v := range b {
			s.WriteByte(byte('0' + v))
		}
		return s.String()
	}
	if mpitest.InRanks() {
		_, res := solveFile(t, os.Getenv(meshEnv), "sine", opts)
		bnd := gathered(t, res.Boundary)
		want, err := strconv.ParseFloat(os.Getenv(l2Env), 64)
		if err != nil {
			t.Fatal(err)
		}
		wantMax, err := strconv.ParseFloat(os.Getenv(maxEnv), 64)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(res.L2Error-want) > 1e-10 || math.Abs(res.MaxNode-wantMax) > 1e-10 {
			t.Errorf("rank %d of %d: L2 error %.17g, largest nodal error %.17g; one process %.17g, %.17g", op2.Rank(), op2.Ranks(), res.L2Error, res.MaxNode, want, wantMax)
		}
		if op2.Rank() == 0 && flags(bnd) != os.Getenv(bndEnv) {
			t.Errorf("%d ranks: Dirichlet nodes\n%s\none process's\n%s", op2.Ranks(), flags(bnd), os.Getenv(bndEnv))
		}
		if err := op2.Finalize(); err != nil {
			t.Fatal(err)
		}
		return
	}
	paths := []string{fixture("square-41-binary.msh"), fixture("box-41-binary.msh")}
	if gmshtest.Python() != "" {
		paths = []string{gmshFile(t, "square", 0.05, true), gmshFile(t, "box", 0.15, true)}
	} else {
		t.Log("no python3 with Gmsh's module: the fixtures only")
	}
	var files [][]string // each mesh's files
	for _, msh := range paths {
		files = append(files, []string{msh, toHDF5(t, msh)})
	}
	// And the square fixture with a node in no cell (a Dirichlet node),
	// as HDF5.
	g, err := gmsh.ReadFile(fixture("square-41-binary.msh"))
	if err != nil {
		t.Fatal(err)
	}
	g.X = append(g.X, 2, 3, 0)
	g.NodeTags = append(g.NodeTags, g.NodeTags[len(g.NodeTags)-1]+1)
	stray := filepath.Join(t.TempDir(), "stray-node.h5")
	if err := unstructured.WriteHDF5(stray, g); err != nil {
		t.Fatal(err)
	}
	files = append(files, []string{stray})
	for _, same := range files {
		_, res := solveFile(t, same[0], "sine", opts)
		env := []string{fmt.Sprintf("%s=%.17g", l2Env, res.L2Error), fmt.Sprintf("%s=%.17g", maxEnv, res.MaxNode), bndEnv + "=" + flags(gathered(t, res.Boundary))}
		for _, path := range same {
			for _, ranks := range []int{2, 3, 4} {
				t.Run(fmt.Sprintf("%s/%d", filepath.Base(path), ranks), func(t *testing.T) {
					mpitest.Run(t, ranks, 2*time.Minute, append([]string{meshEnv + "=" + path}, env...)...)
				})
			}
		}
	}
}
