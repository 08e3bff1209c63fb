package unstructured_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2/hdf5"
	"github.com/goop2/op2/internal/testreq"
	"github.com/goop2/op2/mesh/gmsh"
	"github.com/goop2/op2/mesh/unstructured"
)

// cubeWithBottom is Cube(1) (8 nodes, 6 tetrahedra) with one boundary
// triangle of the face z = 0 in a physical group "bottom": a hand-built
// mesh whose slices agree.
func cubeWithBottom() *gmsh.Mesh {
	g := unstructured.Cube(1)
	g.Physical = []gmsh.PhysicalGroup{{Dim: 2, Tag: 1, Name: "bottom"}}
	g.Blocks = append([]gmsh.Block{{Type: gmsh.Triangle, Nodes: []int32{0, 1, 3}, Tags: []int64{100}, Physical: []int32{1}, Entity: []int32{1}}}, g.Blocks...)
	return g
}

// shorter returns s without its last element: with spare capacity (the
// element is still there past the length, so reading past the end would
// not panic) or clipped (reading past the end panics).
func shorter[T any](s []T, spare bool) []T {
	s = slices.Clone(s)[:len(s)-1]
	if spare {
		return s
	}
	return slices.Clip(s)
}

// TestDeclareMalformed hands Declare and WriteHDF5 meshes whose slices
// disagree, each with the slice cut short both clipped and with spare
// capacity behind it (where a read past the length would go unnoticed):
// each is an error naming the block (or X) and the lengths found and
// wanted, neither panics, nothing is declared (Declare returns no mesh;
// the check comes before the first op2 call) and WriteHDF5 writes no
// file. The well-formed mesh they are made from declares.
func TestDeclareMalformed(t *testing.T) {
	if _, err := unstructured.Declare(cubeWithBottom(), unstructured.Options{}); err != nil {
		t.Fatalf("the well-formed mesh: %v", err)
	}
	const tri, tet = 0, 1 // cubeWithBottom's blocks
	type variant struct {
		name  string
		bad   func(g *gmsh.Mesh, spare bool)
		wants []string // in the error
	}
	var cases []variant
	for _, spare := range []bool{false, true} {
		sfx := ""
		if spare {
			sfx = ", spare capacity"
		}
		cases = append(cases,
			variant{"cell nodes one short" + sfx, func(g *gmsh.Mesh, spare bool) {
				g.Blocks[tet].Nodes = shorter(g.Blocks[tet].Nodes, spare)
			}, []string{"block 1 (tetrahedron)", "Nodes", "23", "24"}},
			variant{"X one coordinate short" + sfx, func(g *gmsh.Mesh, spare bool) {
				g.X = shorter(g.X, spare)
			}, []string{"X", "23", "24", "8 nodes"}},
			variant{"cell tags one short" + sfx, func(g *gmsh.Mesh, spare bool) {
				b := &g.Blocks[tet]
				b.Tags, b.Physical, b.Entity = shorter(b.Tags, spare), shorter(b.Physical, spare), shorter(b.Entity, spare)
			}, []string{"block 1 (tetrahedron)", "Nodes", "24", "20", "5 elements"}},
			variant{"cell tags alone one short" + sfx, func(g *gmsh.Mesh, spare bool) {
				g.Blocks[tet].Tags = shorter(g.Blocks[tet].Tags, spare)
			}, []string{"block 1 (tetrahedron)", "24", "20"}},
			variant{"cell physical one short" + sfx, func(g *gmsh.Mesh, spare bool) {
				g.Blocks[tet].Physical = shorter(g.Blocks[tet].Physical, spare)
			}, []string{"block 1 (tetrahedron)", "Physical", "5", "6"}},
			variant{"cell entity one short" + sfx, func(g *gmsh.Mesh, spare bool) {
				g.Blocks[tet].Entity = shorter(g.Blocks[tet].Entity, spare)
			}, []string{"block 1 (tetrahedron)", "Entity", "5", "6"}},
			variant{"facet nodes one short" + sfx, func(g *gmsh.Mesh, spare bool) {
				g.Blocks[tri].Nodes = shorter(g.Blocks[tri].Nodes, spare)
			}, []string{"block 0 (triangle)", "Nodes", "2", "3"}},
			variant{"facet physical one short" + sfx, func(g *gmsh.Mesh, spare bool) {
				g.Blocks[tri].Physical = shorter(g.Blocks[tri].Physical, spare)
			}, []string{"block 0 (triangle)", "Physical", "0", "1"}},
			variant{"node tags one short" + sfx, func(g *gmsh.Mesh, spare bool) {
				g.NodeTags = shorter(g.NodeTags, spare)
			}, []string{"X", "24", "21", "7 nodes"}},
		)
	}
	cases = append(cases,
		variant{"cell node out of range", func(g *gmsh.Mesh, _ bool) {
			g.Blocks[tet].Nodes[5] = 8
		}, []string{"block 1 (tetrahedron)", "element 1", "node 1 is 8", "[0,8)"}},
		variant{"facet node negative", func(g *gmsh.Mesh, _ bool) {
			g.Blocks[tri].Nodes[2] = -1
		}, []string{"block 0 (triangle)", "element 0", "node 2 is -1"}},
		variant{"Dim below the cells'", func(g *gmsh.Mesh, _ bool) {
			g.Dim = 2
		}, []string{"Dim is 2", "block 1 (tetrahedron)", "dimension 3"}},
		variant{"unsupported type", func(g *gmsh.Mesh, _ bool) {
			g.Blocks[tri].Type = 9
		}, []string{"block 0", "type 9"}},
	)
	dir := t.TempDir()
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := cubeWithBottom()
			c.bad(g, strings.HasSuffix(c.name, "spare capacity"))
			check := func(what string, call func() error) {
				t.Helper()
				var err error
				func() {
					defer func() {
						if p := recover(); p != nil {
							err = fmt.Errorf("panic: %v", p)
						}
					}()
					err = call()
				}()
				if err == nil {
					t.Errorf("%s: no error", what)
					return
				}
				for _, w := range c.wants {
					if !strings.Contains(err.Error(), w) || strings.HasPrefix(err.Error(), "panic") {
						t.Errorf("%s: %v; want an error saying %q", what, err, w)
						return
					}
				}
			}
			check("Declare", func() error {
				m, err := unstructured.Declare(g, unstructured.Options{})
				if err != nil && m != nil {
					t.Errorf("Declare returned a mesh with its error")
				}
				return err
			})
			h5 := filepath.Join(dir, fmt.Sprintf("%d.h5", i))
			check("WriteHDF5", func() error { return unstructured.WriteHDF5(h5, g) })
			if _, err := os.Stat(h5); err == nil {
				t.Errorf("WriteHDF5 left %s", h5)
			}
			check("Group", func() error { _, err := g.Group("bottom"); return err })
		})
	}
}

// hybridByHand is a hexahedron (the unit cube), a pyramid on its top
// face and a tetrahedron on one of the pyramid's triangles, as Gmsh
// would list them (by type: the tetrahedron, the hexahedron, the
// pyramid), element tags 50, 60 and 70.
func hybridByHand() *gmsh.Mesh {
	g := &gmsh.Mesh{Dim: 3}
	for _, p := range [][3]float64{{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1},
		{0.5, 0.5, 1.5}, {0.5, -0.5, 1.3}} {
		g.X = append(g.X, p[:]...)
		g.NodeTags = append(g.NodeTags, int64(len(g.NodeTags)+1))
	}
	block := func(t gmsh.Type, tag int64, nodes ...int32) gmsh.Block {
		return gmsh.Block{Type: t, Nodes: nodes, Tags: []int64{tag}, Physical: []int32{0}, Entity: []int32{1}}
	}
	g.Blocks = []gmsh.Block{
		block(gmsh.Tetrahedron, 50, 4, 5, 8, 9),
		block(gmsh.Hexahedron, 60, 0, 1, 2, 3, 4, 5, 6, 7),
		block(gmsh.Pyramid, 70, 4, 5, 6, 7, 8),
	}
	return g
}

// TestDeclareMixedMalformed: a mixed mesh built by hand declares, with
// its shared faces interior; made wrong, each is an error naming what is
// wrong (the cell's kind and element tag), from Declare and WriteHDF5.
func TestDeclareMixedMalformed(t *testing.T) {
	m, err := unstructured.Declare(hybridByHand(), unstructured.Options{})
	if err != nil {
		t.Fatalf("the well-formed mesh: %v", err)
	}
	if len(m.CellKinds) != 3 || m.Cells.Size() != 3 || len(m.Interior) != 2 || m.Interior[0].Set.Size() != 1 || m.Interior[1].Set.Size() != 1 {
		t.Fatalf("%d kinds, %d cells and %d interior facet sets; want 3, 3 and a triangle and a quadrilateral between the cells", len(m.CellKinds), m.Cells.Size(), len(m.Interior))
	}
	for _, c := range []struct {
		name  string
		bad   func(g *gmsh.Mesh)
		wants []string
	}{
		{"pyramid of zero volume", func(g *gmsh.Mesh) { g.X[3*8+2] = 1 }, []string{"pyramid 0 (element tag 70) has zero volume"}},
		{"a NaN coordinate", func(g *gmsh.Mesh) { g.X[3*8+2] = math.NaN() }, []string{"(element tag 50) has volume NaN: a coordinate of its nodes is not a finite number"}},
		{"hexahedron of zero volume", func(g *gmsh.Mesh) {
			copy(g.Blocks[1].Nodes[4:], g.Blocks[1].Nodes[:4])
			g.Blocks[1].Nodes[4], g.Blocks[1].Nodes[6] = g.Blocks[1].Nodes[6], g.Blocks[1].Nodes[4]
		}, []string{"hexahedron 0 (element tag 60)"}},
		{"a face of three cells", func(g *gmsh.Mesh) {
			g.Blocks[0].Nodes = append(g.Blocks[0].Nodes, 4, 5, 8, 3)
			g.Blocks[0].Tags, g.Blocks[0].Physical, g.Blocks[0].Entity = append(g.Blocks[0].Tags, 51), append(g.Blocks[0].Physical, 0), append(g.Blocks[0].Entity, 1)
		}, []string{"triangle facet", "shared by 3 cells"}},
		{"node out of range", func(g *gmsh.Mesh) { g.Blocks[2].Nodes[4] = 10 }, []string{"block 2 (pyramid)", "node 4 is 10"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := hybridByHand()
			c.bad(g)
			m, err := unstructured.Declare(g, unstructured.Options{})
			if err == nil || m != nil {
				t.Fatalf("Declare: mesh %v, error %v", m != nil, err)
			}
			herr := unstructured.WriteHDF5(filepath.Join(t.TempDir(), "m.h5"), g)
			for _, w := range c.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Declare: %v; want an error saying %q", err, w)
				}
				if c.name != "a face of three cells" && (herr == nil || !strings.Contains(herr.Error(), w)) {
					t.Errorf("WriteHDF5: %v; want an error saying %q", herr, w)
				}
			}
		})
	}
}

// TestMixedHDF5Malformed: HDF5 files in the mixed layout (2) that
// WriteHDF5 would not write are errors naming the file and what is wrong.
func TestMixedHDF5Malformed(t *testing.T) {
	type kindSet struct {
		name  string
		size  int
		arity int
		nodes []int32
	}
	write := func(t *testing.T, head []int32, cells int, kinds []kindSet) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), "bad.h5")
		f, err := hdf5.Create(path)
		testreq.Check(t, "hdf5", err, hdf5.ErrNoHDF5)
		x := []float64{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1}
		steps := []func() error{
			func() error { return hdf5.WriteArray(f, "unstructured", 1, head) },
			func() error { return hdf5.WriteArray(f, "groups", 1, []int32{}) },
			func() error { return f.WriteSetSize("nodes", 5) },
			func() error { return hdf5.WriteArray(f, "x", 3, x) },
			func() error { return f.WriteSetSize("cells", cells) },
			func() error { return hdf5.WriteArray(f, "cell_tags", 1, make([]int32, cells)) },
		}
		for _, k := range kinds {
			steps = append(steps, func() error { return f.WriteSetSize(k.name, k.size) },
				func() error { return f.WriteMapTable(k.name+"_nodes", k.arity, k.nodes) })
		}
		for _, s := range steps {
			if err := s(); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tet := kindSet{"cells_4", 1, 4, []int32{0, 1, 2, 3}}
	pyr := kindSet{"cells_7", 1, 5, []int32{0, 1, 4, 2, 3}}
	for _, c := range []struct {
		name  string
		head  []int32
		cells int
		kinds []kindSet
		want  string
	}{
		{"one kind in the mixed layout", []int32{2, 3, 1, 4}, 1, []kindSet{tet}, "a mesh of 1 kinds of cell lists 1"},
		{"kinds cut short", []int32{2, 3, 3, 4, 7}, 2, []kindSet{tet, pyr}, "a mesh of 3 kinds of cell lists 2"},
		{"a kind twice", []int32{2, 3, 2, 4, 4}, 2, []kindSet{tet}, "cells of Gmsh type 4 twice"},
		{"a kind of another dimension", []int32{2, 3, 2, 4, 2}, 2, []kindSet{tet}, "cells of Gmsh type 2 in 3 dimensions"},
		{"counts disagree", []int32{2, 3, 2, 4, 7}, 3, []kindSet{tet, pyr}, "hold 2 cells, the set cells 3"},
		{"node out of range", []int32{2, 3, 2, 4, 7}, 2, []kindSet{tet, {"cells_7", 1, 5, []int32{0, 1, 4, 2, 9}}}, "cells_7_nodes holds node 9, outside [0,5)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := write(t, c.head, c.cells, c.kinds)
			_, err := unstructured.Load(path, unstructured.Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("%v; want an error naming %s and saying %q", err, path, c.want)
			}
		})
	}
}

// TestDeclareTiltedSurface: a 2-D mesh in a plane z = constant declares
// (its cells are computed from x and y); one whose z varies (the unit
// square in the plane z = x) is refused, naming two nodes' z, rather
// than flattened onto z = 0.
func TestDeclareTiltedSurface(t *testing.T) {
	square := func(z func(x float64) float64) *gmsh.Mesh {
		xy := []float64{0, 0, 1, 0, 1, 1, 0, 1}
		g := &gmsh.Mesh{Dim: 2, NodeTags: []int64{1, 2, 3, 4}, Blocks: []gmsh.Block{{Type: gmsh.Triangle,
			Nodes: []int32{0, 1, 2, 0, 2, 3}, Tags: []int64{10, 11}, Physical: []int32{0, 0}, Entity: []int32{1, 1}}}}
		for i := range 4 {
			g.X = append(g.X, xy[2*i], xy[2*i+1], z(xy[2*i]))
		}
		return g
	}
	if _, err := unstructured.Declare(square(func(float64) float64 { return 2.5 }), unstructured.Options{}); err != nil {
		t.Fatalf("a square in the plane z = 2.5: %v", err)
	}
	want := "a 2-D mesh must lie in a plane z = constant (its cells are computed from x and y): node tag 1 has z = 0, node tag 2 z = 1"
	if _, err := unstructured.Declare(square(func(x float64) float64 { return x }), unstructured.Options{}); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a square in the plane z = x: %v, want an error saying %q", err, want)
	}
}

// TestLoadNamesTheFile: Load's errors about the mesh in a file (a 2-D
// mesh out of its plane, found reading it; a group element that is not
// a face of a cell, found declaring it) name the file.
func TestLoadNamesTheFile(t *testing.T) {
	const head = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n4\n1 0 0 %s\n2 1 0 0\n3 1 1 0\n4 0 1 0\n$EndNodes\n$Elements\n%d\n"
	for _, c := range []struct {
		name, z, elems, want string
		n                    int
	}{
		{"tilted", "1", "1 2 2 1 1 1 2 3\n2 2 2 1 1 1 3 4\n", "must lie in a plane z = constant", 2},
		{"stray line", "0", "1 2 2 1 1 1 2 3\n2 2 2 1 1 1 3 4\n3 1 2 2 2 2 4\n", "is not a face of any cell", 3},
	} {
		path := filepath.Join(t.TempDir(), c.name+".msh")
		if err := os.WriteFile(path, []byte(fmt.Sprintf(head, c.z, c.n)+c.elems+"$EndElements\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := unstructured.Load(path, unstructured.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: Load: %v, want an error saying %q and naming %s", c.name, err, c.want, path)
		}
	}
}

// TestGroupNameOfTwoGroups: Group refuses a name two physical groups
// share (Gmsh allows it across dimensions), naming both, rather than
// returning the first.
func TestGroupNameOfTwoGroups(t *testing.T) {
	g := cubeWithBottom()
	g.Physical = append(g.Physical, gmsh.PhysicalGroup{Dim: 3, Tag: 2, Name: "bottom"})
	tets := &g.Blocks[1]
	for i := range tets.Physical {
		tets.Physical[i] = 2
	}
	m, err := unstructured.Declare(g, unstructured.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := `two physical groups are named "bottom", of dimension 2 (tag 1) and 3 (tag 2)`
	if _, err := m.Group("bottom"); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Group(%q): %v, want an error saying %q", "bottom", err, want)
	}
}

// unnamedGroups22 is a 2.2 mesh of two triangles, each written twice, in
// groups 1 and 2, which no $PhysicalNames names (classic .geo files'
// Physical Surface(1) = {...}).
const unnamedGroups22 = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n" +
	"$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 1 1 0\n4 0 1 0\n$EndNodes\n" +
	"$Elements\n4\n1 2 2 1 1 1 2 3\n2 2 2 2 1 1 2 3\n3 2 2 1 1 1 3 4\n4 2 2 2 1 1 3 4\n$EndElements\n"

// TestUnnamedGroups22: a 2.2 file writes an element once per physical
// group, named or not; the copies are one cell in both groups.
func TestUnnamedGroups22(t *testing.T) {
	names := "$PhysicalNames\n2\n2 1 \"a\"\n2 2 \"b\"\n$EndPhysicalNames\n"
	head, body, _ := strings.Cut(unnamedGroups22, "$Nodes")
	dir := t.TempDir()
	for _, c := range []struct{ name, text string }{{"named.msh", head + names + "$Nodes" + body}, {"unnamed.msh", unnamedGroups22}} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name)
			if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			m, err := unstructured.Load(path, unstructured.Options{Renumber: "none"})
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if n := m.Cells.GlobalSize(); n != 2 {
				t.Errorf("%d cells, want 2 (each triangle once, in groups 1 and 2)", n)
			}
			if tags := m.CellTags.Data(); !slices.Equal(tags, []int32{1, 2, 1, 2}) {
				t.Errorf("cell tags %v, want [1 2 1 2]", tags)
			}
		})
	}
}

// TestConvertHDF5NotGmsh: an input with HDF5's signature that is not a
// readable CGNS file (truncated, or an HDF5 file of another kind) gets
// HDF5's or CGNS's error naming it, never the Gmsh reader's.
func TestConvertHDF5NotGmsh(t *testing.T) {
	dir := t.TempDir()
	msh := filepath.Join(dir, "tri.msh")
	if err := os.WriteFile(msh, []byte("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n3\n1 0 0 0\n2 1 0 0\n3 0 1 0\n$EndNodes\n$Elements\n1\n1 2 2 0 1 1 2 3\n$EndElements\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	whole := filepath.Join(dir, "tri.h5")
	if err := unstructured.Convert(msh, whole); err != nil {
		testreq.Check(t, "hdf5", err, hdf5.ErrNoHDF5)
	}
	b, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	trunc := filepath.Join(dir, "trunc.cgns")
	if err := os.WriteFile(trunc, b[:len(b)/3], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ in, want string }{
		{trunc, trunc},
		{whole, "not a CGNS mesh"},
	} {
		err := unstructured.Convert(c.in, filepath.Join(dir, "out.h5"))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "gmsh") {
			t.Errorf("Convert(%s): %v, want an error naming %q, not the Gmsh reader's", filepath.Base(c.in), err, c.want)
		}
	}
}

// TestLoadOtherHDF5: an HDF5 file WriteHDF5 did not write (an Airfoil
// mesh in OP2's layout) is refused as not such a mesh, naming the file,
// not only with the dataset it lacks.
func TestLoadOtherHDF5(t *testing.T) {
	path := filepath.Join(t.TempDir(), "airfoil.h5")
	f, err := hdf5.Create(path)
	testreq.Check(t, "hdf5", err, hdf5.ErrNoHDF5)
	if err := f.WriteSetSize("nodes", 4); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = unstructured.Load(path, unstructured.Options{})
	if err == nil || !strings.Contains(err.Error(), path+": not a mesh written by unstructured.WriteHDF5") {
		t.Errorf("Load of an Airfoil HDF5 file: %v, want an error saying it is not a mesh WriteHDF5 wrote", err)
	}
}

// TestConvertRefusalKeepsOutput: a mesh Convert refuses (no cells of
// dimension 2 or 3; a 2-D mesh not flat) leaves the output file it never
// opened, and the error names the input.
func TestConvertRefusalKeepsOutput(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"lines.msh":  "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n2\n1 0 0 0\n2 1 0 0\n$EndNodes\n$Elements\n1\n1 1 2 0 1 1 2\n$EndElements\n",
		"tilted.msh": "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n3\n1 0 0 0\n2 1 0 0\n3 0 1 1\n$EndNodes\n$Elements\n1\n1 2 2 0 1 1 2 3\n$EndElements\n",
	} {
		t.Run(name, func(t *testing.T) {
			in, out := filepath.Join(dir, name), filepath.Join(dir, "earlier.h5")
			if err := os.WriteFile(in, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(out, []byte("an earlier conversion"), 0o644); err != nil {
				t.Fatal(err)
			}
			err := unstructured.Convert(in, out)
			if err == nil || !strings.Contains(err.Error(), in) {
				t.Errorf("Convert: %v; want an error naming %s", err, in)
			}
			if b, serr := os.ReadFile(out); serr != nil || string(b) != "an earlier conversion" {
				t.Errorf("Convert refused the mesh but changed %s: %q, %v", out, b, serr)
			}
		})
	}
}

// TestWriteHDF5ThroughLink: WriteHDF5 to a path that is a link leaves the
// link, leading to the new mesh, and no temporary file (hdf5.WriteFile
// renames a new file over the link's target). That a failed write keeps
// the earlier file is TestParallelWrite's.
func TestWriteHDF5ThroughLink(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "target.h5"), filepath.Join(dir, "link.h5")
	if err := os.WriteFile(target, []byte("an earlier conversion"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("target.h5", link); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.WriteHDF5(link, cubeWithBottom()); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a link: %v", link, err)
	}
	m, err := unstructured.Load(link, unstructured.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := m.Cells.Size(); n != 6 {
		t.Errorf("the mesh read back through the link has %d cells, want 6", n)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestCollapsedCells: a cell that names a node twice is refused, naming
// the cell and the nodes: a triangle (no area), and a collapsed cell of
// another kind (a triangle written as a quadrilateral, a prism as a
// hexahedron), whose facets would not meet their neighbours' (a
// tetrahedron beside the prism shared no facet with it, both on the
// boundary).
func TestCollapsedCells(t *testing.T) {
	quads := &gmsh.Mesh{Dim: 2, NodeTags: []int64{1, 2, 3, 4, 5},
		X: []float64{0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 2, 0, 0},
		Blocks: []gmsh.Block{{Type: gmsh.Quadrangle, Nodes: []int32{0, 1, 2, 3, 1, 4, 2, 2}, Tags: []int64{1, 2},
			Physical: []int32{0, 0}, Entity: []int32{1, 1}}}}
	tri := &gmsh.Mesh{Dim: 2, NodeTags: []int64{1, 2, 3}, X: []float64{0, 0, 0, 1, 0, 0, 1, 1, 0},
		Blocks: []gmsh.Block{{Type: gmsh.Triangle, Nodes: []int32{0, 1, 1}, Tags: []int64{7}, Physical: []int32{0}, Entity: []int32{1}}}}
	prism := &gmsh.Mesh{Dim: 3, NodeTags: []int64{1, 2, 3, 4, 5, 6, 7},
		X: []float64{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 1, 0, 1, 1, 0.2, 0.2, -1},
		Blocks: []gmsh.Block{
			{Type: gmsh.Tetrahedron, Nodes: []int32{0, 2, 1, 6}, Tags: []int64{2}, Physical: []int32{0}, Entity: []int32{1}},
			{Type: gmsh.Hexahedron, Nodes: []int32{0, 1, 2, 2, 3, 4, 5, 5}, Tags: []int64{1}, Physical: []int32{0}, Entity: []int32{1}},
		}}
	for _, tt := range []struct {
		name string
		mesh *gmsh.Mesh
		want string
	}{
		{"quadrilateral", quads, "quadrilateral 1 (element tag 2) has a node twice (its nodes 2 and 3): write a collapsed cell as the kind it is"},
		{"triangle", tri, "triangle 0 (element tag 7) has a node twice (its nodes 1 and 2)"},
		{"hexahedron", prism, "hexahedron 0 (element tag 1) has a node twice (its nodes 2 and 3): write a collapsed cell as the kind it is"},
	} {
		if _, err := unstructured.Declare(tt.mesh, unstructured.Options{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("a collapsed %s: %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestStrayElementNamesItsGroup: a group element that is not a face of a
// cell is named with its group's name and physical tag.
func TestStrayElementNamesItsGroup(t *testing.T) {
	const msh = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n2\n1 2 \"plate\"\n2 1 \"domain\"\n$EndPhysicalNames\n" +
		"$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 1 1 0\n4 0 1 0\n$EndNodes\n" +
		"$Elements\n3\n1 2 2 1 1 1 2 3\n2 2 2 1 1 1 3 4\n3 1 2 2 2 2 4\n$EndElements\n"
	path := filepath.Join(t.TempDir(), "plate.msh")
	if err := os.WriteFile(path, []byte(msh), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := unstructured.Load(path, unstructured.Options{})
	if want := `an element of group "plate" (physical tag 2), a line with nodes [1 3]`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Load: %v, want an error saying %q", err, want)
	}
}
