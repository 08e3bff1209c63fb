package cgns_test

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	cg "github.com/goop2/op2/internal/cgns"
	"github.com/goop2/op2/internal/cgnstest"
	"github.com/goop2/op2/mesh/cgns"
	"github.com/goop2/op2/mesh/gmsh"
)

// groupFaces returns the face keys of m's group name (of dimension dim).
func groupFaces(t *testing.T, m *gmsh.Mesh, dim int, name string) []string {
	t.Helper()
	for _, pg := range m.Physical {
		if pg.Name == name && pg.Dim == dim {
			return facesOf(m.GroupTag(dim, pg.Tag))
		}
	}
	t.Fatalf("no group %q of dimension %d (the mesh has %v)", name, dim, m.Physical)
	return nil
}

// facetsWithin returns the keys of m's facets whose nodes all lie in
// nodes.
func facetsWithin(m *gmsh.Mesh, nodes map[int32]bool) []string {
	var out []string
	for _, b := range m.Blocks {
		if b.Type.Dim() != m.Dim-1 {
			continue
		}
		nn := b.Type.NumNodes()
		for i := range b.Len() {
			all := true
			for _, v := range b.Nodes[nn*i : nn*i+nn] {
				all = all && nodes[v]
			}
			if all {
				out = append(out, cgnstest.FaceKey(b.Nodes[nn*i:nn*i+nn]))
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestFamiliesAndVertexBCs adds to the box aflr3_to_cgns made, through
// libcgns: a family "walls" named by its first two boundary conditions and
// "fluid" named by the zone, and boundary conditions at Vertex as a point
// list (the nodes of Gmsh's "wall" group) and a point range (every
// vertex). Read makes "walls" the union of the two conditions' faces,
// "fluid" every cell, and the Vertex conditions the boundary faces whose
// nodes they hold.
func TestFamiliesAndVertexBCs(t *testing.T) {
	path, g := convert(t, "box")
	before, err := cgns.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var bcNames []string
	for _, pg := range before.Physical {
		bcNames = append(bcNames, pg.Name)
	}
	wallNodes := map[int32]bool{}
	var wallPts []int64
	for _, b := range g.GroupTag(2, groupTag(t, g, "wall")) {
		for _, v := range b.Nodes {
			if !wallNodes[v] {
				wallNodes[v] = true
				wallPts = append(wallPts, int64(v)+1)
			}
		}
	}
	f, err := cg.Open(path, cg.Modify)
	if err != nil {
		t.Fatal(err)
	}
	_, size, err := f.ZoneRead(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	const userDefined = 1 // BCTypeUserDefined
	for _, step := range []func() error{
		func() error { return f.FamilyWrite(1, "walls") },
		func() error { return f.FamilyWrite(1, "fluid") },
		func() error { return f.FamNameWrite(1, 1, cg.OfBoco, 1, "walls") },
		func() error { return f.FamNameWrite(1, 1, cg.OfBoco, 2, "walls") },
		func() error { return f.FamNameWrite(1, 1, cg.OfZone, 0, "fluid") },
		func() error {
			_, err := f.BocoWrite(1, 1, "wall points", userDefined, cg.PointList, wallPts)
			return err
		},
		func() error {
			_, err := f.BocoWrite(1, 1, "all points", userDefined, cg.PointRange, []int64{1, size[0]})
			return err
		},
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	m, err := cgns.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	walls := append(groupFaces(t, m, 2, bcNames[0]), groupFaces(t, m, 2, bcNames[1])...)
	slices.Sort(walls)
	if got := groupFaces(t, m, 2, "walls"); !slices.Equal(got, walls) {
		t.Errorf("family walls: %d faces, want %d", len(got), len(walls))
	}
	var cells int
	for _, b := range m.Cells() {
		cells += b.Len()
	}
	var fluid int
	for _, pg := range m.Physical {
		if pg.Name == "fluid" && pg.Dim == 3 {
			for _, b := range m.GroupTag(3, pg.Tag) {
				fluid += b.Len()
			}
		}
	}
	if fluid != cells || cells == 0 {
		t.Errorf("family fluid: %d cells, want %d", fluid, cells)
	}
	got := groupFaces(t, m, 2, "wall points")
	if want := facetsWithin(g, wallNodes); !slices.Equal(got, want) {
		t.Errorf("wall points: %d faces, want %d", len(got), len(want))
	}
	wall := groupFaces(t, g, 2, "wall")
	for _, k := range wall {
		if _, found := slices.BinarySearch(got, k); !found {
			t.Fatalf("wall points lacks the wall face %s", k)
		}
	}
	all := map[int32]bool{}
	for i := range g.NumNodes() {
		all[int32(i)] = true
	}
	if got, want := groupFaces(t, m, 2, "all points"), facetsWithin(g, all); !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("all points: %d faces, want %d", len(got), len(want))
	}
}

func groupTag(t *testing.T, m *gmsh.Mesh, name string) int32 {
	t.Helper()
	for _, pg := range m.Physical {
		if pg.Name == name {
			return pg.Tag
		}
	}
	t.Fatalf("no group %q", name)
	return 0
}

// TestReadMixed reads the boundary-layer mesh (prisms under tetrahedra)
// converted by libcgns's patran_to_cgns, which writes the cells as one
// MIXED section and each named group of nodes as a section of the
// boundary faces within it (triangles, quadrilaterals or MIXED), in the
// order of their names: the cells are the .msh's (coordinates to single
// precision, which the converter writes), and each section a group
// holding the faces whose nodes are all in it and in no earlier group.
func TestReadMixed(t *testing.T) {
	need(t)
	g, err := gmsh.ReadFile(filepath.Join("testdata", "layer.msh"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := cgnstest.Patran(t, g, dir, "layer")
	m, err := cgns.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range g.X {
		if math.Abs(m.X[i]-float64(float32(g.X[i]))) > 1e-6 {
			t.Fatalf("coordinate %d: %g, want %g", i, m.X[i], g.X[i])
		}
	}
	gc, mc := g.Cells(), m.Cells()
	if len(gc) != 2 || len(mc) != 2 {
		t.Fatalf("%d and %d kinds of cells, want 2", len(mc), len(gc))
	}
	for k := range gc {
		if gc[k].Type != mc[k].Type || !slices.Equal(gc[k].Nodes, mc[k].Nodes) {
			t.Errorf("%v cells differ from the .msh's %v (%d and %d)", mc[k].Type, gc[k].Type, mc[k].Len(), gc[k].Len())
		}
	}
	// The converter writes the groups' sections in the order of their
	// names, each claiming the faces no earlier one did.
	claimed := map[string]bool{}
	var names []string
	groups := slices.Clone(g.Physical)
	slices.SortFunc(groups, func(a, b gmsh.PhysicalGroup) int { return strings.Compare(a.Name, b.Name) })
	for _, pg := range groups {
		if pg.Dim != 2 {
			continue
		}
		names = append(names, pg.Name)
		nodes := map[int32]bool{}
		for _, b := range g.GroupTag(2, pg.Tag) {
			for _, v := range b.Nodes {
				nodes[v] = true
			}
		}
		var want []string
		for _, k := range facetsWithin(g, nodes) {
			if !claimed[k] {
				claimed[k] = true
				want = append(want, k)
			}
		}
		if got := groupFaces(t, m, 2, pg.Name); !slices.Equal(got, want) {
			t.Errorf("group %q: %d faces, want %d", pg.Name, len(got), len(want))
		}
	}
	var got []string
	for _, pg := range m.Physical {
		got = append(got, pg.Name)
	}
	if !slices.Equal(got, names) {
		t.Errorf("groups %v, want %v", got, names)
	}
	var faces []gmsh.Block
	for _, b := range m.Blocks {
		if b.Type.Dim() == 2 {
			faces = append(faces, b)
		}
	}
	if !slices.Equal(facesOf(faces), facetsWithin(g, allNodes(g))) {
		t.Error("the boundary faces are not the .msh's")
	}
}

func allNodes(m *gmsh.Mesh) map[int32]bool {
	all := map[int32]bool{}
	for i := range m.NumNodes() {
		all[int32(i)] = true
	}
	return all
}

// TestReadUnsupported: files libcgns's converters make that GoOP2 does
// not read — a structured zone (plot3d_to_cgns), two zones
// (tecplot_to_cgns) — are errors naming the file, the node and what is
// not supported.
func TestReadUnsupported(t *testing.T) {
	need(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name, input string
		convert     []string
		want        []string
	}{
		{"structured", "2 2 2\n0 1 0 1 0 1 0 1\n0 0 1 1 0 0 1 1\n0 0 0 0 1 1 1 1\n",
			[]string{"plot3d_to_cgns", "-s", "-f"}, []string{"/Base/Zone 1", "structured zone", "not supported"}},
		{"zones", "VARIABLES=\"X\",\"Y\",\"Z\"\n" + strings.Repeat("ZONE N=4, E=1, F=FEPOINT, ET=TETRAHEDRON\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n1 2 3 4\n", 2),
			[]string{"tecplot_to_cgns"}, []string{"/Base", "2 zones"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, path := filepath.Join(dir, tc.name+".in"), filepath.Join(dir, tc.name+".cgns")
			if err := os.WriteFile(in, []byte(tc.input), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append(tc.convert[1:], in, path)
			if out, err := exec.Command(tc.convert[0], args...).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", tc.convert[0], err, out)
			}
			_, err := cgns.Read(path)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range append(tc.want, path) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestReadHybridTecplot reads the hexahedra, pyramids and tetrahedra of
// testdata/hybrid.msh written as Tecplot bricks (pyramids and tetrahedra
// as degenerate bricks) and converted by libcgns's tecplot_to_cgns -f,
// which turns degenerate bricks back into their kinds in one MIXED
// section (with its offsets stored): each kind's cells are the .msh's,
// nodes in the same order.
func TestReadHybridTecplot(t *testing.T) {
	need(t)
	g, err := gmsh.ReadFile(filepath.Join("testdata", "hybrid.msh"))
	if err != nil {
		t.Fatal(err)
	}
	bricks := map[gmsh.Type][]int{
		gmsh.Hexahedron:  {0, 1, 2, 3, 4, 5, 6, 7},
		gmsh.Pyramid:     {0, 1, 2, 3, 4, 4, 4, 4},
		gmsh.Tetrahedron: {0, 1, 2, 2, 3, 3, 3, 3},
	}
	var b strings.Builder
	cells := 0
	for _, c := range g.Cells() {
		cells += c.Len()
	}
	fmt.Fprintf(&b, "VARIABLES=\"X\",\"Y\",\"Z\"\nZONE N=%d, E=%d, F=FEPOINT, ET=BRICK\n", g.NumNodes(), cells)
	for i := range g.NumNodes() {
		fmt.Fprintf(&b, "%.9g %.9g %.9g\n", g.X[3*i], g.X[3*i+1], g.X[3*i+2])
	}
	for _, c := range g.Cells() {
		order, ok := bricks[c.Type]
		if !ok {
			t.Fatalf("no brick for %v", c.Type)
		}
		nn := c.Type.NumNodes()
		for i := range c.Len() {
			for j, k := range order {
				if j > 0 {
					b.WriteString(" ")
				}
				fmt.Fprint(&b, c.Nodes[nn*i+k]+1)
			}
			b.WriteString("\n")
		}
	}
	dir := t.TempDir()
	in, path := filepath.Join(dir, "hybrid.dat"), filepath.Join(dir, "hybrid.cgns")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("tecplot_to_cgns", "-f", in, path).CombinedOutput(); err != nil {
		t.Fatalf("tecplot_to_cgns: %v\n%s", err, out)
	}
	m, err := cgns.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range g.X {
		if math.Abs(m.X[i]-float64(float32(g.X[i]))) > 1e-6 {
			t.Fatalf("coordinate %d: %g, want %g", i, m.X[i], g.X[i])
		}
	}
	want, got := g.Cells(), m.Cells()
	if len(got) != 3 {
		t.Fatalf("%d kinds of cells, want 3", len(got))
	}
	for k := range want {
		if got[k].Type != want[k].Type || !slices.Equal(facesOf(got[k:k+1]), facesOf(want[k:k+1])) {
			t.Errorf("%v cells differ from the .msh's %v (%d and %d)", got[k].Type, want[k].Type, got[k].Len(), want[k].Len())
		} else if !slices.Equal(got[k].Nodes, want[k].Nodes) {
			t.Errorf("%v: the same cells, their nodes in another order than the .msh's", got[k].Type)
		}
	}
}

// TestVertexBCHoldingNothing: a boundary condition at Vertex whose points
// (a list of one, a range of two) hold no face element of the zone (a
// pinned point) is a group of dimension 0 with no elements, rather than
// no group of its name.
func TestVertexBCHoldingNothing(t *testing.T) {
	for _, c := range []struct {
		set int
		pts []int64
	}{{cg.PointList, []int64{1}}, {cg.PointRange, []int64{1, 2}}} {
		path, _ := convert(t, "box")
		f, err := cg.Open(path, cg.Modify)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.ZoneRead(1, 1); err != nil {
			t.Fatal(err)
		}
		const userDefined = 1 // BCTypeUserDefined
		if _, err := f.BocoWrite(1, 1, "lonely", userDefined, c.set, c.pts); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		m, err := cgns.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, pg := range m.Physical {
			if pg.Name == "lonely" {
				found = pg.Dim == 0 && len(m.GroupTag(0, pg.Tag)) == 0
			}
		}
		if !found {
			t.Errorf("point set %d %v: groups %v, want lonely of dimension 0 with no elements", c.set, c.pts, m.Physical)
		}
	}
}
