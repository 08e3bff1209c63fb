package op2

import (
	"errors"
	"fmt"
	"strings"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
)

// Loop chains and lazy evaluation.
//
// A runtime records its loops instead of running them while a Chain scope
// is open or when it is lazy (Config.Lazy, OP2_LAZY=1). A recorded loop is
// checked and its program built as ParLoop does, then kept in one
// process-wide queue, in program order; the queue runs (is forced) when a
// Chain returns and before anything else takes mu: every access to data
// takes mu through lockData, which runs the queue first. So a loop that
// is recorded always runs before any host access, whatever accessor the
// program calls; the only ways to take mu without forcing are the
// functions the package's tests list as touching no data.

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
}

// release forgets the loop's data (so that nothing stays alive for it)
// but keeps the capacity of its argument list for the next loop recorded
// in the slot.
func (e *recordedLoop) release() {
	args := e.l.Args
	clear(args)
	e.l = core.Loop{Args: args[:0]}
	e.r, e.b, e.p = nil, nil, nil
}

// chainQueue is the process's recorded loops, in program order. Its slots
// are reused from one forcing to the next, so that a repeated chain
// allocates nothing.
type chainQueue struct {
	slots []*recordedLoop // slots[:n] hold the recorded loops
	n     int
	// failed is a recorded loop's failure that a call reporting no
	// error met (lockKeep), for the next call that forces.
	failed error
}

// queue is the process's recorded loops (under mu).
var queue chainQueue

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
// The first loop that fails stops it: the loops recorded after it are
// dropped, and the error is a *ChainError. Caller holds mu.
func (q *chainQueue) force() error {
	n := q.n
	q.n = 0 // a loop never records while the queue runs, but be sure
	var err error
	for i := 0; i < n; i++ {
		e := q.slots[i]
		if err == nil {
			if k := q.runTiled(i, n, &err); k > 0 {
				i += k - 1 // their slots are released
				continue
			}
			p := e.p
			if e.r.x.Dropped() != e.dropped {
				p = nil // it may have been unloaded: find it again
			}
			if lerr := e.r.runProgram(e.b, &e.l, p); lerr != nil {
				err = &ChainError{Kernel: e.l.Kernel.Name, Set: e.l.SetName(), Index: i, Recorded: n, Err: lerr}
			}
		}
		e.release()
	}
	return err
}

// lockData takes mu for an access to data (host access, a loop that runs
// now, anything that must see every loop issued so far), running the
// recorded loops first. It returns with mu held whether or not they ran;
// the error is a recorded loop's failure (*ChainError).
// A failure kept by lockKeep is returned too, first.
func lockData() error {
	mu.Lock()
	return forceLocked()
}

// forceLocked is lockData for a caller that holds mu.
func forceLocked() error {
	if queue.n == 0 && queue.failed == nil {
		return nil
	}
	var err error
	if queue.n > 0 {
		err = queue.force()
	}
	if kept := queue.failed; kept != nil {
		queue.failed = nil
		if err == nil {
			return kept
		}
		return errors.Join(kept, err)
	}
	return err
}

// lockKeep is lockData for calls that neither return data values nor
// report errors (State, Timings, Stats, EnableTiming, ResetTimings): a
// recorded loop's failure is kept for the next call that forces, which
// returns it (or panics with it), instead of being lost.
func lockKeep() {
	if err := lockData(); err != nil {
		queue.failed = err
	}
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
// Chains and lazy mode need a single process: under MPI with more than one
// rank Chain returns an error and runs nothing (forcing at an accessor
// called on some ranks only would deadlock the halo exchanges).
func (r *Runtime) Chain(fn func() error) error {
	if fn == nil {
		return errors.New("op2: Chain: the function is nil")
	}
	mu.Lock()
	err := r.singleProcess("Chain")
	if err == nil {
		r.chains++
	}
	mu.Unlock()
	if err != nil {
		return err
	}
	ferr := r.chainScope(fn)
	err = lockData()
	mu.Unlock()
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
		mu.Lock()
		r.chains--
		mu.Unlock()
	}()
	return fn()
}

// recording reports whether r records its loops. Caller holds mu.
func (r *Runtime) recording() bool { return r.chains > 0 || r.cfg.Lazy }

// singleProcess returns an error naming what when this process is one of
// several MPI ranks, where loops cannot be recorded. Caller holds mu.
func (r *Runtime) singleProcess(what string) error {
	w, err := r.dist.start()
	if err != nil {
		return err
	}
	if w != nil && w.Size() > 1 {
		return fmt.Errorf("op2: %s: loop chains and lazy mode need a single process, and this run has %d MPI ranks (a loop recorded on every rank but forced by an accessor on some ranks only would deadlock the halo exchanges)", what, w.Size())
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
	e := queue.slot()
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

// reserve makes room in the queue for a loop r records: an error under
// MPI with several ranks; the queue forced when it is full. Caller holds
// mu.
func (r *Runtime) reserve() error {
	if err := r.singleProcess(r.recordingWhat()); err != nil {
		return err
	}
	return queue.room()
}

// recordingWhat names what makes r record, for messages.
func (r *Runtime) recordingWhat() string {
	if r.chains > 0 {
		return "Chain"
	}
	return "lazy mode (Config.Lazy, OP2_LAZY)"
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
	queue.n++
	return nil
}
