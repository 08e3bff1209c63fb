package op2_test

import (
	"slices"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
)

// TestCheckModeOnRanks: on 2 ranks, check mode (Config.Check) takes its
// copy of a loop's READ arguments after the loop's halo exchange, so a
// halo that arrives during the loop is neither reported as a write by
// the kernel nor overwritten with the stale values from before; the
// loops give what they give without check mode, in a Chain too.
func TestCheckModeOnRanks(t *testing.T) {
	if !mpitest.InRanks() {
		mpiRun(t, 2, 2*time.Minute, "OP2_MPI_TIMEOUT=60s")
		return
	}
	nodes, ring := declareRing(t, 4)
	edges := ring.From()
	vals := func(k uint32) []uint32 { return ringValues(op2.Rank()*4, 4, k) }
	var b, c, e [3]*op2.Dat[uint32]
	for i := range 3 {
		b[i], c[i], e[i] = must(op2.NewDat(nodes, 1, vals(5), "cb")), must(op2.NewDat[uint32](nodes, 1, nil, "cc")), must(op2.NewDat[uint32](edges, 1, nil, "ce"))
	}
	must(op2.Partition(op2.BlockPartitioner()))
	var got [3][]uint32
	for i, cfg := range []op2.Config{{}, {Check: true}, {Check: true}} {
		check(t, op2.Configure(cfg))
		loops := func() error {
			for range 2 {
				check(t, op2.ParLoop(lazyCopy, nodes, b[i].Arg(op2.Read), c[i].Arg(op2.Write))) // c's halo is stale
				check(t, op2.ParLoop(lazyDiff, edges, c[i].ArgMap(op2.Read, ring, 0), c[i].ArgMap(op2.Read, ring, 1), e[i].Arg(op2.Write)))
				check(t, op2.ParLoop(lazySpread, edges, e[i].Arg(op2.Read), b[i].ArgMap(op2.Inc, ring, 0), b[i].ArgMap(op2.Inc, ring, 1)))
			}
			return nil
		}
		if i == 2 { // in a chain: its exchanges grouped (dist.Halo.PlanChain)
			check(t, op2.Chain(loops))
		} else {
			check(t, loops())
		}
		got[i] = append(must(b[i].Gather()), must(e[i].Gather())...)
	}
	check(t, op2.Configure(op2.Config{}))
	for i := 1; i < 3 && op2.Rank() == 0; i++ {
		if !slices.Equal(got[0], got[i]) {
			t.Errorf("check mode on 2 ranks (in a chain: %v) gives %v, without it %v", i == 2, got[i], got[0])
		}
	}
	check(t, op2.Finalize())
}
