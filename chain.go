package op2

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/fuse"
)

// Loop chains and lazy evaluation.
//
// A runtime records its loops instead of running them while a Chain scope
// is open or when it is lazy (Config.Lazy, OP2_LAZY=1). A recorded loop is
// checked and its program built as ParLoop does, then kept in one
// process-wide queue, in program order; the queue runs (is forced) when a
// Chain returns and before anything else takes mu: every access to data
// mu through lock in a mode that runs the queue first. So a loop that is
// recorded always runs before any host access, whatever accessor the
// program calls; the only callers of lock(forNoData), which does not
// force, are the functions the package's tests list as touching no data.

// MaxRecordedLoops is the number of recorded loops (see Chain) the
// process keeps: recording a loop when there are that many first runs
// them, so that a program in lazy mode that reads its data rarely keeps
// its loops in bounded memory.
const MaxRecordedLoops = 1024

// recordedLoop is one recorded loop: the bound loop, its runtime and the
// backend instance it was built for.
type recordedLoop struct {
	l core.Loop
	r *Runtime
	b *exec.Opened
	// p is the loop's program, found when it was recorded; it may run
	// the loop while r's executor has dropped no program since (dropped).
	p       exec.Program
	dropped uint64
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
func (e *recordedLoop) assignConst() {
	e.cmu.Lock()
	defer e.cmu.Unlock()
	copy(unsafe.Slice((*byte)(e.cset.Host), e.cset.Bytes()), e.buf)
	e.cset.Version.Add(1)
	*e.cpend--
	e.cpend = nil
}

// isLoop reports whether the entry is a loop (not a recorded assignment).
func (e *recordedLoop) isLoop() bool { return e.set == nil && e.cset == nil }

// assign makes a recorded Global.SetValue.
func (e *recordedLoop) assign() error {
	if err := e.set.HostAccess(true); err != nil {
		return err
	}
	copy(unsafe.Slice((*byte)(e.set.Host), e.size), e.val[:e.size])
	return nil
}

// release forgets the loop's data (so that nothing stays alive for it)
// but keeps the capacity of its argument list for the next loop recorded
// in the slot.
func (e *recordedLoop) release() {
	args := e.l.Args
	clear(args)
	e.l = core.Loop{Args: args[:0]}
	if e.cpend != nil { // a recorded Const.Set dropped unmade
		e.cmu.Lock()
		*e.cpend--
		e.cmu.Unlock()
	}
	e.r, e.b, e.p, e.set, e.cset, e.cmu, e.cpend = nil, nil, nil, nil, nil, nil, nil
}

// chainQueue is the process's recorded loops, in program order. Its slots
// are reused from one forcing to the next, so that a repeated chain
// allocates nothing.
type chainQueue struct {
	slots []*recordedLoop // slots[:n] hold the recorded loops
	n     int
	// failed is a recorded loop's failure that a call reporting no
	// error met (lock(forStatus)), for the next call that forces.
	failed error
	// group is the loops being fused, steps what force runs and fused
	// the fused loops, reused from one forcing to the next.
	group []*core.Loop
	steps []step
	fused []*core.Loop
}

// slot returns the next free slot, to be filled and then committed
// (Runtime.commit) or released.
func (q *chainQueue) slot() *recordedLoop {
	if q.n == len(q.slots) {
		q.slots = append(q.slots, new(recordedLoop))
	}
	return q.slots[q.n]
}

// room runs the recorded loops when there are MaxRecordedLoops of them,
// before another is recorded. Caller holds mu.
func (q *chainQueue) room() error {
	if q.n < MaxRecordedLoops {
		return nil
	}
	return q.force()
}

// force runs the recorded loops in program order and empties the queue.
// Consecutive loops that fuse (package fuse) run as one fused loop where
// the runtime's Config.Fusion says so (plan). On several MPI ranks the
// loops as they will run plan their halo exchanges first (beginChain).
// Runs of them that can run in sparse tiles (Config.Tile) do (runTiled).
// The first loop that fails stops it: the loops recorded after it are
// dropped, and the error is a *ChainError. Caller holds mu.
func (q *chainQueue) force() error {
	n := q.n
	q.n = 0 // a loop never records while the queue runs, but be sure
	q.plan(n)
	err := q.beginChain()
	defer endChain()
	for k := 0; k < len(q.steps); {
		if err != nil {
			break
		}
		if c := q.runTiled(k, n, &err); c > 0 {
			k += c
			continue
		}
		err = q.run(&q.steps[k], n)
		k++
	}
	for _, e := range q.slots[:n] {
		e.release()
	}
	for k := range q.steps {
		if f := q.steps[k].fused; f != nil {
			clear(f.Args)
			*f = core.Loop{Args: f.Args[:0], Consts: f.Consts[:0]}
		}
	}
	q.steps = q.steps[:0]
	return err
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

// plan fills q.steps for the n recorded entries: each run of loops that
// fuse (fusable) becomes one step with its fused loop and program, unless
// their kernels cannot be combined or the fused program does not build;
// every other entry is a step of its own.
func (q *chainQueue) plan(n int) {
	nf := 0
	for i := 0; i < n; {
		end := i + 1
		var f *core.Loop
		var p exec.Program
		var dropped uint64
		if q.slots[i].isLoop() {
			if j := q.fusable(i, n); j-i >= 2 {
				if nf == len(q.fused) {
					q.fused = append(q.fused, new(core.Loop))
				}
				e, l := q.slots[i], q.fused[nf]
				err := rt.proc.fuser.Fuse(l, q.group[:j-i])
				if err == nil {
					if p, err = e.r.x.Program(e.b, l); err != nil {
						rt.proc.fuser.Failed(err)
					}
				}
				if err == nil {
					f, end, dropped = l, j, e.r.x.Dropped()
					nf++
				} else {
					clear(l.Args)
				}
			}
		}
		q.steps = append(q.steps, step{i: i, end: end, fused: f, p: p, dropped: dropped})
		i = end
	}
}

// run runs step s of the n recorded entries and returns its failure as a
// *ChainError.
func (q *chainQueue) run(s *step, n int) error {
	e := q.slots[s.i]
	switch {
	case e.cset != nil:
		e.assignConst()
	case e.set != nil:
		if err := e.assign(); err != nil {
			return &ChainError{Kernel: "Global.SetValue", Set: e.set.Name, Index: s.i, Recorded: n, Err: err}
		}
	case s.fused != nil:
		p := s.p
		if e.r.x.Dropped() != s.dropped {
			p = nil // building a later step's program may have unloaded it
		}
		if err := e.r.runProgram(e.b, s.fused, p); err != nil {
			// The loops fused with the failing one ran in it: the ones
			// dropped are those after the fused loop.
			return &ChainError{Kernel: s.fused.Kernel.Name, Set: s.fused.SetName(), Index: s.end - 1, Recorded: n, Err: err}
		}
	default:
		p := e.p
		if e.r.x.Dropped() != e.dropped {
			p = nil // it may have been unloaded: find it again
		}
		if err := e.r.runProgram(e.b, &e.l, p); err != nil {
			return &ChainError{Kernel: e.l.Kernel.Name, Set: e.l.SetName(), Index: s.i, Recorded: n, Err: err}
		}
	}
	return nil
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
	return &e.l, e.r
}

// fusable returns the end of the run of recorded loops from i (of n) that
// fuse into one loop: i+1 when loop i fuses with none.
func (q *chainQueue) fusable(i, n int) int {
	e := q.slots[i]
	if !e.r.fuses(e.b) || !fuse.CanFuse(&e.l) {
		return i + 1
	}
	q.group = append(q.group[:0], &e.l)
	j := i + 1
	for ; j < n; j++ {
		f := q.slots[j]
		if len(q.group) == fuse.MaxLoops || !f.isLoop() || f.r != e.r || f.b != e.b || q.group[len(q.group)-1].Kernel.Info.Returns || !fuse.CanFuse(&f.l) || !fuse.Fusable(q.group, &f.l) ||
			!fusedWithinDeviceLimits(e.b.Name(), q.group, &f.l) {
			break
		}
		q.group = append(q.group, &f.l)
	}
	return j
}

// fuses reports whether r fuses the recorded loops it runs on backend b
// (see Config.Fusion).
func (r *Runtime) fuses(b *exec.Opened) bool {
	switch r.cfg.Fusion {
	case "on":
		return true
	case "off":
		return false
	}
	switch b.Name() {
	case "sequential", "openmp":
		lanes, _, _ := exec.ParseSIMD(r.cfg.SIMD) // checked by Configure
		return r.cfg.Tune || lanes > 0
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
		for i := range e.l.Args {
			if e.l.Args[i].Data == s {
				return true
			}
		}
	}
	return false
}

// usesConst reports whether a recorded loop's kernel uses constant c.
// Caller holds mu.
func (q *chainQueue) usesConst(c *core.Const) bool {
	for _, e := range q.slots[:q.n] {
		if e.cset == c {
			return true
		}
		for _, k := range e.l.Consts {
			if k == c {
				return true
			}
		}
	}
	return false
}

// lockMode says what taking the lock (lock) does with the loops recorded
// so far (see Chain).
type lockMode struct {
	kind lockKind
	s    *core.Storage // forStorage's
}

type lockKind uint8

const (
	lockNoData lockKind = iota
	lockData
	lockStatus
	lockCollective
	lockStorage
)

// The modes of lock.
var (
	// forNoData: the caller touches no data a loop can change (it reads
	// the configuration or counters, declares something, or records or
	// runs a loop itself, forcing what it must with forceLocked); the
	// recorded loops stay recorded.
	forNoData = lockMode{kind: lockNoData}
	// forData: an access to data, a loop that runs now, anything that
	// must see every loop issued so far: the recorded loops run first,
	// and lock returns their failure (*ChainError), after a failure
	// forStatus kept.
	forData = lockMode{kind: lockData}
	// forStatus: forData for calls that neither return data values nor
	// report errors (State, Timings, Stats, EnableTiming,
	// ResetTimings): a recorded loop's failure is kept for the next call
	// that forces, which returns it (or panics with it), instead of
	// being lost; lock returns nil.
	forStatus = lockMode{kind: lockStatus}
	// forCollective: forData for a call every rank makes at the same
	// point (see Chain under MPI).
	forCollective = lockMode{kind: lockCollective}
)

// forStorage is forData for an accessor of the Dat or Global whose
// storage is s: on several ranks it refuses to run recorded loops
// (*ChainAccessError), since the other ranks may not be running them.
func forStorage(s *core.Storage) lockMode { return lockMode{kind: lockStorage, s: s} }

// lock takes mu, the lock that serialises loops of every runtime and
// host access to data, in mode m: the one place mu is taken. It returns
// with mu held whether or not the recorded loops ran.
func lock(m lockMode) error {
	rt.proc.mu.Lock()
	switch m.kind {
	case lockData:
		return forceLocked()
	case lockStatus:
		if err := forceLocked(); err != nil && !isRefusal(err) {
			rt.proc.queue.failed = err
		}
	case lockCollective:
		return forceCollective()
	case lockStorage:
		if err := refuseForce(m.s); err != nil {
			return err
		}
		return forceLocked()
	}
	return nil
}

// unlock releases the lock lock took.
func unlock() { rt.proc.mu.Unlock() }

// forceLocked runs the recorded loops, as lock(forData) does, for a
// caller that holds mu.
func forceLocked() error {
	if rt.proc.queue.n == 0 && rt.proc.queue.failed == nil {
		return nil
	}
	if err := refuseForce(nil); err != nil {
		return err
	}
	var err error
	if rt.proc.queue.n > 0 {
		err = rt.proc.queue.force()
	}
	if kept := rt.proc.queue.failed; kept != nil {
		rt.proc.queue.failed = nil
		if err == nil {
			return kept
		}
		return errors.Join(kept, err)
	}
	return err
}

// mustForce panics with the failure of a recorded loop forced by an
// accessor that returns values but no error (as Data panics when a device
// copy fails). Call Wait first to get such a failure as an error.
func mustForce(err error) {
	if err != nil {
		panic(err)
	}
}

// ChainError reports a recorded loop (see Chain and Config.Lazy) that
// failed when it ran, after ParLoop had accepted it: a device error, a
// failure found by check mode (Config.Check), a failure to load a cached
// program. The loops recorded after it were dropped: they did not run
// and changed nothing. Err is the loop's error, as ParLoop would have
// returned it (errors.As finds a *LoopError or *CompileError in it).
type ChainError struct {
	Kernel   string // the failing loop's kernel
	Set      string // and its iteration set
	Index    int    // its position among the loops that were forced (0-based)
	Recorded int    // how many loops were forced
	Err      error
}

func (e *ChainError) Error() string {
	dropped := ""
	if n := e.Recorded - e.Index - 1; n == 1 {
		dropped = "; the loop recorded after it was dropped"
	} else if n > 1 {
		dropped = fmt.Sprintf("; the %d loops recorded after it were dropped", n)
	}
	return fmt.Sprintf("op2: recorded loop %q over set %q (%d of %d run when forced): %s%s",
		e.Kernel, e.Set, e.Index+1, e.Recorded, strings.TrimPrefix(e.Err.Error(), prefix), dropped)
}

// Unwrap returns the loop's error.
func (e *ChainError) Unwrap() error { return e.Err }

// Chain records the loops the default runtime runs while fn runs, and
// runs them when fn returns (see Runtime.Chain).
func Chain(fn func() error) error { return rt.Chain(fn) }

// Chain calls fn and records the loops runtime r is asked to run
// meanwhile (ParLoop, Loop.Compute), from any goroutine, instead of
// running them; when fn returns, the recorded loops run, in the order
// they were issued, and Chain returns fn's error and theirs (errors.Join
// when both failed). A recorded loop runs even if fn fails, as it would
// have run outside a chain.
//
// Each loop is checked and its program built when it is recorded, so
// ParLoop returns the same errors as outside a chain (a *LoopError, a
// *CompileError), and a rejected loop is not recorded. Anything that
// reads or writes data the loops may touch runs the recorded loops first
// (forces them): every accessor of Dats, Globals, Mats and their mixed
// forms and views (Data, DataRO, DataWO, Range, Gather, Zero, CopyTo,
// Sync, Value, SetValue, Mult, Solve...), Const.Set, the dumps, the hdf5
// and vtk packages, Wait, Configure, Use, the timing report, ReadStats,
// Renumber, Partition, and a loop that runs at once. A recorded loop therefore sees the Const values and the
// Globals' values of when it was issued, and the results are those of
// running each loop at once, bit for bit. A failure found only when a
// recorded loop runs (a device error, check mode) is a *ChainError,
// returned by Chain, Wait or the forcing call when it returns an error;
// accessors that return values without an error (Data, DataRO, Value,
// SetValue) panic with it, as Data panics when a device copy fails; the
// calls that return neither (State, Timings, ReadStats, EnableTiming,
// ResetTimings) keep it for the next call that forces.
//
// A slice returned by Data is the host copy itself: values written
// through it after a loop was recorded, without calling an accessor
// again, reach that loop (on device backends they reach no loop at all);
// call Data again after issuing loops, as its documentation says.
//
// Chains nest: the inner Chain runs what was recorded so far when it
// returns. If fn panics, the scope closes and the recorded loops stay
// recorded until something forces them.
//
// Chain is a scope rather than an object that is started and stopped so
// that loops can never stay recorded by mistake: PyOP2's lazy mode was
// removed because programs forgot to force its trace. The first version
// runs the loops in program order; later versions may fuse and tile them.
//
// Under MPI with several ranks Chain is collective, as loops are: every
// rank records the same loops. The recorded loops then run only where
// every rank runs them together (Chain's end, a loop that runs at once,
// the collective calls: Partition, Gather, reading dumps, Mat.Mult,
// Mat.Dense, Solve, Finalize); an accessor that would run them elsewhere,
// which a rank may call alone (Data, Value, Wait, Const.Set...), returns
// a *ChainAccessError, or panics with it, and leaves them recorded: read
// data after Chain returns. The ranks agree on the recorded loops once,
// and their halo exchanges are grouped: one message per neighbour for
// every Dat an exchange point needs (ReadHaloStats counts them). Lazy
// mode needs a single process.
func (r *Runtime) Chain(fn func() error) error {
	if fn == nil {
		return errors.New("op2: Chain: the function is nil")
	}
	lock(forNoData)
	_, err := r.proc.start()
	if err == nil {
		r.chains++
	}
	unlock()
	if err != nil {
		return err
	}
	ferr := r.chainScope(fn)
	err = lock(forCollective)
	unlock()
	switch {
	case ferr == nil:
		return err
	case err == nil:
		return ferr
	}
	return errors.Join(ferr, err)
}

// chainScope calls fn with r's chain scope open, closing it however fn
// returns.
func (r *Runtime) chainScope(fn func() error) error {
	defer func() {
		lock(forNoData)
		r.chains--
		unlock()
	}()
	return fn()
}

// recording reports whether r records its loops. Caller holds mu.
func (r *Runtime) recording() bool { return r.chains > 0 || r.cfg.Lazy }

// singleProcess returns an error naming what when this process is one of
// several MPI ranks, where loops cannot be recorded outside a Chain.
// Caller holds mu.
func (r *Runtime) singleProcess(what string) error {
	w, err := r.proc.start()
	if err != nil {
		return err
	}
	if w != nil && w.Size() > 1 {
		return fmt.Errorf("op2: %s needs a single process, and this run has %d MPI ranks (a loop recorded on every rank but forced by an accessor on some ranks only would deadlock the halo exchanges); record loops with op2.Chain instead, which runs them where every rank does", what, w.Size())
	}
	return nil
}

// record records a loop of r (ParLoop in a chain or in lazy mode): it is
// bound and its program built as when it runs at once, with the same
// errors. Caller holds mu.
func (r *Runtime) record(k *Kernel, set IterationSet, args []Arg) error {
	if err := r.reserve(); err != nil {
		return err
	}
	if ms, ok := set.(*MixedSet); ok && ms != nil {
		return r.parLoopMixed(k, ms, args)
	}
	e := rt.proc.queue.slot()
	if err := bindOver(r, r.cfg.Backend, &e.l, k, set, args); err != nil {
		e.release()
		return err
	}
	e.l.Check = r.cfg.Check
	b, err := r.currentBackend()
	if err != nil {
		e.release()
		return err
	}
	return r.commit(e, b)
}

// reserve makes room in the queue for a loop r records: an error in lazy
// mode under MPI with several ranks; the queue forced when it is full.
// Caller holds mu.
func (r *Runtime) reserve() error {
	if err := r.mayRecord(); err != nil {
		return err
	}
	return rt.proc.queue.room()
}

// commit builds the program of the loop bound in slot e (the next free
// one) for backend b and adds the loop to the queue; on error the slot is
// released. Caller holds mu.
func (r *Runtime) commit(e *recordedLoop, b *exec.Opened) error {
	p, err := r.x.Program(b, &e.l)
	if err != nil {
		e.release()
		return apiError(err)
	}
	markLooped(&e.l) // the loop holds the sets' current numbering
	e.r, e.b, e.p, e.dropped = r, b, p, r.x.Dropped()
	rt.proc.queue.n++
	r.noteRecorded()
	return nil
}
