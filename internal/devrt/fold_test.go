package devrt

import (
	"errors"
	"strings"
	"testing"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
)

// asyncMock is the mock driver with asynchronous reads: a read is made
// when its fence is settled, so a fold that runs too early sees the
// partial results of a later launch.
type asyncMock struct {
	*mockDriver
	queued  map[*mockFence]func()
	settled int
	fail    error
}

type mockFence struct{ _ int } // not zero-sized: each fence is its own map key

func (d *asyncMock) HostBuffer(n int) (unsafe.Pointer, error) {
	return unsafe.Pointer(unsafe.SliceData(make([]byte, n))), nil
}
func (d *asyncMock) FreeHostBuffer(unsafe.Pointer) {}
func (d *asyncMock) NewFence() (Fence, error)      { return &mockFence{}, nil }
func (d *asyncMock) FreeFence(Fence)               {}
func (d *asyncMock) ReadAsync(b Buffer, dst unsafe.Pointer, n int, f Fence) error {
	snapshot := append([]byte(nil), b.(*mockBuf).data[:n]...) // the values when the copy was queued
	d.queued[f.(*mockFence)] = func() { copy(unsafe.Slice((*byte)(dst), n), snapshot) }
	return nil
}
func (d *asyncMock) Settle(f Fence) error {
	d.settled++
	if d.fail != nil {
		return d.fail
	}
	d.queued[f.(*mockFence)]()
	delete(d.queued, f.(*mockFence))
	return nil
}

// reducing is a program of a loop k that sums x, over the fixture's n
// edges, into the Global g (initially 5), on the mock driver with
// asynchronous reads: each work group's partial result is value.
type reducing struct {
	d     *asyncMock
	f     *fixture
	x, g  *core.Storage
	l     *core.Loop
	src   string
	value float64
	run   func(l *core.Loop) // binds, launches and finishes l
}

func newReducing(t *testing.T) *reducing {
	const n = 1000
	r := &reducing{f: newFixture(t, n, 2), value: 1, src: "void k(const double *x, double *g) { *g += *x; }"}
	r.x = r.f.dat("x", r.f.edges, 1, make([]float64, n))
	r.g = r.f.dat("g", nil, 1, []float64{5})
	r.l = loopOf(t, r.src, "k", r.f.edges, nil,
		core.Arg{Data: r.x, Access: core.Read, Kind: core.ArgDirect}, core.Arg{Data: r.g, Access: core.Inc, Kind: core.ArgGlobal})
	r.d = &asyncMock{mockDriver: newMock(32 << 10), queued: map[*mockFence]func(){}}
	r.d.run = func(args []Arg, groups int) {
		red := args[4].Buf.(*mockBuf).data
		for gi := 0; gi < groups; gi++ {
			*(*float64)(unsafe.Pointer(&red[8*gi])) = r.value
		}
	}
	p := program(t, r.d.mockDriver, r.l)
	p.drv = r.d
	r.run = func(l *core.Loop) {
		t.Helper()
		if err := p.Bind(l, nil); err != nil {
			t.Fatal(err)
		}
		if err := p.Launch(exec.Range{First: 0, Last: n}); err != nil {
			t.Fatal(err)
		}
		if err := p.Finish(l); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// TestReductionFoldedWhenNeeded: on a driver that copies asynchronously,
// Finish leaves a reduction's partial results on their way: the Global's
// host value changes only when something accesses it, then by exactly
// the loop's results; a second loop of the same program into another
// Global settles the first's copy before reusing its host buffer; a
// failed copy is reported at the access, naming the loop.
func TestReductionFoldedWhenNeeded(t *testing.T) {
	r := newReducing(t)
	d, f, x, g, l, src, run := r.d, r.f, r.x, r.g, r.l, r.src, r.run
	h := f.dat("h", nil, 1, []float64{7})
	run(l)
	groups := float64(d.launches[0].groups)
	if got := *(*float64)(g.Host); got != 5 || d.settled != 0 {
		t.Fatalf("after Finish g = %v with %d copies waited for; want 5 (the results still on their way) and none", got, d.settled)
	}
	// The same program into h: its copy takes the next host buffer, and
	// nothing is waited for.
	lh := loopOf(t, src, "k", f.edges, nil,
		core.Arg{Data: x, Access: core.Read, Kind: core.ArgDirect}, core.Arg{Data: h, Access: core.Inc, Kind: core.ArgGlobal})
	r.value = 2
	run(lh)
	if d.settled != 0 {
		t.Errorf("%d copies waited for after the second loop, want none", d.settled)
	}
	if err := g.HostAccess(false); err != nil {
		t.Fatal(err)
	}
	if got := *(*float64)(g.Host); got != 5+groups {
		t.Errorf("g = %v, want 5 + %v", got, groups)
	}
	if err := h.HostAccess(false); err != nil {
		t.Fatal(err)
	}
	if got := *(*float64)(h.Host); got != 7+2*groups || d.settled != 2 {
		t.Errorf("h = %v after %d waits, want 7 + 2×%v after 2", got, d.settled, groups)
	}
	// A loop that only reduces into g, repeated, queues foldDepth copies
	// without waiting (not at Bind, not at Finish); the next reuses the
	// oldest buffer, so everything pending on g is folded first, in order.
	want := 5 + groups
	for k := range foldDepth + 1 {
		r.value = float64(k + 1)
		run(l)
		if k < foldDepth {
			if d.settled != 2 || *(*float64)(g.Host) != want {
				t.Fatalf("after %d loops into g: %d waits and g = %v; want 2 and %v", k+1, d.settled, *(*float64)(g.Host), want)
			}
			continue
		}
		for j := range foldDepth {
			want += float64(j+1) * groups
		}
		if d.settled != 2+foldDepth || *(*float64)(g.Host) != want {
			t.Fatalf("after %d loops into g: %d waits and g = %v; want %d and %v", k+1, d.settled, *(*float64)(g.Host), 2+foldDepth, want)
		}
	}
	if err := g.HostAccess(false); err != nil {
		t.Fatal(err)
	}
	if got, want := *(*float64)(g.Host), want+(foldDepth+1)*groups; got != want || d.settled != 3+foldDepth {
		t.Errorf("g = %v after %d waits, want %v after %d", got, d.settled, want, 3+foldDepth)
	}
	// A failed copy surfaces where the Global is accessed, naming the loop.
	run(l)
	d.fail = errors.New("device lost")
	err := g.HostAccess(false)
	if err == nil || !strings.Contains(err.Error(), "k") || !strings.Contains(err.Error(), "device lost") {
		t.Errorf("a failed copy gave %v at the access", err)
	}
}

// TestReductionDroppedByOverwrite: a Global's whole value written on the
// host (Global.SetValue) drops the reductions into it still on their way,
// without waiting for their copies; a fold dropped still waits for its
// copy before its host buffer is reused, and folds nothing; the loops
// after the write add to the written value only.
func TestReductionDroppedByOverwrite(t *testing.T) {
	r := newReducing(t)
	d, g := r.d, r.g
	run := func() { t.Helper(); r.run(r.l) }
	run()
	run()
	groups := float64(d.launches[0].groups)
	if err := g.HostOverwrite(); err != nil {
		t.Fatal(err)
	}
	if d.settled != 0 || *(*float64)(g.Host) != 5 {
		t.Fatalf("after the overwrite: %d copies waited for, g = %v; want none and 5 (nothing folded)", d.settled, *(*float64)(g.Host))
	}
	*(*float64)(g.Host) = 0
	// Enough loops to reuse the ring's buffers: the dropped folds' copies
	// are waited for then, and folded into nothing.
	r.value = 3
	for range foldDepth {
		run()
	}
	if d.settled != 2 {
		t.Errorf("%d copies waited for after reusing the dropped folds' buffers, want 2", d.settled)
	}
	if err := g.HostAccess(false); err != nil {
		t.Fatal(err)
	}
	if got, want := *(*float64)(g.Host), 3*foldDepth*groups; got != want {
		t.Errorf("g = %v, want %v (only the loops after the overwrite)", got, want)
	}
	if len(d.queued) != 0 {
		t.Errorf("%d copies never waited for", len(d.queued))
	}
}
