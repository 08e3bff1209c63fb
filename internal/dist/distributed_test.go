package dist

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2/internal/collective"
	"github.com/goop2/op2/internal/dist/disttest"
)

// simReducer is a simulated rank whose Comm also reduces (Reducer), as
// an *mpi.World does.
type simReducer struct{ Comm }

func (c simReducer) AllreduceInt64(buf []int64, op int) error {
	got, err := c.Alltoallv(func() [][]byte {
		s := make([][]byte, c.Size())
		for q := range s {
			s[q] = collective.Int64Bytes(buf)
		}
		return s
	}())
	if err != nil {
		return err
	}
	for i := range buf {
		acc := collective.BytesInt64(got[0])[i]
		for _, b := range got[1:] {
			switch v := collective.BytesInt64(b)[i]; op {
			case collective.OpSum:
				acc += v
			case collective.OpMin:
				acc = min(acc, v)
			case collective.OpMax:
				acc = max(acc, v)
			}
		}
		buf[i] = acc
	}
	return nil
}

// runRanks runs f on n simulated ranks (package disttest: every wait is
// bounded, so a rank that fails while others wait in a collective makes
// them fail too instead of hanging) and returns each rank's result.
func runRanks[T any](n int, f func(c Comm) (T, error)) ([]T, []error) {
	out := make([]T, n)
	errs := disttest.New(n, 2*time.Minute).Run(func(p *disttest.Proc) error {
		v, err := f(p)
		out[p.Rank()] = v
		return err
	})
	return out, errs
}

// splitBlocks cuts each set of m into ranks blocks of random sizes (some
// empty) and returns each rank's BlockMesh, with dats holding each
// element's global number and set index as values.
func splitBlocks(rng *rand.Rand, m *Mesh, ranks int, dats []BlockDat) ([]*BlockMesh, [][]int) {
	starts := make([][]int, len(m.Sets))
	rank0 := rng.IntN(4) == 0 // rank 0 declares everything
	for s, set := range m.Sets {
		cuts := []int{0, set.Size}
		for r := 1; r < ranks; r++ {
			if rank0 {
				cuts = append(cuts, set.Size)
				continue
			}
			switch rng.IntN(4) {
			case 0:
				cuts = append(cuts, 0) // leading ranks empty
			case 1:
				cuts = append(cuts, set.Size)
			default:
				cuts = append(cuts, rng.IntN(set.Size+1))
			}
		}
		slices.Sort(cuts)
		starts[s] = cuts
	}
	out := make([]*BlockMesh, ranks)
	for r := range out {
		b := &BlockMesh{}
		for s, set := range m.Sets {
			b.Sets = append(b.Sets, Set{Name: set.Name, Size: starts[s][r+1] - starts[s][r]})
		}
		// Empty blocks are nil, as a rank declaring nothing has them.
		for _, mp := range m.Maps {
			lo, hi := starts[mp.From][r], starts[mp.From][r+1]
			var tab []int32
			if hi > lo {
				tab = mp.Table[lo*mp.Arity : hi*mp.Arity]
			}
			b.Maps = append(b.Maps, Map{Name: mp.Name, From: mp.From, To: mp.To, Arity: mp.Arity, Table: tab})
		}
		for _, dd := range dats {
			lo, hi := starts[dd.Set][r], starts[dd.Set][r+1]
			var v []byte
			if hi > lo {
				v = dd.Values[lo*dd.Elem : hi*dd.Elem]
			}
			b.Dats = append(b.Dats, BlockDat{Name: dd.Name, Set: dd.Set, Elem: dd.Elem, Values: v})
		}
		out[r] = b
	}
	return out, starts
}

// sameLocal compares two layouts, nil and empty slices alike.
func sameLocal(a, b *Local) error {
	if len(a.Sets) != len(b.Sets) || len(a.Maps) != len(b.Maps) {
		return errors.New("different numbers of sets or maps")
	}
	for s := range a.Sets {
		x, y := &a.Sets[s], &b.Sets[s]
		if x.Core != y.Core || x.Owned != y.Owned || x.Exec != y.Exec || x.Total != y.Total {
			return fmt.Errorf("set %d: sections %d %d %d %d, want %d %d %d %d", s, x.Core, x.Owned, x.Exec, x.Total, y.Core, y.Owned, y.Exec, y.Total)
		}
		if !slices.Equal(x.Global, y.Global) {
			return fmt.Errorf("set %d: global numbers %v, want %v", s, x.Global, y.Global)
		}
		if len(x.Neighbours) != len(y.Neighbours) {
			return fmt.Errorf("set %d: %d neighbours, want %d", s, len(x.Neighbours), len(y.Neighbours))
		}
		for k := range x.Neighbours {
			p, q := &x.Neighbours[k], &y.Neighbours[k]
			if p.Rank != q.Rank || !slices.Equal(p.Send, q.Send) || p.RecvExec != q.RecvExec || p.RecvNonexec != q.RecvNonexec {
				return fmt.Errorf("set %d: neighbour %+v, want %+v", s, *p, *q)
			}
		}
	}
	for i := range a.Maps {
		if !slices.Equal(a.Maps[i], b.Maps[i]) {
			return fmt.Errorf("map %d: %v, want %v", i, a.Maps[i], b.Maps[i])
		}
	}
	return nil
}

// TestPartitionBlocksMatchesWholeMesh partitions random meshes declared in
// random blocks on simulated ranks with every partitioner and checks that
// every rank's layout, values and figures equal those of Owners and Layout
// on the whole mesh. One trial in three numbers the mesh from beyond 2³¹
// (BlockMesh.Base, 64-bit map tables): the same layout, its global
// numbers shifted.
func TestPartitionBlocksMatchesWholeMesh(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	kinds := []string{"block", "rcb", "owners", "graph", "metis"}
	for trial := 0; trial < 40; trial++ {
		nodes := 1 + rng.IntN(300)
		if trial%6 == 0 {
			nodes = 1 + rng.IntN(4) // fewer elements than ranks
		}
		m, xy := randomMesh(rng, nodes)
		ranks := 1 + rng.IntN(5)
		kind := kinds[trial%len(kinds)]
		// A dat on each set: each element's global number and set.
		var dats []BlockDat
		for s, set := range m.Sets {
			v := make([]byte, 0, 8*set.Size)
			for g := 0; g < set.Size; g++ {
				v = append(v, byte(s), byte(g), byte(g>>8), byte(g>>16), 0xa5, byte(s), 0, 1)
			}
			dats = append(dats, BlockDat{Name: "d" + set.Name, Set: s, Elem: 8, Values: v})
		}
		ownersCells := make([]int32, m.Sets[2].Size)
		for i := range ownersCells {
			ownersCells[i] = int32(rng.IntN(ranks))
		}
		if kind == "metis" {
			if err := loadMETIS(); err != nil {
				t.Logf("METIS absent (%v): trial %d uses rcb", err, trial)
				kind = "rcb"
			}
		}
		c := wholeCase{m: m, dats: dats, ranks: ranks,
			p:           Partitioning{Kind: kind, CoordDim: 2, CoordSet: 0, Coords: xy, Map: 1, OwnerSet: 2, Owner: ownersCells},
			graphPart:   func(g int32, parts int) int32 { return int32((int(g)*7 + int(g)/5) % parts) },
			smallRounds: trial%3 == 2, replace: trial%2 == 1, reducer: trial%4 < 2}
		if trial%3 == 1 {
			c.base = 1<<31 + int64(trial)*1_000_003
		}
		if err := matchWhole(t, rng, c); err != nil {
			t.Fatalf("trial %d (%s, %d ranks, %d nodes): %v", trial, kind, ranks, nodes, err)
		}
	}
}

// wholeCase is one partitioning that matchWhole checks: a whole mesh and
// its dats' values, split into random blocks over simulated ranks.
type wholeCase struct {
	m     *Mesh
	dats  []BlockDat // the whole mesh's values
	ranks int
	// p is the partitioning of the whole mesh: its Coords and Owner
	// are the whole set's (each rank gets its block of them). For
	// "graph", graphPart gives each vertex of map p.Map's target set
	// its part, on the whole mesh as on the ranks.
	p         Partitioning
	graphPart func(g int32, parts int) int32
	// smallRounds migrates in rounds of a few records; base numbers the
	// mesh from there (64-bit map tables); replace takes values and
	// tables through Replace and ReplaceMap; reducer gives the ranks'
	// Comm a Reducer.
	smallRounds, replace, reducer bool
	base                          int64
}

// matchWhole partitions c's mesh declared in random blocks on c.ranks
// simulated ranks (PartitionBlocks) and returns an error naming the first
// rank whose layout, values or figures differ from those of Owners and
// Layout on the whole mesh. Where Owners or Layout refuse the mesh, every
// rank must return an error too.
func matchWhole(t *testing.T, rng *rand.Rand, c wholeCase) error {
	t.Helper()
	m, ranks := c.m, c.ranks
	whole := c.p
	if whole.Kind == "graph" {
		// Centrally: the same parts of map p.Map's target set, given.
		o := make([]int32, m.Sets[m.Maps[whole.Map].To].Size)
		for g := range o {
			o[g] = c.graphPart(int32(g), ranks)
		}
		whole = Partitioning{Kind: "owners", OwnerSet: m.Maps[whole.Map].To, Owner: o}
	}
	owner, metisCut, wholeErr := Owners(m, whole, ranks)
	var locals []Local
	if wholeErr == nil {
		locals, wholeErr = Layout(m, owner, ranks)
	}
	var wholeXadj []int32
	var wholeAdj []int32
	if c.p.Kind == "graph" {
		wholeXadj, wholeAdj = Adjacency(&m.Maps[c.p.Map], m.Sets[m.Maps[c.p.Map].To].Size)
	}
	blocks, starts := splitBlocks(rng, m, ranks, c.dats)
	defer func(b int) { roundBytes = b }(roundBytes)
	if c.smallRounds { // many rounds of a few records
		roundBytes = 64
	}
	base := c.base
	replaced := make([][][]byte, ranks)      // per rank, per dat: values given to Replace
	replacedMaps := make([][][]int32, ranks) // per rank, per map: tables given to ReplaceMap
	results, errs := runRanks(ranks, func(cm Comm) (*Result, error) {
		if c.reducer {
			cm = simReducer{cm}
		}
		b := blocks[cm.Rank()]
		if c.replace { // values through Replace
			bb := *b
			bb.Dats = slices.Clone(b.Dats)
			replaced[cm.Rank()] = make([][]byte, len(bb.Dats))
			for di := range bb.Dats {
				bb.Dats[di].Replace = func(v []byte) { replaced[cm.Rank()][di] = v }
			}
			bb.Maps = slices.Clone(b.Maps)
			replacedMaps[cm.Rank()] = make([][]int32, len(bb.Maps))
			bb.ReplaceMap = func(i int, t []int32) { replacedMaps[cm.Rank()][i] = t }
			b = &bb
		}
		if base != 0 {
			bb := *b
			bb.Base = base
			bb.Maps = slices.Clone(b.Maps)
			for i := range bb.Maps {
				mp := &bb.Maps[i]
				mp.Table64 = make([]int64, len(mp.Table))
				for k, v := range mp.Table {
					mp.Table64[k] = int64(v) + base
				}
				mp.Table = nil
			}
			b = &bb
		}
		p := c.p
		p.Coords, p.Owner = nil, nil
		if lo, hi := starts[p.CoordSet][cm.Rank()], starts[p.CoordSet][cm.Rank()+1]; hi > lo && c.p.Coords != nil {
			p.Coords = c.p.Coords[p.CoordDim*lo : p.CoordDim*hi]
		}
		if lo, hi := starts[p.OwnerSet][cm.Rank()], starts[p.OwnerSet][cm.Rank()+1]; hi > lo && c.p.Owner != nil {
			p.Owner = c.p.Owner[lo:hi]
		}
		if p.Kind == "graph" {
			to := m.Maps[p.Map].To
			first := starts[to][cm.Rank()]
			p.Graph = func(xadj []int64, adj []int32, parts int) ([]int32, error) {
				// The graph is the block's rows of the whole map's.
				for i := 0; i+1 < len(xadj); i++ {
					g := first + i
					want := wholeAdj[wholeXadj[g]:wholeXadj[g+1]]
					if got := adj[xadj[i]:xadj[i+1]]; !slices.Equal(got, want) {
						return nil, fmt.Errorf("neighbours of %d: %v, want %v", g, got, want)
					}
				}
				if int(xadj[len(xadj)-1]) != len(adj) {
					return nil, fmt.Errorf("xadj ends at %d, adj has %d", xadj[len(xadj)-1], len(adj))
				}
				o := make([]int32, len(xadj)-1)
				for i := range o {
					o[i] = c.graphPart(int32(first+i), parts)
				}
				return o, nil
			}
		}
		return PartitionBlocks(cm, b, p)
	})
	if wholeErr != nil {
		for r, err := range errs {
			if err == nil {
				return fmt.Errorf("rank %d: no error, but the whole mesh's partitioning fails: %v", r, wholeErr)
			}
		}
		t.Logf("refused, on the whole mesh (%v) and on every rank (rank 0: %v)", wholeErr, errs[0])
		return nil
	}
	cut := Cut(m, owner)
	for r := range results {
		if errs[r] != nil {
			return fmt.Errorf("rank %d: %w", r, errs[r])
		}
		res := results[r]
		if c.replace {
			res.Local.Maps = replacedMaps[r]
		}
		for s := range res.Local.Sets {
			for i := range res.Local.Sets[s].Global {
				if res.Local.Sets[s].Global[i] -= base; base != 0 && res.Local.Sets[s].Global[i] < 0 {
					return fmt.Errorf("rank %d: global number %d below the base %d", r, res.Local.Sets[s].Global[i]+base, base)
				}
			}
		}
		if err := sameLocal(&res.Local, &locals[r]); err != nil {
			return fmt.Errorf("rank %d: %w", r, err)
		}
		for di, dd := range c.dats {
			want := make([]byte, 0)
			for _, g := range locals[r].Sets[dd.Set].Global {
				want = append(want, dd.Values[int(g)*dd.Elem:(int(g)+1)*dd.Elem]...)
			}
			got := res.Dats[di]
			if c.replace {
				got = replaced[r][di]
			}
			if !bytes.Equal(got, want) {
				return fmt.Errorf("rank %d: dat %s values differ", r, dd.Name)
			}
		}
		if res.Cut != cut {
			return fmt.Errorf("rank %d: cut %d, want %d", r, res.Cut, cut)
		}
		for mi := range m.Maps {
			if want := EdgeCut(&m.Maps[mi], m.Sets[m.Maps[mi].To].Size, owner[m.Maps[mi].To]); res.EdgeCuts[mi] != want {
				return fmt.Errorf("rank %d: map %s edge cut %d, want %d", r, m.Maps[mi].Name, res.EdgeCuts[mi], want)
			}
		}
		if res.MetisCut != metisCut {
			return fmt.Errorf("rank %d: METIS cut %d, want %d", r, res.MetisCut, metisCut)
		}
		for s := range m.Sets {
			if res.GlobalSizes[s] != m.Sets[s].Size {
				return fmt.Errorf("rank %d: set %d global size %d, want %d", r, s, res.GlobalSizes[s], m.Sets[s].Size)
			}
		}
		if len(res.Phases) != 4 {
			return fmt.Errorf("rank %d: phases %v", r, res.Phases)
		}
	}
	return nil
}

// TestPartitionBlocksErrorsOnEveryRank: a bad map entry or bad
// coordinates on one rank fail every rank, naming the rank.
func TestPartitionBlocksErrorsOnEveryRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m, xy := randomMesh(rng, 40)
	for _, tc := range []struct {
		name  string
		spoil func(b []*BlockMesh, coords [][]float64)
		p     Partitioning
		want  string
	}{
		{"map entry out of range", func(b []*BlockMesh, _ [][]float64) {
			b[1].Maps[0].Table = slices.Clone(b[1].Maps[0].Table)
			b[1].Maps[0].Table[3] = 999
		}, Partitioning{Kind: "block"}, `rank 1: map "pedge" from "edges" to "nodes": entry`},
		{"coordinate NaN", func(_ []*BlockMesh, c [][]float64) {
			c[2][1] = c[2][1] / 0 * 0
		}, Partitioning{Kind: "rcb", CoordDim: 2}, "rank 2: coordinate 1 of element 0 is NaN"},
		{"owner not a rank", nil, Partitioning{Kind: "owners", OwnerSet: 2, Owner: []int32{5}}, "has owner 5, not a rank"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			blocks := make([]*BlockMesh, 3)
			coords := make([][]float64, 3)
			for r := range blocks {
				b := &BlockMesh{}
				for s, set := range m.Sets {
					lo, hi := set.Size*r/3, set.Size*(r+1)/3
					b.Sets = append(b.Sets, Set{Name: set.Name, Size: hi - lo})
					if s == 0 {
						coords[r] = slices.Clone(xy[2*lo : 2*hi])
					}
				}
				for _, mp := range m.Maps {
					n := m.Sets[mp.From].Size
					b.Maps = append(b.Maps, Map{Name: mp.Name, From: mp.From, To: mp.To, Arity: mp.Arity, Table: mp.Table[n*r/3*mp.Arity : n*(r+1)/3*mp.Arity]})
				}
				blocks[r] = b
			}
			if tc.spoil != nil {
				tc.spoil(blocks, coords)
			}
			_, errs := runRanks(3, func(c Comm) (*Result, error) {
				p := tc.p
				p.Coords = coords[c.Rank()]
				if p.Kind == "owners" {
					p.Owner = make([]int32, blocks[c.Rank()].Sets[2].Size)
					if c.Rank() == 0 {
						p.Owner[0] = 5
					}
				}
				return PartitionBlocks(c, blocks[c.Rank()], p)
			})
			for r, err := range errs {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("rank %d: error %v, want one containing %q", r, err, tc.want)
				}
			}
		})
	}
}

// BenchmarkPartitionBlocks partitions a random mesh of about 1.4 M
// elements declared on rank 0 over 2 simulated ranks.
func BenchmarkPartitionBlocks(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	m, xy := randomMesh(rng, 200_000)
	var dats []BlockDat
	for s, set := range m.Sets {
		dats = append(dats, BlockDat{Name: "d" + set.Name, Set: s, Elem: 32, Values: make([]byte, 32*set.Size)})
	}
	for b.Loop() {
		blocks, starts := splitBlocks(rand.New(rand.NewPCG(5, 5)), m, 2, dats)
		_, errs := runRanks(2, func(c Comm) (*Result, error) {
			lo, hi := starts[0][c.Rank()], starts[0][c.Rank()+1]
			return PartitionBlocks(c, blocks[c.Rank()], Partitioning{Kind: "rcb", CoordDim: 2, Coords: xy[2*lo : 2*hi]})
		})
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestPartitionOneRankFails: a partitioner that fails on one rank only
// (here the graph hook) makes every rank return an error, within the
// simulated world's bounded waits, instead of leaving the others waiting.
func TestPartitionOneRankFails(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	m, _ := randomMesh(rng, 40)
	const ranks = 3
	blocks, _ := splitBlocks(rng, m, ranks, nil)
	start := time.Now()
	_, errs := runRanks(ranks, func(c Comm) (*Result, error) {
		p := Partitioning{Kind: "graph", Map: 1, Graph: func(xadj []int64, adj []int32, parts int) ([]int32, error) {
			if c.Rank() == 1 {
				return nil, errors.New("the partitioner failed here")
			}
			return make([]int32, len(xadj)-1), nil
		}}
		return PartitionBlocks(c, blocks[c.Rank()], p)
	})
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "rank 1: the partitioner failed here") {
			t.Errorf("rank %d: %v, want rank 1's error", r, err)
		}
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("the ranks took %v to fail", d)
	}
}
