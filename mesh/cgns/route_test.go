package cgns

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2"
	cg "github.com/goop2/op2/internal/cgns"
	"github.com/goop2/op2/internal/cgnstest"
	"github.com/goop2/op2/internal/mpi"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/internal/testreq"
	"github.com/goop2/op2/mesh/gmsh"
)

// mixedWithList writes, through patran_to_cgns, n cells of random kinds
// (tetrahedra and prisms, on nodes of a line: only their numbers count)
// as one MIXED section, and adds a boundary condition listing every
// third cell; it returns the file.
func mixedWithList(t *testing.T, n int, seed uint64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	const nodes = 40
	var pat strings.Builder
	for i := range nodes {
		fmt.Fprintf(&pat, " 1%8d%8d%8d\n%16.9E%16.9E%16.9E\n1G       6       0       0  000000\n", i+1, 0, 2, float64(i), float64(i%3), float64(i%5))
	}
	for i := range n {
		nn, shape := 4, 5
		if rng.IntN(3) == 0 {
			nn, shape = 6, 7
		}
		fmt.Fprintf(&pat, " 2%8d%8d%8d\n%8d%8d%8d%8d\n", i+1, shape, 2, nn, 0, 1, 0)
		for _, v := range rng.Perm(nodes)[:nn] {
			fmt.Fprintf(&pat, "%8d", v+1)
		}
		pat.WriteString("\n")
	}
	path := cgnstest.PatranText(t, pat.String())
	var list []int64
	for i := int64(1); i <= int64(n); i += 3 {
		list = append(list, i)
	}
	out := strings.TrimSuffix(path, ".cgns") + "-list.cgns"
	cgnstest.WithElementList(t, path, out, "listed", list)
	return out
}

// withBadMixedKind copies the file at path, one MIXED section of 32-bit
// values, with the kind of its first element set to 99, which no
// element type is.
func withBadMixedKind(t *testing.T, path string) string {
	t.Helper()
	m, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var first []int32 // the first element's code and nodes, as the file holds them
	for _, b := range m.Blocks {
		if len(b.Tags) > 0 && b.Tags[0] == 1 {
			code := map[gmsh.Type]int32{gmsh.Tetrahedron: 10, gmsh.Prism: 14}[b.Type]
			first = append(first, code)
			for _, v := range b.Nodes[:b.Type.NumNodes()] {
				first = append(first, v+1)
			}
		}
	}
	pattern := func(v []int32) []byte {
		var out []byte
		for _, x := range v {
			out = binary.LittleEndian.AppendUint32(out, uint32(x))
		}
		return out
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	good := pattern(first)
	if len(first) < 5 || first[0] == 0 || bytes.Count(data, good) != 1 {
		t.Fatalf("the first element %v is not stored once as 32-bit values", first)
	}
	first[0] = 99
	bad := strings.TrimSuffix(path, ".cgns") + "-bad.cgns"
	if err := os.WriteFile(bad, bytes.Replace(data, good, pattern(first), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	return bad
}

// blockKeeps splits every kind of l's elements, and its nodes, into
// ranks blocks.
func blockKeeps(l *Layout, ranks int) []gmsh.Keep {
	keeps := make([]gmsh.Keep, ranks)
	for q := range keeps {
		lo, hi := l.Part.NumNodes*int64(q)/int64(ranks), l.Part.NumNodes*int64(q+1)/int64(ranks)
		keeps[q] = gmsh.Keep{Nodes: gmsh.Range{Start: lo, Count: hi - lo}, Elements: map[gmsh.Type]gmsh.Range{}}
		for k, n := range l.Part.Counts {
			lo, hi := n*int64(q)/int64(ranks), n*int64(q+1)/int64(ranks)
			keeps[q].Elements[k] = gmsh.Range{Start: lo, Count: hi - lo}
		}
	}
	return keeps
}

// TestWindowRanks: an element of a MIXED section listed by a boundary
// condition goes to the ranks whose parts meet its window between two of
// Scan's marks, which include the one holding it, and no more than two
// ranks per kind in the window (not every rank).
func TestWindowRanks(t *testing.T) {
	testreq.Check(t, "cgns", cg.Load(), ErrUnavailable)
	path := mixedWithList(t, 300, 1)
	m, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func(w int64) { window = w }(window)
	window = 16
	l, err := Scan(path)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(l.secs, func(ps partSection) bool { return ps.typ == mixed })
	if i < 0 || len(l.secs[i].marks) < 10 {
		t.Fatalf("no MIXED section with marks every 16 values: %+v", l.secs)
	}
	ps := &l.secs[i]
	// Each element's kind and number among its kind, from Read.
	type where struct {
		k   gmsh.Type
		idx int64
	}
	at := map[int64]where{}
	for _, b := range m.Blocks {
		for j, id := range b.Tags {
			at[id] = where{b.Type, int64(j)}
		}
	}
	const ranks = 7
	keeps := blockKeeps(l, ranks)
	holders := func(k gmsh.Type, lo, hi int64) []int {
		var qs []int
		for q, kp := range keeps {
			if r := kp.Elements[k]; r.Start < hi && lo < r.Start+r.Count {
				qs = append(qs, q)
			}
		}
		return qs
	}
	cache := map[[2]int64][]int{}
	most := 0
	for e := ps.start; e <= ps.end; e++ {
		w, ok := at[e]
		if !ok {
			t.Fatalf("element %d: not read", e)
		}
		qs := windowRanks(ps, e-ps.start, holders, cache)
		owner := holders(w.k, w.idx, w.idx+1)
		if len(owner) != 1 || !slices.Contains(qs, owner[0]) {
			t.Fatalf("element %d (%v %d): ranks %v, its holder %v", e, w.k, w.idx, qs, owner)
		}
		if len(qs) > 2*len(ps.count) {
			t.Errorf("element %d: %d ranks %v, want at most %d", e, len(qs), qs, 2*len(ps.count))
		}
		most = max(most, len(qs))
	}
	if most >= ranks {
		t.Errorf("an element went to all %d ranks", ranks)
	}
}

// TestReadPartListedMixedOnRanks: on 4 MPI ranks, ReadPart of a MIXED
// section listed by a boundary condition, its windows 16 values, gives
// each listed cell its group on the rank that holds it, as Read does.
func TestReadPartListedMixedOnRanks(t *testing.T) {
	const pathEnv, badEnv, ranks = "CGNS_LISTED_MIXED", "CGNS_BAD_MIXED", 4
	testreq.Check(t, "cgns", cg.Load(), ErrUnavailable)
	if !mpitest.InRanks() {
		path := mixedWithList(t, 240, 2)
		mpitest.Run(t, ranks, 2*time.Minute, pathEnv+"="+path, badEnv+"="+withBadMixedKind(t, path))
		return
	}
	path := os.Getenv(pathEnv)
	m, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	groups := func(physical []gmsh.PhysicalGroup, ents []gmsh.Entity, dim int, entity int32) []string {
		var names []string
		for _, e := range ents {
			if e.Dim == dim && e.Tag == entity {
				for _, tag := range e.Physical {
					for _, pg := range physical {
						if pg.Dim == dim && pg.Tag == tag {
							names = append(names, pg.Name)
						}
					}
				}
			}
		}
		return names
	}
	want := map[int64][]string{}
	listed := 0
	for _, b := range m.Blocks {
		for j, id := range b.Tags {
			want[id] = groups(m.Physical, m.Entities, b.Type.Dim(), b.Entity[j])
			if slices.Contains(want[id], "listed") {
				listed++
			}
		}
	}
	if listed != 80 {
		t.Errorf("%d elements in the listed group, want 80", listed)
	}
	window = 16
	if op2.Ranks() != ranks {
		t.Fatalf("%d ranks, want %d", op2.Ranks(), ranks)
	}
	rank := op2.Rank()
	// A MIXED section whose first element has an unknown kind: only
	// rank 0 reads it, and every rank gets its error.
	bad := os.Getenv(badEnv)
	if _, err := ScanOn(mpi.Current(), bad); err == nil || !strings.Contains(err.Error(), "rank 0: ") || !strings.Contains(err.Error(), bad) ||
		!strings.Contains(err.Error(), "element 1 of the section") {
		t.Errorf("rank %d: ScanOn of a MIXED section with a bad kind: %v", op2.Rank(), err)
	}
	l, err := ScanOn(mpi.Current(), path)
	if err != nil {
		t.Fatal(err)
	}
	// Rank 0 alone walks the MIXED section; the others get its counts
	// and marks, the same as a walk of their own would make.
	own, err := Scan(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[bool]int64{true: own.walked, false: 0}[rank == 0]; l.walked != want || own.walked == 0 {
		t.Errorf("rank %d: ScanOn walked %d values, want %d (%d in the file)", rank, l.walked, want, own.walked)
	}
	if !reflect.DeepEqual(l.secs, own.secs) || !reflect.DeepEqual(l.Part, own.Part) {
		t.Errorf("rank %d: ScanOn's layout differs from Scan's", rank)
	}
	part, err := l.ReadPart(mpi.Current(), blockKeeps(l, ranks)[rank])
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	for _, b := range part.Blocks {
		held += b.Len()
		for j, id := range b.Tags {
			if got := groups(part.Physical, part.Entities, b.Type.Dim(), b.Entity[j]); !slices.Equal(got, want[id]) {
				t.Errorf("rank %d: element %d: groups %v, want %v", rank, id, got, want[id])
			}
		}
	}
	if held == 0 {
		t.Errorf("rank %d holds no element", rank)
	}
	if err := op2.Finalize(); err != nil {
		t.Fatal(err)
	}
}
