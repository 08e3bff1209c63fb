package op2_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2"
)

// recordMode is one way of issuing loops: at once, in a Chain scope, or
// in lazy mode.
type recordMode struct {
	name        string
	lazy, chain bool
}

var recordModes = []recordMode{{"eager", false, false}, {"chain", false, true}, {"lazy", true, false}}

// runtime returns a runtime on backend for the mode.
func (m recordMode) runtime(t *testing.T, backend string) *op2.Runtime {
	t.Helper()
	return must(op2.NewRuntime(op2.Config{Backend: backend, Lazy: m.lazy}.Explicit("Lazy")))
}

// issue issues r's loops in the mode and waits for them.
func (m recordMode) issue(t *testing.T, r *op2.Runtime, loops func() error) {
	t.Helper()
	if m.chain {
		check(t, r.Chain(loops))
		return
	}
	check(t, loops())
	check(t, r.Wait())
}

// TestChainErrorsAtRecordTime: a loop ParLoop refuses in a chain or in
// lazy mode is refused with the error it gets when it runs at once (the
// same type and message), and is not recorded.
func TestChainErrorsAtRecordTime(t *testing.T) {
	edges, nodes, pedge := scatteredEdges(10, 6, 3, 2)
	x := must(op2.NewDat[float64](nodes, 1, nil, "x"))
	y := must(op2.NewDat[float64](edges, 1, nil, "y"))
	g := must(op2.NewGlobal[float64](1, nil, "g"))
	good := op2.NewKernel("void rec_good(const double *x, double *y) { *y = *x; }", "rec_good")
	cases := []struct {
		name string
		k    *op2.Kernel
		set  *op2.Set
		args []op2.Arg
	}{
		{"map from the wrong set", good, nodes, []op2.Arg{x.ArgMap(op2.Read, pedge, 0), y.Arg(op2.Write)}},
		{"index past the arity", good, edges, []op2.Arg{x.ArgMap(op2.Read, pedge, 2), y.Arg(op2.Write)}},
		{"global with WRITE", op2.NewKernel("void rec_g(double *g, double *y) { *y = *g; }", "rec_g"), edges, []op2.Arg{g.Arg(op2.Write), y.Arg(op2.Write)}},
		{"parameter type", op2.NewKernel("void rec_t(const float *x, double *y) { *y = *x; }", "rec_t"), edges, []op2.Arg{x.ArgMap(op2.Read, pedge, 0), y.Arg(op2.Write)}},
		{"kernel does not compile", op2.NewKernel("void rec_bad(const double *x, double *y) { *y = *x + undeclared; }", "rec_bad"), edges, []op2.Arg{x.ArgMap(op2.Read, pedge, 0), y.Arg(op2.Write)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eager := op2.ParLoop(tc.k, tc.set, tc.args...)
			if eager == nil {
				t.Fatal("the loop ran at once")
			}
			var inChain error
			check(t, op2.Chain(func() error {
				inChain = op2.ParLoop(tc.k, tc.set, tc.args...)
				if n := op2.RecordedLoops(); n != 0 {
					t.Errorf("%d loops recorded", n)
				}
				return nil
			}))
			r := must(op2.NewRuntime(op2.Config{Lazy: true}))
			lazy := r.ParLoop(tc.k, tc.set, tc.args...)
			for _, got := range []error{inChain, lazy} {
				if got == nil || got.Error() != eager.Error() || fmt.Sprintf("%T", got) != fmt.Sprintf("%T", eager) {
					t.Errorf("recorded: %T %v\nat once: %T %v", got, got, eager, eager)
				}
			}
			if n := op2.RecordedLoops(); n != 0 {
				t.Errorf("%d loops recorded", n)
			}
		})
	}
}

// TestChainCapturesConstsAndGlobals: a recorded loop sees the Const and
// READ Global values of when it was issued, whatever the program sets
// before it runs, and a reduction's Global holds after forcing what it
// holds after running the loops at once — on every backend and in each
// mode.
func TestChainCapturesConstsAndGlobals(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		for _, mode := range recordModes {
			t.Run(mode.name, func(t *testing.T) {
				r := mode.runtime(t, op2.Backend())
				c := must(op2.NewConstIn(r, 1, []float64{2}, "cap_c"))
				defer c.Remove()
				set := must(op2.NewSet(100, "cells"))
				x := must(op2.NewDat(set, 1, iota32[float64](100), "x"))
				g := must(op2.NewGlobal(1, []float64{10}, "g"))
				sum := must(op2.NewGlobal(1, []float64{0.5}, "sum"))
				k := op2.NewKernel("void cap(double *x, const double *g, double *s) { *x = *x * cap_c + *g; *s += *x; }", "cap")
				mode.issue(t, r, func() error {
					if err := r.ParLoop(k, set, x.Arg(op2.RW), g.Arg(op2.Read), sum.Arg(op2.Inc)); err != nil {
						return err
					}
					if err := c.Set(3); err != nil {
						return err
					}
					g.SetValue(-1)
					return r.ParLoop(k, set, x.Arg(op2.RW), g.Arg(op2.Read), sum.Arg(op2.Inc))
				})
				want, total := make([]float64, 100), 0.5
				for i := range want {
					want[i] = (float64(i)*2+10)*3 - 1
					total += float64(i)*2 + 10 + want[i]
				}
				assertEqual(t, "x", x.DataRO(), want)
				if got := sum.Value(); got != total {
					t.Errorf("sum = %v, want %v", got, total)
				}
			})
		}
	})
}

// TestChainRunTimeFailure: a failure found only when a recorded loop runs
// (here check mode finding a kernel that writes to a READ argument) is a
// *ChainError naming the loop, returned by Chain, Wait and the forcing
// accessors that return errors (Data panics with it); the loops recorded
// after it do not run.
func TestChainRunTimeFailure(t *testing.T) {
	r := must(op2.NewRuntime(op2.Config{Check: true, Lazy: true}))
	set := must(op2.NewSet(4, "cells"))
	x := must(op2.NewDat(set, 1, []float64{1, 2, 3, 4}, "x"))
	y := must(op2.NewDat[float64](set, 1, nil, "y"))
	bad := op2.NewKernel("void rt_bad(const double *x, double *y) { *y = *x; ((double *)x)[0] = -1; }", "rt_bad")
	next := op2.NewKernel("void rt_next(double *y) { *y += 100; }", "rt_next")
	issue := func() {
		check(t, r.ParLoop(bad, set, x.Arg(op2.Read), y.Arg(op2.Write)))
		check(t, r.ParLoop(next, set, y.Arg(op2.RW)))
	}
	wantChainError := func(what string, err error) {
		t.Helper()
		var ce *op2.ChainError
		var le *op2.LoopError
		if !errors.As(err, &ce) || ce.Kernel != "rt_bad" || ce.Set != "cells" || ce.Index != 0 || ce.Recorded != 2 || !errors.As(err, &le) {
			t.Fatalf("%s: %v, want a *ChainError for rt_bad wrapping a *LoopError", what, err)
		}
		wantErr(t, err, `recorded loop "rt_bad" over set "cells" (1 of 2`, "check mode", "the loop recorded after it was dropped")
		if strings.Count(err.Error(), "op2: ") != 1 {
			t.Errorf("%s: %q does not start with op2: once", what, err)
		}
		if n := op2.RecordedLoops(); n != 0 {
			t.Errorf("%s: %d loops still recorded", what, n)
		}
	}
	issue()
	wantChainError("Wait", r.Wait())
	if got := y.DataRO(); got[0] != 1 {
		t.Errorf("y = %v: the dropped loop ran", got)
	}
	issue()
	wantChainError("Sync", x.Sync())
	issue()
	x.State() // reports no error: keeps it for the next call that forces
	if n := op2.RecordedLoops(); n != 0 {
		t.Errorf("State left %d loops recorded", n)
	}
	wantChainError("Wait after State", r.Wait())
	check(t, r.Wait())
	issue()
	func() {
		defer func() { wantChainError("Data's panic", recover().(error)) }()
		x.Data()
	}()
	check(t, r.Configure(op2.Config{Check: true}))
	wantChainError("Chain", r.Chain(func() error { issue(); return nil }))
	fnErr := errors.New("fn failed")
	err := r.Chain(func() error { issue(); return fnErr })
	if !errors.Is(err, fnErr) {
		t.Errorf("Chain returned %v, want fn's error too", err)
	}
	wantChainError("Chain with fn's error", err)
}

// TestChainFailureDropsAssignments: a SetValue and a Const.Set recorded
// after a loop that fails when it runs are dropped with the loops (the
// Global and the Const keep their values), and the *ChainError counts
// the loops alone.
func TestChainFailureDropsAssignments(t *testing.T) {
	r := must(op2.NewRuntime(op2.Config{Check: true, Lazy: true}))
	set := must(op2.NewSet(4, "cells"))
	x := must(op2.NewDat(set, 1, []float64{1, 2, 3, 4}, "x"))
	y := must(op2.NewDat[float64](set, 1, nil, "y"))
	g := must(op2.NewGlobal(1, []float64{1}, "cd_g"))
	c := must(op2.NewConstIn(r, 1, []float64{2}, "cd_c"))
	defer c.Remove()
	bad := op2.NewKernel("void cd_bad(const double *x, double *y, const double *g) { *y = *x * *g * cd_c; ((double *)x)[0] = -1; }", "cd_bad")
	next := op2.NewKernel("void cd_next(double *y, const double *g) { *y += 100 * *g * cd_c; }", "cd_next")
	check(t, r.ParLoop(next, set, y.Arg(op2.RW), g.Arg(op2.Read)))
	check(t, r.ParLoop(bad, set, x.Arg(op2.Read), y.Arg(op2.Write), g.Arg(op2.Read)))
	g.SetValue(7)
	check(t, c.Set(5))
	check(t, r.ParLoop(next, set, y.Arg(op2.RW), g.Arg(op2.Read)))
	var ce *op2.ChainError
	if err := r.Wait(); !errors.As(err, &ce) || ce.Kernel != "cd_bad" || ce.Index != 1 || ce.Recorded != 3 {
		t.Fatalf("Wait: %v (%+v), want a *ChainError for cd_bad, loop 2 of 3", err, ce)
	}
	wantErr(t, ce, "(2 of 3 run when forced)", "the loop recorded after it was dropped")
	if v := g.Value(); v != 1 {
		t.Errorf("g = %v: the SetValue recorded after the failure was made", v)
	}
	if got := y.DataRO(); got[0] != 2 {
		t.Errorf("y = %v, want cd_bad's results (2 first): the loop after it ran", got)
	}
	check(t, r.ParLoop(next, set, y.Arg(op2.RW), g.Arg(op2.Read)))
	if got := y.DataRO(); got[0] != 202 {
		t.Errorf("y = %v, want 202 first: the Const.Set or SetValue recorded after the failure was made", got)
	}
}

// TestChainScopes: loops run when the scope returns, also when fn fails;
// chains nest; a panicking fn leaves its loops recorded until something
// forces them; a nil fn is refused.
func TestChainScopes(t *testing.T) {
	set := must(op2.NewSet(3, "cells"))
	x := must(op2.NewDat[float64](set, 1, nil, "x"))
	k := op2.NewKernel("void sc_inc(double *x) { *x += 1; }", "sc_inc")
	inc := func() error { return op2.ParLoop(k, set, x.Arg(op2.RW)) }
	fnErr := errors.New("fn failed")
	err := op2.Chain(func() error {
		check(t, inc())
		check(t, op2.Chain(func() error { return inc() }))
		if n := op2.RecordedLoops(); n != 0 {
			t.Errorf("after the inner chain: %d loops recorded", n)
		}
		check(t, inc())
		if n := op2.RecordedLoops(); n != 1 {
			t.Errorf("%d loops recorded, want 1", n)
		}
		return fnErr
	})
	if err != fnErr {
		t.Errorf("Chain returned %v, want fn's error", err)
	}
	assertEqual(t, "x", x.DataRO(), []float64{3, 3, 3})
	func() {
		defer func() { recover() }()
		op2.Chain(func() error { check(t, inc()); panic("fn panics") })
	}()
	if n := op2.RecordedLoops(); n != 1 {
		t.Errorf("after a panic: %d loops recorded, want 1", n)
	}
	check(t, inc()) // outside the scope again: runs, after the recorded one
	assertEqual(t, "x", x.DataRO(), []float64{5, 5, 5})
	if err := op2.Chain(nil); err == nil {
		t.Error("Chain(nil) returned nil")
	}
}

// TestLazyBoundedAndFromEnvironment: OP2_LAZY=1 makes a runtime lazy
// (a value that is not a boolean is refused), and lazy mode keeps at most
// MaxRecordedLoops loops.
func TestLazyBoundedAndFromEnvironment(t *testing.T) {
	t.Setenv("OP2_LAZY", "maybe")
	if _, err := op2.NewRuntime(op2.Config{}); err == nil || !strings.Contains(err.Error(), "OP2_LAZY") {
		t.Errorf("OP2_LAZY=maybe: %v", err)
	}
	t.Setenv("OP2_LAZY", "1")
	r := must(op2.NewRuntime(op2.Config{}))
	set := must(op2.NewSet(2, "cells"))
	x := must(op2.NewDat[float64](set, 1, nil, "x"))
	k := op2.NewKernel("void lz_inc(double *x) { *x += 1; }", "lz_inc")
	n := op2.MaxRecordedLoops + 10
	if testing.Short() {
		n = 50
	}
	for i := 0; i < n; i++ {
		check(t, r.ParLoop(k, set, x.Arg(op2.RW)))
		if got := op2.RecordedLoops(); got > op2.MaxRecordedLoops {
			t.Fatalf("%d loops recorded", got)
		}
	}
	if got := op2.RecordedLoops(); got == 0 {
		t.Error("OP2_LAZY=1 recorded nothing")
	}
	assertEqual(t, "x", x.DataRO(), []float64{float64(n), float64(n)})
}

// TestChainAllocatesNothing: a repeated loop recorded and forced
// allocates nothing, as a repeated loop run at once.
func TestChainAllocatesNothing(t *testing.T) {
	r := must(op2.NewRuntime(op2.Config{Lazy: true}))
	set := must(op2.NewSet(8, "cells"))
	edges, nodes, pedge := scatteredEdges(8, 5, 3, 2)
	x := must(op2.NewDat[float64](set, 1, nil, "x"))
	q := must(op2.NewDat[float64](nodes, 2, nil, "q"))
	w := must(op2.NewDat[float64](edges, 1, nil, "w"))
	g := must(op2.NewGlobal[float64](1, nil, "g"))
	k1 := op2.NewKernel("void al_a(double *x, double *g) { *x += 1; *g += *x; }", "al_a")
	k2 := op2.NewKernel("void al_b(const double *w, double **q) { q[0][0] += *w; q[1][1] += *w; }", "al_b")
	loops := func() {
		check(t, r.ParLoop(k1, set, x.Arg(op2.RW), g.Arg(op2.Inc)))
		check(t, r.ParLoop(k2, edges, w.Arg(op2.Read), q.ArgVec(op2.Inc, pedge)))
		check(t, r.Wait())
	}
	loops()
	if a := testing.AllocsPerRun(20, loops); a != 0 {
		t.Errorf("two recorded loops and Wait allocate %v times", a)
	}
	chain := func() { check(t, r.Chain(func() error { loops(); return nil })) }
	if a := testing.AllocsPerRun(20, chain); a > 0 {
		t.Logf("a Chain scope allocates %v times (its closure)", a)
	}
}

// TestFusedChainAllocatesNothing: loops that fuse (Config.Fusion "on"),
// recorded and forced again, reuse their fused loop: nothing is
// allocated, and the fused loop ran.
func TestFusedChainAllocatesNothing(t *testing.T) {
	r := must(op2.NewRuntime(op2.Config{Lazy: true, Fusion: "on", Timing: true}))
	set := must(op2.NewSet(8, "cells"))
	x := must(op2.NewDat[float64](set, 2, nil, "x"))
	y := must(op2.NewDat[float64](set, 1, nil, "y"))
	z := must(op2.NewDat[float64](set, 1, nil, "z"))
	k1 := op2.NewKernel("void fa_a(double *x, double *y) { x[0] += 1; *y = x[0] * x[1]; }", "fa_a")
	k2 := op2.NewKernel("void fa_b(const double *y, double *z) { z[0] += *y; }", "fa_b")
	loops := func() {
		check(t, r.ParLoop(k1, set, x.Arg(op2.RW), y.Arg(op2.Write)))
		check(t, r.ParLoop(k2, set, y.Arg(op2.Read), z.Arg(op2.RW)))
		check(t, r.Wait())
	}
	loops()
	if a := testing.AllocsPerRun(20, loops); a != 0 {
		t.Errorf("two recorded loops that fuse and Wait allocate %v times", a)
	}
	var calls int
	for _, lt := range r.Timings() {
		if lt.Kernel == "fused_fa_a_fa_b" {
			calls = lt.Calls
		}
	}
	if calls < 21 {
		t.Errorf("the fused loop ran %d times, want at least 21", calls)
	}
}

// TestChainProgramsDroppedBeforeForcing: a recorded loop whose program was
// dropped from memory (unloaded) by the programs recorded after it, with
// the program cache full, runs with its program built again.
func TestChainProgramsDroppedBeforeForcing(t *testing.T) {
	defer op2.SetMaxPrograms(1)()
	set := must(op2.NewSet(5, "cells"))
	x := must(op2.NewDat[float64](set, 1, nil, "x"))
	a := op2.NewKernel("void drop_a(double *x) { *x += 1; }", "drop_a")
	b := op2.NewKernel("void drop_b(double *x) { *x *= 3; }", "drop_b")
	check(t, op2.Chain(func() error {
		for i := 0; i < 2; i++ {
			check(t, op2.ParLoop(a, set, x.Arg(op2.RW)))
			check(t, op2.ParLoop(b, set, x.Arg(op2.RW)))
		}
		return nil
	}))
	assertEqual(t, "x", x.DataRO(), []float64{12, 12, 12, 12, 12})
}

// TestChainTimed: with timing on, recorded loops are timed when they run;
// the timing report runs them first.
func TestChainTimed(t *testing.T) {
	r := must(op2.NewRuntime(op2.Config{Lazy: true, Timing: true}))
	set := must(op2.NewSet(5, "cells"))
	x := must(op2.NewDat[float64](set, 1, nil, "x"))
	k := op2.NewKernel("void timed_inc(double *x) { *x += 1; }", "timed_inc")
	for i := 0; i < 3; i++ {
		check(t, r.ParLoop(k, set, x.Arg(op2.RW)))
	}
	ts := r.Timings()
	if len(ts) != 1 || ts[0].Kernel != "timed_inc" || ts[0].Calls != 3 {
		t.Errorf("timing report %+v, want 3 calls of timed_inc", ts)
	}
}

// TestLoopComputeRecords: Loop.Compute of a lazy runtime's loop records
// it, as ParLoop does; the loop runs when its data is read.
func TestLoopComputeRecords(t *testing.T) {
	r := must(op2.NewRuntime(op2.Config{Lazy: true}))
	set := must(op2.NewSet(4, "cells"))
	x := must(op2.NewDat[float64](set, 1, nil, "x"))
	lp := must(r.NewLoop(op2.NewKernel("void lc_inc(double *x) { *x += 2; }", "lc_inc"), set, x.Arg(op2.RW)))
	check(t, lp.Compute())
	check(t, lp.Compute())
	if n := op2.RecordedLoops(); n != 2 {
		t.Errorf("%d loops recorded, want 2", n)
	}
	assertEqual(t, "x", x.DataRO(), []float64{4, 4, 4, 4})
}

// TestChainFromGoroutines: loops issued from several goroutines while a
// Chain scope is open are recorded and run when it returns (run with
// -race: the queue is only touched under the package's lock).
func TestChainFromGoroutines(t *testing.T) {
	set := must(op2.NewSet(8, "cells"))
	k := op2.NewKernel("void gr_inc(double *x) { *x += 1; }", "gr_inc")
	xs := make([]*op2.Dat[float64], 4)
	for i := range xs {
		xs[i] = must(op2.NewDat[float64](set, 1, nil, fmt.Sprintf("x%d", i)))
	}
	check(t, op2.Chain(func() error {
		errs := make(chan error, len(xs))
		for _, x := range xs {
			go func() {
				var err error
				for j := 0; j < 5 && err == nil; j++ {
					err = op2.ParLoop(k, set, x.Arg(op2.RW))
				}
				errs <- err
			}()
		}
		for range xs {
			if err := <-errs; err != nil {
				return err
			}
		}
		return nil
	}))
	for i, x := range xs {
		assertEqual(t, fmt.Sprintf("x%d", i), x.DataRO(), []float64{5, 5, 5, 5, 5, 5, 5, 5})
	}
}

// TestFusionSetting: Config.Fusion and OP2_FUSION take "auto", "on" and
// "off"; anything else is an error naming the setting; "off" fuses
// nothing and "on" fuses on the sequential backend, which "auto" leaves
// alone without SIMD lanes (it fuses once the fused loop, built in the
// background, is built).
func TestFusionSetting(t *testing.T) {
	if _, err := op2.NewRuntime(op2.Config{Fusion: "yes"}); err == nil || !strings.Contains(err.Error(), "Config.Fusion") {
		t.Errorf("Config.Fusion yes: %v", err)
	}
	t.Setenv("OP2_FUSION", "maybe")
	if _, err := op2.NewRuntime(op2.Config{}); err == nil || !strings.Contains(err.Error(), "OP2_FUSION") {
		t.Errorf("OP2_FUSION=maybe: %v", err)
	}
	set := must(op2.NewSet(8, "cells"))
	x := must(op2.NewDat[float64](set, 1, nil, "x"))
	y := must(op2.NewDat[float64](set, 1, nil, "y"))
	k1 := op2.NewKernel("void fs_a(double *x) { x[0] += 1; }", "fs_a")
	k2 := op2.NewKernel("void fs_b(const double *x, double *y) { y[0] = 2 * x[0]; }", "fs_b")
	for _, c := range []struct {
		env, cfg, simd string
		fused          bool
	}{{"off", "", "", false}, {"on", "", "", true}, {"auto", "", "", true}, {"auto", "", "scalar", false}, {"auto", "", "8", true}, {"auto", "", "SIMD8", true}, {"auto", "", "off", false}, {"on", "off", "", false}, {"off", "auto", "4", true}} {
		t.Setenv("OP2_FUSION", c.env)
		r := must(op2.NewRuntime(op2.Config{Fusion: c.cfg, SIMD: c.simd, Timing: true}))
		// "auto" builds the fused loop in the background: the chain
		// after that build uses it.
		for range 2 {
			r.ResetTimings()
			check(t, r.Chain(func() error {
				check(t, r.ParLoop(k1, set, x.Arg(op2.RW)))
				return r.ParLoop(k2, set, x.Arg(op2.Read), y.Arg(op2.Write))
			}))
			op2.WaitBuilds()
		}
		fused := false
		for _, lt := range r.Timings() {
			fused = fused || lt.Kernel == "fused_fs_a_fs_b"
		}
		if fused != c.fused {
			t.Errorf("OP2_FUSION=%s, Config.Fusion %q, SIMD %q: fused %v, want %v", c.env, c.cfg, c.simd, fused, c.fused)
		}
	}
}

// TestSetValueOrdersAfterRecordedLoops: Global.SetValue runs no recorded
// loop. With none passing the Global it sets the value at once; else the
// assignment is recorded after them: each loop sees the value of when
// it was issued, as Airfoil's reset of its rms change between loops
// needs, and the loops stay recorded (to be fused).
func TestSetValueOrdersAfterRecordedLoops(t *testing.T) {
	set := must(op2.NewSet(10, "cells"))
	x := must(op2.NewDat(set, 1, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, "x"))
	sum := must(op2.NewGlobal(1, []float64{100}, "sum"))
	other := must(op2.NewGlobal(1, []float64{0}, "other"))
	add := op2.NewKernel("void sv_add(const double *x, double *s) { *s += x[0]; }", "sv_add")
	scale := op2.NewKernel("void sv_scale(double *x, const double *s) { x[0] *= s[0]; }", "sv_scale")
	steps := func(r *op2.Runtime) (seen []int) {
		check(t, r.ParLoop(add, set, x.Arg(op2.Read), sum.Arg(op2.Inc))) // sum = 155
		check(t, r.ParLoop(scale, set, x.Arg(op2.RW), sum.Arg(op2.Read)))
		seen = append(seen, op2.RecordedLoops())
		other.SetValue(7) // no loop passes it: set now
		seen = append(seen, op2.RecordedLoops())
		sum.SetValue(0.5) // after the loops that pass it
		seen = append(seen, op2.RecordedLoops())
		check(t, r.ParLoop(scale, set, x.Arg(op2.RW), sum.Arg(op2.Read)))
		check(t, r.ParLoop(add, set, x.Arg(op2.Read), sum.Arg(op2.Inc)))
		sum.SetValue(2)
		check(t, r.ParLoop(scale, set, x.Arg(op2.RW), sum.Arg(op2.Read)))
		seen = append(seen, op2.RecordedLoops())
		return seen
	}
	run := func(lazy bool) ([]float64, float64, []int) {
		x.Data()
		copy(x.Data(), []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
		sum.SetValue(100)
		r := must(op2.NewRuntime(op2.Config{Lazy: lazy, Fusion: "on"}.Explicit("Lazy")))
		seen := steps(r)
		if other.Value() != 7 {
			t.Errorf("other = %v, want 7", other.Value())
		}
		return x.DataRO(), sum.Value(), seen
	}
	wantX, wantSum, _ := run(false)
	gotX, gotSum, seen := run(true)
	if !slices.Equal(gotX, wantX) || gotSum != wantSum {
		t.Errorf("recorded: x %v sum %v; at once: x %v sum %v", gotX, gotSum, wantX, wantSum)
	}
	// Two loops recorded; other set at once (still 2); sum's assignment
	// recorded after them (3 entries); then 3 loops and another
	// assignment: 7.
	if want := []int{2, 2, 3, 7}; !slices.Equal(seen, want) {
		t.Errorf("recorded entries %v, want %v", seen, want)
	}
}

// TestFusedBuildFailureRunsLoopsApart: two kernels that fuse by their
// arguments but whose sources cannot be compiled together (each defines
// a helper of the same name) run one by one, with their results, and the
// fused loop is not tried again.
func TestFusedBuildFailureRunsLoopsApart(t *testing.T) {
	r := must(op2.NewRuntime(op2.Config{Fusion: "on", Timing: true}))
	set := must(op2.NewSet(6, "cells"))
	x := must(op2.NewDat(set, 1, []float64{1, 2, 3, 4, 5, 6}, "x"))
	y := must(op2.NewDat[float64](set, 1, nil, "y"))
	k1 := op2.NewKernel("static double fb_h(double v) { return v + 1; }\nvoid fb_a(double *x) { x[0] = fb_h(x[0]); }", "fb_a")
	k2 := op2.NewKernel("static double fb_h(double v) { return v * 3; }\nvoid fb_b(const double *x, double *y) { y[0] = fb_h(x[0]); }", "fb_b")
	for i := 0; i < 2; i++ {
		check(t, r.Chain(func() error {
			check(t, r.ParLoop(k1, set, x.Arg(op2.RW)))
			return r.ParLoop(k2, set, x.Arg(op2.Read), y.Arg(op2.Write))
		}))
	}
	if got, want := x.DataRO(), []float64{3, 4, 5, 6, 7, 8}; !slices.Equal(got, want) {
		t.Errorf("x = %v, want %v", got, want)
	}
	if got, want := y.DataRO(), []float64{9, 12, 15, 18, 21, 24}; !slices.Equal(got, want) {
		t.Errorf("y = %v, want %v", got, want)
	}
	for _, lt := range r.Timings() {
		if strings.HasPrefix(lt.Kernel, "fused_") {
			t.Errorf("a fused loop ran: %s ×%d", lt.Kernel, lt.Calls)
		}
		if lt.Calls != 2 {
			t.Errorf("%s ran %d times, want 2", lt.Kernel, lt.Calls)
		}
	}
	// The control: the same pair with helpers of different names fuses,
	// so fusion was tried above and its build failed.
	r.ResetTimings()
	k1 = op2.NewKernel("static double fb_h1(double v) { return v + 1; }\nvoid fb_c(double *x) { x[0] = fb_h1(x[0]); }", "fb_c")
	k2 = op2.NewKernel("static double fb_h2(double v) { return v * 3; }\nvoid fb_d(const double *x, double *y) { y[0] = fb_h2(x[0]); }", "fb_d")
	check(t, r.Chain(func() error {
		check(t, r.ParLoop(k1, set, x.Arg(op2.RW)))
		return r.ParLoop(k2, set, x.Arg(op2.Read), y.Arg(op2.Write))
	}))
	if ts := r.Timings(); len(ts) != 1 || ts[0].Kernel != "fused_fb_c_fb_d" {
		t.Errorf("the control pair ran as %+v, want one fused loop", ts)
	}
	if got, want := y.DataRO(), []float64{12, 15, 18, 21, 24, 27}; !slices.Equal(got, want) {
		t.Errorf("control: y = %v, want %v", got, want)
	}
}

// TestConstSetOrdersAfterRecordedLoops: Const.Set runs no recorded loop.
// With none using the constant it sets the values at once; else the
// assignment is recorded after them, so each loop sees the values of when
// it was issued, and the loops stay recorded.
func TestConstSetOrdersAfterRecordedLoops(t *testing.T) {
	set := must(op2.NewSet(5, "cells"))
	x := must(op2.NewDat[float64](set, 1, nil, "x"))
	c := must(op2.NewConst(2, []float64{1, 10}, "cs_c"))
	defer c.Remove()
	unused := must(op2.NewConst(1, []float64{0}, "cs_unused"))
	defer unused.Remove()
	k := op2.NewKernel("void cs_add(double *x) { x[0] = x[0] * cs_c[1] + cs_c[0]; }", "cs_add")
	run := func(lazy bool) ([]float64, []int) {
		check(t, c.Set(1, 10))
		copy(x.Data(), []float64{1, 2, 3, 4, 5})
		check(t, op2.Configure(op2.Config{Lazy: lazy}.Explicit("Lazy")))
		defer op2.Configure(op2.Config{})
		r := op2.Default()
		var seen []int
		check(t, r.ParLoop(k, set, x.Arg(op2.RW)))
		check(t, unused.Set(3)) // no loop uses it: set now
		seen = append(seen, op2.RecordedLoops())
		check(t, c.Set(2, 0.5)) // after the loop that uses it
		seen = append(seen, op2.RecordedLoops())
		if v := c.Value(); !slices.Equal(v, []float64{2, 0.5}) {
			t.Errorf("Value after Set = %v, want [2 0.5]", v)
		}
		check(t, r.ParLoop(k, set, x.Arg(op2.RW)))
		check(t, c.Set(-1, 3))
		check(t, r.ParLoop(k, set, x.Arg(op2.RW)))
		seen = append(seen, op2.RecordedLoops())
		if unused.Value()[0] != 3 {
			t.Errorf("cs_unused = %v, want 3", unused.Value())
		}
		return x.DataRO(), seen
	}
	want, _ := run(false)
	got, seen := run(true)
	if !slices.Equal(got, want) {
		t.Errorf("recorded: x %v; at once %v", got, want)
	}
	if w := []int{1, 2, 5}; !slices.Equal(seen, w) {
		t.Errorf("recorded entries %v, want %v", seen, w)
	}
	if v := c.Value(); !slices.Equal(v, []float64{-1, 3}) {
		t.Errorf("cs_c = %v, want [-1 3]", v)
	}
}

// TestFusedRunsAreBounded: a long run of loops that fuse is fused in
// pieces of at most fuse.MaxLoops loops.
func TestFusedRunsAreBounded(t *testing.T) {
	r := must(op2.NewRuntime(op2.Config{Fusion: "on", Timing: true}))
	set := must(op2.NewSet(4, "cells"))
	const n = 40
	d := make([]*op2.Dat[float64], n+1)
	for i := range d {
		d[i] = must(op2.NewDat(set, 1, []float64{1, 2, 3, 4}, fmt.Sprintf("d%d", i)))
	}
	k := op2.NewKernel("void fb_step(const double *a, double *b) { b[0] = a[0] + 1; }", "fb_step")
	check(t, r.Chain(func() error {
		for i := 0; i < n; i++ {
			if err := r.ParLoop(k, set, d[i].Arg(op2.Read), d[i+1].Arg(op2.Write)); err != nil {
				return err
			}
		}
		return nil
	}))
	if got := d[n].DataRO(); !slices.Equal(got, []float64{41, 42, 43, 44}) {
		t.Errorf("d%d = %v", n, got)
	}
	loops := 0
	for _, lt := range r.Timings() {
		parts := strings.Count(lt.Kernel, "fb_step")
		if parts > 16 {
			t.Errorf("%s fuses %d loops, more than 16", lt.Kernel[:40], parts)
		}
		loops += parts * lt.Calls
	}
	if loops != n {
		t.Errorf("%d loops ran, want %d", loops, n)
	}
}

// TestFusedProgramsDroppedBeforeRunning: with room for one program,
// building the second fused loop's program unloads the first's before it
// runs; the first is found (built) again, not called unloaded.
func TestFusedProgramsDroppedBeforeRunning(t *testing.T) {
	check(t, op2.Configure(op2.Config{Fusion: "on", Timing: true}))
	defer op2.Configure(op2.Config{})
	defer op2.ResetTimings()
	defer op2.SetMaxPrograms(1)()
	set := must(op2.NewSet(5, "cells"))
	d := make([]*op2.Dat[float64], 5)
	for i := range d {
		d[i] = must(op2.NewDat(set, 1, []float64{1, 2, 3, 4, 5}, fmt.Sprintf("d%d", i)))
	}
	g := must(op2.NewGlobal(1, []float64{2}, "g"))
	a := op2.NewKernel("void fd_a(const double *x, double *y) { *y = *x + 1; }", "fd_a")
	b := op2.NewKernel("void fd_b(const double *x, double *y, const double *g) { *y = *x * *g; }", "fd_b")
	op2.ResetTimings()
	check(t, op2.Chain(func() error {
		check(t, op2.ParLoop(a, set, d[0].Arg(op2.Read), d[1].Arg(op2.Write)))
		check(t, op2.ParLoop(b, set, d[1].Arg(op2.Read), d[2].Arg(op2.Write), g.Arg(op2.Read)))
		g.SetValue(3) // recorded between the two fused runs
		check(t, op2.ParLoop(b, set, d[2].Arg(op2.Read), d[3].Arg(op2.Write), g.Arg(op2.Read)))
		return op2.ParLoop(a, set, d[3].Arg(op2.Read), d[4].Arg(op2.Write))
	}))
	want := make([]float64, 5)
	for i := range want {
		want[i] = (float64(i+1)+1)*2*3 + 1
	}
	assertEqual(t, "d4", d[4].DataRO(), want)
	fused := 0
	for _, lt := range op2.Timings() {
		if strings.HasPrefix(lt.Kernel, "fused_") {
			fused++
		}
	}
	if fused != 2 {
		t.Errorf("%d fused loops ran, want 2", fused)
	}
}

// TestDroppedConstSetKeepsTheValue: a Const.Set recorded after a loop
// that fails when it runs is dropped with the loops after it: Value gives
// the recorded value until then, and the value of before it afterwards.
func TestDroppedConstSetKeepsTheValue(t *testing.T) {
	r := must(op2.NewRuntime(op2.Config{Check: true, Lazy: true}))
	c := must(op2.NewConstIn(r, 1, []float64{1}, "cd_c"))
	defer c.Remove()
	set := must(op2.NewSet(4, "cells"))
	x := must(op2.NewDat(set, 1, []float64{1, 2, 3, 4}, "x"))
	y := must(op2.NewDat[float64](set, 1, nil, "y"))
	bad := op2.NewKernel("void cd_bad(const double *x, double *y) { *y = *x * cd_c; ((double *)x)[0] = -1; }", "cd_bad")
	check(t, r.ParLoop(bad, set, x.Arg(op2.Read), y.Arg(op2.Write)))
	check(t, c.Set(5)) // recorded: the loop uses the constant
	if n := op2.RecordedLoops(); n != 2 {
		t.Fatalf("%d entries recorded, want the loop and the assignment", n)
	}
	if v := c.Value(); v[0] != 5 {
		t.Errorf("Value = %v before the loops ran, want the recorded 5", v)
	}
	var ce *op2.ChainError
	if err := r.Wait(); !errors.As(err, &ce) {
		t.Fatalf("Wait: %v, want a *ChainError", err)
	}
	if v := c.Value(); v[0] != 1 {
		t.Errorf("Value = %v after the assignment was dropped, want 1", v)
	}
	check(t, c.Set(7))
	if v := c.Value(); v[0] != 7 {
		t.Errorf("Value = %v, want 7", v)
	}
}

// TestFusedBuildFailureIsPerBackend: a fused program that fails to build
// in one runtime (a compile timeout of a microsecond) does not stop
// another runtime, whose compiler builds it, from fusing the same loops
// (the failure was kept for the whole process).
func TestFusedBuildFailureIsPerBackend(t *testing.T) {
	cache := t.TempDir()
	pair := func(prefix string) (*op2.Kernel, *op2.Kernel) {
		return op2.NewKernel("void "+prefix+"_one(double *x, double *y) { x[0] += 1; *y = x[0]; }", prefix+"_one"),
			op2.NewKernel("void "+prefix+"_two(const double *y, double *z) { z[0] += *y; }", prefix+"_two")
	}
	// run issues the pair on runtime r over fresh data.
	run := func(r *op2.Runtime, prefix string) {
		k1, k2 := pair(prefix)
		cells := must(op2.NewSet(100, "af_cells"))
		x := must(op2.NewDat[float64](cells, 1, nil, "af_x"))
		y := must(op2.NewDat[float64](cells, 1, nil, "af_y"))
		z := must(op2.NewDat[float64](cells, 1, nil, "af_z"))
		check(t, r.ParLoop(k1, cells, x.Arg(op2.RW), y.Arg(op2.Write)))
		check(t, r.ParLoop(k2, cells, y.Arg(op2.Read), z.Arg(op2.RW)))
	}
	fused := func(cfg op2.Config, prefix string) bool {
		cfg.Lazy, cfg.Fusion, cfg.Timing, cfg.CacheDir = true, "on", true, cache
		r := must(op2.NewRuntime(cfg))
		defer r.Close()
		run(r, prefix)
		check(t, r.Wait())
		for _, lt := range r.Timings() {
			if lt.Kernel == "fused_"+prefix+"_one_"+prefix+"_two" {
				return true
			}
		}
		return false
	}
	// Control: a pair never tried before fuses.
	if !fused(op2.Config{}, "afc") {
		t.Fatal("control: the pair does not fuse")
	}
	// Each kernel's own program is built first (and stays loaded), so
	// that only the fused program compiles in the runtime whose compiler
	// times out.
	keep := must(op2.NewRuntime(op2.Config{CacheDir: cache}))
	defer keep.Close()
	run(keep, "af")
	if fused(op2.Config{CompileTimeout: time.Microsecond}, "af") {
		t.Fatal("the fused program built within a microsecond's compile timeout")
	}
	if !fused(op2.Config{}, "af") {
		t.Errorf("a runtime whose compiler builds the fused loop does not fuse it: the failure in another runtime is kept")
	}
}
