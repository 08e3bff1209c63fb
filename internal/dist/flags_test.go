package dist_test

import (
	"fmt"
	"testing"

	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/dist/disttest"
)

// TestExchangeFlags: on 1 to 3 simulated ranks over a ring of edges and
// nodes split in blocks, every rank's halo elements get their owners'
// values (here a function of the global number) and the owned ones stay.
func TestExchangeFlags(t *testing.T) {
	const n = 12
	m := &dist.Mesh{Sets: []dist.Set{{Name: "nodes", Size: n}, {Name: "edges", Size: n}}}
	table := make([]int32, 2*n)
	for e := range n {
		table[2*e], table[2*e+1] = int32(e), int32((e+1)%n)
	}
	m.Maps = []dist.Map{{Name: "ring", From: 1, To: 0, Arity: 2, Table: table}}
	value := func(g int64) int32 { return int32(3*g + 1) }
	for ranks := 1; ranks <= 3; ranks++ {
		t.Run(fmt.Sprintf("%d ranks", ranks), func(t *testing.T) {
			owner := [][]int32{make([]int32, n), make([]int32, n)}
			for s := range owner {
				for g := range owner[s] {
					owner[s][g] = int32(g * ranks / n)
				}
			}
			locals, err := dist.Layout(m, owner, ranks)
			if err != nil {
				t.Fatal(err)
			}
			errs := disttest.Run(ranks, 0, func(p *disttest.Proc) error {
				ls := &locals[p.Rank()].Sets[0]
				vals := make([]int32, ls.Total)
				for i := range ls.Owned {
					vals[i] = value(ls.Global[i])
				}
				for i := ls.Owned; i < ls.Total; i++ {
					vals[i] = -1 // must be replaced
				}
				if err := dist.ExchangeFlags(p, dist.NewSetHalo(ls, n), vals, "flags of test"); err != nil {
					return err
				}
				for i, v := range vals {
					if v != value(ls.Global[i]) {
						return fmt.Errorf("rank %d: element %d (global %d) = %d, want %d", p.Rank(), i, ls.Global[i], v, value(ls.Global[i]))
					}
				}
				return nil
			})
			for _, err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
}
