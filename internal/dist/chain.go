package dist

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/goop2/op2/internal/collective"
	"github.com/goop2/op2/internal/core"
)

// Grouped halo exchanges of a recorded chain of loops.
//
// When the op2 run time forces a recorded chain (op2.Chain), it gives the
// whole loop sequence to PlanChain before the first loop runs. The ranks
// then agree once, for the chain, on what Agree decides before each loop
// (the same loops, the same optional arguments, which Dats some rank
// changed on the host), and PlanChain works out from the sequence alone
// which Dat halos each loop needs fresh: a Dat read through a map (or
// directly by a loop computing the exec halo) whose halo is stale at that
// point, because the chain or an earlier loop modified it or a rank wrote
// it on the host. Each such need can be met by an exchange at the start of
// any loop after the Dat's last modification before the read, up to the
// reading loop itself; PlanChain chooses the fewest such exchange points
// that meet every need (the earliest deadline first: an interval stabbing)
// and gives each need to the earliest point it can use, so a Dat that no
// earlier loop of the chain modifies travels with the chain's first
// exchange. At each point every Dat exchanged travels in one message per
// neighbour (OP2's op_mpi_halo_exchanges_grouped), instead of one per Dat.
// The plan depends only on the agreed flags and the loop sequence, so every
// rank takes it alike; the messages of a point are started in the loop's
// Begin and completed in its Wait, as a single loop's are, so they travel
// while the loop's core elements run.

// chainPlan is the schedule of the chain being run: its loops in order
// and the Dats whose halos each loop's Begin exchanges (nil: none).
type chainPlan struct {
	loops  []*core.Loop
	groups [][]*core.Storage
	next   int
}

// argFlags is argument a's flags in an agreement before a loop (see
// Agree) whose loop computes the exec halo when runsExec is set.
func argFlags(a *core.Arg, runsExec bool) byte {
	switch {
	case a.Off:
		return argOff
	case a.Facts().Any(core.FactGlobal):
		if a.Access != core.Read {
			return argShared
		}
	case a.Data.Set != nil && a.Data.Set.Halo != nil:
		v := byte(argShared)
		if readsHalo(a, runsExec) && (a.Data.HaloStale || a.Data.HostDirty) {
			v |= argExchange
		}
		return v
	}
	return 0
}

// chainHash identifies a loop sequence across ranks (FNV-1a of each
// loop's hash, their number and a marker, so that it differs from a
// single loop's).
func chainHash(loops []*core.Loop) uint64 {
	hash := uint64(14695981039346656037)
	add := func(v uint64) {
		for range 8 {
			hash = (hash ^ (v & 0xff)) * 1099511628211
			v >>= 8
		}
	}
	add(0x636861696e) // "chain"
	add(uint64(len(loops)))
	for _, l := range loops {
		add(loopHash(l))
	}
	return hash
}

// PlanChain is Agree for a chain of loops that are about to run in this
// order, on every rank: the ranks agree once (one MPI_Allreduce, two when
// the loops have more than 112 arguments in all) and each loop's Agree
// then takes its part of the plan, without communicating, and its Begin
// starts that part's grouped messages. EndChain ends the plan; so does a
// loop that is not the plan's next, which agrees as a single loop (the
// run time ran other loops than it planned, as every rank does alike,
// such as loops fused after planning). trace is as for Agree. The
// error names the chain's loops (and, when the ranks are at different
// loops or chains, every rank's); an MPI timeout is wrapped (TimedOut).
func (h *Halo) PlanChain(loops []*core.Loop, trace *slog.Logger) error {
	h.chain, h.grouped = nil, false
	h.trace = trace
	n := agreeHeader
	for _, l := range loops {
		n += len(l.Args)
	}
	// The first message has the size of a single loop's agreement, so
	// that a rank at a loop and one at a chain find that they differ.
	const size = agreeHeader + maxAgreeInline
	if cap(h.flags) < max(size, n) {
		h.flags = make([]byte, max(size, n))
	}
	f := h.flags[:max(size, n)]
	clear(f)
	hash := chainHash(loops)
	collective.PutIdentity(f, hash)
	o := agreeHeader
	for _, l := range loops {
		runsExec := l.NeedsColouring()
		for k := range l.Args {
			f[o+k] = argFlags(&l.Args[k], runsExec)
		}
		o += len(l.Args)
	}
	h.agreements++
	if err := h.w.AllreduceOr(f[:size]); err != nil {
		return fmt.Errorf("%s: agreeing with the other ranks before the chain: %w", chainName(loops), err)
	}
	if !collective.Agreed(f, hash) {
		err := collective.Disagree(h.w, chainName(loops))
		return fmt.Errorf("%s (rank %d of %d): the ranks are at different loops; every rank must run the same loops in the same order: %w", chainName(loops), h.w.Rank(), h.w.Size(), err)
	}
	if len(f) > size {
		if err := h.w.AllreduceOr(f[size:]); err != nil {
			return fmt.Errorf("%s: agreeing with the other ranks before the chain: %w", chainName(loops), err)
		}
	}
	// The Dats some rank must exchange before their first read in the
	// chain (their flags hold the state before the chain).
	if h.stale == nil {
		h.stale = map[*core.Storage]bool{}
		h.lastMod = map[*core.Storage]int{}
	}
	stale, lastMod := h.stale, h.lastMod
	clear(stale)
	clear(lastMod)
	o = agreeHeader
	for i, l := range loops {
		for k := range l.Args {
			v := f[o+k]
			if v&argOff != 0 && v&argShared != 0 {
				return fmt.Errorf("%s (loop %d of the chain): optional argument %d (op2.Opt) is enabled on some ranks and disabled on others; an argument of data on a partitioned set, or a reduction, may take part in a step of every rank (a halo exchange, the reduction), so every rank must pass the same flag", l.Name(), i+1, k)
			}
			if v&argExchange != 0 {
				stale[l.Args[k].Data] = true
			}
		}
		o += len(l.Args)
	}
	// Each need: the Dat s must be exchanged at the start of a loop in
	// (from, at].
	needs := h.needs[:0]
	for i, l := range loops {
		runsExec := l.NeedsColouring()
		for k := range l.Args {
			a := &l.Args[k]
			if readsHalo(a, runsExec) && stale[a.Data] {
				from, ok := lastMod[a.Data]
				if !ok {
					from = -1
				}
				needs = append(needs, need{a.Data, from, i})
				stale[a.Data] = false
			}
		}
		for k := range l.Args { // as End marks them
			a := &l.Args[k]
			if a.Facts().Any(core.FactDirtiesHalo) {
				stale[a.Data] = true
				lastMod[a.Data] = i
			}
		}
	}
	// The needs come by deadline (at): a need not met by the last point
	// chosen gets its own deadline as a new point; each need then goes
	// to the first point after its Dat's modification.
	points := h.points[:0]
	for _, nd := range needs {
		if len(points) == 0 || points[len(points)-1] <= nd.from {
			points = append(points, nd.at)
		}
	}
	// The plan's slices are kept from one chain to the next.
	p := &h.plan
	p.loops, p.next = append(p.loops[:0], loops...), 0
	for len(p.groups) < len(loops) {
		p.groups = append(p.groups, nil)
	}
	for i := range loops {
		p.groups[i] = p.groups[i][:0]
	}
	for _, nd := range needs {
		k := 0
		for points[k] <= nd.from {
			k++
		}
		p.groups[points[k]] = append(p.groups[points[k]], nd.s)
	}
	clear(needs)
	h.needs, h.points = needs[:0], points[:0]
	h.chain = p
	return nil
}

// need is a Dat whose halo a loop of a chain reads stale: it must be
// exchanged at the start of a loop in (from, at].
type need struct {
	s        *core.Storage
	from, at int
}

// EndChain ends the plan PlanChain made, whether or not every loop ran.
func (h *Halo) EndChain() {
	if h.chain != nil {
		clear(h.chain.loops)
		for i := range h.chain.groups {
			clear(h.chain.groups[i])
		}
	}
	h.chain, h.grouped, h.group = nil, false, nil
}

// chainName names a chain's loops for messages.
func chainName(loops []*core.Loop) string {
	var b strings.Builder
	fmt.Fprintf(&b, "chain of %d loops (", len(loops))
	for i, l := range loops {
		if i == 4 && len(loops) > 5 {
			fmt.Fprintf(&b, ", ... %d more", len(loops)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(l.Kernel.Name)
	}
	b.WriteString(")")
	return b.String()
}

// chainStep is Agree for loop l of a planned chain: l takes its group.
// A loop that is not the plan's next (the run time ran other loops than
// it planned, as every rank does alike) ends the plan: it and the loops
// after it agree and exchange loop by loop, from the halo flags the
// chain's loops so far left, which are exact.
func (h *Halo) chainStep(l *core.Loop) (ok bool) {
	c := h.chain
	if c.next >= len(c.loops) || c.loops[c.next] != l {
		h.EndChain()
		return false
	}
	h.group = c.groups[c.next]
	c.next++
	h.exchange = h.exchange[:0]
	h.grouped = true
	return true
}

// Messages is the number of halo messages (point-to-point sends) this
// rank posted so far, and their bytes.
func (h *Halo) Messages() (sent, bytes int64) { return h.messages, h.sentBytes }

// Agreements is the number of agreements (MPI_Allreduce before a loop or
// a chain) this rank took part in so far.
func (h *Halo) Agreements() int { return h.agreements }
