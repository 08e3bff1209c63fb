package cgns

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	cg "github.com/goop2/op2/internal/cgns"
	"github.com/goop2/op2/internal/testreq"
	"github.com/goop2/op2/mesh/gmsh"
)

// one is the communicator of one process.
type one struct{}

func (one) Rank() int { return 0 }
func (one) Size() int { return 1 }
func (one) Alltoallv(send [][]byte) ([][]byte, error) {
	return [][]byte{append([]byte(nil), send[0]...)}, nil
}

// TestReadPartRanges reads ranges of the converted box with ReadPart, its
// sections in chunks of 7 elements: each is that range of what Read
// gives — vertices, elements with their numbers, and for the whole file
// each element's groups, with Read's groups; the layout's counts are
// Read's.
func TestReadPartRanges(t *testing.T) {
	testreq.Check(t, "cgns", cg.Load(), ErrUnavailable)
	defer func(c int64) { chunk = c }(chunk)
	chunk = 7
	path := filepath.Join("testdata", "box.cgns")
	m, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Scan(path)
	if err != nil {
		t.Fatal(err)
	}
	if l.Part.Dim != m.Dim || l.Part.NumNodes != int64(m.NumNodes()) || len(l.Part.Counts) != len(m.Blocks) {
		t.Fatalf("layout: dim %d, %d nodes, %d kinds; want %d %d %d", l.Part.Dim, l.Part.NumNodes, len(l.Part.Counts), m.Dim, m.NumNodes(), len(m.Blocks))
	}
	groupsOf := func(ents []gmsh.Entity, dim int, entity int32) []int32 {
		for _, e := range ents {
			if e.Dim == dim && e.Tag == entity {
				return e.Physical
			}
		}
		return nil
	}
	for _, frac := range [][2]int{{0, 1}, {1, 3}, {2, 3}, {0, 0}} {
		keep := gmsh.Keep{Elements: map[gmsh.Type]gmsh.Range{}}
		part := func(n int) (int, int) { return n * frac[0] / 3, n*frac[1]/3 - n*frac[0]/3 }
		if frac == [2]int{0, 1} {
			part = func(n int) (int, int) { return 0, n }
		}
		s, c := part(m.NumNodes())
		keep.Nodes = gmsh.Range{Start: int64(s), Count: int64(c)}
		for _, b := range m.Blocks {
			s, c := part(b.Len())
			keep.Elements[b.Type] = gmsh.Range{Start: int64(s), Count: int64(c)}
		}
		p, err := l.ReadPart(one{}, keep)
		if err != nil {
			t.Fatal(err)
		}
		whole := frac == [2]int{0, 1} // the groups are the file's when the ranks' parts make the file
		if whole && !slices.Equal(p.Physical, m.Physical) {
			t.Errorf("%v: groups %v, want %v", frac, p.Physical, m.Physical)
		}
		s, c = part(m.NumNodes())
		if p.FirstNode != int64(s) || !slices.Equal(p.X, m.X[3*s:3*(s+c)]) {
			t.Errorf("%v: nodes from %d, %d values; want from %d, %d", frac, p.FirstNode, len(p.X), s, 3*c)
		}
		for _, b := range m.Blocks {
			s, c := part(b.Len())
			i := slices.IndexFunc(p.Blocks, func(pb gmsh.PartBlock) bool { return pb.Type == b.Type })
			if c == 0 {
				if i >= 0 {
					t.Errorf("%v: %v: %d elements, want none", frac, b.Type, p.Blocks[i].Len())
				}
				continue
			}
			if i < 0 {
				t.Fatalf("%v: no %v", frac, b.Type)
			}
			pb := p.Blocks[i]
			nn := b.Type.NumNodes()
			if pb.First != int64(s) || !slices.Equal(pb.Tags, b.Tags[s:s+c]) || len(pb.Nodes) != c*nn {
				t.Fatalf("%v: %v: from %d, %d elements; want from %d, %d", frac, b.Type, pb.First, pb.Len(), s, c)
			}
			for j, v := range b.Nodes[s*nn : (s+c)*nn] {
				if pb.Nodes[j] != int64(v)+1 {
					t.Fatalf("%v: %v: node %d is %d, want %d", frac, b.Type, j, pb.Nodes[j], v+1)
				}
			}
			for j := range c {
				if !whole {
					break
				}
				got := groupsOf(p.Entities, b.Type.Dim(), pb.Entity[j])
				want := groupsOf(m.Entities, b.Type.Dim(), b.Entity[s+j])
				if !slices.Equal(got, want) {
					t.Fatalf("%v: %v element %d: groups %v, want %v", frac, b.Type, pb.Tags[j], got, want)
				}
			}
		}
	}
}

// TestScanErrors: Scan refuses what Read refuses, with Read's error.
func TestScanErrors(t *testing.T) {
	testreq.Check(t, "cgns", cg.Load(), ErrUnavailable)
	for _, path := range []string{filepath.Join("testdata", "box.msh"), filepath.Join("testdata", "nothing.cgns")} {
		_, werr := Read(path)
		_, serr := Scan(path)
		if werr == nil || serr == nil || werr.Error() != serr.Error() {
			t.Errorf("%s: Scan: %v; want Read's %v", path, serr, werr)
		}
		var e *cg.Error
		if errors.As(serr, &e) {
			t.Logf("%s: %v", path, serr)
		}
	}
}
