package facets_test

import (
	"fmt"
	"testing"

	"github.com/goop2/op2/internal/facets"
	"github.com/goop2/op2/mesh/topology"
)

// TestFacetsInRoundsAndBalanced derives the facets of tetrahedra with the
// halves exchanged in rounds of a few halves each and in one round, on 1 to 4 simulated ranks: the ranks' blocks are
// topology.Derive's facets whatever the rounds, and every rank is home to
// about as many facets as the others (their smallest node is more often
// a small number, so that an even split of the nodes would give rank 0
// most of them).
func TestFacetsInRoundsAndBalanced(t *testing.T) {
	for _, tc := range []struct {
		name  string
		bytes int
	}{{"rounds-of-10", 10 * 6 * 4}, {"one-round", 1 << 30}} {
		for ranks := 1; ranks <= 4; ranks++ {
			t.Run(fmt.Sprintf("%s/%d-ranks", tc.name, ranks), func(t *testing.T) {
				defer facets.SetRoundBytes(tc.bytes)()
				k := topology.Tetrahedron
				cells, nodes := cubeCells(k, 6, uint64(40+ranks))
				whole, err := topology.Derive(k, cells, nodes)
				if err != nil {
					t.Fatal(err)
				}
				got := derivePlain(t, k, cells, nodes, ranks)
				sameAsWhole(t, whole, got)
				total := got[0][0].InteriorTotal + got[0][0].BoundaryTotal
				for r := range ranks {
					b := got[r][0]
					have := len(b.Cells)/2 + len(b.BCells)
					if mean := float64(total) / float64(ranks); float64(have) < 0.85*mean || float64(have) > 1.15*mean {
						t.Errorf("rank %d of %d is home to %d of the %d facets, want about %.0f", r, ranks, have, total, mean)
					}
				}
			})
		}
	}
}

// TestFacetsMoreRanksThanNodes derives the facets of two triangles (four
// nodes) on up to 6 simulated ranks, some of them home to no node and
// holding no cell, in rounds of one half: the same as topology.Derive's.
func TestFacetsMoreRanksThanNodes(t *testing.T) {
	defer facets.SetRoundBytes(1)()
	k := topology.Triangle
	cells, nodes := []int32{0, 1, 2, 2, 1, 3}, 4
	whole, err := topology.Derive(k, cells, nodes)
	if err != nil {
		t.Fatal(err)
	}
	for _, ranks := range []int{3, 4, 6} {
		t.Run(fmt.Sprintf("%d-ranks", ranks), func(t *testing.T) {
			sameAsWhole(t, whole, derivePlain(t, k, cells, nodes, ranks))
		})
	}
}
