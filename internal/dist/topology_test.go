package dist

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/goop2/op2/internal/dist/disttest"
)

// randomTopology is a random mesh that is no grid: 1 to 5 sets of random
// sizes (empty ones, ones with fewer elements than ranks, a few hundred
// elements), 0 to 7 maps between random sets (a set reached from two
// others, chains, maps from a set to itself) of arity 1 to 6 whose rows
// repeat targets, point at one element, follow the source's numbering or
// scatter over the target set, and a dat on each set of 1 to 56 bytes per
// element holding its set and global number. It also returns coordinates
// (dim 1 to 3) of the elements of a random set.
func randomTopology(rng *rand.Rand, ranks int) (m *Mesh, dats []BlockDat, coords []float64, coordSet, coordDim int) {
	m = &Mesh{}
	for s := range 1 + rng.IntN(5) {
		var n int
		switch rng.IntN(6) {
		case 0:
			n = 0
		case 1:
			n = rng.IntN(ranks + 1) // fewer elements than ranks, or as many
		case 2, 3:
			n = 5 + rng.IntN(60)
		default:
			n = 100 + rng.IntN(300)
		}
		m.Sets = append(m.Sets, Set{Name: fmt.Sprintf("s%d", s), Size: n})
	}
	for k := range rng.IntN(8) {
		from := rng.IntN(len(m.Sets))
		var targets []int
		for s, set := range m.Sets {
			if set.Size > 0 || m.Sets[from].Size == 0 {
				targets = append(targets, s)
			}
		}
		if len(targets) == 0 {
			continue
		}
		to := targets[rng.IntN(len(targets))]
		mp := Map{Name: fmt.Sprintf("m%d", k), From: from, To: to, Arity: 1 + rng.IntN(6)}
		nf, nt := m.Sets[from].Size, m.Sets[to].Size
		mp.Table = disttest.RandomTable(rng, nf, nt, mp.Arity)
		m.Maps = append(m.Maps, mp)
	}
	for s, set := range m.Sets {
		elem := 1 + rng.IntN(56)
		v := make([]byte, 0, elem*set.Size)
		for g := range set.Size {
			for b := range elem {
				v = append(v, byte(s)+byte(g>>(8*(b%3)))+byte(b))
			}
		}
		dats = append(dats, BlockDat{Name: "d" + set.Name, Set: s, Elem: elem, Values: v})
	}
	coordSet, coordDim = rng.IntN(len(m.Sets)), 1+rng.IntN(3)
	for range m.Sets[coordSet].Size * coordDim {
		coords = append(coords, float64(rng.IntN(20))) // ties between equal coordinates
	}
	return m, dats, coords, coordSet, coordDim
}

// topologyTrials is how many random meshes TestPartitionBlocksRandomTopology
// partitions: OP2_DIST_TRIALS widens the sweep by hand.
func topologyTrials(t *testing.T) int {
	if s := os.Getenv("OP2_DIST_TRIALS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("OP2_DIST_TRIALS=%q: %v", s, err)
		}
		return n
	}
	return 24
}

// TestPartitionBlocksRandomTopology partitions random meshes of random
// shape (randomTopology), declared in random blocks (some empty, or all
// on rank 0) over 1 to 5 simulated ranks, with every partitioner on a
// random set or map, their numbers from 0 or beyond 2³¹: every rank's
// layout, values and figures must be those of Owners and Layout on the
// whole mesh, and a mesh the whole form refuses must fail on every rank.
func TestPartitionBlocksRandomTopology(t *testing.T) {
	kinds := []string{"block", "rcb", "owners", "graph", "metis"}
	if err := loadMETIS(); err != nil {
		t.Logf("METIS absent (%v): its trials use rcb", err)
		kinds[4] = "rcb"
	}
	for trial := range topologyTrials(t) {
		rng := rand.New(rand.NewPCG(uint64(trial), 2026))
		ranks := 1 + rng.IntN(5)
		m, dats, coords, coordSet, coordDim := randomTopology(rng, ranks)
		kind := kinds[trial%len(kinds)]
		if (kind == "graph" || kind == "metis") && len(m.Maps) == 0 {
			kind = "owners"
		}
		p := Partitioning{Kind: kind, CoordSet: coordSet, CoordDim: coordDim, Coords: coords, OwnerSet: rng.IntN(len(m.Sets))}
		if len(m.Maps) > 0 {
			p.Map = rng.IntN(len(m.Maps))
		}
		p.Owner = make([]int32, m.Sets[p.OwnerSet].Size)
		style := rng.IntN(3)
		for i := range p.Owner {
			switch style {
			case 0: // anywhere
				p.Owner[i] = int32(rng.IntN(ranks))
			case 1: // the last rank owns nothing
				p.Owner[i] = int32(rng.IntN(max(ranks-1, 1)))
			default: // in blocks, backwards
				p.Owner[i] = int32(ranks - 1 - i*ranks/len(p.Owner))
			}
		}
		c := wholeCase{m: m, dats: dats, ranks: ranks, p: p,
			graphPart:   func(g int32, parts int) int32 { return int32((int(g)*7 + int(g)/5) % parts) },
			smallRounds: rng.IntN(3) == 0, replace: rng.IntN(2) == 0, reducer: rng.IntN(2) == 0}
		if rng.IntN(3) == 0 {
			c.base = 1<<31 + int64(trial)*1_000_003
		}
		if err := matchWhole(t, rng, c); err != nil {
			t.Fatalf("trial %d (%s, %d ranks, sets %v, %d maps): %v", trial, kind, ranks, m.Sets, len(m.Maps), err)
		}
	}
}
