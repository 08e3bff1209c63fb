package exec_test

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
)

// TestLoopBytes checks OP2's bandwidth convention on small loops whose
// counts are worked out by hand.
func TestLoopBytes(t *testing.T) {
	// 120 edges (100 owned, 20 exec halo), 121 nodes; edge e joins nodes
	// e and e+1.
	ms := newMesh(t, 40, 100, 120)
	g := &core.Storage{Name: "g", Type: core.Float64, Dim: 2, Len: 2, ID: core.NewID()}
	v2 := &core.Storage{Name: "v", Type: core.Float64, Dim: 2, Set: ms.edges, Len: 2 * 120, ID: core.NewID()}
	k := kernel(t, "void k(double *a) {}", "k")
	loop := func(args ...core.Arg) *core.Loop { return &core.Loop{Kernel: k, Set: ms.edges, Args: args} }
	for _, c := range []struct {
		name string
		l    *core.Loop
		want float64
	}{
		// Direct: owned elements only, 8 bytes each.
		{"direct read", loop(core.Arg{Data: ms.y, Access: core.Read, Kind: core.ArgDirect}), 100 * 8},
		{"direct write", loop(core.Arg{Data: ms.y, Access: core.Write, Kind: core.ArgDirect}), 100 * 8},
		{"direct rw", loop(core.Arg{Data: ms.y, Access: core.RW, Kind: core.ArgDirect}), 2 * 100 * 8},
		{"direct read twice", loop(core.Arg{Data: ms.y, Access: core.Read, Kind: core.ArgDirect},
			core.Arg{Data: ms.y, Access: core.Read, Kind: core.ArgDirect}), 100 * 8},
		// Through column 0 (read): nodes 0..99 reached, plus the map
		// (4 bytes × arity 2 × 100 edges).
		{"indirect read column 0", loop(core.Arg{Data: ms.x, Map: ms.m, Idx: 0, Access: core.Read, Kind: core.ArgIndirect}),
			100*8 + 4*2*100},
		// Both columns: nodes 0..100 reached once each; the map counted once.
		{"indirect read both columns", loop(
			core.Arg{Data: ms.x, Map: ms.m, Idx: 0, Access: core.Read, Kind: core.ArgIndirect},
			core.Arg{Data: ms.x, Map: ms.m, Idx: 1, Access: core.Read, Kind: core.ArgIndirect}),
			101*8 + 4*2*100},
		{"vector read", loop(core.Arg{Data: ms.x, Map: ms.m, Access: core.Read, Kind: core.ArgVector}), 101*8 + 4*2*100},
		// The increment loop runs over the exec halo too (120 edges):
		// y read directly, nodes 0..120 read and written.
		{"increment", ms.incLoop(t), 120*8 + 2*121*8 + 4*2*120},
		// Globals: dim × size, twice for a reduction.
		{"global read", loop(core.Arg{Data: g, Access: core.Read, Kind: core.ArgGlobal}), 16},
		{"global inc", loop(core.Arg{Data: g, Access: core.Inc, Kind: core.ArgGlobal}), 32},
		// Views of a dim-2 Dat: the components passed, once each; a
		// view and the whole Dat: the whole Dat.
		{"view", loop(core.Arg{Data: v2, Access: core.Read, Kind: core.ArgDirect, View: true, Comp: 1}), 100 * 8},
		{"two views", loop(core.Arg{Data: v2, Access: core.Read, Kind: core.ArgDirect, View: true, Comp: 1},
			core.Arg{Data: v2, Access: core.Read, Kind: core.ArgDirect, View: true, Comp: 0}), 100 * 2 * 8},
		{"a view, then the whole Dat", loop(core.Arg{Data: v2, Access: core.Read, Kind: core.ArgDirect, View: true, Comp: 1},
			core.Arg{Data: v2, Access: core.Read, Kind: core.ArgDirect}), 100 * 2 * 8},
		// One component read, another written: each once (the probe
		// found 4 counted: both read and written).
		{"a view read, another written", loop(core.Arg{Data: v2, Access: core.Read, Kind: core.ArgDirect, View: true, Comp: 0},
			core.Arg{Data: v2, Access: core.Write, Kind: core.ArgDirect, View: true, Comp: 1}), 100 * 2 * 8},
		{"a view read and written, another read", loop(core.Arg{Data: v2, Access: core.RW, Kind: core.ArgDirect, View: true, Comp: 0},
			core.Arg{Data: v2, Access: core.Read, Kind: core.ArgDirect, View: true, Comp: 1}), 100 * 3 * 8},
		// A disabled optional argument (a placeholder Global) moves nothing.
		{"disabled optional", loop(core.Arg{Data: ms.y, Access: core.Read, Kind: core.ArgDirect},
			core.Arg{Data: g, Access: core.Read, Kind: core.ArgGlobal, Off: true}), 100 * 8},
	} {
		if got := exec.LoopBytes(c.l); got != c.want {
			t.Errorf("%s: %v bytes, want %v", c.name, got, c.want)
		}
		// One loop alone moves as a chain what it moves as a loop.
		if got := exec.ChainBytes([]*core.Loop{c.l}); got != c.want {
			t.Errorf("%s: chain of one: %v bytes, want %v", c.name, got, c.want)
		}
	}
}

// TestChainBytes checks the tiled chains' model: each Dat and map once per
// chain, over the elements any loop reaches.
func TestChainBytes(t *testing.T) {
	ms := newMesh(t, 40, 100, 120)
	g := &core.Storage{Name: "g", Type: core.Float64, Dim: 1, Len: 1, ID: core.NewID()}
	k := kernel(t, "void k(double *a) {}", "k")
	loop := func(args ...core.Arg) *core.Loop { return &core.Loop{Kernel: k, Set: ms.edges, Args: args} }
	readY := loop(core.Arg{Data: ms.y, Access: core.Read, Kind: core.ArgDirect})
	writeY := loop(core.Arg{Data: ms.y, Access: core.Write, Kind: core.ArgDirect})
	col0 := loop(core.Arg{Data: ms.x, Map: ms.m, Idx: 0, Access: core.Read, Kind: core.ArgIndirect})
	col1 := loop(core.Arg{Data: ms.x, Map: ms.m, Idx: 1, Access: core.Read, Kind: core.ArgIndirect},
		core.Arg{Data: g, Access: core.Inc, Kind: core.ArgGlobal})
	writeX := &core.Loop{Kernel: k, Set: ms.nodes, Args: []core.Arg{{Data: ms.x, Access: core.Write, Kind: core.ArgDirect}}}
	v := &core.Storage{Name: "v", Type: core.Float64, Dim: 2, Set: ms.edges, Len: 2 * 120, ID: core.NewID()}
	viewV := loop(core.Arg{Data: v, Access: core.Read, Kind: core.ArgDirect, View: true, Comp: 1})
	viewV0 := loop(core.Arg{Data: v, Access: core.Read, Kind: core.ArgDirect, View: true, Comp: 0})
	// A Dat of 130 components on the nodes (three words of marks).
	w := &core.Storage{Name: "w", Type: core.Float64, Dim: 130, Set: ms.nodes, Len: 130 * 121, ID: core.NewID()}
	viewW := func(comp int, acc core.Access) *core.Loop {
		return loop(core.Arg{Data: w, Map: ms.m, Idx: 1, Access: acc, Kind: core.ArgIndirect, View: true, Comp: comp})
	}
	wholeW := &core.Loop{Kernel: k, Set: ms.nodes, Args: []core.Arg{{Data: w, Access: core.Read, Kind: core.ArgDirect}}}
	for _, c := range []struct {
		name  string
		loops []*core.Loop
		want  float64
	}{
		// y read over 100 edges, then over 120 by the increment loop:
		// 120 elements once; nodes 0..120 read and written; the map once
		// for the 120 rows the increment loop reads.
		{"read then increment", []*core.Loop{readY, ms.incLoop(t)}, 120*8 + 2*121*8 + 4*2*120},
		// Written then read: both counted (the model does not know the
		// write comes first).
		{"write then read", []*core.Loop{writeY, readY}, 2 * 100 * 8},
		// Two columns of one map in two loops: nodes 0..100 once, the map
		// once; the Global reduction per loop.
		{"columns in two loops", []*core.Loop{col0, col1}, 101*8 + 4*2*100 + 2*8},
		{"the same loop twice", []*core.Loop{readY, readY}, 100 * 8},
		// Read at nodes 0..99, then written at all 121: the elements
		// read plus those written, not every element read and written
		// (which moved more than the loops apart).
		{"read at some, written at all", []*core.Loop{col0, writeX}, 100*8 + 4*2*100 + 121*8},
		// A view passes one component of a dim-2 Dat.
		{"a view", []*core.Loop{viewV, readY}, 100*8 + 100*8},
		{"two views", []*core.Loop{viewV, viewV0}, 2 * 100 * 8},
		{"a view and the whole Dat", []*core.Loop{viewV, loop(core.Arg{Data: v, Access: core.Read, Kind: core.ArgDirect})}, 2 * 100 * 8},
		// 130 components: views in the second and third words reach
		// nodes 1..100 through column 1; the map once.
		{"views of a wide Dat", []*core.Loop{viewW(70, core.Read), viewW(129, core.Read), viewW(70, core.Read)}, 2*100*8 + 4*2*100},
		// Modified through a map: the exec halo too (120 edges, nodes 1..120).
		{"a view of a wide Dat read and written", []*core.Loop{viewW(64, core.RW)}, 2*120*8 + 4*2*120},
		{"a view and the whole wide Dat", []*core.Loop{viewW(63, core.Read), wholeW}, 130*121*8 + 4*2*100},
	} {
		if got := exec.ChainBytes(c.loops); got != c.want {
			t.Errorf("%s: %v bytes, want %v", c.name, got, c.want)
		}
		sum := 0.0
		for _, l := range c.loops {
			sum += exec.LoopBytes(l)
		}
		if got := exec.ChainBytes(c.loops); got > sum {
			t.Errorf("%s: the chain moves %v bytes, its loops one by one %v", c.name, got, sum)
		}
	}
}

// TestTimingRecords: with Timing set, every successful call is counted
// under its kernel, set and backend, with its bytes; without it nothing is
// recorded.
func TestTimingRecords(t *testing.T) {
	ms := newMesh(t, 100, 100, 100)
	x := exec.New()
	b := &exec.Opened{Backend: &fakeBackend{needs: &exec.PlanNeeds{Threads: 1}, launchOK: -1}, ID: core.NewID()}
	inc, direct := ms.incLoop(t), ms.directLoop(t)
	if err := x.Run(b, inc); err != nil {
		t.Fatal(err)
	}
	x.Timing = exec.NewTimings()
	for i := 0; i < 3; i++ {
		if err := x.Run(b, inc); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.Run(b, direct); err != nil {
		t.Fatal(err)
	}
	recs := x.Timing.Records()
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2: %+v", len(recs), recs)
	}
	r := recs[0]
	if r.Kernel != "exec_inc" || r.Set != "edges" || r.Backend != "fake" || r.Calls != 3 {
		t.Errorf("first record %+v", r)
	}
	if want := 3 * exec.LoopBytes(inc); r.Bytes != want {
		t.Errorf("bytes %v, want %v", r.Bytes, want)
	}
	if r.Compile != 0 || r.Plan != 0 {
		t.Errorf("program and plan were built before timing started, yet compile %v plan %v", r.Compile, r.Plan)
	}
	if recs[1].Kernel != "exec_set" || recs[1].Calls != 1 {
		t.Errorf("second record %+v: want one call", recs[1])
	}
	x.Timing.Reset()
	if n := len(x.Timing.Records()); n != 0 {
		t.Errorf("%d records after Reset", n)
	}
}

// capture is a slog handler that keeps every record.
type capture struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (c *capture) Enabled(context.Context, slog.Level) bool { return true }
func (c *capture) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recs = append(c.recs, r.Clone())
	return nil
}
func (c *capture) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *capture) WithGroup(string) slog.Handler      { return c }

func attrs(r slog.Record) map[string]string {
	m := map[string]string{}
	r.Attrs(func(a slog.Attr) bool {
		m[a.Key] = a.Value.String()
		return true
	})
	return m
}

// TestExecutorLogs: a program build and a plan build are logged once each,
// at the levels documented on Executor.Logger; a repeated loop logs nothing.
func TestExecutorLogs(t *testing.T) {
	ms := newMesh(t, 100, 100, 100)
	h := &capture{}
	x := exec.New()
	x.Logger = slog.New(h)
	b := &exec.Opened{Backend: &fakeBackend{needs: &exec.PlanNeeds{Threads: 1}, launchOK: -1}, ID: core.NewID()}
	for i := 0; i < 3; i++ {
		if err := x.Run(b, ms.incLoop(t)); err != nil {
			t.Fatal(err)
		}
	}
	if len(h.recs) != 2 {
		t.Fatalf("%d records, want 2 (program, plan): %v", len(h.recs), h.recs)
	}
	prog, pl := h.recs[0], h.recs[1]
	a := attrs(prog)
	// The fake backend compiles nothing: its program counts as found.
	if prog.Message != "op2: program built" || prog.Level != slog.LevelDebug || a["kernel"] != "exec_inc" || a["set"] != "edges" ||
		a["backend"] != "fake" || a["cache"] != "memory" || a["seconds"] == "" {
		t.Errorf("program record %v %v %q %v", prog.Level, prog.Message, prog.Message, a)
	}
	a = attrs(pl)
	if pl.Message != "op2: plan built" || pl.Level != slog.LevelDebug || a["blocks"] == "" || a["colours"] == "" || a["block_size"] == "" {
		t.Errorf("plan record %v %q %v", pl.Level, pl.Message, a)
	}
	var buf bytes.Buffer
	x.Logger = slog.New(slog.NewTextHandler(&buf, nil)) // Info: neither is shown
	x.Clear()
	if err := x.Run(b, ms.incLoop(t)); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 {
		t.Errorf("at level Info a cache hit and a plan were logged:\n%s", buf.String())
	}
}
