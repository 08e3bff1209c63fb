package op2

import (
	"io"
	"time"

	"github.com/goop2/op2/internal/exec"
)

// LoopTiming is what the timing report (OP2's op_timing_output, PyOP2's
// timed regions) says about one loop: a kernel over a set on a backend.
//
// Time is the time of the calls without their program and plan builds,
// which Compile and Plan give apart: from ParLoop's (or Compute's) call to
// the executor until the loop has finished, including binding the data,
// moving it to and from a device where it is stale, and, under MPI,
// exchanging halos and combining reductions. On the asynchronous backends
// (opencl, cuda) it is the device's time from a stamp queued before the
// loop's work to one queued after it: timing does not wait for the loop,
// and the report waits for the loops whose stamps it reads. On the host
// backends the wall time of all the calls is Time + Plan + Compile, less
// the checking of the arguments before the executor.
//
// Under MPI every rank times its own loops: the figures are this rank's,
// over its part of the set (owned elements, plus the exec halo for loops
// that modify data through a map), and the report is written by each rank
// that asks.
type LoopTiming struct {
	Kernel  string // kernel name
	Set     string // iteration set name
	Backend string // backend name
	Calls   int    // successful calls
	// Time is the time of the calls, without Plan and Compile.
	Time time.Duration
	// Plan is the time spent building execution plans for the loop (the
	// first call on a set and maps, on backends that use plans).
	Plan time.Duration
	// Compile is the time spent making the loop's program: generating it
	// and compiling it or loading it from the disk cache, the first time
	// (and again if it had been dropped from the program cache). A loop
	// whose program was built for another loop of the same shape has none.
	Compile time.Duration
	// Bytes is the data all the calls must move between memory and the
	// processor, OP2's convention for its bandwidth figures, per call:
	//   - a Dat passed directly: the elements the loop runs over × dim ×
	//     element size, once when the loop only reads it or only writes
	//     it, twice when it reads and writes it (RW, INC);
	//   - a Dat passed through maps: the distinct elements the loop's
	//     maps reach from the elements it runs over (each counted once,
	//     however many arguments, columns and elements refer to it) × dim ×
	//     element size, once or twice as for direct Dats;
	//   - a Global: dim × element size, twice for a reduction;
	//   - each map: 4 bytes × arity × the elements the loop runs over.
	// A Dat passed in several arguments of one kind (direct, or through
	// maps) is counted once; passed only through views (DatView), with
	// the distinct components they pass instead of dim, each once if read
	// and once if written; on an extruded set, in a loop over one, with the
	// distinct layers it reaches × one layer's values. A disabled optional argument (Opt) counts
	// nothing. Index arguments (ArgIdx, Map.ArgIdx) are read from an int32
	// Dat of indices, and a loop over a Subset reaches its set through a
	// map of the subset's indices: both count as the Dats and maps they
	// are. Caches, write-allocate traffic and device transfers are not
	// counted.
	Bytes float64
	// Moved is the data the calls must move as they ran: Bytes for calls
	// run one loop at a time (a fused loop is one loop); for calls run in
	// tiled chains (Config.Tile), the loop's share (in proportion to its
	// Bytes) of the bytes its chain moves when each tile's data stays in
	// cache from one loop to the next: every Dat and map the chain touches
	// counted once per chain, as Bytes counts them once per loop. It is a
	// model, not a measurement: it holds when a tile's data fits in the
	// cache (Config.Tile small enough).
	Moved float64
	// Tuned is the auto-tuner's setting for the loop's last call (see
	// Config.Tune): the backend's variant, if it has several (the openmp
	// scheme; the device scheme and work-group size), and the plan's
	// block size, e.g. "owner, block 1024", "staged wg128" (the
	// executor's own block size) or "block auto"; "measuring ..." while
	// the tuner is still trying settings; "nothing to choose" for a loop
	// with one way to run and no plan; empty when tuning is off; "tiled"
	// when the last call ran in a tiled chain (Config.Tile), untuned.
	Tuned string
}

// Mean is the mean time of one call (Time / Calls).
func (t LoopTiming) Mean() time.Duration { return exec.MeanCall(t.Time, t.Calls) }

// GBPerSecond is the effective bandwidth: Bytes / Time, in 10⁹ bytes per
// second (0 when no time was measured).
func (t LoopTiming) GBPerSecond() float64 { return exec.Bandwidth(t.Bytes, t.Time) }

// EnableTiming switches the default runtime's timing report on or off
// (Config.Timing, OP2_TIMING=1). While it is on, every successful loop
// adds to its LoopTiming; switching it off keeps what was recorded.
// Timing off costs a loop nothing; timing on costs two clock readings per
// loop, and on asynchronous backends (opencl, cuda) two time stamps queued
// on the device, read by the report.
func EnableTiming(on bool) { rt.EnableTiming(on) }

// EnableTiming switches runtime r's timing report (see the package-level
// EnableTiming).
func (r *Runtime) EnableTiming(on bool) {
	lock(forStatus, "Runtime.EnableTiming")
	defer unlock()
	r.e.SetTiming(on)
}

// Timings returns the default runtime's timing report: one LoopTiming per
// loop (kernel, set and backend) timed since the start or the last
// ResetTimings, in the order of their first timed call.
func Timings() []LoopTiming { return rt.Timings() }

// Timings returns runtime r's timing report (see the package-level
// Timings). The loops recorded so far (see Chain) run first.
func (r *Runtime) Timings() []LoopTiming {
	lock(forStatus, "Runtime.Timings")
	defer unlock()
	return r.timingRecords()
}

// timingReport runs the recorded loops and returns the timing records,
// or the failure of a recorded loop.
func (r *Runtime) timingReport(api string) ([]exec.TimingRecord, error) {
	forced := lock(forData, api)
	defer unlock()
	if forced != nil {
		return nil, forced
	}
	return r.e.Timings.Records(), nil
}

// timingRecords returns the timing report. Caller holds the lock.
func (r *Runtime) timingRecords() []LoopTiming { return loopTimings(r.e.Timings.Records()) }

// loopTimings is the timing report of recs.
func loopTimings(recs []exec.TimingRecord) []LoopTiming {
	out := make([]LoopTiming, len(recs))
	for i, rec := range recs {
		out[i] = LoopTiming{Kernel: rec.Kernel, Set: rec.Set, Backend: rec.Backend, Calls: rec.Calls,
			Time: rec.Run, Plan: rec.Plan, Compile: rec.Compile, Bytes: rec.Bytes, Moved: rec.Moved, Tuned: rec.Tuned}
	}
	return out
}

// ResetTimings forgets the default runtime's timing report.
func ResetTimings() { rt.ResetTimings() }

// ResetTimings forgets runtime r's timing report.
func (r *Runtime) ResetTimings() {
	lock(forStatus, "Runtime.ResetTimings")
	defer unlock()
	r.e.Timings.Reset()
}

// WriteTimingTable writes the default runtime's timing report as a table
// for people: one row per loop with the columns loop (the kernel), set,
// backend, calls, time s, mean µs, plan s, compile s and GB/s (and tuned,
// LoopTiming.Tuned, when a loop was tuned or ran in tiles), then a row "all loops"
// with the sums. Under MPI the first line says which rank's
// figures follow. Every loop takes one line: a name holding a newline, a
// tab or another character that is not printable, invalid UTF-8, or
// leading or trailing space, or that is empty or starts with a double
// quote, is shown quoted as Go's %q quotes it, and a name longer than 40
// characters is shortened in the middle with "…" (WriteTimingCSV and
// WriteTimingJSON give every name whole).
func WriteTimingTable(w io.Writer) error { return rt.writeTimingTable(w, "WriteTimingTable") }

// WriteTimingTable writes runtime r's timing report as a table (see the
// package-level WriteTimingTable).
func (r *Runtime) WriteTimingTable(w io.Writer) error {
	return r.writeTimingTable(w, "Runtime.WriteTimingTable")
}

// writeTimingTable is WriteTimingTable for the API call named api.
func (r *Runtime) writeTimingTable(w io.Writer, api string) error {
	recs, err := r.timingReport(api)
	if err != nil {
		return err
	}
	return exec.WriteTimingTable(w, recs, Rank(), Ranks())
}

// WriteTimingCSV writes the default runtime's timing report as CSV (OP2's
// op_timings_to_csv): a header row, then one row per loop with the columns
// rank, kernel, set, backend, calls, time_s, mean_s, plan_s, compile_s,
// bytes, gb_per_s (seconds and bytes as plain decimal or exponent
// numbers) and tuned (LoopTiming.Tuned: empty when tuning is off, but
// "tiled" for a loop run in tiles).
func WriteTimingCSV(w io.Writer) error { return rt.writeTimingCSV(w, "WriteTimingCSV") }

// WriteTimingCSV writes runtime r's timing report as CSV (see the
// package-level WriteTimingCSV).
func (r *Runtime) WriteTimingCSV(w io.Writer) error {
	return r.writeTimingCSV(w, "Runtime.WriteTimingCSV")
}

// writeTimingCSV is WriteTimingCSV for the API call named api.
func (r *Runtime) writeTimingCSV(w io.Writer, api string) error {
	recs, err := r.timingReport(api)
	if err != nil {
		return err
	}
	return exec.WriteTimingCSV(w, recs, Rank())
}

// TimingReport is the timing report as WriteTimingJSON writes it: the
// rank and the number of ranks, and one TimingReportRow per loop (a
// LoopTiming with times in seconds, JSON names kernel, set, backend,
// calls, time_s, mean_s, plan_s, compile_s, bytes, moved_bytes, gb_per_s
// and tuned).
type TimingReport = exec.TimingReport

// TimingReportRow is one loop of a TimingReport: a LoopTiming with times
// in seconds.
type TimingReportRow = exec.TimingReportRow

// WriteTimingJSON writes the default runtime's timing report as one JSON
// object, a TimingReport: {"rank": 0, "ranks": 1, "loops": [{"kernel":
// ..., "set": ..., "backend": ..., "calls": ..., "time_s": ..., "mean_s":
// ..., "plan_s": ..., "compile_s": ..., "bytes": ..., "moved_bytes": ..., "gb_per_s": ...,
// "tuned": ... (only when LoopTiming.Tuned is not empty: tuning, tiles)}]}.
func WriteTimingJSON(w io.Writer) error { return rt.writeTimingJSON(w, "WriteTimingJSON") }

// WriteTimingJSON writes runtime r's timing report as JSON (see the
// package-level WriteTimingJSON).
func (r *Runtime) WriteTimingJSON(w io.Writer) error {
	return r.writeTimingJSON(w, "Runtime.WriteTimingJSON")
}

// writeTimingJSON is WriteTimingJSON for the API call named api.
func (r *Runtime) writeTimingJSON(w io.Writer, api string) error {
	recs, err := r.timingReport(api)
	if err != nil {
		return err
	}
	return exec.WriteTimingJSON(w, recs, Rank(), Ranks())
}

// LevelTrace is the log level, below slog.LevelDebug, of the events of
// every loop: its start and end and, under MPI, each halo exchange (Dat,
// neighbours, bytes), each with the rank, so that a job's log shows where
// every rank stands. OP2_LOG=trace chooses it.
const LevelTrace = exec.LevelTrace
