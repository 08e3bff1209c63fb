package op2

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/goop2/op2/internal/core"
)

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
// Lazy mode has no point every rank reaches together (any accessor may
// force it), so it stays refused on several ranks.

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

// multiRank reports whether r runs on several MPI ranks (as mpiWorld,
// without starting MPI). Caller holds mu.
func (r *Runtime) multiRank() bool { return r.proc.world != nil && r.proc.world.Size() > 1 }

// mayRecord returns an error when r may not record the loop it is asked
// to run: lazy mode outside a chain on several MPI ranks. Caller holds mu.
func (r *Runtime) mayRecord() error {
	if r.chains > 0 {
		_, err := r.proc.start()
		return err
	}
	return r.singleProcess("lazy mode (Config.Lazy, OP2_LAZY)")
}

// noteRecorded counts a loop r recorded. Caller holds mu.
func (r *Runtime) noteRecorded() {
	if r.multiRank() {
		rt.proc.distQueued++
	}
}

// forceCollective is forceLocked for a call every rank makes at the same
// point (lock(forCollective)). Caller holds mu.
func forceCollective() error {
	rt.proc.collective = true
	defer func() { rt.proc.collective = false }()
	return forceLocked()
}

// refuseForce returns a *ChainAccessError when the queue holds loops of
// a runtime on several ranks and the caller (named from the call stack)
// is not collective; s, if not nil, is the data it accesses. Caller
// holds mu.
func refuseForce(s *core.Storage) error {
	if rt.proc.distQueued == 0 || rt.proc.collective || rt.proc.queue.n == 0 {
		return nil
	}
	e := &ChainAccessError{Accessor: accessorName(), Recorded: rt.proc.queue.n}
	if s != nil {
		e.Data = s.Name
	}
	if w := rt.proc.world; w != nil {
		e.Rank, e.Ranks = w.Rank(), w.Size()
	}
	return e
}

// isRefusal reports whether err is refuseForce's.
func isRefusal(err error) bool {
	var ce *ChainAccessError
	return errors.As(err, &ce)
}

// accessorName names the exported call of this package that the program
// made, from the call stack: the outermost of the package's frames above
// the caller, as "Dat.Data" or "Wait".
func accessorName() string {
	var pcs [32]uintptr
	n := runtime.Callers(3, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	const pkg = "github.com/goop2/op2."
	name := ""
	for {
		f, more := frames.Next()
		fn, ok := strings.CutPrefix(f.Function, pkg)
		if !ok {
			if name != "" {
				break
			}
		} else if fn != "" && !strings.HasPrefix(fn, "lock") && !strings.HasPrefix(fn, "force") {
			name = fn
		}
		if !more {
			break
		}
	}
	return cleanFuncName(name)
}

// cleanFuncName turns "(*Dat[...]).Data" into "Dat.Data".
func cleanFuncName(fn string) string {
	var b strings.Builder
	depth := 0
	for _, c := range fn {
		switch {
		case c == '[':
			depth++
		case c == ']':
			depth--
		case depth > 0 || c == '(' || c == ')' || c == '*':
		default:
			b.WriteRune(c)
		}
	}
	s := b.String()
	if i := strings.Index(s, ".func"); i > 0 {
		s = s[:i]
	}
	if s == "" {
		return "a call"
	}
	return s
}

// beginChain plans the halo exchanges of the steps about to run
// (queue.force), the loops as they will run (fused loops in place of
// those they fuse), when they run on several ranks; endChain ends the
// plan. Caller holds mu.
func (q *chainQueue) beginChain() error {
	rt.proc.distQueued = 0
	var r *Runtime
	loops := rt.proc.chainRun.loops[:0]
	for k := range q.steps {
		l, lr := q.loop(&q.steps[k])
		if l == nil {
			continue // an assignment: no halo
		}
		if r == nil {
			r = lr
			if !r.multiRank() || !r.proc.partitioned() {
				return nil // the loops fail as they run (checkPartitioned)
			}
		}
		if lr.proc != r.proc {
			return nil
		}
		loops = append(loops, l)
	}
	rt.proc.chainRun.loops = loops
	if r == nil {
		return nil
	}
	h := r.proc.job.Halo()
	if err := h.PlanChain(loops, r.tracer()); err != nil {
		return mpiFatal(apiError(err))
	}
	rt.proc.chainRun.h = h
	return nil
}

// endChain ends the plan beginChain made. Caller holds mu.
func endChain() {
	if rt.proc.chainRun.h != nil {
		rt.proc.chainRun.h.EndChain()
		rt.proc.chainRun.h = nil
	}
	clear(rt.proc.chainRun.loops)
	rt.proc.chainRun.loops = rt.proc.chainRun.loops[:0]
}

// HaloStats is this process's halo traffic under MPI (zero without it):
// the point-to-point halo messages it sent and their bytes, and the
// agreements (one small MPI_Allreduce each) before loops and recorded
// chains. A recorded chain (see Chain) sends the halos its loops need
// grouped, one message per neighbour and exchange point, and agrees once.
type HaloStats struct {
	Messages, Bytes int64
	Agreements      int
}

// ReadHaloStats returns the process's halo traffic so far. It runs no
// recorded loop.
func ReadHaloStats() HaloStats {
	lock(forNoData)
	defer unlock()
	if rt.proc.job == nil {
		return HaloStats{}
	}
	h := rt.proc.job.Halo()
	m, b := h.Messages()
	return HaloStats{Messages: m, Bytes: b, Agreements: h.Agreements()}
}
