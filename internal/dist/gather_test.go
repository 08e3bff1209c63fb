package dist_test

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/goop2/op2/internal/collective"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/dist/disttest"
)

// TestGatherScatterRows gathers every rank's owned elements of ringMesh's
// nodes on rank 0 and scatters them back to every local element, halos
// included, on 1 to 4 simulated ranks; on odd numbers of ranks the
// global numbers start beyond 2³³ (SetHalo.Base).
func TestGatherScatterRows(t *testing.T) {
	const n, elem = 24, 8
	row := func(g int) []byte { // element g's values: its number and its square
		return binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, uint32(g)), uint32(g*g))
	}
	for ranks := 1; ranks <= 4; ranks++ {
		t.Run(fmt.Sprintf("%d-ranks", ranks), func(t *testing.T) {
			m, owner := ringMesh(n, ranks)
			locals, err := dist.Layout(m, owner, ranks)
			if err != nil {
				t.Fatal(err)
			}
			noErrors(t, disttest.Run(ranks, 0, func(p *disttest.Proc) error {
				ls := &locals[p.Rank()].Sets[0]
				var vals []byte
				for _, g := range ls.Global[:ls.Owned] {
					vals = append(vals, row(int(g))...)
				}
				var all []byte
				if p.Rank() == 0 {
					all = make([]byte, n*elem)
				}
				base := int64(ranks%2) * (1<<33 + 5)
				if err := dist.GatherRows(p, shifted(ls.Global[:ls.Owned], base), base, vals, elem, all); err != nil {
					return err
				}
				if p.Rank() == 0 {
					for g := range n {
						if got, want := all[g*elem:(g+1)*elem], row(g); string(got) != string(want) {
							return fmt.Errorf("gathered element %d: %v, want %v", g, got, want)
						}
					}
				}
				got, err := dist.ScatterRows(p, shifted(ls.Global[:ls.Total], base), base, all, elem)
				if err != nil {
					return err
				}
				if len(got) != ls.Total*elem {
					return fmt.Errorf("scattered %d bytes, want %d", len(got), ls.Total*elem)
				}
				for i, g := range ls.Global[:ls.Total] {
					if b, want := got[i*elem:(i+1)*elem], row(int(g)); string(b) != string(want) {
						return fmt.Errorf("scattered local element %d (global %d): %v, want %v", i, g, b, want)
					}
				}
				return nil
			}))
		})
	}
}

// TestToBlocks moves every rank's owned elements of ringMesh's nodes
// (owners from a random-looking partition) into even blocks of the global
// numbering, on 1 to 5 simulated ranks, and checks each block's start and
// rows; on odd numbers of ranks the global numbers start beyond 2³³.
func TestToBlocks(t *testing.T) {
	const elem = 8
	row := func(g int) []byte {
		return binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, uint32(g)), uint32(g*g+1))
	}
	for _, n := range []int{3, 24, 37} {
		for ranks := 1; ranks <= 5; ranks++ {
			t.Run(fmt.Sprintf("%d-elements-%d-ranks", n, ranks), func(t *testing.T) {
				m, owner := ringMesh(n, ranks)
				locals, err := dist.Layout(m, owner, ranks)
				if err != nil {
					t.Fatal(err)
				}
				noErrors(t, disttest.Run(ranks, 0, func(p *disttest.Proc) error {
					ls := &locals[p.Rank()].Sets[0]
					var vals []byte
					for _, g := range ls.Global[:ls.Owned] {
						vals = append(vals, row(int(g))...)
					}
					base := int64(ranks%2) * (1<<33 + 5)
					start, block, err := dist.ToBlocks(p, shifted(ls.Global[:ls.Owned], base), base, vals, elem, n)
					if err != nil {
						return err
					}
					wantStart, count := collective.Block(n, p.Rank(), ranks)
					if start != wantStart || len(block) != count*elem {
						return fmt.Errorf("block starts at %d with %d bytes, want %d and %d", start, len(block), wantStart, count*elem)
					}
					for i := range count {
						if got, want := block[i*elem:(i+1)*elem], row(start+i); string(got) != string(want) {
							return fmt.Errorf("element %d: %v, want %v", start+i, got, want)
						}
					}
					// Back to every local element, halo included.
					back, err := dist.FromBlocks(p, shifted(ls.Global[:ls.Total], base), base, block, elem, n)
					if err != nil {
						return err
					}
					for i, g := range ls.Global[:ls.Total] {
						if got, want := back[i*elem:(i+1)*elem], row(int(g)); string(got) != string(want) {
							return fmt.Errorf("FromBlocks: local element %d (global %d): %v, want %v", i, g, got, want)
						}
					}
					return nil
				}))
			})
		}
	}
}

// shifted is g with base added to each number.
func shifted(g []int64, base int64) []int64 {
	out := make([]int64, len(g))
	for i, v := range g {
		out[i] = v + base
	}
	return out
}
