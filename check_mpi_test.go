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

// chFinding and chFinding2 write to their READ argument b at the node
// numbered *bad (rank 1's, in TestChainCheckFindingOnOneRank), which check
// mode finds there only; chNop adds 1.
var (
	chFinding = op2.NewKernel(`void ch_finding(const unsigned *id, const unsigned *bad, const unsigned *b, unsigned *a) {
  *a += *b;
  if (*id == *bad) ((unsigned *)b)[0] = 99u;
}`, "ch_finding")
	chFinding2 = op2.NewKernel(`void ch_finding2(const unsigned *id, const unsigned *bad, const unsigned *b, unsigned *a) {
  *a += 2u * *b;
  if (*id == *bad) ((unsigned *)b)[0] = 77u;
}`, "ch_finding2")
	chNop = op2.NewKernel(`void ch_nop(unsigned *a) { *a += 1u; }`, "ch_nop")
)

// TestChainCheckFindingOnOneRank: in a Chain on 2 ranks, loops about
// which check mode finds something on one rank only (they ran to their
// end on both) leave the ranks in step: the loops after them run on
// both, as they do outside a chain (before, the finding rank dropped them
// and the other waited for its exchanges until the MPI timeout), also
// across a full queue's run (op2.MaxRecordedLoops), after a second
// finding and a collective call (Gather) in the chain, whose end reports
// the findings (an inner chain's end its own; after a chain whose
// function panicked, the next chain's end); that rank's Chain returns a *ChainError naming the first,
// with RanAfter, whose Err is the loop's *LoopError; the other's nil; the
// results equal the loops' outside a chain.
func TestChainCheckFindingOnOneRank(t *testing.T) {
	if !mpitest.InRanks() {
		mpiRun(t, 2, 3*time.Minute, "OP2_MPI_TIMEOUT=30s")
		return
	}
	const n = 6
	nodes, ring := declareRing(t, n)
	edges := ring.From()
	vals := func(k uint32) []uint32 { return ringValues(op2.Rank()*n, n, k) }
	// Even runs outside a chain, odd ones in one; 2 and 3 run more loops
	// than a queue holds; 4 and 5 gather a Dat after the findings.
	const runs = 6
	var gid, a, b, e [runs]*op2.Dat[uint32]
	var s [runs]*op2.Global[uint32]
	for i := range runs {
		gid[i], a[i], b[i] = must(op2.NewDat(nodes, 1, vals(1), "ch_gid")), must(op2.NewDat(nodes, 1, vals(3), "ch_a")), must(op2.NewDat(nodes, 1, vals(5), "ch_b"))
		e[i], s[i] = must(op2.NewDat[uint32](edges, 1, nil, "ch_e")), must(op2.NewGlobal(1, []uint32{0}, "ch_s"))
	}
	bad := must(op2.NewGlobal(1, []uint32{n + 3}, "ch_bad")) // node n+2, rank 1's
	must(op2.Partition(op2.BlockPartitioner()))
	check(t, op2.Configure(op2.Config{Check: true}))
	var errs [runs]error
	var got [runs][]uint32
	for i := range runs {
		loops := func() error {
			err := op2.ParLoop(chFinding, nodes, gid[i].Arg(op2.Read), bad.Arg(op2.Read), b[i].Arg(op2.Read), a[i].Arg(op2.RW))
			if i >= 2 {
				for range op2.MaxRecordedLoops {
					check(t, op2.ParLoop(chNop, nodes, a[i].Arg(op2.RW)))
				}
			}
			err2 := op2.ParLoop(chFinding2, nodes, gid[i].Arg(op2.Read), bad.Arg(op2.Read), b[i].Arg(op2.Read), a[i].Arg(op2.RW))
			if i >= 4 { // a collective call, which runs the loops recorded
				if _, err := a[i].Gather(); err != nil && i%2 == 1 {
					t.Errorf("rank %d: Gather in the chain after the findings: %v", op2.Rank(), err)
				}
			}
			check(t, op2.ParLoop(lazyDiff, edges, a[i].ArgMap(op2.Read, ring, 0), a[i].ArgMap(op2.Read, ring, 1), e[i].Arg(op2.Write)))
			check(t, op2.ParLoop(lazySum, nodes, a[i].Arg(op2.Read), s[i].Arg(op2.Inc)))
			return errors.Join(err, err2)
		}
		if i%2 == 0 {
			errs[i] = loops()
		} else {
			errs[i] = op2.Chain(loops)
		}
		got[i] = append(must(e[i].Gather()), s[i].Value())
	}
	check(t, op2.Configure(op2.Config{}))
	for i, err := range errs {
		chain := i%2 == 1
		switch op2.Rank() {
		case 0:
			if err != nil {
				t.Errorf("rank 0, run %d (in a chain %v): %v, want no error", i, chain, err)
			}
		case 1:
			var ce *op2.ChainError
			switch {
			case !chain:
				var le *op2.LoopError
				if !errors.As(err, &le) || le.Kernel != "ch_finding" {
					t.Errorf("rank 1 outside a chain, run %d: %v, want check mode's *LoopError", i, err)
				}
			case !errors.As(err, &ce) || ce.Kernel != "ch_finding" || !ce.RanAfter || !strings.Contains(ce.Error(), "ran, as on the other ranks"):
				t.Errorf("rank 1 in a chain, run %d: %v, want a *ChainError naming ch_finding, the loops after it run", i, err)
			default:
				if _, ok := ce.Err.(*op2.LoopError); !ok {
					t.Errorf("rank 1 in a chain, run %d: the ChainError holds a %T, want the loop's *LoopError", i, ce.Err)
				}
			}
		}
	}
	for i := 1; i < runs && op2.Rank() == 0; i += 2 {
		if !slices.Equal(got[i-1], got[i]) {
			t.Errorf("run %d, in a chain: %v, outside: %v", i, got[i], got[i-1])
		}
	}
	// A chain whose findings a full queue's run made, and whose loop
	// asking for room is then refused (a Dat of nodes passed to a loop
	// over edges): its end reports them, and the next chain nothing.
	check(t, op2.Configure(op2.Config{Check: true}))
	err := op2.Chain(func() error {
		check(t, op2.ParLoop(chFinding, nodes, gid[0].Arg(op2.Read), bad.Arg(op2.Read), b[0].Arg(op2.Read), a[0].Arg(op2.RW)))
		for range op2.MaxRecordedLoops - 1 {
			check(t, op2.ParLoop(chNop, nodes, a[0].Arg(op2.RW)))
		}
		return op2.ParLoop(chNop, edges, a[0].Arg(op2.RW))
	})
	var ce *op2.ChainError
	if found := errors.As(err, &ce); err == nil || found != (op2.Rank() == 1) {
		t.Errorf("rank %d: a chain refusing its last loop after a full queue's findings: %v", op2.Rank(), err)
	}
	if err := op2.Chain(func() error { return op2.ParLoop(chNop, nodes, a[0].Arg(op2.RW)) }); err != nil {
		t.Errorf("rank %d: the next chain: %v, want no error", op2.Rank(), err)
	}
	// A chain inside a chain: the inner one's end reports its findings,
	// the outer one's nothing.
	var inner error
	outer := op2.Chain(func() error {
		inner = op2.Chain(func() error {
			return op2.ParLoop(chFinding, nodes, gid[0].Arg(op2.Read), bad.Arg(op2.Read), b[0].Arg(op2.Read), a[0].Arg(op2.RW))
		})
		return nil
	})
	if outer != nil || (inner != nil) != (op2.Rank() == 1) {
		t.Errorf("rank %d: nested chains: the inner one %v, the outer one %v; want the finding from the inner one on rank 1", op2.Rank(), inner, outer)
	}
	// A chain whose function panics after a collective call ran its
	// findings: no collective call after it reports them (on one rank
	// only, it would skip its part); the next chain's end does.
	func() {
		defer func() { _ = recover() }()
		_ = op2.Chain(func() error {
			check(t, op2.ParLoop(chFinding, nodes, gid[0].Arg(op2.Read), bad.Arg(op2.Read), b[0].Arg(op2.Read), a[0].Arg(op2.RW)))
			_, _ = a[0].Gather()
			panic("fn fails")
		})
	}()
	if _, err := a[0].Gather(); err != nil {
		t.Errorf("rank %d: Gather after a chain that panicked: %v", op2.Rank(), err)
	}
	if err := op2.Chain(func() error { return nil }); (err != nil) != (op2.Rank() == 1) {
		t.Errorf("rank %d: the chain after one that panicked: %v; want the kept finding on rank 1", op2.Rank(), err)
	}
	check(t, op2.Configure(op2.Config{}))
	check(t, op2.Finalize())
}
