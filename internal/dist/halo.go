package dist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"unsafe"

	"github.com/goop2/op2/internal/collective"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/mpi"
)

// Halo exchanges halos and combines reductions around each loop of a
// partitioned run: it is the executor's exec.Halo, and Agree runs before
// each loop. Following OP2: before a loop, a Dat is exchanged when its
// halo is out of date and the loop reads it (READ or RW) through a map, or
// directly while the loop also computes the exec halo; after the loop,
// every Dat it modified has an out-of-date halo. The owned values are
// always complete, because every element touching an owned element runs
// on its owner (owner-compute over the exec halo).
//
// Every rank takes every decision that involves another rank alike: before
// a loop the ranks agree (Agree) on the loop they run, on its optional
// arguments and on the Dats to exchange, which depend on what a rank did
// alone (Data, DataWO, Zero, CopyTo); the decisions themselves depend only
// on the loop's arguments, never on a rank's own part of the mesh; a
// message's tag comes from the loop and the argument's position, or the
// group of several Dats (loopTag), never from an object's identity.
type Halo struct {
	w World
	// The agreement buffer and its outcome: the arguments whose Dats the
	// current call exchanges, taken by Begin.
	flags    []byte
	exchange []int
	// An agreement AgreeAhead made for a loop it refused, which that
	// loop's Agree takes instead of agreeing again (ForgetAgreed drops
	// it): the loop and the arguments it exchanges.
	agreedLoop     *core.Loop
	agreedExchange []int
	// gathered holds what a reduction sends and receives (End).
	gathered []byte
	recvs    []mpi.Msg
	sends    []mpi.Msg
	// trace, if not nil, logs each exchange (OP2_LOG=trace).
	trace *slog.Logger
	// exchanges counts the Dat exchanges started (tests); messages and
	// sentBytes the messages posted, agreements the MPI_Allreduce calls
	// before loops and chains.
	exchanges                           int
	messages, sentBytes, deviceMessages int64
	agreements                          int
	// The plan of the chain being run (PlanChain), the Dats the current
	// loop exchanges grouped and whether its Begin is still to start them
	// (grouped).
	chain   *chainPlan
	plan    chainPlan
	needs   []need
	points  []int
	group   []*core.Storage
	single  []*core.Storage // a single loop's Dats, exchanged by Begin
	grouped bool
	// The exchange in progress (exchange.go): its parts, peers, host
	// message memory (hsend, hrecv: a device's page-locked memory, or
	// gsend's and grecv's), the device stages it uses and their spans of
	// the messages; onDevice says that the messages are stage's device
	// memory.
	parts []groupPart
	peers []peerMsg
	// device says that the loop of the exchange in progress reads its
	// data on a device (Begin): the rows received go to the device
	// copies, else to the host copies, which the loop binds.
	device       bool
	hsend, hrecv []byte
	gsend, grecv *pinnedBuf
	stages       []core.RowStage
	spans        []stageSpan
	stage        core.RowStage
	onDevice     bool
	stale        map[*core.Storage]bool
	lastMod      map[*core.Storage]int
	// DropSends makes Begin post no sends (tests of a rank that never
	// sends).
	DropSends bool
}

// NewHalo returns the halo exchange of the rank w is.
func NewHalo(w World) *Halo { return &Halo{w: w} }

// Exchanges is the number of Dat halo exchanges Begin started so far.
func (h *Halo) Exchanges() int { return h.exchanges }

// Flags of one argument in the agreement before a loop.
const (
	argOff      = 1 << iota // a disabled optional argument on this rank
	argShared               // enabled, and other ranks take part in it: a Dat on a partitioned set, or a reduction
	argExchange             // its Dat's halo is read and may be out of date
)

// The agreement before a loop: the loop's hash and its complement, and
// the flags of the arguments that fit in the first message.
const (
	agreeHeader    = collective.AgreeIdentity
	maxAgreeInline = collective.AgreeBytes - agreeHeader
)

// readsHalo reports whether argument a of l reads the halo of a Dat on a
// partitioned set: READ or RW through a map, or directly while the loop
// computes the exec halo (runsExec: it modifies data through a map). It
// depends on the loop's arguments only, never on this rank's part of the
// mesh.
func readsHalo(a *core.Arg, runsExec bool) bool {
	f := a.Facts()
	if !f.Any(core.FactMapRead|core.FactOwnRead) || a.Data.Set.Halo == nil {
		return false
	}
	return f.Any(core.FactMapRead) || runsExec
}

// Agree runs before every loop, on every rank, and decides the Dats whose
// halos the loop exchanges: those whose halos it reads which are out of
// date, or which some rank changed on the host since their last exchange.
// When the loop reads a halo not known to be out of date, or has optional
// arguments, the ranks decide together with one small MPI_Allreduce, in
// which they also check that they run the same loop with the same
// optional arguments enabled; otherwise the decision is every rank's
// alike without it. trace, if not nil, is the logger Begin logs the loop's
// exchanges to (core.LevelTrace). The error names the loop (and, when
// the ranks are at different loops, every rank's); an MPI timeout is
// wrapped (see TimedOut).
func (h *Halo) Agree(l *core.Loop, trace *slog.Logger) error {
	h.trace = trace
	if h.chain != nil && h.chainStep(l) {
		return nil
	}
	if agreed := h.agreedLoop; agreed != nil {
		h.agreedLoop = nil
		if agreed == l {
			h.exchange = append(h.exchange[:0], h.agreedExchange...)
			return nil
		}
	}
	// Without optional arguments (whose flags the ranks must compare),
	// a loop whose halo reads are all of stale Dats exchanges exactly
	// those, as every rank knows: no agreement is needed.
	runsExec := l.NeedsColouring()
	need := false
	for k := range l.Args {
		a := &l.Args[k]
		if a.Optional || (readsHalo(a, runsExec) && !a.Data.HaloStale) {
			need = true
			break
		}
	}
	if !need {
		h.exchange = h.exchange[:0]
		for k := range l.Args {
			if readsHalo(&l.Args[k], runsExec) {
				h.addExchange(l, k)
			}
		}
		return nil
	}
	// The first message has the same size on every rank, whatever loop
	// each is at; arguments past maxAgreeInline follow once the ranks
	// know they run the same loop.
	n := len(l.Args)
	const size = agreeHeader + maxAgreeInline
	if cap(h.flags) < max(size, n+agreeHeader) {
		h.flags = make([]byte, max(size, n+agreeHeader))
	}
	f := h.flags[:max(size, agreeHeader+n)]
	clear(f)
	hash := loopHash(l)
	collective.PutIdentity(f, hash)
	for k := range l.Args {
		f[agreeHeader+k] = argFlags(&l.Args[k], runsExec)
	}
	h.agreements++
	if err := h.w.AllreduceOr(f[:size]); err != nil {
		return fmt.Errorf("%s: agreeing with the other ranks before the loop: %w", l.Name(), err)
	}
	if !collective.Agreed(f, hash) {
		return h.disagree(l)
	}
	if len(f) > size { // the ranks run the same loop: as many arguments
		if err := h.w.AllreduceOr(f[size:]); err != nil {
			return fmt.Errorf("%s: agreeing with the other ranks before the loop: %w", l.Name(), err)
		}
	}
	h.exchange = h.exchange[:0]
	for k := range l.Args {
		v := f[agreeHeader+k]
		if v&argOff != 0 && v&argShared != 0 {
			return fmt.Errorf("%s: optional argument %d (op2.Opt) is enabled on some ranks and disabled on others; an argument of data on a partitioned set, or a reduction, may take part in a step of every rank (a halo exchange, the reduction), so every rank must pass the same flag", l.Name(), k)
		}
		if v&argExchange != 0 {
			h.addExchange(l, k)
		}
	}
	return nil
}

// addExchange adds the Dat of argument k to the current call's exchanges,
// as its first argument (the one the executor's signature names).
func (h *Halo) addExchange(l *core.Loop, k int) {
	b := k
	for j := range k {
		if l.Args[j].Data == l.Args[k].Data && !l.Args[j].Facts().Any(core.FactGlobal) {
			b = j
			break
		}
	}
	if !slices.Contains(h.exchange, b) {
		h.exchange = append(h.exchange, b)
	}
}

// loopHash identifies a loop across ranks: its kernel's and set's names
// and its number of arguments (FNV-1a).
func loopHash(l *core.Loop) uint64 {
	hash := uint64(14695981039346656037)
	add := func(s string) {
		for i := 0; i < len(s); i++ {
			hash = (hash ^ uint64(s[i])) * 1099511628211
		}
		hash = (hash ^ 0xff) * 1099511628211
	}
	add(l.Kernel.Name)
	add(l.Set.Name)
	for v := uint64(len(l.Args)); ; v >>= 8 {
		hash = (hash ^ (v & 0xff)) * 1099511628211
		if v < 0x100 {
			break
		}
	}
	return hash
}

// disagree is the error every rank returns when the ranks reached
// different loops or collective operations: every rank detects it (a bit
// of the hash on which two ranks differ is set in the OR of the hashes or
// of their complements; a reduction's identities differ), so each can
// take part in collective.Disagree, which names every rank's.
func (h *Halo) disagree(l *core.Loop) error {
	err := collective.Disagree(h.w, fmt.Sprintf("%s with %d arguments", l.Name(), len(l.Args)))
	return fmt.Errorf("%s (rank %d of %d): the ranks are at different loops; every rank must run the same loops in the same order: %w", l.Name(), h.w.Rank(), h.w.Size(), err)
}

// Begin starts the exchanges Agree decided on and sets the other ranks'
// INC reductions to zero, so that the declared value is counted once.
// The halos of several Dats travel grouped, one message to and from each
// neighbouring rank (as a chain's exchange points do; OP2 groups them on
// its device backends only), instead of one per Dat and neighbour. A
// second Begin for the same call (the executor running the loop again as
// configured after a tuned setting failed to start) exchanges nothing.
func (h *Halo) Begin(l *core.Loop, device bool) error {
	h.recvs, h.sends = h.recvs[:0], h.sends[:0]
	h.parts = h.parts[:0]
	h.device = device
	if err := h.StartReductions(l); err != nil {
		return err
	}
	if h.grouped { // a loop of a planned chain
		h.grouped = false
		return h.beginExchange(l, h.group, groupTag)
	}
	exchange := h.exchange
	h.exchange = h.exchange[:0]
	if len(exchange) == 0 {
		return nil
	}
	tag := loopTag(l, exchange)
	group := h.single[:0]
	for _, i := range exchange {
		group = append(group, l.Args[i].Data)
	}
	err := h.beginExchange(l, group, tag)
	clear(group)
	h.single = group[:0]
	return err
}

// loopTag is the tag of the messages of l's exchange of the Dats of the
// arguments exchange: of one Dat, its argument's position (the same on
// every rank, whatever else each created); of several, groupTag. Some
// bits of l's hash are added, so that ranks at different loops that need
// no agreement (Agree: each exchanges only Dats whose halos every rank
// knows are out of date) almost always (but for 1 pair of loops in 500,
// or in 89 for several Dats) post messages the others never match: they
// wait out OP2_MPI_TIMEOUT naming their loop rather than take one loop's
// Dat into another's halo. Tags stay below 32767, the least tag bound MPI
// allows.
func loopTag(l *core.Loop, exchange []int) int32 {
	hash := loopHash(l)
	if len(exchange) > 1 { // never groupTag itself, a chain's
		return groupTag + 1 + int32(hash%(groupTags-1))
	}
	return int32((uint64(exchange[0]) + 64*(hash%500)) % 32000)
}

// StartReductions sets l's INC reductions to zero on ranks other than 0,
// so that the declared value is counted once, as Begin does
// (exec.TileHalo: a tiled chain's early tiles accumulate into them before
// l's Begin, across which the executor keeps them).
func (h *Halo) StartReductions(l *core.Loop) error {
	if h.w.Rank() == 0 {
		return nil
	}
	for i := range l.Args {
		a := &l.Args[i]
		if l.Sig.Base[i] == i && l.Sig.Args[i].Facts.Any(core.FactGlobal) && a.Access == core.Inc {
			if err := a.Data.HostAccess(true); err != nil {
				return err
			}
			clear(unsafe.Slice((*byte)(a.Data.Host), a.Data.Bytes()))
		}
	}
	return nil
}

// Wait completes the exchanges and copies what arrived into the halos.
func (h *Halo) Wait(l *core.Loop) error {
	if len(h.parts) == 0 {
		return nil
	}
	return h.waitExchange(l)
}

// describePending names the messages a timed-out wait was waiting for:
// the Dats, the peer rank and the direction.
func (h *Halo) describePending(err error) string {
	var te *mpi.TimeoutError
	if !errors.As(err, &te) {
		return ""
	}
	var b strings.Builder
	for k, i := range te.Pending {
		if k == 8 {
			fmt.Fprintf(&b, " and %d more", len(te.Pending)-k)
			break
		}
		if k > 0 {
			b.WriteString(",")
		}
		if i < len(h.recvs) {
			fmt.Fprintf(&b, " %s from rank %d (receive of %d bytes)", h.exchangeNames(), h.recvs[i].Rank, h.recvs[i].Bytes)
		} else if i -= len(h.recvs); i < len(h.sends) {
			fmt.Fprintf(&b, " %s to rank %d (send of %d bytes)", h.exchangeNames(), h.sends[i].Rank, h.sends[i].Bytes)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return " waiting for" + b.String()
}

// End marks modified halos out of date and combines the reductions: every
// rank gathers every rank's result and folds them in rank order, so the
// result is the same bits on every rank and repeatable.
func (h *Halo) End(l *core.Loop) error {
	for i := range l.Args {
		if l.Sig.Args[i].Facts.Any(core.FactDirtiesHalo) {
			l.Args[i].Data.HaloStale = true
		}
	}
	for _, i := range l.Sig.Reductions {
		if l.Sig.Base[i] != i {
			continue
		}
		a := &l.Args[i]
		s := a.Data
		if err := s.HostAccess(true); err != nil {
			return err
		}
		mine := unsafe.Slice((*byte)(s.Host), s.Bytes())
		all, err := h.gatherReduction(l, i, mine)
		if err != nil {
			return fmt.Errorf("%s: reduction of %s across ranks: %w", l.Name(), s.Describe(), err)
		}
		if all == nil {
			return h.disagree(l)
		}
		combine(s.Type, a.Access, mine, all)
	}
	return nil
}

// reductionHeader is the size of the identity a rank's result of a
// reduction travels with: the loop's hash, the argument's position and
// the result's size, and their complement; reductionInline is how much
// of the result travels with it, the rest following once the ranks know
// they reduce alike (so that results of different sizes, of different
// loops, are told apart too rather than truncated by MPI).
const reductionHeader, reductionInline = 16, 112

// gatherReduction gathers every rank's result of the reduction of
// argument i of l (mine: this rank's), rank after rank. Each result
// travels with the loop's identity, so that ranks at different loops
// (whose reductions would otherwise meet and mix, a loop that needs no
// agreement making no other call before them) are told apart: all is nil
// when a rank's identity is not this rank's.
func (h *Halo) gatherReduction(l *core.Loop, i int, mine []byte) (all []byte, err error) {
	id := loopHash(l) ^ (uint64(i)+1)*0x9e3779b97f4a7c15 ^ uint64(len(mine))*0xbf58476d1ce4e5b9
	const block = reductionHeader + reductionInline
	size, inline := h.w.Size(), min(len(mine), reductionInline)
	rest := len(mine) - inline
	if n := block + block*size + rest*size + len(mine)*size; cap(h.gathered) < n {
		h.gathered = make([]byte, n)
	}
	buf := h.gathered
	send, first := buf[:block], buf[block:block+block*size]
	second := buf[block+block*size : block+block*size+rest*size]
	all = buf[block+block*size+rest*size:][:len(mine)*size]
	clear(send)
	collective.PutIdentity(send, id)
	copy(send[reductionHeader:], mine[:inline])
	if err := h.w.Allgather(send, first); err != nil {
		return nil, err
	}
	for r := range size {
		b := first[r*block:]
		if !collective.Agreed(b, id) {
			return nil, nil
		}
	}
	if rest > 0 {
		if err := h.w.Allgather(mine[inline:], second); err != nil {
			return nil, err
		}
	}
	for r := range size {
		copy(all[r*len(mine):], first[r*block+reductionHeader:r*block+reductionHeader+inline])
		copy(all[r*len(mine)+inline:], second[r*rest:(r+1)*rest])
	}
	return all, nil
}

// combine folds the ranks' values in all (rank after rank) into dst: a
// MIN or MAX takes a rank's value only when it is smaller (larger), so
// that a NaN one leaves the value as it was and of -0 and +0 the earlier
// rank's stays, as on one process (Go's min and max would return the NaN
// and order -0 below +0).
func combine(t core.ScalarType, acc core.Access, dst, all []byte) {
	le := binary.LittleEndian
	switch t {
	case core.Float64:
		fold(acc, dst, all, math.Float64frombits, math.Float64bits, le.Uint64, le.PutUint64)
	case core.Float32:
		fold(acc, dst, all, math.Float32frombits, math.Float32bits, le.Uint32, le.PutUint32)
	case core.Int32:
		fold(acc, dst, all, func(u uint32) int32 { return int32(u) }, func(v int32) uint32 { return uint32(v) }, le.Uint32, le.PutUint32)
	case core.Uint32:
		fold(acc, dst, all, func(u uint32) uint32 { return u }, func(v uint32) uint32 { return v }, le.Uint32, le.PutUint32)
	case core.Int64:
		fold(acc, dst, all, func(u uint64) int64 { return int64(u) }, func(v int64) uint64 { return uint64(v) }, le.Uint64, le.PutUint64)
	}
}

func fold[T int32 | int64 | uint32 | float32 | float64, U uint32 | uint64](acc core.Access, dst, all []byte,
	from func(U) T, to func(T) U, get func([]byte) U, put func([]byte, U)) {
	size, n := int(unsafe.Sizeof(U(0))), len(dst)
	ranks := len(all) / n
	for k := 0; k < n; k += size {
		v := from(get(all[k:]))
		for r := 1; r < ranks; r++ {
			x := from(get(all[r*n+k:]))
			switch acc { // MIN and MAX as the backends combine (devrt.fold)
			case core.Inc:
				v += x
			case core.Min:
				if x < v {
					v = x
				}
			case core.Max:
				if x > v {
					v = x
				}
			}
		}
		put(dst[k:], to(v))
	}
}

// HostWrite records that this rank may have changed s's values on the
// host, so that the next loop reading its halo exchanges it (see Agree).
func HostWrite(s *core.Storage) {
	if s.Set != nil && s.Set.Halo != nil {
		s.HostDirty = true
	}
}

// AgreeAhead is Agree for a loop recorded to run later (lazy evaluation
// on several ranks), called on every rank when the loop is issued: it
// reports whether l, run whenever this rank forces it, neither exchanges
// halos nor meets another rank, so that forcing it on this rank alone
// (an accessor a program calls on some ranks) changes no other rank's
// messages. That holds when l has no optional argument, reduces into no
// Global (a reduction meets every rank as the loop ends) and reads the
// halo of no Dat that is stale or that a loop recorded before it
// modifies (dirtied, which the caller knows), and no rank changed those
// it reads on the host. The first conditions give every rank the same
// answer (a rank that ran the recorded loops already has the Dats they
// modified stale, where another has them dirtied), so the ranks reach
// the last one together: when l reads halos, they agree on it now, as
// Agree would before the loop (one MPI_Allreduce). A false answer after
// that agreement (some rank changed a halo l reads on the host) keeps it
// for l's own Agree, when l runs at once next, after the recorded loops,
// which change none of the Dats it agreed on: l then agrees once, not
// twice, in lazy mode or not (a rank may turn lazy mode off alone, and
// would agree once). The caller drops it with ForgetAgreed once l has
// run or failed. trace is as for Agree.
func (h *Halo) AgreeAhead(l *core.Loop, dirtied map[*core.Storage]bool, trace *slog.Logger) (bool, error) {
	runsExec := l.NeedsColouring()
	reads := false
	for k := range l.Args {
		a := &l.Args[k]
		if a.Optional || a.Facts().Any(core.FactGlobal) && a.Access != core.Read {
			return false, nil
		}
		if readsHalo(a, runsExec) {
			if a.Data.HaloStale || dirtied[a.Data] {
				return false, nil
			}
			reads = true
		}
	}
	if !reads {
		return true, nil
	}
	if err := h.Agree(l, trace); err != nil {
		return false, err
	}
	if len(h.exchange) == 0 {
		return true, nil
	}
	// Exchanged by the loop's own Agree when it runs, which takes this.
	h.agreedLoop, h.agreedExchange = l, append(h.agreedExchange[:0], h.exchange...)
	h.exchange = h.exchange[:0]
	return false, nil
}

// ForgetAgreed drops the agreement AgreeAhead kept for a loop it refused,
// if that loop's Agree has not taken it (the loop failed before it ran),
// so that no later loop can take it.
func (h *Halo) ForgetAgreed() { h.agreedLoop = nil }

// RunAhead is Agree for a loop AgreeAhead accepted (or loops fused from
// such loops), as it runs: nothing to agree or exchange.
func (h *Halo) RunAhead(trace *slog.Logger) {
	h.trace = trace
	h.exchange = h.exchange[:0]
}
