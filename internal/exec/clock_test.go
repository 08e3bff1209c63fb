package exec_test

import (
	"errors"
	"testing"
	"time"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
)

// clockBackend is a fakeBackend that runs loops asynchronously (Waiter)
// and times them on its "device" (DeviceClock): each stamp is a number,
// and the device time between two stamps is their difference in
// milliseconds.
type clockBackend struct {
	fakeBackend
	clocked  bool
	waits    int
	next     int
	released int
	stampErr error
	betweens int
}

func (b *clockBackend) Wait() error   { b.waits++; return nil }
func (b *clockBackend) Clocked() bool { return b.clocked }
func (b *clockBackend) Stamp() (exec.Stamp, error) {
	if b.stampErr != nil {
		return nil, b.stampErr
	}
	b.next++
	return b.next, nil
}
func (b *clockBackend) Between(from, to exec.Stamp) (time.Duration, error) {
	b.betweens++
	b.released += 2
	return time.Duration(to.(int)-from.(int)) * time.Millisecond, nil
}

// TestTimingOnDeviceClock: on a backend that times its device, a timed
// loop is not waited for; its time is the device's between the stamps
// around it, read when the records are (and by Reset, which releases
// them); without a clock, or with one that cannot time, the executor
// waits after each loop as before; a stamp that fails fails the loop.
func TestTimingOnDeviceClock(t *testing.T) {
	ms := newMesh(t, 10, 10, 10)
	run := func(t *testing.T, b *clockBackend, calls int) (*exec.Timings, error) {
		t.Helper()
		b.launchOK = -1
		x := exec.New()
		x.Timing = exec.NewTimings()
		o := &exec.Opened{Backend: b, ID: core.NewID()}
		l := ms.directLoop(t)
		for range calls {
			if err := x.RunProgram(o, l, nil); err != nil {
				return x.Timing, err
			}
		}
		return x.Timing, nil
	}
	t.Run("clocked", func(t *testing.T) {
		b := &clockBackend{clocked: true}
		tm, err := run(t, b, 3)
		if err != nil {
			t.Fatal(err)
		}
		if b.waits != 0 || b.betweens != 0 {
			t.Fatalf("%d waits, %d stamps read before the records; want none", b.waits, b.betweens)
		}
		recs := tm.Records()
		if len(recs) != 1 || recs[0].Calls != 3 || recs[0].Run != 3*time.Millisecond {
			t.Fatalf("records %+v; want 3 calls of 1 ms each", recs)
		}
		if b.betweens != 3 || b.released != 6 {
			t.Errorf("%d stamp pairs read, %d stamps released; want 3 and 6", b.betweens, b.released)
		}
		if again := tm.Records(); again[0].Run != recs[0].Run {
			t.Errorf("read again: %v, want %v", again[0].Run, recs[0].Run)
		}
	})
	t.Run("reset releases", func(t *testing.T) {
		b := &clockBackend{clocked: true}
		tm, err := run(t, b, 2)
		if err != nil {
			t.Fatal(err)
		}
		tm.Reset()
		if b.released != 4 || len(tm.Records()) != 0 {
			t.Errorf("after Reset: %d stamps released, %d records", b.released, len(tm.Records()))
		}
	})
	t.Run("many unread", func(t *testing.T) {
		b := &clockBackend{clocked: true}
		if _, err := run(t, b, 1500); err != nil {
			t.Fatal(err)
		}
		if b.betweens == 0 || b.betweens > 1500 {
			t.Errorf("%d stamp pairs read while 1500 calls went unread; want some, to bound them", b.betweens)
		}
	})
	t.Run("cannot time", func(t *testing.T) {
		b := &clockBackend{clocked: false}
		tm, err := run(t, b, 2)
		if err != nil {
			t.Fatal(err)
		}
		if b.waits != 2 || b.next != 0 || tm.Records()[0].Calls != 2 {
			t.Errorf("%d waits, %d stamps; want a wait per loop and no stamps", b.waits, b.next)
		}
	})
	t.Run("stamp fails", func(t *testing.T) {
		boom := errors.New("the device is lost")
		b := &clockBackend{clocked: true, stampErr: boom}
		tm, err := run(t, b, 1)
		if !errors.Is(err, boom) || len(tm.Records()) != 0 {
			t.Errorf("%v, %d records; want the stamp's error and no record", err, len(tm.Records()))
		}
	})
}

// TestTimingCountsEarlyBuilds: a program built before its loop runs (a
// loop recorded in lazy mode finds its program when it is recorded)
// counts in the loop's compile time once the loop runs (no record
// before: a loop that only runs fused has none); a program already built
// counts nothing more.
func TestTimingCountsEarlyBuilds(t *testing.T) {
	ms := newMesh(t, 10, 10, 10)
	b := &fakeBackend{launchOK: -1}
	x := exec.New()
	x.Timing = exec.NewTimings()
	o := &exec.Opened{Backend: b, ID: core.NewID()}
	l := ms.directLoop(t)
	p, err := x.Program(o, l)
	if err != nil {
		t.Fatal(err)
	}
	if recs := x.Timing.Records(); len(recs) != 0 {
		t.Fatalf("after the build: %+v; want no record before the loop runs", recs)
	}
	if err := x.RunProgram(o, l, p); err != nil {
		t.Fatal(err)
	}
	recs := x.Timing.Records()
	if len(recs) != 1 || recs[0].Calls != 1 || recs[0].Compile <= 0 {
		t.Fatalf("after a call: %+v; want one call with the build's compile time", recs)
	}
	compiled := recs[0].Compile
	if err := x.RunProgram(o, l, p); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Program(o, l); err != nil {
		t.Fatal(err)
	}
	recs = x.Timing.Records()
	if len(recs) != 1 || recs[0].Calls != 2 || recs[0].Compile != compiled {
		t.Errorf("after two calls: %+v; want 2 calls and the compile time %v", recs, compiled)
	}
}
