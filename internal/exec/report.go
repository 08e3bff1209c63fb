package exec

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Mean is the mean time of one call (Run / Calls; 0 without calls).
func (r TimingRecord) Mean() time.Duration { return MeanCall(r.Run, r.Calls) }

// GBPerSecond is the effective bandwidth: Bytes / Run, in 10⁹ bytes per
// second (0 when no time was measured).
func (r TimingRecord) GBPerSecond() float64 { return Bandwidth(r.Bytes, r.Run) }

// MeanCall is the mean time of one of calls calls taking run in all (0
// without calls).
func MeanCall(run time.Duration, calls int) time.Duration {
	if calls == 0 {
		return 0
	}
	return run / time.Duration(calls)
}

// Bandwidth is bytes moved in run, in 10⁹ bytes per second (0 when no
// time was measured).
func Bandwidth(bytes float64, run time.Duration) float64 {
	if run <= 0 {
		return 0
	}
	return bytes / run.Seconds() / 1e9
}

// WriteTimingTable writes recs as the timing table for people (op2's
// WriteTimingTable documents the columns): a first line "rank R of N"
// when ranks > 1, a header, one row per record, then a row "all loops"
// with the sums. Names are left-aligned, quoted and shortened as needed, and
// numbers right-aligned; the tuned column appears when a record has a
// Tuned setting. It returns the first write error.
func WriteTimingTable(w io.Writer, recs []TimingRecord, rank, ranks int) error {
	// fmt pads to a width in characters (runes).
	names := make([][3]string, len(recs))
	wk, ws, wb := len("all loops"), len("set"), len("backend")
	tuned := ""
	for i, t := range recs {
		n := [3]string{tableName(t.Kernel), tableName(t.Set), tableName(t.Backend)}
		names[i] = n
		wk, ws, wb = max(wk, utf8.RuneCountInString(n[0])), max(ws, utf8.RuneCountInString(n[1])), max(wb, utf8.RuneCountInString(n[2]))
		if t.Tuned != "" {
			tuned = "  tuned"
		}
	}
	var err error
	printf := func(format string, a ...any) {
		if err == nil {
			_, err = fmt.Fprintf(w, format, a...)
		}
	}
	if ranks > 1 {
		printf("rank %d of %d\n", rank, ranks)
	}
	const nums = " %8d %10.4f %11.1f %9.4f %10.4f %8.2f%s\n"
	printf("%-*s  %-*s  %-*s %8s %10s %11s %9s %10s %8s%s\n", wk, "loop", ws, "set", wb, "backend",
		"calls", "time s", "mean µs", "plan s", "compile s", "GB/s", tuned)
	var sum TimingRecord
	for i, t := range recs {
		n := names[i]
		printf("%-*s  %-*s  %-*s"+nums, wk, n[0], ws, n[1], wb, n[2], t.Calls,
			t.Run.Seconds(), float64(t.Mean().Nanoseconds())/1e3, t.Plan.Seconds(), t.Compile.Seconds(), t.GBPerSecond(), tunedCell(tuned, t.Tuned))
		sum.Calls += t.Calls
		sum.Run += t.Run
		sum.Plan += t.Plan
		sum.Compile += t.Compile
		sum.Bytes += t.Bytes
	}
	printf("%-*s  %-*s  %-*s %8d %10.4f %11s %9.4f %10.4f %8.2f\n", wk, "all loops", ws, "", wb, "", sum.Calls,
		sum.Run.Seconds(), "", sum.Plan.Seconds(), sum.Compile.Seconds(), sum.GBPerSecond())
	return err
}

// tunedCell is a row's tuned column: none when no loop was tuned
// (column is empty).
func tunedCell(column, setting string) string {
	if column == "" {
		return ""
	}
	if PlainName(setting) {
		return "  " + setting
	}
	return "  " + strconv.Quote(setting)
}

// maxTableName is the most characters a name takes in the timing table.
const maxTableName = 40

// tableName is a name as the timing table shows it: as it is when
// PlainName accepts it, quoted as Go's %q quotes it otherwise, and
// shortened in the middle with "…" past maxTableName characters.
func tableName(s string) string {
	if !PlainName(s) {
		s = strconv.Quote(s)
	}
	if n := utf8.RuneCountInString(s); n > maxTableName {
		r := []rune(s)
		head := (maxTableName - 1) / 2
		s = string(r[:head]) + "…" + string(r[n-(maxTableName-1-head):])
	}
	return s
}

// PlainName reports whether s shows in a table as itself, on one line and
// unambiguously: not empty, valid UTF-8, every character printable (no
// newline, tab or other control character), no leading or trailing space
// and no leading double quote (which would read as a quoted name).
func PlainName(s string) bool {
	return s != "" && utf8.ValidString(s) && strings.TrimSpace(s) == s && s[0] != '"' &&
		!strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) })
}

// WriteTimingCSV writes recs as CSV (op2's WriteTimingCSV documents the
// columns): a header row, then one row per record, its first column rank;
// seconds and bytes as strconv's shortest 'g' form, names whole.
func WriteTimingCSV(w io.Writer, recs []TimingRecord, rank int) error {
	r := strconv.Itoa(rank)
	c := csv.NewWriter(w)
	c.Write([]string{"rank", "kernel", "set", "backend", "calls", "time_s", "mean_s", "plan_s", "compile_s", "bytes", "gb_per_s", "tuned"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, t := range recs {
		c.Write([]string{r, t.Kernel, t.Set, t.Backend, strconv.Itoa(t.Calls), f(t.Run.Seconds()), f(t.Mean().Seconds()),
			f(t.Plan.Seconds()), f(t.Compile.Seconds()), f(t.Bytes), f(t.GBPerSecond()), t.Tuned})
	}
	c.Flush()
	return c.Error()
}

// TimingReport is the timing report as WriteTimingJSON writes it
// (op2.TimingReport).
type TimingReport struct {
	Rank  int               `json:"rank"`  // the MPI rank whose loops these are (0 without MPI)
	Ranks int               `json:"ranks"` // the number of ranks (1 without MPI)
	Loops []TimingReportRow `json:"loops"`
}

// TimingReportRow is one loop of a TimingReport: a loop's timing
// (op2.LoopTiming) with times in seconds.
type TimingReportRow struct {
	Kernel   string  `json:"kernel"`
	Set      string  `json:"set"`
	Backend  string  `json:"backend"`
	Calls    int     `json:"calls"`
	Time     float64 `json:"time_s"`
	Mean     float64 `json:"mean_s"`
	Plan     float64 `json:"plan_s"`
	Compile  float64 `json:"compile_s"`
	Bytes    float64 `json:"bytes"`
	Moved    float64 `json:"moved_bytes"` // op2.LoopTiming.Moved
	GBPerSec float64 `json:"gb_per_s"`
	Tuned    string  `json:"tuned,omitempty"` // op2.LoopTiming.Tuned
}

// WriteTimingJSON writes recs as one JSON object, a TimingReport (op2's
// WriteTimingJSON documents it), indented by two spaces.
func WriteTimingJSON(w io.Writer, recs []TimingRecord, rank, ranks int) error {
	rep := TimingReport{Rank: rank, Ranks: ranks, Loops: make([]TimingReportRow, len(recs))}
	for i, r := range recs {
		rep.Loops[i] = TimingReportRow{Kernel: r.Kernel, Set: r.Set, Backend: r.Backend, Calls: r.Calls,
			Time: r.Run.Seconds(), Mean: r.Mean().Seconds(), Plan: r.Plan.Seconds(), Compile: r.Compile.Seconds(),
			Bytes: r.Bytes, Moved: r.Moved, GBPerSec: r.GBPerSecond(), Tuned: r.Tuned}
	}
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(rep)
}
