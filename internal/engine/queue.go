package engine

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/fuse"
)

// Loop chains and lazy evaluation.
//
// A runtime records its loops instead of running them while a chain scope
// is open or when it is lazy (Config.Lazy: by default on the host
// backends; OP2_LAZY; on several MPI ranks only the loops chain_mpi.go
// says). A recorded loop is
// checked and its program built as a loop that runs at once, then kept in
// one process-wide queue, in program order; the queue runs (is forced)
// when a chain ends and before anything else takes the lock: every access
// to data takes it through Lock in a mode that runs the queue first. So a
// loop that is recorded always runs before any host access, whatever
// accessor the program calls; the only callers of Lock(ForNoData), which
// does not force, are the functions the root package's tests list as
// touching no data.

// MaxRecordedLoops is the number of recorded loops the process keeps:
// recording a loop when there are that many first runs them (see
// op2.MaxRecordedLoops).
const MaxRecordedLoops = 1024

// Recorded is one recorded loop: the bound loop, its runtime and the
// backend instance it was built for.
type Recorded struct {
	// Loop is the bound loop.
	Loop core.Loop
	r    *Runtime
	b    *exec.Opened
	// p is the loop's program, found when it was recorded; it may run
	// the loop while r's executor has dropped no program since (dropped).
	p       exec.Program
	dropped uint64
	// inline is the room for arguments the slot was made with (grow),
	// until a loop with more arguments moves its list elsewhere: Release
	// then clears it, once, since its first arguments stayed there.
	inline *[slotArgs]core.Arg
	// set, when not nil, makes the entry no loop but a recorded
	// Global.SetValue: the Global's first value becomes val[:size].
	set  *core.Storage
	val  [8]byte
	size int
	// cset, when not nil, makes the entry a recorded Const.Set: the
	// constant's values become buf. cmu is the Const's lock, and cpend
	// its count of recorded assignments not yet made or dropped (nil
	// once this one is).
	cset  *core.Const
	cmu   *sync.Mutex
	cpend *int
	buf   []byte
}

// assignConst makes a recorded Const.Set.
func (e *Recorded) assignConst() {
	e.cmu.Lock()
	defer e.cmu.Unlock()
	copy(unsafe.Slice((*byte)(e.cset.Host), e.cset.Bytes()), e.buf)
	e.cset.Version.Add(1)
	*e.cpend--
	e.cpend = nil
}

// isLoop reports whether the entry is a loop (not a recorded assignment).
func (e *Recorded) isLoop() bool { return e.set == nil && e.cset == nil }

// assign makes a recorded Global.SetValue, which replaces the Global's
// whole value (core.Storage.HostOverwrite).
func (e *Recorded) assign() error {
	if err := e.set.HostOverwrite(); err != nil {
		return err
	}
	copy(unsafe.Slice((*byte)(e.set.Host), e.size), e.val[:e.size])
	return nil
}

// Release forgets the loop's data (so that nothing stays alive for it)
// but keeps the capacity of its argument list for the next loop recorded
// in the slot.
func (e *Recorded) Release() {
	args := e.Loop.Args
	clear(args)
	if e.inline != nil && (cap(args) == 0 || &args[:1][0] != &e.inline[0]) {
		// The list outgrew the slot's room: the loop's first arguments
		// were bound there before append moved them, and would keep
		// their data alive for good.
		clear(e.inline[:])
		e.inline = nil
	}
	e.Loop = core.Loop{Args: args[:0]}
	if e.cpend != nil { // a recorded Const.Set dropped unmade
		e.cmu.Lock()
		*e.cpend--
		e.cmu.Unlock()
	}
	e.r, e.b, e.p, e.set, e.cset, e.cmu, e.cpend = nil, nil, nil, nil, nil, nil, nil
}

// chainQueue is the process's recorded loops, in program order. Its slots
// are reused from one forcing to the next, so that a repeated chain
// allocates nothing; they are made in blocks (grow), so that a queue
// first growing to depth n allocates O(log n) times.
type chainQueue struct {
	// slots[:n] hold the recorded loops. Each points into a block of
	// Recorded values that never moves (callers keep a slot's address
	// while they fill it); only this slice of pointers is reallocated.
	slots []*Recorded
	n     int
	// onlyFindings says that the last run (runQueue) ran every loop and
	// its error holds check mode findings alone, on several ranks.
	onlyFindings bool
	// failed is a recorded loop's failure that a call reporting no
	// error met (lock(forStatus)), for the next call that forces.
	failed error
	// group is the loops being fused, progs their programs, steps what
	// force runs and fused the fused loops, reused from one forcing to
	// the next.
	group []*core.Loop
	progs []exec.Program
	steps []step
	fused []*core.Loop
}

// slot returns the next free slot, to be filled and then committed
// (Runtime.Commit) or released.
func (q *chainQueue) slot() *Recorded {
	if q.n == len(q.slots) {
		q.grow()
	}
	return q.slots[q.n]
}

const (
	// slotBlock is the fewest slots the queue makes at once.
	slotBlock = 8
	// slotArgs is the number of arguments each new slot has room for
	// (a loop passing more makes its own list, once, kept by the slot).
	slotArgs = 4
)

// slotMem is a slot and the room for its arguments, side by side as
// when each slot's list was made by its first loop (a queue's run reads
// both).
type slotMem struct {
	e    Recorded
	args [slotArgs]core.Arg
}

// grow adds as many slots as the queue has (at least slotBlock, and no
// more than reach MaxRecordedLoops once that many are wanted) as one
// block, each slot with room for slotArgs arguments, so that the queue
// doubles in one allocation, and its pointer slice grows once.
func (q *chainQueue) grow() {
	k := max(len(q.slots), slotBlock)
	if have := len(q.slots); have < MaxRecordedLoops && have+k > MaxRecordedLoops {
		k = MaxRecordedLoops - have
	}
	block := make([]slotMem, k)
	q.slots = slices.Grow(q.slots, k)
	for i := range block {
		// A full slice expression: a list appended past its room is
		// reallocated, never spilling into the next slot.
		m := &block[i]
		m.e.Loop.Args, m.e.inline = m.args[:0:slotArgs], &m.args
		q.slots = append(q.slots, &m.e)
	}
}

// room runs the recorded loops when there are MaxRecordedLoops of them,
// before another is recorded. Caller holds the lock.
func (p *Process) room() error {
	q := &p.queue
	if q.n < MaxRecordedLoops {
		return nil
	}
	// Check mode findings of a chain's loops on several ranks wait for
	// its end: the loop asking for room is recorded, as on the ranks
	// that found nothing.
	return p.keepFindings(p.runQueue())
}

// keepFindings returns err, the error of a run of the queue (runQueue),
// or nil when the run was a chain's on several ranks (a chain scope is
// open), which ran every loop with check mode findings alone on this
// rank: the findings are kept for the chain's end (TakeFindings), so that
// the call that ran them (a loop asking for room, a collective call) goes
// on as on the ranks that found nothing. An error it returns is also
// given to the chain scopes open (ChainScope), whose loops they may be,
// whatever call ran them. Caller holds the lock.
func (p *Process) keepFindings(err error) error {
	if err == nil || !p.queue.onlyFindings || len(p.scopes) == 0 {
		if err != nil {
			for _, s := range p.scopes {
				if s.failed == nil {
					s.failed = err
				}
			}
		}
		return err
	}
	if p.kept == nil {
		p.kept = err
	} else {
		p.kept = errors.Join(p.kept, err)
	}
	return nil
}

// TakeFindings returns err with the findings keepFindings kept: a
// chain's end calls it, a point every rank reaches together with nothing
// collective after it (an inner chain's end too). Findings kept by a
// chain whose function panicked wait for the next chain's end. Caller
// holds the lock.
func (p *Process) TakeFindings(err error) error {
	if p.kept == nil {
		return err
	}
	kept := p.kept
	p.kept = nil
	if err == nil {
		return kept
	}
	return errors.Join(kept, err)
}

// runQueue runs the recorded loops in program order and empties the queue.
// Consecutive loops that fuse (package fuse) run as one fused loop where
// the runtime's Config.Fusion says so (plan). On several MPI ranks the
// loops as they will run plan their halo exchanges first (beginChain).
// Runs of them that can run in sparse tiles (Config.Tile) do (runTiled).
// The first loop that fails stops it: the loops recorded after it are
// dropped, and the error is a *op2.ChainError; but a check mode finding
// in a chain on several ranks lets them run (RanAfter; keepFindings).
// Caller holds the lock.
func (p *Process) runQueue() error {
	q := &p.queue
	n := q.n
	q.n = 0 // a loop never records while the queue runs, but be sure
	// A Go panic on the way (a logger's handler, a bug) leaves the queue
	// empty and its slots released, and the next call that forces gets
	// an error saying which loops may not have run: the panic goes on.
	running := true
	defer p.endRun(n, &running)
	// On several ranks, loops recorded in lazy mode agreed when they
	// were issued and send nothing (chain_mpi.go); a chain's did not.
	p.ahead = p.multiRank() && p.distQueued == 0
	p.plan(n)
	err := p.beginChain() // endRun ends it
	var finding error     // the first check mode finding let through (letThrough), at entry found
	found := 0
	for k := 0; k < len(q.steps); {
		if err != nil {
			break
		}
		if c := p.runTiled(k, n, &err); c > 0 {
			k += c
			continue
		}
		if err = p.runStep(&q.steps[k], n); err != nil && p.letThrough() {
			if finding == nil {
				finding, found = err, q.steps[k].i
			}
			err = nil
		}
		k++
	}
	q.onlyFindings = err == nil && finding != nil
	if finding != nil {
		err = p.findingsError(found, n, finding, err)
	}
	if err != nil && p.ahead {
		// Loops recorded in lazy mode on several ranks: those dropped
		// after the failure ran on the ranks where none failed, so the
		// Dats they modify have stale halos there; here too, so that
		// every rank takes the next loop's decisions alike (runsAhead).
		for _, e := range q.slots[:n] {
			for i := range e.Loop.Args { // none for an assignment
				if e.Loop.Sig.Args[i].Facts.Any(core.FactDirtiesHalo) {
					e.Loop.Args[i].Data.HaloStale = true
				}
			}
		}
	}
	for _, e := range q.slots[:n] {
		e.Release()
	}
	for k := range q.steps {
		if f := q.steps[k].fused; f != nil {
			clear(f.Args)
			*f = core.Loop{Args: f.Args[:0], Consts: f.Consts[:0]}
		}
	}
	q.steps = q.steps[:0]
	running = false
	return err
}

// endRun, deferred by runQueue (one defer: each costs on every forced
// loop), ends the chain's run (endChain) and cleans up after a Go panic
// while the n recorded entries ran (*running still set): the slots
// released, the steps dropped, and an error kept for the next call that
// forces.
func (p *Process) endRun(n int, running *bool) {
	p.endChain()
	if !*running {
		return
	}
	q := &p.queue
	first := ""
	for _, e := range q.slots[:n] {
		if e.isLoop() {
			first = ": the first " + e.Loop.Name()
			break
		}
	}
	for _, e := range q.slots[:n] {
		e.Release()
	}
	q.steps = q.steps[:0]
	// A failure kept before (ForStatus) stays, beside the panic's.
	q.failed = errors.Join(q.failed, p.api.Internal(fmt.Errorf("a Go panic while the recorded loops ran (%d recorded%s): some of them may not have run, and the data they modify may be stale", n, first)))
}

// step is what the queue runs for recorded entries [i, end): one loop or
// assignment (end = i+1), or loops fused into fused, with its program.
type step struct {
	i, end int
	fused  *core.Loop
	p      exec.Program
	// dropped is the executor's count of dropped programs when p was
	// found: p may run the fused loop only while it is unchanged.
	dropped uint64
}

// letThrough reports whether a step's failure is a check mode finding
// about a loop that ran to its end (runChecked sets checkFound) in a
// chain on several ranks: the ranks that found nothing run the loops
// after it, whose exchanges and reductions meet this rank's, so this
// rank runs them too, and reports the first finding after
// (findingsError). Check mode loops are neither fused nor tiled. Caller
// holds the lock.
func (p *Process) letThrough() bool {
	found := p.checkFound
	p.checkFound = false
	return found && p.multiRank() && !p.ahead
}

// findingsError is the error of a run of the n recorded entries that let
// check mode findings through, the first (finding, a *op2.ChainError) at
// entry at, and ended with err: nil, or a later failure, which dropped
// the loops after it.
func (p *Process) findingsError(at, n int, finding, err error) error {
	e := p.queue.slots[at]
	ce := p.chainErrorRan(e.Loop.Kernel.Name, e.Loop.SetName(), at, n, true, errors.Unwrap(finding))
	if err != nil {
		return errors.Join(ce, err)
	}
	return ce
}

// plan fills q.steps for the n recorded entries: each run of loops that
// fuse (fusable) becomes one step with its fused loop and program, unless
// their kernels cannot be combined, the fused program does not build or
// is being built in the background (fusedProgram), or it would combine a
// loop's terms in another order (keepsOrder); every other entry is a
// step of its own.
func (p *Process) plan(n int) {
	q := &p.queue
	nf := 0
	for i := 0; i < n; {
		end := i + 1
		var f *core.Loop
		var prog exec.Program
		var dropped uint64
		if q.slots[i].isLoop() && i+1 < n { // a last loop fuses with none
			if j := p.fusable(i, n); j-i >= 2 {
				if nf == len(q.fused) {
					q.fused = append(q.fused, new(core.Loop))
				}
				e, l := q.slots[i], q.fused[nf]
				err := p.fuser.Fuse(l, q.group[:j-i])
				if err == nil {
					err = p.fuser.FailedOn(e.b.ID)
				}
				if err == nil {
					if prog, err = e.r.fusedProgram(e.b, l); err != nil {
						p.fuser.Failed(e.b.ID, err)
					}
				}
				// prog is nil while it is built in the background.
				if err == nil && prog != nil && p.keepsOrder(i, j, l, prog) {
					f, end, dropped = l, j, e.r.X.Dropped()
					nf++
				} else {
					prog = nil
					clear(l.Args)
				}
			}
		}
		q.steps = append(q.steps, step{i: i, end: end, fused: f, p: prog, dropped: dropped})
		i = end
	}
}

// keepsOrder reports whether fused, the recorded loops [i, j) fused,
// run by program fp, combines the terms of each loop's order-sensitive
// results in the order the loop has alone, as it must to give the same
// bits (exec.Executor.KeepsOrder). The loops' programs, found when they
// were recorded, say how they would run; a failure to plan them is one
// to fuse.
func (p *Process) keepsOrder(i, j int, fused *core.Loop, fp exec.Program) bool {
	q := &p.queue
	q.progs = q.progs[:0]
	for _, e := range q.slots[i:j] {
		q.progs = append(q.progs, e.p)
	}
	e := q.slots[i]
	// A chain's loops on several ranks fuse alike on every rank (its
	// agreement names the fused loops), whatever each rank's plans.
	kept, err := e.r.X.KeepsOrder(e.b, fused, fp, q.group[:j-i], q.progs, p.multiRank() && p.distQueued > 0)
	clear(q.progs)
	return err == nil && kept
}

// runStep runs step s of the n recorded entries and returns its failure as a
// *op2.ChainError.
func (p *Process) runStep(s *step, n int) error {
	q := &p.queue
	e := q.slots[s.i]
	switch {
	case e.cset != nil:
		e.assignConst()
	case e.set != nil:
		if err := e.assign(); err != nil {
			return p.chainError("Global.SetValue", e.set.Name, s.i, n, err)
		}
	case s.fused != nil:
		prog := s.p
		if e.r.X.Dropped() != s.dropped {
			prog = nil // building a later step's program may have unloaded it
		}
		if err := e.r.RunProgram(e.b, s.fused, prog); err != nil {
			if exec.NothingRan(err) && e.r.X.Halo == nil {
				// Nothing of it ran (its program, or the binding or
				// allocation of its data, failed): its loops run one
				// by one, so that those before the one that fails
				// alone run, and the error names that one, as without
				// fusion. Under MPI the ranks must take the same steps.
				for i := s.i; i < s.end; i++ {
					if err := p.runStep(&step{i: i, end: i + 1}, n); err != nil {
						return err
					}
				}
				return nil
			}
			// The loops fused with the failing one ran in it: the ones
			// dropped are those after the fused loop.
			return p.chainError(s.fused.Kernel.Name, s.fused.SetName(), s.end-1, n, err)
		}
	default:
		prog := e.p
		if e.r.X.Dropped() != e.dropped {
			prog = nil // it may have been unloaded: find it again
		}
		if err := e.r.RunProgram(e.b, &e.Loop, prog); err != nil {
			return p.chainError(e.Loop.Kernel.Name, e.Loop.SetName(), s.i, n, err)
		}
	}
	return nil
}

// chainError is the *op2.ChainError of the failure err of recorded entry
// at of n, named kernel over set: its position among the recorded loops
// (for an assignment, the position of the loop before it) and their
// number, the assignments (SetValue, Const.Set) among the entries not
// counted.
func (p *Process) chainError(kernel, set string, at, n int, err error) error {
	return p.chainErrorRan(kernel, set, at, n, false, err)
}

// chainErrorRan is chainError, saying whether the loops recorded after
// the failing one ran (ranAfter) rather than being dropped.
func (p *Process) chainErrorRan(kernel, set string, at, n int, ranAfter bool, err error) error {
	loops := func(to int) int {
		k := 0
		for _, e := range p.queue.slots[:to] {
			if e.isLoop() {
				k++
			}
		}
		return k
	}
	index := loops(at)
	if !p.queue.slots[at].isLoop() {
		index-- // an assignment: the loop before it
	}
	return p.api.Chain(kernel, set, index, loops(n), ranAfter, err)
}

// loop is the loop step s runs, or nil for an assignment.
func (q *chainQueue) loop(s *step) (*core.Loop, *Runtime) {
	e := q.slots[s.i]
	switch {
	case !e.isLoop():
		return nil, nil
	case s.fused != nil:
		return s.fused, e.r
	}
	return &e.Loop, e.r
}

// fusable returns the end of the run of recorded loops from i (of n) that
// fuse into one loop: i+1 when loop i fuses with none.
func (p *Process) fusable(i, n int) int {
	q := &p.queue
	e := q.slots[i]
	if !e.r.fuses(e.b) || !fuse.CanFuse(&e.Loop) {
		return i + 1
	}
	q.group = append(q.group[:0], &e.Loop)
	j := i + 1
	for ; j < n; j++ {
		f := q.slots[j]
		if len(q.group) == fuse.MaxLoops || !f.isLoop() || f.r != e.r || f.b != e.b || q.group[len(q.group)-1].Kernel.Info.Returns || !fuse.CanFuse(&f.Loop) || !fuse.Fusable(q.group, &f.Loop) ||
			!fusedWithinDeviceLimits(e.b.Name(), q.group, &f.Loop) {
			break
		}
		q.group = append(q.group, &f.Loop)
	}
	return j
}

// fuses reports whether r fuses the recorded loops it runs on backend b
// (see Config.Fusion).
func (r *Runtime) fuses(b *exec.Opened) bool {
	switch r.Cfg.Fusion {
	case "on":
		return true
	case "off":
		return false
	}
	switch b.Name() {
	case "sequential", "openmp":
		// On lanes loops fuse, and the fused loops run in sparse
		// tiles where tiles are asked for (Config.Tile) or pay
		// (exec.TileAuto).
		lanes, _, _ := exec.ParseSIMD(r.Cfg.SIMD) // checked by Configure
		return r.Cfg.Tune || lanes != 0
	}
	return true
}

// passes reports whether a recorded loop passes storage s. Caller holds
// mu.
func (q *chainQueue) passes(s *core.Storage) bool {
	for _, e := range q.slots[:q.n] {
		if e.set == s {
			return true
		}
		for i := range e.Loop.Args {
			if e.Loop.Args[i].Data == s {
				return true
			}
		}
	}
	return false
}

// usesConst reports whether a recorded loop's kernel uses constant c.
// Caller holds the lock.
func (q *chainQueue) usesConst(c *core.Const) bool {
	for _, e := range q.slots[:q.n] {
		if e.cset == c {
			return true
		}
		for _, k := range e.Loop.Consts {
			if k == c {
				return true
			}
		}
	}
	return false
}

// Slot returns the next free slot of the queue, for a loop to be bound
// into (Recorded.Loop) and then committed (Runtime.Commit) or released.
// Caller holds the lock.
func (p *Process) Slot() *Recorded { return p.queue.slot() }

// Recorded is the number of loops (and recorded assignments) waiting in
// the queue. Caller holds the lock.
func (p *Process) Recorded() int { return p.queue.n }

// Reserve makes room in the queue for a loop r records: an error when
// MPI cannot start; the queue forced when it is full. Caller holds the
// lock.
func (r *Runtime) Reserve() error {
	if err := r.mayRecord(); err != nil {
		return err
	}
	return r.Proc.room()
}

// Commit builds the program of the loop bound in slot e (the next free
// one) for backend b and adds the loop to the queue; on error the slot is
// released. A loop lazy mode may not record on several MPI ranks runs
// now instead (runsAhead), its program found as it runs. Caller holds
// the lock.
func (r *Runtime) Commit(e *Recorded, b *exec.Opened) error {
	if r.Proc.mpiEnded() {
		err := r.Proc.endedError(loopName(&e.Loop))
		e.Release()
		return err
	}
	if ahead, err := r.runsAhead(&e.Loop); err != nil {
		e.Release()
		return err
	} else if !ahead {
		return r.runAtOnce(e, b)
	}
	p, err := r.X.Program(b, &e.Loop)
	if err != nil {
		e.Release()
		return r.Proc.api.Internal(err)
	}
	MarkLooped(&e.Loop) // the loop holds the sets' current numbering
	e.r, e.b, e.p, e.dropped = r, b, p, r.X.Dropped()
	r.Proc.queue.n++
	r.noteRecorded(&e.Loop)
	return nil
}

// Assignment says how a caller assigns a value that recorded loops may
// use (RecordConst, RecordGlobal).
type Assignment uint8

const (
	// AssignNow: no recorded loop uses the value; the caller assigns it
	// at once, without forcing them.
	AssignNow Assignment = iota
	// AssignRecorded: the assignment is recorded after the loops that
	// use the value, which see the value of when they were issued.
	AssignRecorded
	// AssignForced: the caller forces the recorded loops (the queue is
	// empty, full or keeps a failure) and then assigns.
	AssignForced
)

// RecordConst records the assignment of values (c's bytes) to the
// constant c, whose lock is mu and count of recorded assignments not yet
// made pending, when a recorded loop uses c. Caller holds the lock.
func (p *Process) RecordConst(c *core.Const, mu *sync.Mutex, pending *int, values []byte) Assignment {
	q := &p.queue
	if q.failed != nil {
		return AssignForced
	}
	a := q.assignment(q.usesConst(c))
	if a == AssignRecorded {
		e := q.slot()
		e.cset, e.cmu, e.cpend = c, mu, pending
		e.buf = append(e.buf[:0], values...)
		q.n++
	}
	return a
}

// assignment is how an assignment is made with the queue as it is (see
// Assignment), used saying whether a recorded loop uses the value: the
// caller records it when the answer is AssignRecorded.
func (q *chainQueue) assignment(used bool) Assignment {
	switch {
	case q.n == 0:
		return AssignForced
	case !used:
		return AssignNow // even with the queue full: nothing need run
	case q.n >= MaxRecordedLoops:
		return AssignForced
	}
	return AssignRecorded
}

// RecordGlobal records the assignment of the value whose bytes are v to
// the Global (dim 1) whose storage is s, when a recorded loop passes it.
// Caller holds the lock.
func (p *Process) RecordGlobal(s *core.Storage, v []byte) Assignment {
	q := &p.queue
	a := q.assignment(q.passes(s))
	if a == AssignRecorded {
		e := q.slot()
		e.set = s
		e.size = copy(e.val[:], v)
		q.n++
	}
	return a
}

// TiledDistributedRuns is the number of tiled runs of recorded loops
// under MPI so far (tests).
func (p *Process) TiledDistributedRuns() int { return p.tiling.distributed }
