package op2_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
)

// chainMPIKernels are the loops of TestChainUnderMPI: sum reads three
// node Dats through both columns of the ring's map; scale modifies two
// of them directly.
var (
	chainSum = op2.NewKernel(`void chain_sum(double *a0, double *a1, double *b0, double *b1, double *c0, double *c1, double *e) {
  *e = *a0 + 2 * *a1 + 3 * *b0 + 4 * *b1 + 5 * *c0 + 6 * *c1;
}`, "chain_sum")
	chainScale = op2.NewKernel(`void chain_scale(double *a, double *b) { *a = 2 * *a + 1; *b += *a; }`, "chain_scale")
)

// chainMPIDats are one copy of TestChainUnderMPI's data.
type chainMPIDats struct {
	a, b, c, e, f *op2.Dat[float64]
}

// sequence issues sum, scale, sum: the first sum reads a, b and c
// (current: Partition filled their halos), the second a and b (modified
// by scale: stale).
func (d *chainMPIDats) sequence(t *testing.T, r *op2.Runtime, nodes, edges *op2.Set, ring *op2.Map) {
	t.Helper()
	sum := func(out *op2.Dat[float64]) {
		check(t, r.ParLoop(chainSum, edges,
			d.a.ArgMap(op2.Read, ring, 0), d.a.ArgMap(op2.Read, ring, 1),
			d.b.ArgMap(op2.Read, ring, 0), d.b.ArgMap(op2.Read, ring, 1),
			d.c.ArgMap(op2.Read, ring, 0), d.c.ArgMap(op2.Read, ring, 1), out.Arg(op2.Write)))
	}
	sum(d.e)
	check(t, r.ParLoop(chainScale, nodes, d.a.Arg(op2.RW), d.b.Arg(op2.RW)))
	sum(d.f)
}

// gather gathers every Dat (collective).
func (d *chainMPIDats) gather(t *testing.T) [][]float64 {
	t.Helper()
	var out [][]float64
	for _, x := range []*op2.Dat[float64]{d.a, d.b, d.c, d.e, d.f} {
		out = append(out, must(x.Gather()))
	}
	return out
}

// TestChainUnderMPI runs on 2 ranks: a Chain gives the results of running
// its loops at once, bit for bit, and sends as few halo messages (sum,
// scale, sum: a and b exchanged before the second sum, in 1 grouped
// message per neighbour either way), with one agreement; inside a chain an accessor a rank may
// call alone refuses to run the recorded loops (*ChainAccessError, or a
// panic with it), on that rank alone without hanging, and leaves them
// recorded; a collective call (Gather) runs them; loops recorded in lazy
// mode before a Chain run when it opens.
func TestChainUnderMPI(t *testing.T) {
	if !mpitest.InRanks() {
		mpiRun(t, 2, 2*time.Minute, "OP2_MPI_TIMEOUT=60s")
		return
	}
	const n = 8
	nodes, ring := declareRing(t, n)
	edges := ring.From()
	rank := op2.Rank()
	newDats := func(tag string) *chainMPIDats {
		v := func(k float64) []float64 {
			out := make([]float64, n)
			for i := range out {
				out[i] = float64(rank*n+i)*k + 0.25
			}
			return out
		}
		return &chainMPIDats{
			a: must(op2.NewDat(nodes, 1, v(1), "a"+tag)), b: must(op2.NewDat(nodes, 1, v(3), "b"+tag)),
			c: must(op2.NewDat(nodes, 1, v(7), "c"+tag)),
			e: must(op2.NewDat[float64](edges, 1, nil, "e"+tag)), f: must(op2.NewDat[float64](edges, 1, nil, "f"+tag)),
		}
	}
	eager, chained, probed := newDats("1"), newDats("2"), newDats("3")
	must(op2.Partition(op2.BlockPartitioner()))

	atOnce := must(op2.NewRuntime(op2.Config{}.Explicit("Lazy")))
	before := op2.ReadHaloStats()
	eager.sequence(t, atOnce, nodes, edges, ring)
	mid := op2.ReadHaloStats()
	check(t, op2.Chain(func() error { chained.sequence(t, op2.Default(), nodes, edges, ring); return nil }))
	after := op2.ReadHaloStats()
	want := eager.gather(t)
	if got := chained.gather(t); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("rank %d: chained results differ from loops run at once:\n got %v\nwant %v", rank, got, want)
	}
	eagerMsgs, chainMsgs := mid.Messages-before.Messages, after.Messages-mid.Messages
	// A ring's block partition: each rank has one neighbour.
	if eagerMsgs != 1 || chainMsgs != 1 {
		t.Errorf("rank %d: %d halo messages at once, %d chained; want 1 and 1", rank, eagerMsgs, chainMsgs)
	}
	if got := after.Agreements - mid.Agreements; got != 1 {
		t.Errorf("rank %d: %d agreements for the chain, want 1", rank, got)
	}
	t.Logf("rank %d: halo messages at once %d (%d bytes, %d agreements), chained %d (%d bytes, %d agreements)", rank,
		eagerMsgs, mid.Bytes-before.Bytes, mid.Agreements-before.Agreements, chainMsgs, after.Bytes-mid.Bytes, after.Agreements-mid.Agreements)

	// Accessors inside a chain.
	refused := func(what string, err error, accessor, data string, recorded int) {
		t.Helper()
		var ce *op2.ChainAccessError
		if !errors.As(err, &ce) {
			t.Errorf("rank %d: %s: %v, want a *ChainAccessError", rank, what, err)
			return
		}
		if ce.Accessor != accessor || ce.Data != data || ce.Rank != rank || ce.Ranks != 2 || ce.Recorded != recorded {
			t.Errorf("rank %d: %s: %+v, want accessor %s, data %q, rank %d of 2, %d loops recorded", rank, what, *ce, accessor, data, rank, recorded)
		}
		wantErr(t, err, accessor, "inside a Chain", fmt.Sprintf("rank %d of 2", rank), "after Chain returns")
	}
	panicked := func(f func()) (err error) {
		defer func() {
			if p := recover(); p != nil {
				err, _ = p.(error)
				if err == nil {
					err = fmt.Errorf("panic: %v", p)
				}
			}
		}()
		f()
		return nil
	}
	g := must(op2.NewGlobal(1, []float64{0}, "g"))
	// A loop recorded in lazy mode (the default) on every rank, run by
	// an accessor on rank 1 alone, then a Chain: it opens on every rank
	// with nothing recorded.
	check(t, op2.ParLoop(chainScale, nodes, probed.c.Arg(op2.RW), probed.b.Arg(op2.RW)))
	if got := op2.RecordedLoops(); got != 1 {
		t.Errorf("rank %d: %d loops recorded in lazy mode, want 1", rank, got)
	}
	if rank == 1 {
		_ = probed.c.Data()
	}
	check(t, op2.Chain(func() error {
		if got := op2.RecordedLoops(); got != 0 {
			t.Errorf("rank %d: %d loops recorded when a Chain opens, want 0", rank, got)
		}
		probed.sequence(t, op2.Default(), nodes, edges, ring)
		// Rank 1 alone reads a Dat: refused there, with nothing to
		// wait for on rank 0.
		if rank == 1 {
			refused("Dat.Data", panicked(func() { probed.f.Data() }), "Dat.Data", "f3", 3)
		}
		return nil
	}))
	check(t, op2.Chain(func() error {
		check(t, op2.ParLoop(chainScale, nodes, probed.a.Arg(op2.RW), probed.b.Arg(op2.RW)))
		refused("Dat.Sync", probed.a.Sync(), "Dat.Sync", "a3", 1)
		refused("Wait", op2.Wait(), "Wait", "", 1)
		refused("Global.Value", panicked(func() { g.Value() }), "Global.Value", "g", 1)
		_ = probed.a.State() // reports the state before the recorded loop, and keeps no error
		if got := op2.RecordedLoops(); got != 1 {
			t.Errorf("rank %d: %d loops recorded after the refused calls, want 1", rank, got)
		}
		// Gather is collective: it runs the recorded loop on every rank.
		a := must(probed.a.Gather())
		if op2.RecordedLoops() != 0 {
			t.Errorf("rank %d: Gather left %d loops recorded", rank, op2.RecordedLoops())
		}
		if rank == 0 && a[0] != 2*(2*0.25+1)+1 {
			t.Errorf("a[0] gathered inside the chain = %v, want %v", a[0], 2*(2*0.25+1)+1)
		}
		probed.f.Data() // nothing recorded: allowed
		return nil
	}))
	check(t, op2.Finalize())
}
