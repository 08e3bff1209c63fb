package op2

import (
	"errors"
	"fmt"
	"strings"

	"github.com/goop2/op2/internal/engine"
)

// Loop chains and lazy evaluation.
//
// A runtime records its loops instead of running them while a Chain scope
// is open or when it is lazy (Config.Lazy: by default on the host
// backends; OP2_LAZY). A recorded loop is
// checked and its program built as ParLoop does, then kept in one
// process-wide queue, in program order; the queue runs (is forced) when a
// Chain returns and before anything else takes the lock: every access to
// data takes it through lock in a mode that runs the queue first (the
// machinery is internal/engine's queue.go). So a loop that is
// recorded always runs before any host access, whatever accessor the
// program calls; the only callers of lock(forNoData), which does not
// force, are the functions the package's tests list as touching no data.

// MaxRecordedLoops is the number of recorded loops (see Chain) the
// process keeps: recording a loop when there are that many first runs
// them, so that a program in lazy mode that reads its data rarely keeps
// its loops in bounded memory.
const MaxRecordedLoops = 1024

// ChainError reports a recorded loop (see Chain and Config.Lazy) that
// failed when it ran, after ParLoop had accepted it: a device error, a
// failure found by check mode (Config.Check), a failure to load a cached
// program. The loops recorded after it were dropped: they did not run
// and changed nothing; so were the Global.SetValue and Const.Set
// assignments recorded after it: the Globals and Consts keep the values
// they had when it failed. Err is the loop's error, as ParLoop would have
// returned it (errors.As finds a *LoopError or *CompileError in it).
type ChainError struct {
	Kernel   string // the failing loop's kernel
	Set      string // and its iteration set
	Index    int    // its position among the loops that were forced (0-based; for a failed SetValue, the loop's before it, -1 when none)
	Recorded int    // how many loops were forced (SetValue and Const.Set assignments not counted)
	// RanAfter says that the loops recorded after it ran rather than
	// being dropped: in a Chain on several MPI ranks, after a check mode
	// finding about a loop that ran to its end (the ranks that found
	// nothing run them, and their exchanges meet this rank's).
	RanAfter bool
	Err      error
}

func (e *ChainError) Error() string {
	dropped := ""
	if n := e.Recorded - e.Index - 1; e.RanAfter && n > 0 {
		dropped = "; the loops recorded after it ran, as on the other ranks"
	} else if n == 1 {
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
// have run outside a chain. Recorded loops that another call ran while
// the chain was open (an accessor, or a loop of an eager runtime, from
// another goroutine: the queue is the process's) give their failure to
// that call and to Chain both.
//
// Each loop is checked and its program built when it is recorded, so
// ParLoop returns the same errors as outside a chain (a *LoopError, a
// *CompileError), and a rejected loop is not recorded. Anything that
// reads or writes data the loops may touch runs the recorded loops first
// (forces them): every accessor of Dats, Globals, Mats and their mixed
// forms and views (Data, DataRO, DataWO, Range, Gather, Zero, CopyTo,
// Sync, Value, Mult, Solve...), the dumps, the hdf5 and vtk packages,
// Wait, Configure, Use, the timing report, ReadStats, Renumber,
// Partition, and a loop that runs at once. Global.SetValue and Const.Set
// run no recorded loop: they set the value at once when no recorded loop
// uses it, else record the assignment after the loops that do. A recorded
// loop therefore sees the Const values and the Globals' values of when it
// was issued, and the results are those of running each loop at once,
// bit for bit, but for sparse tiles on several threads (Config.Tile),
// where increments may reach an element in another order. A failure found only when a
// recorded loop runs (a device error, check mode) is a *ChainError,
// returned by Chain, Wait or the forcing call when it returns an error;
// accessors that return values without an error (Data, DataRO, Value,
// SetValue) panic with it, as Data panics when a device copy fails; the
// calls that return neither (State, Timings, ReadStats, EnableTiming,
// ResetTimings) keep it for the next call that forces.
//
// A slice returned by Data (a Dat's or a Global's) is the host copy
// itself: what is written through it after a loop was issued, without
// calling an accessor again, may reach that loop or not, depending on
// the backend and on whether the loop was recorded; call Data again
// after issuing loops, as its documentation says, or use SetValue.
//
// Chains nest: the inner Chain runs what was recorded so far when it
// returns. If fn panics, the scope closes and the recorded loops stay
// recorded until something forces them.
//
// Chain is a scope rather than an object that is started and stopped so
// that loops can never stay recorded by mistake: PyOP2's lazy mode was
// removed because programs forgot to force its trace. The loops run in
// program order, consecutive ones fused into one loop and run in sparse
// tiles where Config.Fusion and Config.Tile say
// (docs/guide/loops-and-chains.md).
//
// Under MPI with several ranks Chain is collective, as loops are: every
// rank records the same loops. The recorded loops then run only where
// every rank runs them together (Chain's end, a loop that runs at once,
// the collective calls: Partition, Gather, reading dumps, Mat.Mult,
// Mat.Dense, Solve, Finalize); an accessor that would run them elsewhere,
// which a rank may call alone (Data, Value, Wait...), returns
// a *ChainAccessError, or panics with it, and leaves them recorded: read
// data after Chain returns. The ranks agree on the recorded loops once,
// and their halo exchanges are grouped: one message per neighbour for
// every Dat an exchange point needs (ReadHaloStats counts them). While
// a Chain is open, the loops every runtime records are the chain's.
// Lazy mode on several ranks records only loops that send nothing when
// they run; a Chain first runs those.
func (r *Runtime) Chain(fn func() error) error {
	if fn == nil {
		return errors.New("op2: Chain: the function is nil")
	}
	// Each lock is released by a defer: a panic (r nil) must not leave
	// it held, which would stop every later call.
	scope, err := func() (*engine.ChainScope, error) {
		lock(forNoData, "Runtime.Chain")
		defer unlock()
		return r.e.OpenChain()
	}()
	if err != nil {
		return err
	}
	var failed error // the chain's loops' failure, where another call forced them
	ferr := r.chainScope(scope, &failed, fn)
	err = func() error {
		err := lock(forCollective, "Runtime.Chain")
		defer unlock()
		return rt.proc.TakeFindings(err) // check mode findings kept on several ranks
	}()
	if failed != nil && (errors.Is(ferr, failed) || errors.Is(err, failed)) {
		failed = nil // fn returned it, or the end ran them
	}
	var errs []error
	for _, e := range []error{ferr, failed, err} {
		if e != nil {
			errs = append(errs, e)
		}
	}
	if len(errs) == 1 {
		return errs[0] // as it is, for callers comparing it
	}
	return errors.Join(errs...)
}

// chainScope calls fn with r's chain scope open, closing it however fn
// returns; *failed receives the failure of the recorded loops that ran
// while it was open.
func (r *Runtime) chainScope(scope *engine.ChainScope, failed *error, fn func() error) error {
	defer func() {
		lock(forNoData, "Runtime.Chain")
		defer unlock()
		*failed = r.e.CloseChain(scope)
	}()
	return fn()
}

// record records a loop of r (ParLoop in a chain or in lazy mode): it is
// bound and its program built as when it runs at once, with the same
// errors. Caller holds the lock.
func (r *Runtime) record(k *Kernel, set IterationSet, args []Arg) error {
	if err := r.e.Reserve(); err != nil {
		return err
	}
	if ms, ok := set.(*MixedSet); ok && ms != nil {
		return r.parLoopMixed(k, ms, args)
	}
	e := rt.proc.Slot()
	if err := bindOver(r, r.e.Cfg.Backend, &e.Loop, k, set, args); err != nil {
		e.Release()
		return err
	}
	e.Loop.Check = r.e.Cfg.Check
	b, err := r.e.CurrentBackend()
	if err != nil {
		e.Release()
		return err
	}
	if err := r.e.Commit(e, b); err != nil {
		return err
	}
	return r.e.AutoRecorded(&k.c.Kernel)
}

// Loop chains under MPI.
//
// On several ranks a Chain is collective, as loops are: every rank calls
// it with the same loops. The recorded loops must then run at the same
// point of the loop sequence on every rank, since their halo exchanges
// and reductions meet the other ranks'. They run at the points every rank
// reaches together: Chain's end, a full queue (MaxRecordedLoops, a count
// of loops), a loop that runs at once (another runtime's), and the
// collective calls (Partition, Gather, reading dumps, Mat.Mult, Mat.Dense,
// Solve, Finalize). Any other call that would run them, which a program
// may make on some ranks only (Data on the rank that owns an element, a
// Global's Value, Wait, Const.Set...), returns a *ChainAccessError
// instead, or panics with it when it returns no error, and leaves the
// recorded loops recorded, for Chain's end: it can neither hang nor see
// data the loops have not made. The calls that report neither values of
// data nor errors (State, Timings, ReadStats, EnableTiming, ResetTimings)
// then report what was before the recorded loops.
//
// When the recorded loops run on several ranks, dist.Halo.PlanChain
// agrees on them once and groups their halo exchanges (see package dist).
//
// Lazy mode has no point every rank reaches together (any accessor may
// force it), so on several ranks it records only the loops that meet no
// other rank when they run: no halo to exchange (the ranks agree on that
// when the loop is issued) and no reduction into a Global. Any accessor
// may run those on its rank alone; every other loop runs when issued,
// after them. A Chain first runs the loops lazy mode recorded.

// ChainAccessError reports a call inside a Chain, on one of several MPI
// ranks, that would have run the chain's recorded loops on this rank
// alone: their halo exchanges and reductions need every rank to run them
// at the same point, and the call may be made on some ranks only. Nothing
// ran and nothing changed; read the data after Chain returns (or through
// a collective call such as Gather).
type ChainAccessError struct {
	Accessor string // the call, such as "Dat.Data" or "Wait"
	Data     string // the name of the Dat or Global it accesses; "" for other calls
	Rank     int
	Ranks    int
	Recorded int // loops recorded and not run
}

func (e *ChainAccessError) Error() string {
	what := e.Accessor
	if e.Data != "" {
		what = fmt.Sprintf("%s of %q", e.Accessor, e.Data)
	}
	return fmt.Sprintf("op2: %s inside a Chain on rank %d of %d MPI ranks: it would run the %d loops recorded so far on this rank alone, "+
		"and their halo exchanges need every rank; read data after Chain returns (on several ranks only Chain's end, loops and collective calls such as Gather run recorded loops)",
		what, e.Rank, e.Ranks, e.Recorded)
}
