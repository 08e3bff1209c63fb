package engine

// Loop chains under MPI.
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
// Lazy mode has no point every rank reaches together (any accessor may
// force it), so it stays refused on several ranks.

// mayRecord returns an error when r may not record the loop it is asked
// to run: lazy mode outside a chain on several MPI ranks. Caller holds
// the lock.
func (r *Runtime) mayRecord() error {
	if r.chains > 0 {
		_, err := r.Proc.World()
		return err
	}
	return r.Proc.SingleProcess("lazy mode (Config.Lazy, OP2_LAZY)")
}

// noteRecorded counts a loop r recorded. Caller holds the lock.
func (r *Runtime) noteRecorded() {
	if r.Proc.multiRank() {
		r.Proc.distQueued++
	}
}

// beginChain plans the halo exchanges of the steps about to run
// (runQueue), the loops as they will run (fused loops in place of those
// they fuse), when they run on several ranks; endChain ends the plan.
// Caller holds the lock.
func (p *Process) beginChain() error {
	q := &p.queue
	p.distQueued = 0
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
	if p.chainRun.h != nil {
		p.chainRun.h.EndChain()
		p.chainRun.h = nil
	}
	clear(p.chainRun.loops)
	p.chainRun.loops = p.chainRun.loops[:0]
}
