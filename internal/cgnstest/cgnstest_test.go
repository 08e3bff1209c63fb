package cgnstest

import (
	"path/filepath"
	"slices"
	"testing"

	cg "github.com/goop2/op2/internal/cgns"
	"github.com/goop2/op2/mesh/gmsh"
)

// TestConverters: the boundary-layer mesh (prisms under tetrahedra)
// converted through AFLR3 and through Patran opens in libcgns with its
// nodes, a section per kind for aflr3_to_cgns and a MIXED one for
// patran_to_cgns; a list added by WithElementList reads back.
func TestConverters(t *testing.T) {
	g, err := gmsh.ReadFile(filepath.Join("..", "..", "mesh", "cgns", "testdata", "layer.msh"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	const mixed = 20 // ElementType_t MIXED
	for _, c := range []struct {
		path      string
		wantMixed bool
	}{
		{UGRID(t, g, dir, "layer"), false},
		{Patran(t, g, dir, "layer-patran"), true},
	} {
		f, err := cg.Open(c.path, cg.Read)
		if err != nil {
			t.Fatal(err)
		}
		_, size, err := f.ZoneRead(1, 1)
		if err != nil || size[0] != int64(g.NumNodes()) {
			t.Errorf("%s: zone of %d nodes (%v), want %d", c.path, size[0], err, g.NumNodes())
		}
		n, err := f.NSections(1, 1)
		if err != nil {
			t.Fatal(err)
		}
		hasMixed := false
		for s := 1; s <= n; s++ {
			sec, err := f.SectionRead(1, 1, s)
			if err != nil {
				t.Fatal(err)
			}
			hasMixed = hasMixed || sec.Type == mixed
		}
		if hasMixed != c.wantMixed {
			t.Errorf("%s: a MIXED section %v, want %v", c.path, hasMixed, c.wantMixed)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "listed.cgns")
	WithElementList(t, filepath.Join(dir, "layer.cgns"), out, "listed", []int64{1, 4, 9})
	f, err := cg.Open(out, cg.Read)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := f.NBocos(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	for bc := 1; bc <= n; bc++ {
		b, err := f.BocoInfo(1, 1, bc)
		if err != nil {
			t.Fatal(err)
		}
		if b.Name != "listed" {
			continue
		}
		got, err := f.BocoRead(1, 1, bc, b)
		if err != nil || !slices.Equal(got, []int64{1, 4, 9}) {
			t.Errorf("listed: %v (%v), want [1 4 9]", got, err)
		}
		return
	}
	t.Error("no condition \"listed\"")
}
