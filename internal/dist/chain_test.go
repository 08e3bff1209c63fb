package dist_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
)

// chainCase is a loop sequence over ringMesh's part on one rank: its dats
// and loops, each loop with what it does to the owned values (body) and
// the halos it must find fresh (reads, with their versions then).
type chainCase struct {
	loops  []*core.Loop
	bodies []func() error
}

// airfoilLike builds a sequence shaped like Airfoil's iteration: q, p on
// the nodes, s on the edges, all stale (declared with values); it checks
// in each loop that the halos it reads through the map hold the owners'
// values of the current version.
func airfoilLike(rm *rankMesh) (chainCase, []*core.Storage) {
	q, p := newDat(rm.nodes, "q", 2), newDat(rm.nodes, "p", 1)
	s := newDat(rm.edges, "s", 1)
	q.HaloStale, p.HaloStale, s.HaloStale = true, true, true
	vq := 0
	var c chainCase
	add := func(l *core.Loop, body func() error) {
		c.loops = append(c.loops, l)
		c.bodies = append(c.bodies, body)
	}
	// readq: q through the map (stale: exchanged), s written.
	add(newLoop("readq", rm.edges, viaMap(q, rm.pedge, 0, core.Read), viaMap(q, rm.pedge, 1, core.Read), direct(s, core.Write)),
		func() error { return checkHalo(q, vq, true) })
	// update: q modified directly (stale again), p read directly only.
	add(newLoop("update", rm.nodes, direct(q, core.RW), direct(p, core.Read)),
		func() error { vq++; setVersion(q, vq); return nil })
	// readqp: q and p through the map: p, not modified in the chain, can
	// travel with the first group; q, modified by update, not.
	add(newLoop("readqp", rm.edges, viaMap(q, rm.pedge, 0, core.Read), viaMap(p, rm.pedge, 1, core.Read), direct(s, core.Write)),
		func() error { return errors.Join(checkHalo(q, vq, true), checkHalo(p, 0, true)) })
	// readp: nothing stale to exchange.
	add(newLoop("readp", rm.edges, viaMap(p, rm.pedge, 0, core.Read), direct(s, core.RW)),
		func() error { return checkHalo(p, 0, true) })
	return c, []*core.Storage{q, p, s}
}

// TestHaloChainGroupsExchanges runs an Airfoil-like sequence loop by loop
// and as a planned chain on 2 and 3 simulated ranks: every loop finds the
// halos it reads fresh in both; the chain sends one message per
// neighbour per exchange point (two points: the first loop, where p
// joins q, and readqp), as the loops do (q, then q and p grouped in one
// message per neighbour); and both leave the same halo flags.
func TestHaloChainGroupsExchanges(t *testing.T) {
	for _, ranks := range []int{2, 3} {
		t.Run(fmt.Sprintf("%d-ranks", ranks), func(t *testing.T) {
			noErrors(t, onRanks(t, ranks, 0, func(rm *rankMesh) error {
				h := rm.job.Exchange()
				neighbours := func(set *core.Set) int { return len(set.Halo.(*dist.SetHalo).Neighbours) }
				if neighbours(rm.nodes) == 0 {
					return errors.New("no neighbours: the mesh does not test the exchange")
				}
				var flags [2][]bool
				var sent [2]int64
				for mode, chained := range []bool{false, true} {
					c, dats := airfoilLike(rm)
					before, _ := h.Messages()
					if chained {
						if err := h.PlanChain(c.loops, nil); err != nil {
							return err
						}
					}
					for i, l := range c.loops {
						var berr error
						if err := run(h, l, func() { berr = c.bodies[i]() }); err != nil {
							return fmt.Errorf("chained %v: loop %d: %w", chained, i, err)
						}
						if berr != nil {
							return fmt.Errorf("chained %v: loop %d (%s): %w", chained, i, l.Kernel.Name, berr)
						}
					}
					h.EndChain()
					after, _ := h.Messages()
					sent[mode] = after - before
					for _, s := range dats {
						flags[mode] = append(flags[mode], s.HaloStale, s.HostDirty)
					}
				}
				// Every neighbour of nodes that needs any node of this
				// rank is sent q and p (both on nodes).
				var n int64
				for _, nb := range rm.nodes.Halo.(*dist.SetHalo).Neighbours {
					if len(nb.Send) > 0 {
						n++
					}
				}
				if want := 2 * n; sent[0] != want {
					return fmt.Errorf("loop by loop: %d messages, want %d (q, then q and p grouped, to %d neighbours)", sent[0], want, n)
				}
				if want := 2 * n; sent[1] != want {
					return fmt.Errorf("chained: %d messages, want %d (2 groups to %d neighbours)", sent[1], want, n)
				}
				if fmt.Sprint(flags[0]) != fmt.Sprint(flags[1]) {
					return fmt.Errorf("halo flags (stale, host dirty of q, p, s): loop by loop %v, chained %v", flags[0], flags[1])
				}
				return nil
			}))
		})
	}
}

// TestHaloChainHostWrite checks that a Dat one rank changed on the host
// before the chain is exchanged on every rank, in the chain's group.
func TestHaloChainHostWrite(t *testing.T) {
	noErrors(t, onRanks(t, 3, 0, func(rm *rankMesh) error {
		h := rm.job.Exchange()
		p := newDat(rm.nodes, "p", 1)
		s := newDat(rm.edges, "s", 1)
		setVersion(p, 3)
		if rm.p.Rank() == 2 {
			dist.HostWrite(p)
		}
		l := newLoop("readp", rm.edges, viaMap(p, rm.pedge, 0, core.Read), direct(s, core.Write))
		if err := h.PlanChain([]*core.Loop{l}, nil); err != nil {
			return err
		}
		defer h.EndChain()
		if err := run(h, l, nil); err != nil {
			return err
		}
		return checkHalo(p, 3, true)
	}))
}

// TestHaloChainRanksDiffer checks that ranks at different chains, or one
// at a chain and another at a single loop, all fail naming every rank's.
func TestHaloChainRanksDiffer(t *testing.T) {
	errs := onRanks(t, 2, 0, func(rm *rankMesh) error {
		h := rm.job.Exchange()
		q := newDat(rm.nodes, "q", 1)
		s := newDat(rm.edges, "s", 1)
		l := newLoop("a", rm.edges, viaMap(q, rm.pedge, 0, core.Read), direct(s, core.Write))
		if rm.p.Rank() == 1 {
			return run(h, l, nil) // q current: rank 1 agrees on the single loop
		}
		return h.PlanChain([]*core.Loop{l, l}, nil)
	})
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "the ranks are at different loops") ||
			!strings.Contains(err.Error(), "rank 0: chain of 2 loops (a, a)") || !strings.Contains(err.Error(), `rank 1: loop "a" over set "edges" with 2 arguments`) {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

// TestHaloChainWrongLoop checks that a loop that is not the plan's next
// ends the plan and agrees and exchanges as a single loop: here the
// planned loop a never runs, and b exchanges q itself.
func TestHaloChainWrongLoop(t *testing.T) {
	noErrors(t, onRanks(t, 2, 0, func(rm *rankMesh) error {
		h := rm.job.Exchange()
		q := newDat(rm.nodes, "q", 1)
		q.HaloStale = true
		s := newDat(rm.edges, "s", 1)
		a := newLoop("a", rm.edges, viaMap(q, rm.pedge, 0, core.Read), direct(s, core.Write))
		b := newLoop("b", rm.edges, viaMap(q, rm.pedge, 0, core.Read), direct(s, core.RW))
		if err := h.PlanChain([]*core.Loop{a}, nil); err != nil {
			return err
		}
		before := h.Exchanges()
		if err := run(h, b, nil); err != nil {
			return err
		}
		if got := h.Exchanges() - before; got != 1 {
			return fmt.Errorf("b exchanged %d Dats, want 1 (q)", got)
		}
		return checkHalo(q, 0, true)
	}))
}
