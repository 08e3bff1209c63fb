package dist_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/dist/disttest"
)

// TestBlockRows fetches rows of a table held in uneven blocks (one of
// them empty) on 1 to 4 simulated ranks, each rank asking for elements
// of every block, some more than once; an element outside the set on one
// rank is an error on every rank.
func TestBlockRows(t *testing.T) {
	const n, k = 23, 2
	row := func(g int32) []int32 { return []int32{g, 100 + 3*g} }
	tests := []struct {
		name   string
		ranks  int
		sizes  []int // each rank's block; they add up to n
		outOf  int   // the rank asking for an element outside the set, or -1
		errHas string
	}{
		{"one rank", 1, []int{n}, -1, ""},
		{"two ranks", 2, []int{10, 13}, -1, ""},
		{"empty rank", 3, []int{12, 0, 11}, -1, ""},
		{"rank zero holds all", 4, []int{n, 0, 0, 0}, -1, ""},
		{"outside the set", 3, []int{5, 9, 9}, 1, "rank 1: rows of test: entry 2 is 23, outside the set [0,23)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			errs := disttest.Run(tc.ranks, 0, func(p *disttest.Proc) error {
				first := 0
				for _, s := range tc.sizes[:p.Rank()] {
					first += s
				}
				var rows []int32
				for g := first; g < first+tc.sizes[p.Rank()]; g++ {
					rows = append(rows, row(int32(g))...)
				}
				need := []int32{int32((7 * p.Rank()) % n), n - 1, 0, int32(p.Rank()), n - 1}
				if p.Rank() == tc.outOf {
					need[2] = n
				}
				got, err := dist.BlockRows(p, rows, k, need, "rows of test")
				if err != nil {
					return err
				}
				var want []int32
				for _, g := range need {
					want = append(want, row(g)...)
				}
				if !slices.Equal(got, want) {
					return fmt.Errorf("got %v, want %v", got, want)
				}
				return nil
			})
			for r, err := range errs {
				switch {
				case tc.errHas == "" && err != nil:
					t.Errorf("rank %d: %v", r, err)
				case tc.errHas != "" && (err == nil || !strings.Contains(err.Error(), tc.errHas)):
					t.Errorf("rank %d: error %v, want one containing %q", r, err, tc.errHas)
				}
			}
		})
	}
}
