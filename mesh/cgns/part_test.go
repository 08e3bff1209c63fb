package cgns

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	cg "github.com/goop2/op2/internal/cgns"
	"github.com/goop2/op2/internal/cgnstest"
	"github.com/goop2/op2/internal/collective"
	"github.com/goop2/op2/internal/testreq"
	"github.com/goop2/op2/mesh/gmsh"
)

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
		p, err := l.ReadPart(collective.Single{}, keep)
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

// TestReadPartMixed converts a Patran file of prisms and a tetrahedron
// with patran_to_cgns (one MIXED section) and reads it by parts with
// windows of 3 and 5 values, so that elements straddle them and later
// walks start from Scan's marks: the counts and each kind's elements are
// Read's.
func TestReadPartMixed(t *testing.T) {
	testreq.Check(t, "cgns", cg.Load(), ErrUnavailable)
	var pat strings.Builder
	xs := [][3]float64{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 1}, {0, 1, 1}, {0, 0, 2}, {1, 0, 2}, {0, 1, 2}, {0, 0, 3}}
	for i, x := range xs {
		fmt.Fprintf(&pat, " 1%8d%8d%8d\n%16.9E%16.9E%16.9E\n1G       6       0       0  000000\n", i+1, 0, 2, x[0], x[1], x[2])
	}
	cells := [][]int{{1, 2, 3, 4, 5, 6}, {7, 8, 9, 10}, {4, 5, 6, 7, 8, 9}, {4, 5, 6, 10}}
	for i, c := range cells {
		shape := map[int]int{4: 5, 6: 7}[len(c)]
		fmt.Fprintf(&pat, " 2%8d%8d%8d\n%8d%8d%8d%8d\n", i+1, shape, 2, len(c), 0, 1, 0)
		for _, v := range c {
			fmt.Fprintf(&pat, "%8d", v)
		}
		pat.WriteString("\n")
	}
	fmt.Fprintf(&pat, "99%8d%8d%8d\n", 0, 0, 1)
	path := cgnstest.PatranText(t, pat.String())
	m, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func(w int64) { window = w }(window)
	for _, w := range []int64{3, 5, 1 << 16} {
		window = w
		l, err := Scan(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range m.Blocks {
			if l.Part.Counts[b.Type] != int64(b.Len()) {
				t.Errorf("window %d: %d %vs, want %d", w, l.Part.Counts[b.Type], b.Type, b.Len())
			}
		}
		for _, ps := range l.secs {
			// Small windows leave marks that later walks start from.
			if ps.typ == mixed && (len(ps.marks) == 0) != (w == 1<<16) {
				t.Errorf("window %d: %d marks in MIXED section %s", w, len(ps.marks), ps.name)
			}
		}
		for first := range 3 {
			keep := gmsh.Keep{Nodes: gmsh.Range{Count: int64(len(xs))}, Elements: map[gmsh.Type]gmsh.Range{}}
			for _, b := range m.Blocks {
				keep.Elements[b.Type] = gmsh.Range{Start: int64(first), Count: 1}
			}
			p, err := l.ReadPart(collective.Single{}, keep)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range m.Blocks {
				i := slices.IndexFunc(p.Blocks, func(pb gmsh.PartBlock) bool { return pb.Type == b.Type })
				if first >= b.Len() {
					if i >= 0 {
						t.Errorf("window %d: %v %d: read, but there are %d", w, b.Type, first, b.Len())
					}
					continue
				}
				nn := b.Type.NumNodes()
				var want []int64
				for _, v := range b.Nodes[first*nn : (first+1)*nn] {
					want = append(want, int64(v)+1)
				}
				if i < 0 {
					t.Errorf("window %d: %v %d: not read", w, b.Type, first)
					continue
				}
				if !slices.Equal(p.Blocks[i].Nodes, want) || p.Blocks[i].Tags[0] != b.Tags[first] {
					t.Errorf("window %d: %v %d: %v, want %v", w, b.Type, first, p.Blocks[i], want)
				}
			}
		}
	}
}
