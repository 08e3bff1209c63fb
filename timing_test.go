package op2_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
)

// timingMesh is a small mesh and two loops on it: a direct one and one
// incrementing through a map.
type timingMesh struct {
	edges, nodes *op2.Set
	pedge        *op2.Map
	w, acc       *op2.Dat[float64]
	scale, inc   *op2.Kernel
}

func newTimingMesh(t *testing.T) *timingMesh {
	const n = 100
	tm := &timingMesh{}
	tm.nodes = must(op2.NewSet(n+1, "tnodes"))
	tm.edges = must(op2.NewSet(n, "tedges"))
	v := make([]int32, 2*n)
	for e := 0; e < n; e++ {
		v[2*e], v[2*e+1] = int32(e), int32(e+1)
	}
	tm.pedge = must(op2.NewMap(tm.edges, tm.nodes, 2, v, "tpedge"))
	tm.w = must(op2.NewDat(tm.edges, 1, iota32[float64](n), "tw"))
	tm.acc = must(op2.NewDat[float64](tm.nodes, 2, nil, "tacc"))
	tm.scale = op2.NewKernel("void timing_scale(double *w) { *w *= 1.0; }", "timing_scale")
	tm.inc = op2.NewKernel("void timing_inc(const double *w, double *a, double *b) { a[0] += *w; b[1] += *w; }", "timing_inc")
	return tm
}

func (tm *timingMesh) runScale(r *op2.Runtime) error {
	return r.ParLoop(tm.scale, tm.edges, tm.w.Arg(op2.RW))
}

func (tm *timingMesh) runInc(r *op2.Runtime) error {
	return r.ParLoop(tm.inc, tm.edges, tm.w.Arg(op2.Read), tm.acc.ArgMap(op2.Inc, tm.pedge, 0), tm.acc.ArgMap(op2.Inc, tm.pedge, 1))
}

// TestTimingCounts: every timed call is counted under its kernel and set,
// with OP2's bytes; calls made while timing is off are not, and switching
// it off keeps what was recorded until ResetTimings.
func TestTimingCounts(t *testing.T) {
	for _, backend := range allBackends {
		t.Run(backend, func(t *testing.T) {
			// Loops run at once: each call is timed as issued.
			r := must(op2.NewRuntime(op2.Config{Backend: backend, CacheDir: os.Getenv("OP2_CACHE_DIR")}.Explicit("Lazy")))
			tm := newTimingMesh(t)
			check(t, tm.runScale(r)) // not timed
			r.EnableTiming(true)
			for i := 0; i < 5; i++ {
				check(t, tm.runScale(r))
			}
			for i := 0; i < 3; i++ {
				check(t, tm.runInc(r))
			}
			r.EnableTiming(false)
			check(t, tm.runInc(r)) // not timed
			ts := r.Timings()
			if len(ts) != 2 {
				t.Fatalf("%d loops timed, want 2: %+v", len(ts), ts)
			}
			s, in := ts[0], ts[1]
			if s.Kernel != "timing_scale" || s.Set != "tedges" || s.Backend != backend || s.Calls != 5 {
				t.Errorf("first loop %+v: want timing_scale over tedges on %s, 5 calls", s, backend)
			}
			if in.Kernel != "timing_inc" || in.Calls != 3 {
				t.Errorf("second loop %+v: want timing_inc, 3 calls", in)
			}
			// Direct RW of 100 doubles: read and written.
			if want := 5 * 2 * 100 * 8.0; s.Bytes != want {
				t.Errorf("timing_scale bytes %v, want %v", s.Bytes, want)
			}
			// w read (100 × 8), acc incremented on all 101 nodes (dim 2,
			// read and written), the map (4 × 2 × 100).
			if want := 3 * (100*8 + 2*101*16 + 4*2*100.0); in.Bytes != want {
				t.Errorf("timing_inc bytes %v, want %v", in.Bytes, want)
			}
			if s.Compile != 0 {
				t.Errorf("timing_scale was compiled before timing started, yet Compile is %v", s.Compile)
			}
			if s.Mean() != s.Time/5 || s.Time < 0 || s.Plan < 0 || in.Compile < 0 {
				t.Errorf("times %+v", s)
			}
			r.ResetTimings()
			if n := len(r.Timings()); n != 0 {
				t.Errorf("%d loops after ResetTimings", n)
			}
		})
	}
}

// TestTimingOffRecordsNothing: by default nothing is timed.
func TestTimingOffRecordsNothing(t *testing.T) {
	if on, _ := strconv.ParseBool(os.Getenv("OP2_TIMING")); on {
		t.Skip("OP2_TIMING is set")
	}
	r := must(op2.NewRuntime(op2.Config{CacheDir: os.Getenv("OP2_CACHE_DIR")}))
	tm := newTimingMesh(t)
	check(t, tm.runScale(r))
	check(t, tm.runInc(r))
	if ts := r.Timings(); len(ts) != 0 {
		t.Errorf("timing is off, yet %d loops were recorded: %+v", len(ts), ts)
	}
	// Config.Timing switches it on.
	check(t, r.Configure(op2.Config{Timing: true, CacheDir: os.Getenv("OP2_CACHE_DIR")}))
	check(t, tm.runScale(r))
	if ts := r.Timings(); len(ts) != 1 || ts[0].Calls != 1 {
		t.Errorf("Config.Timing: %+v", ts)
	}
}

// TestTimingOffAllocatesNothing: a repeated loop allocates nothing with
// timing off, nor with timing on.
func TestTimingOffAllocatesNothing(t *testing.T) {
	for _, timing := range []bool{false, true} {
		// Loops run at once (recorded ones allocate the queue's slots
		// the first time it grows); check mode is named off, whatever
		// OP2_CHECK says (it copies every READ argument per loop).
		r := must(op2.NewRuntime(op2.Config{CacheDir: os.Getenv("OP2_CACHE_DIR")}.Explicit("Lazy", "Check")))
		r.EnableTiming(timing)
		tm := newTimingMesh(t)
		run := func() { check(t, tm.runInc(r)) }
		run()
		if a := testing.AllocsPerRun(20, run); a != 0 {
			t.Errorf("timing %v: a repeated loop allocates %v times per call, want 0", timing, a)
		}
	}
}

// timedRuntime returns a runtime whose report has both loops of a mesh.
func timedRuntime(t *testing.T) *op2.Runtime {
	// Loops run at once (recorded, the two kernels would fuse).
	r := must(op2.NewRuntime(op2.Config{Timing: true, CacheDir: os.Getenv("OP2_CACHE_DIR")}.Explicit("Lazy")))
	tm := newTimingMesh(t)
	for i := 0; i < 4; i++ {
		check(t, tm.runScale(r))
	}
	check(t, tm.runInc(r))
	return r
}

// TestTimingTable: the table has its columns and one row per loop, then
// the sums.
func TestTimingTable(t *testing.T) {
	r := timedRuntime(t)
	var buf bytes.Buffer
	check(t, r.WriteTimingTable(&buf))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want a header, 2 loops and the sums:\n%s", len(lines), buf.String())
	}
	if got, want := strings.Fields(lines[0]), []string{"loop", "set", "backend", "calls", "time", "s", "mean", "µs", "plan", "s", "compile", "s", "GB/s"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("header %q", lines[0])
	}
	for i, want := range [][]string{{"timing_scale", "tedges", "sequential", "4"}, {"timing_inc", "tedges", "sequential", "1"}, {"all", "loops", "5"}} {
		f := strings.Fields(lines[i+1])
		if len(f) < len(want) || strings.Join(f[:len(want)], " ") != strings.Join(want, " ") {
			t.Errorf("line %d %q: want it to start with %q", i+1, lines[i+1], want)
		}
	}
}

// TestTimingNamesEscaped: set and kernel names with newlines, tabs, other
// control characters, invalid UTF-8, surrounding spaces or quotes, or
// great length take one line each in the table, quoted (Go's %q) or
// shortened, with every line as wide as the header; the CSV and the JSON
// stay valid and give the names whole.
func TestTimingNamesEscaped(t *testing.T) {
	long := "k_" + strings.Repeat("abcdefghij", 6) + "_end"
	cases := []struct{ set, kernel, cell string }{
		{"two\nlines", "tn_plain", `"two\nlines"`},
		{"tab\there", "tn_plain", `"tab\there"`},
		{"bell\a\x00nul", "tn_plain", `"bell\a\x00nul"`},
		{"bad\xffutf8", "tn_plain", `"bad\xffutf8"`},
		{" padded ", "tn_plain", `" padded "`},
		{`"quoted"`, "tn_plain", `"\"quoted\""`},
		{"", "tn_plain", `""`},
		{"ячейки µ", "tn_plain", "ячейки µ"},
		{"plain set", long, "plain set"},
	}
	// Loops run at once (recorded, the two kernels would fuse).
	r := must(op2.NewRuntime(op2.Config{Timing: true, CacheDir: os.Getenv("OP2_CACHE_DIR")}.Explicit("Lazy")))
	for _, c := range cases {
		set := must(op2.NewSet(3, c.set))
		d := must(op2.NewDat[float64](set, 1, nil, "tn_d"))
		k := op2.NewKernel("void "+c.kernel+"(double *d) { *d += 1.0; }", c.kernel)
		check(t, r.ParLoop(k, set, d.Arg(op2.RW)))
	}
	var buf bytes.Buffer
	check(t, r.WriteTimingTable(&buf))
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != len(cases)+2 {
		t.Fatalf("%d lines, want a header, %d loops and the sums:\n%s", len(lines), len(cases), buf.String())
	}
	width := utf8.RuneCountInString(lines[0])
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n != width || !utf8.ValidString(l) {
			t.Errorf("line %d is %d characters wide (valid UTF-8 %v), the header %d:\n%s", i, n, utf8.ValidString(l), width, buf.String())
		}
	}
	shortened := long[:19] + "…" + long[len(long)-20:]
	wk := utf8.RuneCountInString(shortened) // the widest kernel column
	for i, c := range cases {
		kernel := "tn_plain"
		if c.kernel == long {
			kernel = shortened
		}
		row := []rune(lines[i+1])
		gotKernel := strings.TrimRight(string(row[:wk]), " ")
		gotSet := string(row[wk+2 : wk+2+utf8.RuneCountInString(c.cell)])
		if gotKernel != kernel || gotSet != c.cell {
			t.Errorf("row %d %q shows kernel %q and set %q, want %q and %q", i, lines[i+1], gotKernel, gotSet, kernel, c.cell)
		}
	}

	buf.Reset()
	check(t, r.WriteTimingCSV(&buf))
	rows, err := csv.NewReader(&buf).ReadAll()
	check(t, err)
	if len(rows) != len(cases)+1 {
		t.Fatalf("CSV: %d rows, want %d", len(rows), len(cases)+1)
	}
	buf.Reset()
	check(t, r.WriteTimingJSON(&buf))
	var rep op2.TimingReport
	check(t, json.Unmarshal(buf.Bytes(), &rep))
	for i, c := range cases {
		wantSet := c.set
		if !utf8.ValidString(wantSet) {
			wantSet = strings.ToValidUTF8(wantSet, "\uFFFD") // JSON strings are UTF-8
		}
		if rows[i+1][1] != c.kernel || rows[i+1][2] != c.set {
			t.Errorf("CSV row %d: kernel %q set %q, want %q %q", i, rows[i+1][1], rows[i+1][2], c.kernel, c.set)
		}
		if rep.Loops[i].Kernel != c.kernel || rep.Loops[i].Set != wantSet {
			t.Errorf("JSON loop %d: kernel %q set %q, want %q %q", i, rep.Loops[i].Kernel, rep.Loops[i].Set, c.kernel, wantSet)
		}
	}
}

// TestTimingCSVAndJSON: the CSV and the JSON read back to the report.
func TestTimingCSVAndJSON(t *testing.T) {
	r := timedRuntime(t)
	ts := r.Timings()
	var buf bytes.Buffer
	check(t, r.WriteTimingCSV(&buf))
	rows, err := csv.NewReader(&buf).ReadAll()
	check(t, err)
	wantHeader := "rank,kernel,set,backend,calls,time_s,mean_s,plan_s,compile_s,bytes,gb_per_s,tuned"
	if len(rows) != 3 || strings.Join(rows[0], ",") != wantHeader {
		t.Fatalf("CSV rows %q", rows)
	}
	for i, row := range rows[1:] {
		lt := ts[i]
		if row[0] != "0" || row[1] != lt.Kernel || row[2] != lt.Set || row[3] != lt.Backend || row[4] != strconv.Itoa(lt.Calls) {
			t.Errorf("CSV row %q for %+v", row, lt)
		}
		for j, want := range []float64{lt.Time.Seconds(), lt.Mean().Seconds(), lt.Plan.Seconds(), lt.Compile.Seconds(), lt.Bytes, lt.GBPerSecond()} {
			v, err := strconv.ParseFloat(row[5+j], 64)
			if err != nil || v != want {
				t.Errorf("CSV row %d column %s: %q, want %v (%v)", i, rows[0][5+j], row[5+j], want, err)
			}
		}
	}

	buf.Reset()
	check(t, r.WriteTimingJSON(&buf))
	var rep op2.TimingReport
	dec := json.NewDecoder(&buf)
	dec.DisallowUnknownFields()
	check(t, dec.Decode(&rep))
	if rep.Rank != 0 || rep.Ranks != 1 || len(rep.Loops) != 2 {
		t.Fatalf("JSON report %+v", rep)
	}
	for i, row := range rep.Loops {
		lt := ts[i]
		want := op2.TimingReportRow{Kernel: lt.Kernel, Set: lt.Set, Backend: lt.Backend, Calls: lt.Calls, Time: lt.Time.Seconds(),
			Mean: lt.Mean().Seconds(), Plan: lt.Plan.Seconds(), Compile: lt.Compile.Seconds(), Bytes: lt.Bytes, Moved: lt.Moved, GBPerSec: lt.GBPerSecond()}
		if row != want {
			t.Errorf("JSON loop %+v, want %+v", row, want)
		}
		if lt.Moved != lt.Bytes {
			t.Errorf("loop %s run alone moves %v bytes, Bytes %v", lt.Kernel, lt.Moved, lt.Bytes)
		}
	}
}

// logCapture is a slog handler that keeps every record.
type logCapture struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (c *logCapture) Enabled(context.Context, slog.Level) bool { return true }
func (c *logCapture) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recs = append(c.recs, r.Clone())
	return nil
}
func (c *logCapture) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *logCapture) WithGroup(string) slog.Handler      { return c }

// find returns the attributes of the records with message msg.
func (c *logCapture) find(msg string) (levels []slog.Level, attrs []map[string]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.recs {
		if r.Message != msg {
			continue
		}
		m := map[string]string{}
		r.Attrs(func(a slog.Attr) bool {
			m[a.Key] = a.Value.String()
			return true
		})
		levels = append(levels, r.Level)
		attrs = append(attrs, m)
	}
	return levels, attrs
}

// TestLogging: a runtime with a Logger reports the backend it opens, the
// programs it compiles (Info) or finds in a cache (Debug) and the plans it
// builds (Debug); without one it logs nothing.
func TestLogging(t *testing.T) {
	cache := t.TempDir() // a fresh cache: the first build compiles
	for _, backend := range hostBackends {
		t.Run(backend, func(t *testing.T) {
			h := &logCapture{}
			r := closeAtEnd(t, must(op2.NewRuntime(op2.Config{Backend: backend, CacheDir: cache, Threads: 2, Logger: slog.New(h)})))
			tm := newTimingMesh(t)
			// A kernel of its own, so that this backend compiles it.
			tm.inc = op2.NewKernel("void log_inc_"+backend+"(const double *w, double *a, double *b) { a[0] += *w; b[1] += *w; }", "log_inc_"+backend)
			for i := 0; i < 3; i++ {
				check(t, tm.runInc(r))
			}
			check(t, op2.Wait()) // the loops run (lazy mode, the default, records them)
			levels, attrs := h.find("op2: backend opened")
			if len(attrs) != 1 || levels[0] != slog.LevelInfo || attrs[0]["backend"] != backend || attrs[0]["platform"] != "host" || attrs[0]["compiler"] == "" {
				t.Errorf("backend opened: %v %v", levels, attrs)
			}
			if backend == "openmp" && attrs[0]["threads"] != "2" {
				t.Errorf("openmp opened with threads %q, want 2", attrs[0]["threads"])
			}
			levels, attrs = h.find("op2: program built")
			if len(attrs) != 1 || levels[0] != slog.LevelInfo || attrs[0]["kernel"] != "log_inc_"+backend || attrs[0]["set"] != "tedges" ||
				attrs[0]["backend"] != backend || attrs[0]["cache"] != "miss" || attrs[0]["seconds"] == "" {
				t.Errorf("program built: %v %v", levels, attrs)
			}
			levels, attrs = h.find("op2: plan built")
			if backend == "openmp" && (len(attrs) != 1 || levels[0] != slog.LevelDebug || attrs[0]["kernel"] != "log_inc_openmp" ||
				attrs[0]["blocks"] == "" || attrs[0]["colours"] == "" || attrs[0]["block_size"] == "") {
				t.Errorf("plan built: %v %v", levels, attrs)
			}
			if backend == "sequential" && len(attrs) != 0 {
				t.Errorf("sequential built plans: %v", attrs)
			}
			// A new runtime finds the program in the disk cache: Debug.
			h2 := &logCapture{}
			r2 := closeAtEnd(t, must(op2.NewRuntime(op2.Config{Backend: backend, CacheDir: cache, Threads: 2, Logger: slog.New(h2)})))
			check(t, tm.runInc(r2))
			levels, attrs = h2.find("op2: program built")
			if len(attrs) != 1 || levels[0] != slog.LevelDebug || attrs[0]["cache"] == "miss" {
				t.Errorf("program built again: %v %v", levels, attrs)
			}
		})
	}
}

// TestTimingAndLoggingOnRanks: under MPI each rank logs MPI's start and
// times its own loops, and its reports name it.
func TestTimingAndLoggingOnRanks(t *testing.T) {
	if mpitest.InRanks() {
		nodes, ring := declareRing(t, 50)
		_, err := op2.Partition(op2.BlockPartitioner())
		check(t, err)
		x := must(op2.NewDat[float64](nodes, 1, nil, "x"))
		k := op2.NewKernel("void ring_inc(double *a, double *b) { *a += 1; *b += 1; }", "ring_inc")
		edges := ring.From()
		for i := 0; i < 3; i++ {
			check(t, op2.ParLoop(k, edges, x.ArgMap(op2.Inc, ring, 0), x.ArgMap(op2.Inc, ring, 1)))
		}
		ts := op2.Timings()
		if len(ts) != 1 || ts[0].Calls != 3 || ts[0].Bytes <= 0 {
			t.Errorf("rank %d: timings %+v", op2.Rank(), ts)
		}
		var buf bytes.Buffer
		check(t, op2.WriteTimingCSV(&buf))
		rows, err := csv.NewReader(&buf).ReadAll()
		check(t, err)
		if len(rows) != 2 || rows[1][0] != strconv.Itoa(op2.Rank()) {
			t.Errorf("rank %d: CSV %q", op2.Rank(), rows)
		}
		buf.Reset()
		check(t, op2.WriteTimingTable(&buf))
		fmt.Print(buf.String())
		check(t, op2.Finalize())
		return
	}
	out, err := mpitest.Output(t, 2, 2*time.Minute, "OP2_LOG=info", "OP2_TIMING=1")
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	for _, want := range []string{`msg="op2: MPI initialised" rank=0 ranks=2`, `msg="op2: MPI initialised" rank=1 ranks=2`,
		"rank 0 of 2", "rank 1 of 2", "ring_inc"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the job's output lacks %q:\n%s", want, out)
		}
	}
}

// TestTimingBytesKnowViews: a loop's bytes in the timing report are
// counted again when it passes a view where it passed the whole Dat, and
// the reverse (the record's shape was blind to views).
func TestTimingBytesKnowViews(t *testing.T) {
	use := op2.NewKernel(`void av_use(const double *q, double *w) { *w += q[0]; }`, "av_use")
	run := func(view ...bool) float64 {
		r := must(op2.NewRuntime(op2.Config{Timing: true}))
		defer r.Close()
		cells := must(op2.NewSet(1000, "av_cells"))
		q := must(op2.NewDat[float64](cells, 8, nil, "av_q"))
		w := must(op2.NewDat[float64](cells, 1, nil, "av_w"))
		for _, v := range view {
			a := q.Arg(op2.Read)
			if v {
				a = must(q.View(0)).Arg(op2.Read)
			}
			check(t, r.ParLoop(use, cells, a, w.Arg(op2.RW)))
		}
		for _, lt := range r.Timings() {
			if lt.Kernel == "av_use" {
				return lt.Bytes
			}
		}
		t.Fatal("no timing record for av_use")
		return 0
	}
	whole, view := run(false), run(true)
	if whole == view {
		t.Fatalf("a view and the whole Dat both move %v bytes", whole)
	}
	if got, want := run(false, true), whole+view; got != want {
		t.Errorf("whole Dat then view: Bytes %v, want %v + %v = %v", got, whole, view, want)
	}
	if got, want := run(true, false), whole+view; got != want {
		t.Errorf("view then whole Dat: Bytes %v, want %v + %v = %v", got, view, whole, want)
	}
}

// TestTimingBytesExtruded: an extruded Dat counts the layers the loop
// reaches, each with one layer's values: a map reaching layer 0 only, and
// a set with variable layers (the timing probe found every layer of
// every column counted: 96 for 24, and 96 for 48).
func TestTimingBytesExtruded(t *testing.T) {
	r := closeAtEnd(t, must(op2.NewRuntime(op2.Config{Timing: true})))
	base := must(op2.NewSet(2, "tx_base"))
	bnodes := must(op2.NewSet(3, "tx_bnodes"))
	bm := must(op2.NewMap(base, bnodes, 2, []int32{0, 1, 1, 2}, "tx_bm"))
	cells := must(op2.NewExtrudedSet(base, 3, "tx_cells"))
	nodes := must(op2.NewExtrudedSet(bnodes, 4, "tx_nodes"))
	xm0 := must(op2.NewExtrudedMap(cells, nodes, bm, []int{0, 0}, []int{0, 0}, "tx_xm0"))
	cd := must(op2.NewExtrudedDat[float64](cells, 1, nil, "tx_cd"))
	nd := must(op2.NewExtrudedDat[float64](nodes, 1, nil, "tx_nd"))
	k := op2.NewKernel("void tx_k(double *c, const double **n) { *c = n[0][0] + n[1][0]; }", "tx_k")
	check(t, r.ParLoop(k, cells, cd.Arg(op2.Write), nd.ArgExtVec(op2.Read, xm0)))
	vcells := must(op2.NewVariableExtrudedSet(base, 3, []int32{0, 1, 1, 3}, "tx_vcells"))
	vd := must(op2.NewExtrudedDat[float64](vcells, 1, nil, "tx_vd"))
	kv := op2.NewKernel("void tx_kv(double *v) { *v += 1; }", "tx_kv")
	check(t, r.ParLoop(kv, vcells, vd.Arg(op2.RW)))
	check(t, r.Wait())
	want := map[string]float64{
		// cd: 2 columns × 3 layers × 8; nd: nodes 0, 1, 2 in layer 0
		// only × 8; the base map: 2 columns × arity 2 × 4.
		"tx_k": 48 + 24 + 16,
		// vd read and written in 1 + 2 layers; the ranges: 2 × 2 int32.
		"tx_kv": 3*8*2 + 16,
	}
	for _, lt := range r.Timings() {
		if w, ok := want[lt.Kernel]; ok && lt.Bytes != w {
			t.Errorf("%s: %v bytes, want %v", lt.Kernel, lt.Bytes, w)
		}
	}
}
