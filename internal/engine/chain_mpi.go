package engine

import (
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
)

// Loop chains and lazy evaluation under MPI.
//
// On several ranks a chain is collective, as loops are: every rank
// records the same loops. The recorded loops must then run at the same
// point of the loop sequence on every rank, since their halo exchanges
// and reductions meet the other ranks'. They run at the points every rank
// reaches together: a chain's end, a full queue (MaxRecordedLoops), a
// loop that runs at once (another runtime's), and the collective calls
// (Lock(ForCollective)). Any other call that would run them, which a
// program may make on some ranks only, gets a *op2.ChainAccessError
// instead (refuseForce) and leaves the recorded loops recorded. The calls
// that report neither values of data nor errors (Lock(ForStatus)) then
// report what was before the recorded loops.
//
// When the recorded loops run on several ranks, dist.Halo.PlanChain
// agrees on them once and groups their halo exchanges (see package dist).
//
// Lazy mode has no point every rank reaches together: any accessor, which
// a program may call on some ranks only, forces the queue. So on several
// ranks it records only loops that meet no other rank when they run
// (dist.Halo.AgreeAhead): no halo to exchange (the ranks agree on that
// when the loop is issued, if it reads halos that are up to date), no
// reduction into a Global. Every other loop runs when issued, after the
// recorded ones, as it would without lazy mode. Forcing the queue on one
// rank then sends no message, and every rank's messages stay in program
// order: a recorded loop fuses with its neighbours (save_soln with
// adt_calc in Airfoil) and runs when something needs it, on each rank
// alone.

// mayRecord returns an error when r may not record the loop it is asked
// to run: MPI cannot start. Caller holds the lock.
func (r *Runtime) mayRecord() error {
	_, err := r.Proc.World()
	return err
}

// noteRecorded counts a loop r recorded in a chain on several ranks (any
// runtime's chain: its loops are then the chain's), and notes the Dats a
// loop recorded in lazy mode there modifies. Caller holds the lock.
func (r *Runtime) noteRecorded(l *core.Loop) {
	p := r.Proc
	switch {
	case !p.multiRank():
	case len(p.scopes) > 0:
		p.distQueued++
	default:
		if p.queueDirties == nil {
			p.queueDirties = map[*core.Storage]bool{}
		}
		for i := range l.Args {
			if l.Sig.Args[i].Facts.Any(core.FactDirtiesHalo) {
				p.queueDirties[l.Args[i].Data] = true
			}
		}
	}
}

// runsAhead reports whether loop l, bound for recording by r in lazy mode
// on several ranks (outside a chain), may stay recorded: it meets no
// other rank when it runs, whenever this rank runs it (see above). It
// answers at once on one process and while a chain of any runtime is
// open (the loop is the chain's). Caller holds the lock.
func (r *Runtime) runsAhead(l *core.Loop) (bool, error) {
	p := r.Proc
	if len(p.scopes) > 0 || !p.multiRank() {
		return true, nil
	}
	if !p.Partitioned() || l.Check || l.Extruded != nil {
		return false, nil // the loop runs now: its error, or check mode's report, at the call
	}
	for i := range l.Args {
		if a := &l.Args[i]; a.Hidden || a.Facts().Any(core.FactMat) {
			return false, nil
		}
	}
	ok, err := p.job.Halo().AgreeAhead(l, p.queueDirties, r.tracer())
	if err != nil {
		return false, p.Fatal(p.api.Internal(err))
	}
	return ok, nil
}

// runAtOnce runs the loop bound in the queue's next free slot e for r on
// b when runsAhead refused to record it, as a loop that runs when issued
// (RunNow: after the recorded loops, which every rank reaches here in
// program order; through the automatic checkpoints). The slot is
// released, and so is the agreement runsAhead made for it, which its
// run took unless it failed first. Caller holds the lock.
func (r *Runtime) runAtOnce(e *Recorded, b *exec.Opened) error {
	defer e.Release()
	if r.Proc.multiRank() && r.Proc.Partitioned() {
		defer r.Proc.job.Halo().ForgetAgreed()
	}
	return r.RunNow(b, &e.Loop)
}

// beginChain plans the halo exchanges of the steps about to run
// (runQueue), the loops as they will run (fused loops in place of those
// they fuse), when they run on several ranks; endChain ends the plan.
// Caller holds the lock.
func (p *Process) beginChain() error {
	q := &p.queue
	chained := p.distQueued
	p.distQueued = 0
	clear(p.queueDirties)
	if chained == 0 {
		return nil // one process, or loops recorded in lazy mode (runQueue set ahead)
	}
	var r *Runtime
	loops := p.chainRun.loops[:0]
	for k := range q.steps {
		l, lr := q.loop(&q.steps[k])
		if l == nil {
			continue // an assignment: no halo
		}
		if r == nil {
			r = lr
			if !p.multiRank() || !p.Partitioned() {
				return nil // the loops fail as they run (checkPartitioned)
			}
		}
		if lr.Proc != p {
			return nil
		}
		loops = append(loops, l)
	}
	p.chainRun.loops = loops
	if r == nil {
		return nil
	}
	h := p.job.Halo()
	if err := h.PlanChain(loops, r.tracer()); err != nil {
		return p.Fatal(p.api.Internal(err))
	}
	p.chainRun.h = h
	return nil
}

// endChain ends the plan beginChain made. Caller holds the lock.
func (p *Process) endChain() {
	p.ahead = false
	if p.chainRun.h != nil {
		p.chainRun.h.EndChain()
		p.chainRun.h = nil
	}
	clear(p.chainRun.loops)
	p.chainRun.loops = p.chainRun.loops[:0]
}
