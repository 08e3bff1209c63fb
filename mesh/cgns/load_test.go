package cgns_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/internal/testcache"
	"github.com/goop2/op2/mesh/cgns"
	"github.com/goop2/op2/mesh/unstructured"
)

func TestMain(m *testing.M) { os.Exit(testcache.Run(m, "goop2-cgns-cache-")) }

// summary is what a declared mesh holds, over all ranks.
type summary struct {
	Nodes, Cells       int
	Interior, Boundary []int
	Volume, Flux       float64 // Σ cell volumes; Σ over boundary facets of centre · normal
	X                  []float64
}

func loopSum(t *testing.T, set op2.IterationSet, src, name string, args ...op2.Arg) float64 {
	t.Helper()
	g, err := op2.NewGlobal[float64](1, nil, name+"_sum")
	if err != nil {
		t.Fatal(err)
	}
	if err := op2.ParLoop(op2.NewKernel(src, name), set, append(args, g.Arg(op2.Inc))...); err != nil {
		t.Fatal(err)
	}
	return g.Data()[0]
}

func summarize(t *testing.T, m *unstructured.Mesh) summary {
	t.Helper()
	geo, err := m.Geometry()
	if err != nil {
		t.Fatal(err)
	}
	s := summary{Nodes: m.Nodes.GlobalSize(), Cells: m.Cells.GlobalSize()}
	s.Volume = loopSum(t, m.Cells, "void vol(const double *v, double *s) { *s += *v; }", "vol", geo.CellVolume.Arg(op2.Read))
	for _, f := range m.Interior {
		s.Interior = append(s.Interior, f.Set.GlobalSize())
	}
	flux := fmt.Sprintf("void flux(const double *c, const double *a, double *s) { for (int k = 0; k < %d; k++) *s += c[k] * a[k]; }", m.Dim)
	for i, f := range m.Boundary {
		s.Boundary = append(s.Boundary, f.Set.GlobalSize())
		s.Flux += loopSum(t, f.Set, flux, "flux", geo.Boundary[i].Centre.Arg(op2.Read), geo.Boundary[i].Normal.Arg(op2.Read))
	}
	if s.X, err = m.X.Gather(); err != nil {
		t.Fatal(err)
	}
	return s
}

func same(a, b summary) string {
	near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-11*(1+math.Abs(x)) }
	switch {
	case a.Nodes != b.Nodes || a.Cells != b.Cells || !slices.Equal(a.Interior, b.Interior) || !slices.Equal(a.Boundary, b.Boundary):
		return fmt.Sprintf("counts %d %d %v %v, want %d %d %v %v", a.Nodes, a.Cells, a.Interior, a.Boundary, b.Nodes, b.Cells, b.Interior, b.Boundary)
	case !near(a.Volume, b.Volume) || !near(a.Flux, b.Flux):
		return fmt.Sprintf("volume %.17g flux %.17g, want %.17g %.17g", a.Volume, a.Flux, b.Volume, b.Flux)
	case op2.Rank() == 0 && !slices.Equal(a.X, b.X):
		return "coordinates differ"
	}
	return ""
}

// TestLoadCGNS: unstructured.Load declares the tetrahedral box from the
// .cgns aflr3_to_cgns made of it as from its .msh — counts, volume,
// boundary flux, coordinates in the file's order — and its groups are
// the boundary conditions, Subsets of the boundary facets holding them all.
func TestLoadCGNS(t *testing.T) {
	path, _ := convert(t, "box")
	c, err := unstructured.Load(path, unstructured.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := unstructured.Load(filepath.Join("testdata", "box.msh"), unstructured.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := summarize(t, g)
	if d := same(summarize(t, c), want); d != "" {
		t.Error(d)
	}
	if math.Abs(want.Volume-1) > 1e-12 || math.Abs(want.Flux-3) > 1e-12 {
		t.Errorf("volume %g, flux %g: want 1 and 3", want.Volume, want.Flux)
	}
	faces := 0
	for _, gr := range c.Groups {
		if gr.Dim != 2 || len(gr.Boundary) != 1 {
			t.Fatalf("group %q: dim %d, %d boundary subsets", gr.Name, gr.Dim, len(gr.Boundary))
		}
		faces += gr.Boundary[0].Size() // one process
	}
	if faces != want.Boundary[0] {
		t.Errorf("the boundary conditions hold %d faces, the boundary has %d", faces, want.Boundary[0])
	}
}

// TestLoadHybridCGNS: the boundary-layer mesh (prisms under tetrahedra)
// from its .cgns is read (TestReadConverted) and declared or refused as
// its .msh is: the same error or the same mesh.
func TestLoadHybridCGNS(t *testing.T) {
	path, _ := convert(t, "layer")
	c, cerr := unstructured.Load(path, unstructured.Options{})
	g, gerr := unstructured.Load(filepath.Join("testdata", "layer.msh"), unstructured.Options{})
	switch {
	case (cerr == nil) != (gerr == nil):
		t.Fatalf("from .cgns: %v; from .msh: %v", cerr, gerr)
	case cerr != nil:
		if cerr.Error() != gerr.Error() {
			t.Errorf("from .cgns: %v\nfrom .msh: %v", cerr, gerr)
		}
	default:
		if d := same(summarize(t, c), summarize(t, g)); d != "" {
			t.Error(d)
		}
	}
}

// cellValues is a Dat over m's cells: cell volume and centre (dim 4).
func cellValues(t *testing.T, m *unstructured.Mesh) (*op2.Dat[float64], *op2.Dat[float64]) {
	t.Helper()
	geo, err := m.Geometry()
	if err != nil {
		t.Fatal(err)
	}
	return geo.CellVolume, geo.CellCentre
}

// TestWriteSolution writes cell volumes and centres of the box declared
// from its .cgns into a copy of the file (WriteDats) and reads them back
// (ReadField) in the file's cell order, equal to mesh/topology's volumes
// gathered; a second solution goes into the copy in place; misuse is
// refused naming what is wrong, and the mesh file is left as it was.
func TestWriteSolution(t *testing.T) {
	path, _ := convert(t, "box")
	m, err := unstructured.Load(path, unstructured.Options{})
	if err != nil {
		t.Fatal(err)
	}
	vol, centre := cellValues(t, m)
	out := filepath.Join(t.TempDir(), "out.cgns")
	if err := cgns.WriteDats(out, path, "FlowSolution", vol, centre); err != nil {
		t.Fatal(err)
	}
	wantVol, err := vol.Gather()
	if err != nil {
		t.Fatal(err)
	}
	wantC, err := centre.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got, err := cgns.ReadField(out, "FlowSolution", vol.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, wantVol) {
		t.Errorf("%s read back differs", vol.Name())
	}
	for k, axis := range []string{"X", "Y", "Z"} {
		got, err := cgns.ReadField(out, "FlowSolution", centre.Name()+axis)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if got[i] != wantC[3*i+k] {
				t.Fatalf("%s%s[%d] = %g, want %g", centre.Name(), axis, i, got[i], wantC[3*i+k])
			}
		}
	}
	// In place, a second solution beside the first.
	ones := make([]float64, len(wantVol))
	for i := range ones {
		ones[i] = float64(i)
	}
	if err := cgns.WriteSolution(out, out, "Step2", cgns.Field{Name: "Index", Values: ones}); err != nil {
		t.Fatal(err)
	}
	if got, err := cgns.ReadField(out, "Step2", "Index"); err != nil || !slices.Equal(got, ones) {
		t.Errorf("Step2/Index: %v", err)
	}
	// Another path to the same file: in place, not a copy onto itself.
	alias := filepath.Join(filepath.Dir(out), "link.cgns")
	if err := os.Symlink(out, alias); err != nil {
		t.Fatal(err)
	}
	if err := cgns.WriteSolution(alias, out, "Step3", cgns.Field{Name: "Index", Values: ones}); err != nil {
		t.Fatal(err)
	}
	if got, err := cgns.ReadField(out, "Step3", "Index"); err != nil || !slices.Equal(got, ones) {
		t.Errorf("Step3/Index: %v", err)
	}
	if got, err := cgns.ReadField(out, "FlowSolution", vol.Name()); err != nil || !slices.Equal(got, wantVol) {
		t.Errorf("FlowSolution after Step2: %v", err)
	}
	if _, err := cgns.ReadField(path, "FlowSolution", vol.Name()); err == nil {
		t.Error("the mesh file has a solution: WriteDats wrote into it")
	}
	for _, tc := range []struct {
		name   string
		sol    string
		fields []cgns.Field
	}{
		{"few values", "S", []cgns.Field{{Name: "Index", Values: ones[1:]}}},
		{"no field name", "S", []cgns.Field{{Values: ones}}},
		{"long solution name", "ThisSolutionNameIsLongerThan32Chars", nil},
		{"slash", "a/b", nil},
	} {
		err := cgns.WriteSolution(out, out, tc.sol, tc.fields...)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}
	if _, err := cgns.ReadField(out, "Nothing", "Index"); err == nil {
		t.Error("ReadField of a missing solution: no error")
	}
}

// TestWriteDatsOnRanks declares the box from its .cgns on 2 ranks and
// writes the cell volumes: the file rank 0 writes holds what one process
// writes, in the file's cell order, and the mesh summary is one process's.
func TestWriteDatsOnRanks(t *testing.T) {
	const pathEnv, outEnv, wantEnv = "CGNS_MESH", "CGNS_OUT", "CGNS_WANT"
	if mpitest.InRanks() {
		var want summary
		if err := json.Unmarshal([]byte(os.Getenv(wantEnv)), &want); err != nil {
			t.Fatal(err)
		}
		m, err := unstructured.Load(os.Getenv(pathEnv), unstructured.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if d := same(summarize(t, m), want); d != "" {
			t.Errorf("rank %d of %d: %s", op2.Rank(), op2.Ranks(), d)
		}
		vol, centre := cellValues(t, m)
		if err := cgns.WriteDats(os.Getenv(outEnv), os.Getenv(pathEnv), "FlowSolution", vol, centre); err != nil {
			t.Fatal(err)
		}
		if err := op2.Finalize(); err != nil {
			t.Fatal(err)
		}
		return
	}
	path, _ := convert(t, "box")
	m, err := unstructured.Load(path, unstructured.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := summarize(t, m)
	js, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	vol, _ := cellValues(t, m)
	one := filepath.Join(t.TempDir(), "one.cgns")
	if err := cgns.WriteDats(one, path, "FlowSolution", vol); err != nil {
		t.Fatal(err)
	}
	wantVol, err := cgns.ReadField(one, "FlowSolution", vol.Name())
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "ranks.cgns")
	mpitest.Run(t, 2, 2*time.Minute, pathEnv+"="+path, outEnv+"="+out, wantEnv+"="+string(js))
	got, err := cgns.ReadField(out, "FlowSolution", vol.Name())
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if math.Abs(got[i]-wantVol[i]) > 1e-15*(1+math.Abs(wantVol[i])) {
			t.Fatalf("cell %d: %g on 2 ranks, %g on one", i, got[i], wantVol[i])
		}
	}
}
