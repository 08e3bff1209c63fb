package cgns_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/cgnstest"
	"github.com/goop2/op2/mesh/cgns"
	"github.com/goop2/op2/mesh/gmsh"
)

// need skips t unless libcgns loads and aflr3_to_cgns runs.
func need(t testing.TB) { cgnstest.Need(t, "aflr3_to_cgns") }

// convert reads testdata/name.msh and makes a .cgns of it with libcgns's
// aflr3_to_cgns, in a temporary folder.
func convert(t testing.TB, name string) (path string, g *gmsh.Mesh) {
	t.Helper()
	return convertFile(t, filepath.Join("testdata", name+".msh"))
}

// convertFile is convert for the .msh at msh.
func convertFile(t testing.TB, msh string) (path string, g *gmsh.Mesh) {
	t.Helper()
	need(t)
	name := strings.TrimSuffix(filepath.Base(msh), ".msh")
	g, err := gmsh.ReadFile(msh)
	if err != nil {
		t.Fatal(err)
	}
	return cgnstest.UGRID(t, g, t.TempDir(), name), g
}

// facesOf returns the sorted face keys of blocks.
func facesOf(blocks []gmsh.Block) []string {
	var out []string
	for _, b := range blocks {
		nn := b.Type.NumNodes()
		for i := range b.Len() {
			out = append(out, cgnstest.FaceKey(b.Nodes[nn*i:nn*i+nn]))
		}
	}
	slices.Sort(out)
	return out
}

// compare checks that c, read from the .cgns made of g, is g: nodes,
// cells per kind in order, boundary faces, and each boundary group of g
// the union of the boundary conditions that meet it.
func compare(t *testing.T, g, c *gmsh.Mesh) {
	t.Helper()
	if !slices.Equal(g.X, c.X) {
		t.Fatalf("coordinates differ: %d and %d values", len(g.X), len(c.X))
	}
	if c.Dim != g.Dim {
		t.Errorf("Dim %d, want %d", c.Dim, g.Dim)
	}
	byType := func(m *gmsh.Mesh) map[gmsh.Type]gmsh.Block {
		out := map[gmsh.Type]gmsh.Block{}
		for _, b := range m.Blocks {
			if b.Type.Dim() >= 2 {
				out[b.Type] = b
			}
		}
		return out
	}
	gb, cb := byType(g), byType(c)
	if len(gb) != len(cb) {
		t.Errorf("kinds of dimension 2 and 3: %d, want %d", len(cb), len(gb))
	}
	for typ, b := range gb {
		d, ok := cb[typ]
		switch {
		case !ok:
			t.Errorf("no %v block", typ)
		case typ.Dim() == 3 && !slices.Equal(b.Nodes, d.Nodes):
			t.Errorf("%v: node lists differ (%d and %d elements)", typ, d.Len(), b.Len())
		case typ.Dim() == 2 && !slices.Equal(facesOf([]gmsh.Block{b}), facesOf([]gmsh.Block{d})):
			t.Errorf("%v faces differ (%d and %d)", typ, d.Len(), b.Len())
		}
	}
	cgroups := map[string][]string{}
	for _, pg := range c.Physical {
		if pg.Dim == 2 {
			cgroups[pg.Name] = facesOf(c.GroupTag(2, pg.Tag))
		}
	}
	matched := 0
	for _, pg := range g.Physical {
		if pg.Dim != 2 {
			continue
		}
		want := facesOf(g.GroupTag(2, pg.Tag))
		in := map[string]bool{}
		for _, k := range want {
			in[k] = true
		}
		var union []string
		var names []string
		for name, faces := range cgroups {
			meets := false
			for _, k := range faces {
				if in[k] {
					meets = true
				} else if meets {
					break
				}
			}
			if !meets {
				continue
			}
			matched++
			names = append(names, name)
			for _, k := range faces {
				if !in[k] {
					t.Errorf("group %q: boundary condition %q holds a face outside it", pg.Name, name)
					break
				}
			}
			union = append(union, faces...)
		}
		slices.Sort(union)
		if !slices.Equal(union, want) {
			t.Errorf("group %q: %d faces, the boundary conditions %s meeting it %d", pg.Name, len(want), strings.Join(names, ", "), len(union))
		}
	}
	if len(cgroups) == 0 {
		t.Error("no boundary conditions")
	}
	if matched != len(cgroups) {
		t.Errorf("%d boundary conditions, %d of them match a group", len(cgroups), matched)
	}
}

// TestReadConverted: meshes made by Gmsh and converted by libcgns's
// aflr3_to_cgns read as the .msh they came from — tetrahedra alone, and
// prisms under tetrahedra (triangles and quadrilaterals on the boundary).
func TestReadConverted(t *testing.T) {
	for _, tc := range []struct {
		name  string
		kinds []gmsh.Type
	}{
		{"box", []gmsh.Type{gmsh.Triangle, gmsh.Tetrahedron}},
		{"layer", []gmsh.Type{gmsh.Triangle, gmsh.Quadrangle, gmsh.Tetrahedron, gmsh.Prism}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, g := convert(t, tc.name)
			c, err := cgns.Read(path)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []gmsh.Type
			for _, b := range c.Blocks {
				kinds = append(kinds, b.Type)
			}
			if !slices.Equal(kinds, tc.kinds) {
				t.Errorf("blocks %v, want %v", kinds, tc.kinds)
			}
			compare(t, g, c)
		})
	}
}
