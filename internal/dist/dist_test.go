package dist

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/testreq"
)

// randomMesh is nodes, edges (2 nodes each), cells (4 nodes each) and an
// isolated set, with node coordinates on a perturbed line.
func randomMesh(rng *rand.Rand, nodes int) (*Mesh, []float64) {
	edges, cells := 2*nodes, nodes
	m := &Mesh{Sets: []Set{{"nodes", nodes}, {"edges", edges}, {"cells", cells}, {"lonely", 7}}}
	near := func(base int) int32 { return int32(((base+rng.IntN(9)-4)%nodes + nodes) % nodes) }
	pe := make([]int32, 2*edges)
	for e := 0; e < edges; e++ {
		pe[2*e], pe[2*e+1] = near(e/2), near(e/2)
	}
	pc := make([]int32, 4*cells)
	for c := range pc {
		pc[c] = near(c / 4)
	}
	m.Maps = []Map{{Name: "pedge", From: 1, To: 0, Arity: 2, Table: pe}, {Name: "pcell", From: 2, To: 0, Arity: 4, Table: pc}}
	xy := make([]float64, 2*nodes)
	for i := 0; i < nodes; i++ {
		xy[2*i], xy[2*i+1] = float64(i)+rng.Float64(), rng.Float64()
	}
	return m, xy
}

// checkLayout verifies every invariant of a layout and simulates a halo
// exchange of each element's global number.
func checkLayout(t *testing.T, m *Mesh, owner [][]int32, locals []Local) {
	t.Helper()
	ranks := len(locals)
	for s, set := range m.Sets {
		owned := make([]int, set.Size)
		for r := range locals {
			ls := &locals[r].Sets[s]
			if !(0 <= ls.Core && ls.Core <= ls.Owned && ls.Owned <= ls.Exec && ls.Exec <= ls.Total && ls.Total == len(ls.Global)) {
				t.Fatalf("rank %d set %s: sections %d %d %d %d (%d)", r, set.Name, ls.Core, ls.Owned, ls.Exec, ls.Total, len(ls.Global))
			}
			seen := map[int64]bool{}
			for i, g := range ls.Global {
				if seen[g] {
					t.Fatalf("rank %d set %s: element %d twice", r, set.Name, g)
				}
				seen[g] = true
				if (i < ls.Owned) != (owner[s][g] == int32(r)) {
					t.Fatalf("rank %d set %s: local %d (global %d, owner %d) in the wrong section", r, set.Name, i, g, owner[s][g])
				}
				if i < ls.Owned {
					owned[g]++
				}
			}
		}
		for g, n := range owned {
			if n != 1 {
				t.Fatalf("set %s: element %d owned %d times", set.Name, g, n)
			}
		}
	}
	for mi, mp := range m.Maps {
		for r := range locals {
			from, to := &locals[r].Sets[mp.From], &locals[r].Sets[mp.To]
			tab := locals[r].Maps[mi]
			for i := 0; i < from.Exec; i++ {
				g := from.Global[i]
				for c := 0; c < mp.Arity; c++ {
					if want, got := int64(mp.Table[int(g)*mp.Arity+c]), to.Global[tab[i*mp.Arity+c]]; want != got {
						t.Fatalf("rank %d map %s row %d col %d: %d, want %d", r, mp.Name, g, c, got, want)
					}
					if i < from.Core && int(tab[i*mp.Arity+c]) >= to.Owned {
						t.Fatalf("rank %d map %s: core element %d reaches the halo", r, mp.Name, g)
					}
				}
			}
			// Every element touching an owned target is present and
			// executed: owner-compute needs all contributions.
			present := map[int64]bool{}
			for _, g := range from.Global[:from.Exec] {
				present[g] = true
			}
			for e := 0; e < m.Sets[mp.From].Size; e++ {
				for _, tg := range mp.Table[e*mp.Arity : (e+1)*mp.Arity] {
					if owner[mp.To][tg] == int32(r) && !present[int64(e)] {
						t.Fatalf("rank %d map %s: element %d touches owned %d but is not executed", r, mp.Name, e, tg)
					}
				}
			}
		}
	}
	// Exchange: every local element ends up holding its global number.
	for s := range m.Sets {
		vals := make([][]int64, ranks)
		for r := range locals {
			ls := &locals[r].Sets[s]
			vals[r] = make([]int64, ls.Total)
			for i := range vals[r] {
				vals[r][i] = -1
			}
			for i := 0; i < ls.Owned; i++ {
				vals[r][i] = ls.Global[i]
			}
		}
		for r := range locals {
			for _, n := range locals[r].Sets[s].Neighbours {
				var msg []int64
				for _, i := range n.Send {
					msg = append(msg, vals[r][i])
				}
				// Find the receiver's entry for r.
				var rn *Neighbour
				for k := range locals[n.Rank].Sets[s].Neighbours {
					if locals[n.Rank].Sets[s].Neighbours[k].Rank == r {
						rn = &locals[n.Rank].Sets[s].Neighbours[k]
					}
				}
				want := int(rn.RecvExec[1]-rn.RecvExec[0]) + int(rn.RecvNonexec[1]-rn.RecvNonexec[0])
				if len(msg) != want {
					t.Fatalf("set %d: %d sends %d elements to %d, which expects %d", s, r, len(msg), n.Rank, want)
				}
				dst := vals[n.Rank]
				k := copy(dst[rn.RecvExec[0]:rn.RecvExec[1]], msg)
				copy(dst[rn.RecvNonexec[0]:rn.RecvNonexec[1]], msg[k:])
			}
		}
		for r := range locals {
			if !slices.Equal(vals[r], locals[r].Sets[s].Global) {
				t.Fatalf("set %s rank %d: after the exchange %v, want %v", m.Sets[s].Name, r, vals[r], locals[r].Sets[s].Global)
			}
		}
	}
}

func TestLayoutInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, ranks := range []int{1, 2, 3, 4, 7} {
		for _, nodes := range []int{0, 1, 5, 40, 300} {
			m, xy := randomMesh(rng, nodes)
			if err := m.Validate(); err != nil {
				t.Fatal(err)
			}
			partitions := map[string][][]int32{}
			block := make([][]int32, len(m.Sets))
			for s := range block {
				block[s] = BlockOwners(m.Sets[s].Size, ranks)
			}
			partitions["block"] = block
			rcb, err := RCBOwners(xy, 2, ranks)
			if err != nil {
				t.Fatal(err)
			}
			spread := make([][]int32, len(m.Sets))
			spread[0] = rcb
			Spread(m, spread, ranks)
			partitions["rcb"] = spread
			random := make([][]int32, len(m.Sets))
			for s := range random {
				random[s] = make([]int32, m.Sets[s].Size)
				for i := range random[s] {
					random[s][i] = int32(rng.IntN(ranks))
				}
			}
			partitions["random"] = random
			for name, owner := range partitions {
				t.Run(fmt.Sprintf("%s/ranks%d/nodes%d", name, ranks, nodes), func(t *testing.T) {
					locals, err := Layout(m, owner, ranks)
					if err != nil {
						t.Fatal(err)
					}
					checkLayout(t, m, owner, locals)
				})
			}
		}
	}
}

func TestRCBBalancedAndLocal(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m, xy := randomMesh(rng, 1000)
	for _, ranks := range []int{2, 3, 4} {
		o, err := RCBOwners(xy, 2, ranks)
		if err != nil {
			t.Fatal(err)
		}
		count := make([]int, ranks)
		for _, r := range o {
			count[r]++
		}
		if slices.Max(count)-slices.Min(count) > 1 {
			t.Errorf("%d ranks: part sizes %v", ranks, count)
		}
		owner := [][]int32{o, nil, nil, nil}
		Spread(m, owner, ranks)
		block := [][]int32{BlockOwners(1000, ranks), BlockOwners(2000, ranks), BlockOwners(1000, ranks), BlockOwners(7, ranks)}
		// The line mesh is ordered, so blocks are as good as RCB; a
		// random partition is far worse.
		if c, b := Cut(m, owner), Cut(m, block); c > 2*b+50 {
			t.Errorf("%d ranks: RCB cut %d, block cut %d", ranks, c, b)
		}
	}
	if _, err := RCBOwners([]float64{0, 1, 2}, 4, 2); err == nil {
		t.Error("dim 4 accepted")
	}
}

func TestMETIS(t *testing.T) {
	// A 4×4 grid graph: METIS halves it with a cut of 4.
	m := &Mesh{Sets: []Set{{"cells", 16}, {"edges", 24}}}
	var tab []int32
	for y := 0; y < 4; y++ {
		for x := 0; x < 4; x++ {
			if x < 3 {
				tab = append(tab, int32(4*y+x), int32(4*y+x+1))
			}
			if y < 3 {
				tab = append(tab, int32(4*y+x), int32(4*y+x+4))
			}
		}
	}
	m.Maps = []Map{{Name: "pecell", From: 1, To: 0, Arity: 2, Table: tab}}
	xadj, adj := Adjacency(&m.Maps[0], 16)
	if len(adj) != 48 {
		t.Fatalf("adjacency has %d entries, want 48", len(adj))
	}
	part, cut, err := METISOwners(16, xadj, adj, 2)
	testreq.Check(t, "metis", err, ErrNoMETIS)
	if cut != 4 {
		t.Errorf("cut %d, want 4 (parts %v)", cut, part)
	}
	if ec := EdgeCut(&m.Maps[0], 16, part); ec != cut {
		t.Errorf("EdgeCut of METIS's partition %d, METIS reports %d", ec, cut)
	}
	owner := [][]int32{part, nil}
	Spread(m, owner, 2)
	locals, err := Layout(m, owner, 2)
	if err != nil {
		t.Fatal(err)
	}
	checkLayout(t, m, owner, locals)
}

// TestEdgeCut: the adjacent pairs (through a row of the map) on different
// ranks, each once however many rows hold it.
func TestEdgeCut(t *testing.T) {
	for _, c := range []struct {
		name  string
		arity int
		table []int32
		owner []int32
		want  int
	}{
		{"one edge across", 2, []int32{0, 1}, []int32{0, 1}, 1},
		{"one edge within", 2, []int32{0, 1}, []int32{1, 1}, 0},
		{"the same pair twice", 2, []int32{0, 1, 1, 0}, []int32{0, 1}, 1},
		{"a quad over two ranks", 4, []int32{0, 1, 2, 3}, []int32{0, 0, 1, 1}, 4},
		{"a quad on four ranks", 4, []int32{0, 1, 2, 3}, []int32{0, 1, 2, 3}, 6},
		{"a repeated entry", 2, []int32{2, 2, 0, 2}, []int32{0, 0, 1}, 1},
		{"arity 1: no graph", 1, []int32{0, 1, 2}, []int32{0, 1, 2}, 0},
		{"a path over three ranks", 2, []int32{0, 1, 1, 2, 2, 3, 3, 4}, []int32{0, 0, 1, 2, 2}, 2},
	} {
		if got := EdgeCut(&Map{Arity: c.arity, Table: c.table}, len(c.owner), c.owner); got != c.want {
			t.Errorf("%s: EdgeCut = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestValidateNamesTheEntry(t *testing.T) {
	m := &Mesh{Sets: []Set{{"a", 2}, {"b", 3}}, Maps: []Map{{Name: "m", From: 0, To: 1, Arity: 2, Table: []int32{0, 1, 2, 3}}}}
	err := m.Validate()
	if err == nil || err.Error() != `map "m" from "a" to "b": entry 3 (element 1, column 1) is 3, outside the target set [0,3)` {
		t.Fatalf("got %v", err)
	}
}

// TestLayoutRefusesBadMaps: a map entry outside its target set (a boundary
// marker such as -1, or one past the end) is an error naming the map and
// the entry, not a panic; so is an owner outside the ranks.
func TestLayoutRefusesBadMaps(t *testing.T) {
	mesh := func(v int32) *Mesh {
		return &Mesh{
			Sets: []Set{{Name: "edges", Size: 2}, {Name: "nodes", Size: 3}},
			Maps: []Map{{Name: "pedge", From: 0, To: 1, Arity: 2, Table: []int32{0, 1, 1, v}}},
		}
	}
	owner := [][]int32{{0, 1}, {0, 0, 1}}
	for _, c := range []struct {
		name  string
		m     *Mesh
		owner [][]int32
		want  string
	}{
		{"negative entry", mesh(-1), owner, `map "pedge" from "edges" to "nodes": entry 3 (element 1, column 1) is -1`},
		{"entry past the end", mesh(3), owner, `entry 3 (element 1, column 1) is 3, outside the target set [0,3)`},
		{"owner outside the ranks", mesh(2), [][]int32{{0, 2}, {0, 0, 1}}, `set "edges": owner 2 outside [0,2)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Layout(c.m, c.owner, 2)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Layout: %v, want an error containing %q", err, c.want)
			}
		})
	}
	if _, err := Layout(mesh(2), owner, 2); err != nil {
		t.Errorf("a valid mesh: %v", err)
	}
}
