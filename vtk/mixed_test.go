package vtk_test

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/gmshtest"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/mesh/gmsh"
	"github.com/goop2/op2/mesh/topology"
	"github.com/goop2/op2/mesh/unstructured"
	"github.com/goop2/op2/vtk"
)

// hybridMesh writes Gmsh's hybrid mesh kind (mesh/unstructured's
// testdata/hybrid.py): "layer", the unit cube with hexahedra and prisms on
// its bottom, tetrahedra above and pyramids between; "square", the unit
// square of quadrilaterals and triangles. It skips without Gmsh's Python
// module.
func hybridMesh(t *testing.T, kind, dir string) string {
	t.Helper()
	py := gmshtest.Need(t)
	path := filepath.Join(dir, kind+".msh")
	if out, err := exec.Command(py, "../mesh/unstructured/testdata/hybrid.py", kind, path, "0.25").CombinedOutput(); err != nil {
		t.Fatalf("gmsh: %v\n%s", err, out)
	}
	return path
}

// vtkType is the VTK cell type of each kind of cell.
var vtkType = map[topology.Kind]vtk.CellType{
	topology.Triangle: vtk.Triangle, topology.Quadrilateral: vtk.Quad, topology.Tetrahedron: vtk.Tetra,
	topology.Hexahedron: vtk.Hexahedron, topology.Prism: vtk.Wedge, topology.Pyramid: vtk.Pyramid,
}

// writeHybrid loads the mesh at path (renumbered on one process,
// partitioned on several ranks), puts on its cells q = (declared number,
// volume) and on its nodes u = x + 2y + 3z, and writes them with a
// Writer of mixed cells to dir/out.vtu (.pvtu on several ranks). It
// returns the mesh and q.
func writeHybrid(t *testing.T, path, dir string) (*unstructured.Mesh, *op2.Dat[float64]) {
	m, err := unstructured.Load(path, unstructured.Options{})
	if err != nil {
		t.Fatal(err)
	}
	geo, err := m.Geometry()
	if err != nil {
		t.Fatal(err)
	}
	q := must(op2.NewDat[float64](m.Cells, 2, nil, "q"))
	vol := geo.CellVolume.DataRO()
	qv := q.Data()
	for i, n := range m.Cells.DeclaredNumbers() {
		qv[2*i], qv[2*i+1] = float64(n), vol[i]
	}
	u := must(op2.NewDat[float64](m.Nodes, 1, nil, "u"))
	k := op2.NewKernel(fmt.Sprintf("void vtk_u_%d(const double *x, double *u) { *u = 0; for (int i = 0; i < %d; i++) *u += (i + 1) * x[i]; }", m.Dim, m.Dim), fmt.Sprintf("vtk_u_%d", m.Dim))
	if err := op2.ParLoop(k, m.Nodes, m.X.Arg(op2.Read), u.Arg(op2.Write)); err != nil {
		t.Fatal(err)
	}
	kinds := make([]vtk.CellKind, len(m.CellKinds))
	for i, ck := range m.CellKinds {
		kinds[i] = vtk.CellKind{Nodes: ck.Nodes, Cells: ck.Cells}
	}
	w, err := vtk.NewMixedWriter(m.X, m.Cells, kinds)
	if err != nil {
		t.Fatal(err)
	}
	w.DeclaredNumbers = true
	if err := vtk.CellDat(w, q); err != nil {
		t.Fatal(err)
	}
	if err := vtk.PointDat(w, u); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile(filepath.Join(dir, "out.vtu"), vtk.Binary); err != nil {
		t.Fatal(err)
	}
	return m, q
}

// hybridCell is what a cell is compared by: its type, its nodes'
// coordinates in VTK's order, and q.
type hybridCell struct {
	typ vtk.CellType
	x   []float64
	q   [2]float64
}

// expected returns each cell of m (one process), by declared number, as
// the mesh declares it: the type of its kind, its nodes' coordinates (in
// Gmsh's order, turned into VTK's: a prism's n0 n2 n1 n3 n5 n4), and q's
// gathered values.
func expected(t *testing.T, m *unstructured.Mesh, q *op2.Dat[float64]) []hybridCell {
	t.Helper()
	x := must(m.X.Gather())
	qv := must(q.Gather())
	out := make([]hybridCell, m.Cells.GlobalSize())
	for _, ck := range m.CellKinds {
		nodes, cells := must(ck.Nodes.Gather()), must(ck.Cells.Gather())
		a := ck.Nodes.Arity()
		for e, c := range cells {
			row := nodes[e*a : (e+1)*a]
			if ck.Kind == topology.Prism {
				row = []int32{row[0], row[2], row[1], row[3], row[5], row[4]}
			}
			h := hybridCell{typ: vtkType[ck.Kind], q: [2]float64{qv[2*c], qv[2*c+1]}}
			for _, n := range row {
				h.x = append(h.x, x[int(n)*m.Dim:int(n+1)*m.Dim]...)
			}
			out[c] = h
		}
	}
	return out
}

// vtkFaces lists the faces of VTK's 3-D cells as vtkTetra, vtkPyramid,
// vtkWedge and vtkHexahedron give them, outward by the right-hand rule
// for a cell in VTK's orientation.
var vtkFaces = map[vtk.CellType][][]int{
	vtk.Tetra:      {{0, 1, 3}, {1, 2, 3}, {2, 0, 3}, {0, 2, 1}},
	vtk.Pyramid:    {{0, 3, 2, 1}, {0, 1, 4}, {1, 2, 4}, {2, 3, 4}, {3, 0, 4}},
	vtk.Wedge:      {{0, 1, 2}, {3, 5, 4}, {0, 3, 4, 1}, {1, 4, 5, 2}, {2, 5, 3, 0}},
	vtk.Hexahedron: {{0, 4, 7, 3}, {1, 2, 6, 5}, {0, 1, 5, 4}, {3, 7, 6, 2}, {0, 3, 2, 1}, {4, 5, 6, 7}},
}

// vtkVolume is the signed volume (area in 2-D) of a cell of type typ at
// the points p (3 coordinates each) in VTK's convention: by the divergence
// theorem over its faces as VTK lists them (a quadrilateral face's
// bilinear surface as the average of its two splits into triangles), or
// the shoelace for a polygon. A cell in VTK's orientation has a positive
// volume.
func vtkVolume(typ vtk.CellType, p [][3]float64) float64 {
	if typ == vtk.Triangle || typ == vtk.Quad {
		s := 0.0
		for i := range p {
			a, b := p[i], p[(i+1)%len(p)]
			s += a[0]*b[1] - b[0]*a[1]
		}
		return s / 2
	}
	tet := func(a, b, c [3]float64) float64 {
		return (a[0]*(b[1]*c[2]-b[2]*c[1]) - a[1]*(b[0]*c[2]-b[2]*c[0]) + a[2]*(b[0]*c[1]-b[1]*c[0])) / 6
	}
	v := 0.0
	for _, f := range vtkFaces[typ] {
		if len(f) == 3 {
			v += tet(p[f[0]], p[f[1]], p[f[2]])
			continue
		}
		v += (tet(p[f[0]], p[f[1]], p[f[2]]) + tet(p[f[0]], p[f[2]], p[f[3]]) + tet(p[f[0]], p[f[1]], p[f[3]]) + tet(p[f[1]], p[f[2]], p[f[3]])) / 2
	}
	return v
}

// readCells returns the cells of the grids g (the pieces of a file) by
// their declared number, failing on a cell written twice, and checks that
// u at every point is x + 2y + 3z and that every cell has a positive
// volume in VTK's convention, equal to the q the mesh computed.
func readCells(t *testing.T, dim int, gs ...*vtk.Grid) map[int]hybridCell {
	t.Helper()
	out := map[int]hybridCell{}
	for r, g := range gs {
		num, q, u := g.CellArray(vtk.DeclaredNumberArray), g.CellArray("q"), g.PointArray("u")
		if num == nil || q == nil || u == nil {
			t.Fatalf("piece %d: arrays %v %v missing", r, g.CellData, g.PointData)
		}
		nums, qv, uv := num.Float64s(), q.Float64s(), u.Float64s()
		for p := range g.NumPoints() {
			want := g.Points[3*p] + 2*g.Points[3*p+1] + 3*g.Points[3*p+2]
			if math.Abs(uv[p]-want) > 1e-14 {
				t.Errorf("piece %d: point %d has u %g, want %g", r, p, uv[p], want)
			}
		}
		o := g.Offsets()
		for c := range g.NumCells() {
			h := hybridCell{typ: g.CellTypeOf(c), q: [2]float64{qv[2*c], qv[2*c+1]}}
			var pts [][3]float64
			for _, p := range g.Cells[o[c]:o[c+1]] {
				h.x = append(h.x, g.Points[3*p:3*int(p)+dim]...)
				pts = append(pts, [3]float64(g.Points[3*p:3*p+3]))
			}
			if v := vtkVolume(h.typ, pts); v <= 0 || math.Abs(v-h.q[1]) > 1e-12 {
				t.Errorf("piece %d: cell %d (type %d) has the volume %g in VTK's orientation; the mesh's is %g", r, c, h.typ, v, h.q[1])
			}
			n := int(nums[c])
			if _, dup := out[n]; dup {
				t.Errorf("cell %d written twice", n)
			}
			out[n] = h
		}
	}
	return out
}

// compare checks the cells read against the cells expected.
func compare(t *testing.T, got map[int]hybridCell, want []hybridCell) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d cells written, want %d", len(got), len(want))
	}
	bad := 0
	for n, w := range want {
		g, ok := got[n]
		if !ok || g.typ != w.typ || fmt.Sprint(g.x) != fmt.Sprint(w.x) || g.q[0] != w.q[0] || math.Abs(g.q[1]-w.q[1]) > 1e-14 {
			if bad++; bad <= 5 {
				t.Errorf("cell %d: written %+v, want %+v", n, g, w)
			}
		}
	}
}

// TestMixedWriter writes Gmsh's hybrid meshes (the cube with a boundary
// layer: hexahedra, prisms, pyramids, tetrahedra; the square of
// quadrilaterals and triangles) with a Writer of mixed cells, on one
// process after the loader's renumbering and on 2 ranks, and reads them
// back: each cell, by its declared number, has its kind's VTK type, its
// nodes' coordinates in VTK's order, q's gathered values and a positive
// volume in VTK's orientation, and the mesh's points have u's values.
func TestMixedWriter(t *testing.T) {
	const meshEnv, dirEnv = "VTK_MIXED_MESH", "VTK_MIXED_DIR"
	if mpitest.InRanks() {
		os.Setenv("OP2_CACHE_DIR", os.Getenv("VTK_MPI_CACHE"))
		writeHybrid(t, os.Getenv(meshEnv), os.Getenv(dirEnv))
		if err := op2.Finalize(); err != nil {
			t.Fatal(err)
		}
		return
	}
	cache := os.Getenv("OP2_CACHE_DIR") // TestMain's, which the ranks share
	for _, kind := range []string{"layer", "square"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			path := hybridMesh(t, kind, dir)
			m, q := writeHybrid(t, path, dir)
			if m.CellNodes != nil || len(m.CellKinds) < 2 {
				t.Fatalf("the %s mesh is not mixed", kind)
			}
			if m.Renumbered == nil {
				t.Error("the mesh was not renumbered: the declared numbering is not tested")
			}
			want := expected(t, m, q)
			g, err := vtk.ReadFile(filepath.Join(dir, "out.vtu"))
			if err != nil {
				t.Fatal(err)
			}
			if !g.Mixed() || g.NumPoints() != m.Nodes.GlobalSize() {
				t.Errorf("one process: mixed %v, %d points; want a type per cell and %d points", g.Mixed(), g.NumPoints(), m.Nodes.GlobalSize())
			}
			compare(t, readCells(t, m.Dim, g), want)
			for _, ranks := range []int{2} {
				out := t.TempDir()
				mpitest.Run(t, ranks, 2*time.Minute, meshEnv+"="+path, dirEnv+"="+out, "VTK_MPI_CACHE="+cache)
				pieces, err := vtk.ReadPVTUFile(filepath.Join(out, "out.pvtu"))
				if err != nil {
					t.Fatal(err)
				}
				if len(pieces) != ranks {
					t.Fatalf("%d pieces, want %d", len(pieces), ranks)
				}
				compare(t, readCells(t, m.Dim, pieces...), want)
				merged, err := vtk.Merge(pieces)
				if err != nil || merged.NumCells() != len(want) || !merged.Mixed() {
					t.Errorf("Merge: %v", err)
				}
			}
		})
	}
}

// TestMixedWriterRankWithoutCells: a mesh of a triangle and a quad on 3
// ranks leaves a rank without cells; its piece of a Writer of mixed cells
// is empty, not an error that left the .pvtu naming a missing piece.
func TestMixedWriterRankWithoutCells(t *testing.T) {
	const dirEnv = "VTK_EMPTY_PIECE_DIR"
	if mpitest.InRanks() {
		if dir := os.Getenv(dirEnv); dir != "" {
			os.Setenv("OP2_CACHE_DIR", os.Getenv("VTK_MPI_CACHE"))
			g := &gmsh.Mesh{Dim: 2, NodeTags: []int64{1, 2, 3, 4, 5}, X: []float64{0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 2, 0.5, 0},
				Blocks: []gmsh.Block{
					{Type: gmsh.Quadrangle, Nodes: []int32{0, 1, 2, 3}, Tags: []int64{1}, Physical: []int32{0}, Entity: []int32{1}},
					{Type: gmsh.Triangle, Nodes: []int32{1, 4, 2}, Tags: []int64{2}, Physical: []int32{0}, Entity: []int32{1}},
				}}
			m := must(unstructured.Declare(g, unstructured.Options{}))
			kinds := make([]vtk.CellKind, len(m.CellKinds))
			for i, ck := range m.CellKinds {
				kinds[i] = vtk.CellKind{Nodes: ck.Nodes, Cells: ck.Cells}
			}
			w := must(vtk.NewMixedWriter(m.X, m.Cells, kinds))
			if err := w.WriteFile(filepath.Join(dir, "out.vtu"), vtk.ASCII); err != nil {
				t.Fatal(err)
			}
			if err := op2.Finalize(); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	out := t.TempDir()
	mpitest.Run(t, 3, 2*time.Minute, dirEnv+"="+out, "VTK_MPI_CACHE="+os.Getenv("OP2_CACHE_DIR"))
	pieces, err := vtk.ReadPVTUFile(filepath.Join(out, "out.pvtu"))
	if err != nil {
		t.Fatal(err)
	}
	cells := 0
	for _, p := range pieces {
		cells += p.NumCells()
	}
	if len(pieces) != 3 || cells != 2 {
		t.Errorf("%d pieces of %d cells in all, want 3 pieces of 2", len(pieces), cells)
	}
}

// TestWedgeOrientation: a prism and a pyramid in Gmsh's order (the
// prism's bottom triangle counter-clockwise seen from its top, the
// pyramid's base counter-clockwise seen from its apex), written with
// NewWriter (one kind each) and NewMixedWriter (both), have their volumes,
// positive, in VTK's orientation: the Writers turn the prism into VTK's
// order and keep the pyramid's.
func TestWedgeOrientation(t *testing.T) {
	x := []float64{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 1, 0, 1, 1, 1, 1, 0, 0.5, 0.5, 1}
	nodes := must(op2.NewSet(8, "wo_nodes"))
	cells := must(op2.NewSet(2, "wo_cells"))
	prisms := must(op2.NewSet(1, "wo_prisms"))
	pyramids := must(op2.NewSet(1, "wo_pyramids"))
	dx := must(op2.NewDat(nodes, 3, x, "wo_x"))
	prismNodes := must(op2.NewMap(prisms, nodes, 6, []int32{0, 1, 2, 3, 4, 5}, "wo_prism_nodes"))
	pyramidNodes := must(op2.NewMap(pyramids, nodes, 5, []int32{0, 1, 6, 2, 7}, "wo_pyramid_nodes"))
	kinds := []vtk.CellKind{
		{Nodes: prismNodes, Cells: must(op2.NewMap(prisms, cells, 1, []int32{1}, "wo_prism_cells"))},
		{Nodes: pyramidNodes, Cells: must(op2.NewMap(pyramids, cells, 1, []int32{0}, "wo_pyramid_cells"))},
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name    string
		w       *vtk.Writer
		types   []vtk.CellType
		volumes []float64
	}{
		{"prism", must(vtk.NewWriter(dx, prismNodes)), []vtk.CellType{vtk.Wedge}, []float64{0.5}},
		{"pyramid", must(vtk.NewWriter(dx, pyramidNodes)), []vtk.CellType{vtk.Pyramid}, []float64{1.0 / 3}},
		{"mixed", must(vtk.NewMixedWriter(dx, cells, kinds)), []vtk.CellType{vtk.Pyramid, vtk.Wedge}, []float64{1.0 / 3, 0.5}},
	} {
		path := filepath.Join(dir, c.name+".vtu")
		if err := c.w.WriteFile(path, vtk.ASCII); err != nil {
			t.Fatal(err)
		}
		g := must(vtk.ReadFile(path))
		if g.NumCells() != len(c.types) {
			t.Fatalf("%s: %d cells, want %d", c.name, g.NumCells(), len(c.types))
		}
		o := g.Offsets()
		for i := range g.NumCells() {
			var pts [][3]float64
			for _, p := range g.Cells[o[i]:o[i+1]] {
				pts = append(pts, [3]float64(g.Points[3*p:3*p+3]))
			}
			if v := vtkVolume(g.CellTypeOf(i), pts); g.CellTypeOf(i) != c.types[i] || math.Abs(v-c.volumes[i]) > 1e-15 {
				t.Errorf("%s: cell %d of type %d has the volume %g in VTK's orientation; want type %d, volume %g", c.name, i, g.CellTypeOf(i), v, c.types[i], c.volumes[i])
			}
		}
	}
}

// TestNewMixedWriterRejects: kinds whose maps do not lead from one set to
// the nodes and to the cells, or do not hold every cell once, are errors
// saying which map or cell; so is writing such a mesh.
func TestNewMixedWriterRejects(t *testing.T) {
	nodes := must(op2.NewSet(4, "mr_nodes"))
	other := must(op2.NewSet(4, "mr_other"))
	cells := must(op2.NewSet(2, "mr_cells"))
	tris := must(op2.NewSet(2, "mr_tris"))
	one := must(op2.NewSet(1, "mr_one"))
	x := must(op2.NewDat(nodes, 2, []float64{0, 0, 1, 0, 1, 1, 0, 1}, "mr_x"))
	triNodes := must(op2.NewMap(tris, nodes, 3, []int32{0, 1, 2, 0, 2, 3}, "mr_tri_nodes"))
	triCells := must(op2.NewMap(tris, cells, 1, []int32{1, 0}, "mr_tri_cells"))
	twice := must(op2.NewMap(tris, cells, 1, []int32{1, 1}, "mr_twice"))
	for _, c := range []struct {
		name  string
		kinds []vtk.CellKind
		want  string
	}{
		{"none", nil, "at least one kind"},
		{"no cells map", []vtk.CellKind{{Nodes: triNodes}}, "kind 0 of cells has no map"},
		{"nodes elsewhere", []vtk.CellKind{{Nodes: must(op2.NewMap(tris, other, 3, []int32{0, 1, 2, 0, 2, 3}, "mr_other_nodes")), Cells: triCells}}, `map "mr_other_nodes" goes to set "mr_other"`},
		{"cells arity", []vtk.CellKind{{Nodes: triNodes, Cells: must(op2.NewMap(tris, cells, 2, []int32{0, 1, 1, 0}, "mr_two"))}}, `map "mr_two" (arity 2)`},
		{"two sets", []vtk.CellKind{{Nodes: triNodes, Cells: must(op2.NewMap(one, cells, 1, []int32{0}, "mr_one_cells"))}}, `from set "mr_one"`},
		{"count", []vtk.CellKind{{Nodes: triNodes, Cells: triCells}, {Nodes: must(op2.NewMap(one, nodes, 3, []int32{0, 1, 2}, "mr_one_nodes")), Cells: must(op2.NewMap(one, cells, 1, []int32{0}, "mr_one_cells2"))}}, `hold 3 cells; set "mr_cells" has 2`},
	} {
		if _, err := vtk.NewMixedWriter(x, cells, c.kinds); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error saying %q", c.name, err, c.want)
		}
	}
	w := must(vtk.NewMixedWriter(x, cells, []vtk.CellKind{{Nodes: triNodes, Cells: twice}}))
	if err := w.WriteFile(filepath.Join(t.TempDir(), "twice.vtu"), vtk.ASCII); err == nil || !strings.Contains(err.Error(), `cell 1 of set "mr_cells" is element 0 of map "mr_twice" and element 1`) {
		t.Errorf("a cell in two elements: %v", err)
	}
}
