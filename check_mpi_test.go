package op2_test

import (
	"errors"
	"slices"
	"strings"
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

// chFinding writes to its READ argument b at the node numbered *bad (rank
// 1's, in TestChainCheckFindingOnOneRank), which check mode finds there
// only.
var chFinding = op2.NewKernel(`void ch_finding(const unsigned *id, const unsigned *bad, const unsigned *b, unsigned *a) {
  *a += *b;
  if (*id == *bad) ((unsigned *)b)[0] = 99u;
}`, "ch_finding")

// TestChainCheckFindingOnOneRank: in a Chain on 2 ranks, a loop about
// which check mode finds something on one rank only (it ran to its end
// on both) leaves the ranks in step: the loops after it run on both, as
// they do outside a chain (before, the finding rank dropped them and the
// other waited for its exchanges until the MPI timeout); that rank's
// Chain returns a *ChainError saying so, the other's nil; the results
// equal the loops' outside a chain.
func TestChainCheckFindingOnOneRank(t *testing.T) {
	if !mpitest.InRanks() {
		mpiRun(t, 2, 2*time.Minute, "OP2_MPI_TIMEOUT=30s")
		return
	}
	const n = 6
	nodes, ring := declareRing(t, n)
	edges := ring.From()
	vals := func(k uint32) []uint32 { return ringValues(op2.Rank()*n, n, k) }
	var gid, a, b, e [2]*op2.Dat[uint32]
	var s [2]*op2.Global[uint32]
	for i := range 2 {
		gid[i], a[i], b[i] = must(op2.NewDat(nodes, 1, vals(1), "ch_gid")), must(op2.NewDat(nodes, 1, vals(3), "ch_a")), must(op2.NewDat(nodes, 1, vals(5), "ch_b"))
		e[i], s[i] = must(op2.NewDat[uint32](edges, 1, nil, "ch_e")), must(op2.NewGlobal(1, []uint32{0}, "ch_s"))
	}
	bad := must(op2.NewGlobal(1, []uint32{n + 3}, "ch_bad")) // node n+2, rank 1's
	must(op2.Partition(op2.BlockPartitioner()))
	check(t, op2.Configure(op2.Config{Check: true}))
	var errs [2]error
	var got [2][]uint32
	for i := range 2 {
		loops := func() error {
			err := op2.ParLoop(chFinding, nodes, gid[i].Arg(op2.Read), bad.Arg(op2.Read), b[i].Arg(op2.Read), a[i].Arg(op2.RW))
			check(t, op2.ParLoop(lazyDiff, edges, a[i].ArgMap(op2.Read, ring, 0), a[i].ArgMap(op2.Read, ring, 1), e[i].Arg(op2.Write)))
			check(t, op2.ParLoop(lazySum, nodes, a[i].Arg(op2.Read), s[i].Arg(op2.Inc)))
			return err
		}
		if i == 0 {
			errs[i] = loops()
		} else {
			errs[i] = op2.Chain(loops)
		}
		got[i] = append(must(e[i].Gather()), s[i].Value())
	}
	check(t, op2.Configure(op2.Config{}))
	var ce *op2.ChainError
	switch op2.Rank() {
	case 0:
		for i, err := range errs {
			if err != nil {
				t.Errorf("rank 0, in a chain %v: %v, want no error", i == 1, err)
			}
		}
	case 1:
		var le *op2.LoopError
		if !errors.As(errs[0], &le) {
			t.Errorf("rank 1 outside a chain: %v, want check mode's *LoopError", errs[0])
		}
		if !errors.As(errs[1], &ce) || ce.Kernel != "ch_finding" || !ce.RanAfter || !strings.Contains(ce.Error(), "ran, as on the other ranks") {
			t.Errorf("rank 1 in a chain: %v, want a *ChainError naming ch_finding, the loops after it run", errs[1])
		}
	}
	if op2.Rank() == 0 && !slices.Equal(got[0], got[1]) {
		t.Errorf("in a chain: %v, outside: %v", got[1], got[0])
	}
	check(t, op2.Finalize())
}
