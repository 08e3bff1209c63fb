package op2_test

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
)

// returnsWithin runs f in a goroutine and fails the test when it does
// not return within d: the sign of a lock left held.
func returnsWithin(t *testing.T, what string, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v: the op2 lock was left held", what, d)
	}
}

// recovered calls f and returns what it panicked with, or nil.
func recovered(f func()) (r any) {
	defer func() { r = recover() }()
	f()
	return nil
}

// TestChainOfNilRuntimeReleasesLock: Chain of a nil *Runtime panics (as
// methods of nil objects do), and the panic no longer leaves the lock
// held, which hung every later call.
func TestChainOfNilRuntimeReleasesLock(t *testing.T) {
	var r *op2.Runtime
	if p := recovered(func() { _ = r.Chain(func() error { return nil }) }); p == nil {
		t.Fatal("Chain of a nil Runtime did not panic")
	}
	returnsWithin(t, "op2.Wait after a recovered panic in Chain", 10*time.Second, func() { check(t, op2.Wait()) })
}

// panicOnLoopStart is a log handler that panics on the first "loop
// start" record.
type panicOnLoopStart struct{ n *atomic.Int32 }

func (h panicOnLoopStart) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "loop start") && h.n.Add(1) == 1 {
		panic("the handler panics on " + r.Message)
	}
	return nil
}
func (h panicOnLoopStart) Enabled(context.Context, slog.Level) bool { return true }
func (h panicOnLoopStart) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h panicOnLoopStart) WithGroup(string) slog.Handler            { return h }

// TestPanicWhileForcingReleasesLock: a Go panic while recorded loops run
// (here a log handler's) releases the lock; the next call that forces
// says the recorded loops may not have run, and later loops run.
func TestPanicWhileForcingReleasesLock(t *testing.T) {
	r := must(op2.NewRuntime(op2.Config{Backend: "sequential", Lazy: true, Logger: slog.New(panicOnLoopStart{new(atomic.Int32)})}))
	defer r.Close()
	s := must(op2.NewSet(4, "s"))
	x := must(op2.NewDat(s, 1, []float64{1, 2, 3, 4}, "x"))
	k := op2.NewKernel("void forced_add(double *x) { *x += 3; }", "forced_add")
	check(t, r.ParLoop(k, s, x.Arg(op2.RW))) // recorded
	if p := recovered(func() { _ = x.Data() }); p == nil {
		t.Fatal("forcing did not panic")
	}
	returnsWithin(t, "Dat.DataROErr after a recovered panic while forcing", 10*time.Second, func() {
		if _, err := x.DataROErr(); err == nil || !strings.Contains(err.Error(), `a Go panic while the recorded loops ran (1 recorded: the first loop "forced_add"`) {
			t.Errorf("the next access: %v, want an error saying the recorded loops may not have run", err)
		}
	})
	check(t, r.ParLoop(k, s, x.Arg(op2.RW)))
	if got := x.DataRO(); got[0] != 1+3 {
		t.Errorf("x = %v after a later loop, want 4 first (the interrupted loop did not run)", got)
	}
}
