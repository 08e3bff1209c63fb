package op2

import (
	"fmt"
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
	if rt.proc.Job() == nil {
		return HaloStats{}
	}
	h := rt.proc.Job().Halo()
	m, b := h.Messages()
	return HaloStats{Messages: m, Bytes: b, Agreements: h.Agreements()}
}
