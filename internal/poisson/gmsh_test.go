package poisson

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/mesh/gmsh"
)

// TestFromGmshFixtures solves the linear problem, which P1 elements
// reproduce to rounding, on the unit square Gmsh wrote in its four
// encodings (mesh/gmsh's fixtures), the boundary being the physical
// group "boundary".
func TestFromGmshFixtures(t *testing.T) {
	for _, enc := range []string{"22-ascii", "22-binary", "41-ascii", "41-binary"} {
		t.Run(enc, func(t *testing.T) {
			g, err := gmsh.ReadFile(filepath.Join("..", "..", "mesh", "gmsh", "testdata", "square-"+enc+".msh"))
			if err != nil {
				t.Fatal(err)
			}
			m, err := FromGmsh(g)
			if err != nil {
				t.Fatal(err)
			}
			onBoundary := 0
			for i, b := range m.Boundary {
				x, y := m.X[2*i], m.X[2*i+1]
				edge := x < 1e-12 || y < 1e-12 || x > 1-1e-12 || y > 1-1e-12
				if (b != 0) != edge {
					t.Errorf("node %d at (%g, %g): boundary %d", i, x, y, b)
				}
				onBoundary += int(b)
			}
			res, err := Solve(m, Problems["linear"], op2.SolverOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.L2Error > 1e-9 {
				t.Errorf("linear problem: L2 error %g on %d nodes (%d on the boundary)", res.L2Error, m.Nodes, onBoundary)
			}
		})
	}
}

var gmshPython struct {
	once sync.Once
	path string
}

// pythonGmsh returns a python3 with Gmsh's module, or skips t.
func pythonGmsh(t *testing.T) string {
	gmshPython.once.Do(func() {
		for _, p := range []string{"python3", "/usr/bin/python3"} {
			if exec.Command(p, "-c", "import gmsh").Run() == nil {
				gmshPython.path = p
				return
			}
		}
	})
	if gmshPython.path == "" {
		t.Skip("needs python3 with Gmsh's module (Debian: apt-get install python3-gmsh)")
	}
	return gmshPython.path
}

// squareScript makes a unit-square triangle mesh of size h with Gmsh,
// with or without the physical group "boundary".
const squareScript = `
import sys, gmsh
h, path, groups = float(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
gmsh.initialize()
gmsh.option.setNumber("General.Terminal", 0)
gmsh.model.add("square")
s = gmsh.model.occ.addRectangle(0, 0, 0, 1, 1)
gmsh.model.occ.synchronize()
if groups:
    curves = [t for _, t in gmsh.model.getBoundary([(2, s)], oriented=False)]
    g = gmsh.model.addPhysicalGroup(1, curves)
    gmsh.model.setPhysicalName(1, g, "boundary")
    g = gmsh.model.addPhysicalGroup(2, [s])
    gmsh.model.setPhysicalName(2, g, "domain")
else:
    gmsh.option.setNumber("Mesh.SaveAll", 1)
gmsh.model.mesh.setSize(gmsh.model.getEntities(0), h)
gmsh.model.mesh.generate(2)
gmsh.option.setNumber("Mesh.MshFileVersion", 4.1)
gmsh.write(path)
gmsh.finalize()
`

// gmshSquare writes a Gmsh unit square of size h and reads it.
func gmshSquare(t *testing.T, h float64, groups bool) *Mesh {
	t.Helper()
	py := pythonGmsh(t)
	path := filepath.Join(t.TempDir(), fmt.Sprintf("square-%g.msh", h))
	g := "0"
	if groups {
		g = "1"
	}
	if out, err := exec.Command(py, "-c", squareScript, fmt.Sprint(h), path, g).CombinedOutput(); err != nil {
		t.Fatalf("gmsh: %v\n%s", err, out)
	}
	gm, err := gmsh.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := FromGmsh(gm)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestGmshConvergence solves the sine problem on unit squares Gmsh
// meshes with sizes 0.1, 0.05 and 0.025: the L2 error falls at second
// order (by about 4 per halving). Without a boundary group, the boundary
// comes from the mesh's topology and the linear problem is exact.
func TestGmshConvergence(t *testing.T) {
	var errs []float64
	for _, h := range []float64{0.1, 0.05, 0.025} {
		m := gmshSquare(t, h, true)
		res, err := Solve(m, Problems["sine"], op2.SolverOptions{})
		if err != nil {
			t.Fatal(err)
		}
		errs = append(errs, res.L2Error)
		t.Logf("h %g: %d nodes, %d triangles, L2 error %.3e", h, m.Nodes, len(m.Tri)/3, res.L2Error)
	}
	for i := 1; i < len(errs); i++ {
		if rate := math.Log2(errs[i-1] / errs[i]); rate < 1.8 {
			t.Errorf("L2 errors %v: order %.2f from h/%d to h/%d, want about 2", errs, rate, 1<<(i-1), 1<<i)
		}
	}
	m := gmshSquare(t, 0.1, false)
	res, err := Solve(m, Problems["linear"], op2.SolverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.L2Error > 1e-9 {
		t.Errorf("linear problem, boundary from the topology: L2 error %g", res.L2Error)
	}
}

// boxScript makes a unit-box tetrahedral mesh of size h with Gmsh, with
// the physical group "boundary" (its faces) when groups is set.
const boxScript = `
import sys, gmsh
h, path, groups = float(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
gmsh.initialize()
gmsh.option.setNumber("General.Terminal", 0)
gmsh.model.add("box")
v = gmsh.model.occ.addBox(0, 0, 0, 1, 1, 1)
gmsh.model.occ.synchronize()
if groups:
    faces = [t for _, t in gmsh.model.getBoundary([(3, v)], oriented=False)]
    g = gmsh.model.addPhysicalGroup(2, faces)
    gmsh.model.setPhysicalName(2, g, "boundary")
    g = gmsh.model.addPhysicalGroup(3, [v])
    gmsh.model.setPhysicalName(3, g, "volume")
else:
    gmsh.option.setNumber("Mesh.SaveAll", 1)
gmsh.model.mesh.setSize(gmsh.model.getEntities(0), h)
gmsh.model.mesh.generate(3)
gmsh.option.setNumber("Mesh.MshFileVersion", 4.1)
gmsh.option.setNumber("Mesh.Binary", 1)
gmsh.write(path)
gmsh.finalize()
`

// gmshBox writes a Gmsh unit box of size h and reads it.
func gmshBox(t *testing.T, h float64, groups bool) *Mesh3 {
	t.Helper()
	py := pythonGmsh(t)
	path := filepath.Join(t.TempDir(), fmt.Sprintf("box-%g.msh", h))
	g := "0"
	if groups {
		g = "1"
	}
	if out, err := exec.Command(py, "-c", boxScript, fmt.Sprint(h), path, g).CombinedOutput(); err != nil {
		t.Fatalf("gmsh: %v\n%s", err, out)
	}
	gm, err := gmsh.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := FromGmsh3(gm)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestGmsh3DConvergence solves the 3-D sine problem on unit boxes Gmsh
// meshes with sizes 0.2, 0.1 and 0.05 (the boundary applied with
// ZeroRowsColumns): the L2 error falls at second order. The linear
// problem is exact, with the boundary from the group and from the
// topology, and on mesh/gmsh's fixture box.
func TestGmsh3DConvergence(t *testing.T) {
	var errs []float64
	for _, h := range []float64{0.2, 0.1, 0.05} {
		m := gmshBox(t, h, true)
		res, err := Solve3(m, Problems3["sine"], op2.SolverOptions{})
		if err != nil {
			t.Fatal(err)
		}
		errs = append(errs, res.L2Error)
		t.Logf("h %g: %d nodes, %d tetrahedra, L2 error %.3e, %d iterations", h, m.Nodes, len(m.Tet)/4, res.L2Error, res.Info.Iterations)
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
		res, err := Solve3(gmshBox(t, 0.3, groups), Problems3["linear"], op2.SolverOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res.L2Error > 1e-9 {
			t.Errorf("linear problem (boundary group %v): L2 error %g", groups, res.L2Error)
		}
	}
}

// TestFromGmsh3Fixture: the linear problem on the box Gmsh wrote in its
// four encodings (its group is "walls": the boundary comes from the
// topology).
func TestFromGmsh3Fixture(t *testing.T) {
	for _, enc := range []string{"22-ascii", "41-binary"} {
		g, err := gmsh.ReadFile(filepath.Join("..", "..", "mesh", "gmsh", "testdata", "box-"+enc+".msh"))
		if err != nil {
			t.Fatal(err)
		}
		m, err := FromGmsh3(g)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Solve3(m, Problems3["linear"], op2.SolverOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res.L2Error > 1e-9 {
			t.Errorf("%s: linear problem: L2 error %g", enc, res.L2Error)
		}
	}
}

// TestSolve3OnRanks solves the 3-D problem on a Gmsh box (written once by
// the test) on 2 and 3 MPI ranks and compares the L2 error with one
// process's.
func TestSolve3OnRanks(t *testing.T) {
	const meshEnv, l2Env = "POISSON3_MESH", "POISSON3_L2"
	solve := func(path string) float64 {
		g, err := gmsh.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := FromGmsh3(g)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Solve3(m, Problems3["sine"], op2.SolverOptions{RTol: 1e-13})
		if err != nil {
			t.Fatal(err)
		}
		return res.L2Error
	}
	if mpitest.InRanks() {
		got := solve(os.Getenv(meshEnv))
		want, err := strconv.ParseFloat(os.Getenv(l2Env), 64)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-want) > 1e-10 {
			t.Errorf("rank %d of %d: L2 error %.17g; one process %.17g", op2.Rank(), op2.Ranks(), got, want)
		}
		if err := op2.Finalize(); err != nil {
			t.Fatal(err)
		}
		return
	}
	py := pythonGmsh(t)
	path := filepath.Join(t.TempDir(), "box.msh")
	if out, err := exec.Command(py, "-c", boxScript, "0.15", path, "1").CombinedOutput(); err != nil {
		t.Fatalf("gmsh: %v\n%s", err, out)
	}
	want := solve(path)
	for _, ranks := range []int{2, 3} {
		t.Run(strconv.Itoa(ranks), func(t *testing.T) {
			mpitest.Run(t, ranks, 2*time.Minute, meshEnv+"="+path, fmt.Sprintf("%s=%.17g", l2Env, want))
		})
	}
}
