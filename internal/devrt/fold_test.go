package devrt

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
)

// reducing is a program of a loop k that sums x, over the fixture's n
// edges, into the Global g (initially 5), on the mock driver: each work
// group's partial result, written into the buffer the call is bound to,
// is value.
type reducing struct {
	d     *mockDriver
	f     *fixture
	x, g  *core.Storage
	l     *core.Loop
	src   string
	value float64
	prog  *Program
	run   func(l *core.Loop) // binds, launches and finishes l
}

func newReducing(t *testing.T) *reducing {
	const n = 1000
	r := &reducing{f: newFixture(t, n, 2), value: 1, src: "void k(const double *x, double *g) { *g += *x; }"}
	r.x = r.f.dat("x", r.f.edges, 1, make([]float64, n))
	r.g = r.f.dat("g", nil, 1, []float64{5})
	r.l = loopOf(t, r.src, "k", r.f.edges, nil,
		core.Arg{Data: r.x, Access: core.Read, Kind: core.ArgDirect}, core.Arg{Data: r.g, Access: core.Inc, Kind: core.ArgGlobal})
	r.d = newMock(32 << 10)
	r.d.run = func(args []Arg, groups int) {
		red := args[4].Buf.(*mockBuf).data[8*args[5].Int:] // the call's slots
		for gi := 0; gi < groups; gi++ {
			*(*float64)(unsafe.Pointer(&red[8*gi])) = r.value
		}
	}
	p := program(t, r.d, r.l)
	r.prog = p
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

// TestReductionFoldedWhenNeeded: Finish leaves a reduction's partial
// results on the device, in the slot the call wrote: the Global's host
// value changes only when something accesses it, then by exactly the
// loop's results (not a later call's, which writes the next slot); the
// slots pending are read in one copy; after foldDepth calls pending, the
// next settles them all, in order; a failed read is reported at the
// access, naming the loop.
func TestReductionFoldedWhenNeeded(t *testing.T) {
	r := newReducing(t)
	d, f, x, g, l, src, run := r.d, r.f, r.x, r.g, r.l, r.src, r.run
	h := f.dat("h", nil, 1, []float64{7})
	run(l)
	groups := float64(d.launches[0].groups)
	if got := *(*float64)(g.Host); got != 5 || d.reads != 0 {
		t.Fatalf("after Finish g = %v with %d reads; want 5 (the results still on the device) and none", got, d.reads)
	}
	// The same program into h: its results go to the next slot, and
	// nothing is read.
	lh := loopOf(t, src, "k", f.edges, nil,
		core.Arg{Data: x, Access: core.Read, Kind: core.ArgDirect}, core.Arg{Data: h, Access: core.Inc, Kind: core.ArgGlobal})
	r.value = 2
	run(lh)
	if d.reads != 0 {
		t.Errorf("%d reads after the second loop, want none", d.reads)
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
	// g's read fetched h's slot too: one read for both.
	if got := *(*float64)(h.Host); got != 7+2*groups || d.reads != 1 {
		t.Errorf("h = %v after %d reads, want 7 + 2×%v after 1", got, d.reads, groups)
	}
	// A loop that only reduces into g, repeated, leaves foldDepth calls'
	// results on the device without reading (not at Bind, not at
	// Finish); the next comes back to the oldest slot, so everything
	// pending on g is folded first, in order, read in one copy.
	want := 5 + groups
	for k := range foldDepth + 1 {
		r.value = float64(k + 1)
		run(l)
		if k < foldDepth {
			if d.reads != 1 || *(*float64)(g.Host) != want {
				t.Fatalf("after %d loops into g: %d reads and g = %v; want 1 and %v", k+1, d.reads, *(*float64)(g.Host), want)
			}
			continue
		}
		for j := range foldDepth {
			want += float64(j+1) * groups
		}
		if d.reads != 2 || *(*float64)(g.Host) != want {
			t.Fatalf("after %d loops into g: %d reads and g = %v; want 2 and %v", k+1, d.reads, *(*float64)(g.Host), want)
		}
	}
	if err := g.HostAccess(false); err != nil {
		t.Fatal(err)
	}
	if got, want := *(*float64)(g.Host), want+(foldDepth+1)*groups; got != want || d.reads != 3 {
		t.Errorf("g = %v after %d reads, want %v after 3", got, d.reads, want)
	}
	// A failed read surfaces where the Global is accessed, naming the loop.
	run(l)
	d.failRead = true
	err := g.HostAccess(false)
	if err == nil || !strings.Contains(err.Error(), `"k"`) || !strings.Contains(err.Error(), "read failed") {
		t.Errorf("a failed read gave %v at the access", err)
	}
}

// TestReductionDroppedByOverwrite: a Global's whole value written on the
// host (Global.SetValue) drops the reductions into it still on the
// device, never reading them, and frees their slots for the next calls
// without a wait; the loops after the write add to the written value
// only.
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
	if d.reads != 0 || *(*float64)(g.Host) != 5 {
		t.Fatalf("after the overwrite: %d reads, g = %v; want none and 5 (nothing folded)", d.reads, *(*float64)(g.Host))
	}
	*(*float64)(g.Host) = 0
	// A whole ring of calls: the dropped folds' slots are reused without
	// reading them.
	r.value = 3
	for range foldDepth {
		run()
	}
	if d.reads != 0 {
		t.Errorf("%d reads after reusing the dropped folds' slots, want none", d.reads)
	}
	if err := g.HostAccess(false); err != nil {
		t.Fatal(err)
	}
	if got, want := *(*float64)(g.Host), 3*foldDepth*groups; got != want || d.reads != 1 {
		t.Errorf("g = %v after %d reads, want %v (only the loops after the overwrite) after 1", got, d.reads, want)
	}
}

// TestReductionRingGrows: a call that needs larger slots than the ring's
// (the same program over a larger set) folds what the ring holds first,
// then leaves its own results pending in the new buffer.
func TestReductionRingGrows(t *testing.T) {
	r := newReducing(t)
	d, g := r.d, r.g
	r.run(r.l)
	small := float64(d.launches[0].groups)
	const big = 5000
	f := newFixture(t, big, 2)
	x := f.dat("x", f.edges, 1, make([]float64, big))
	l := loopOf(t, r.src, "k", f.edges, nil,
		core.Arg{Data: x, Access: core.Read, Kind: core.ArgDirect}, core.Arg{Data: g, Access: core.Inc, Kind: core.ArgGlobal})
	r.value = 2
	prog := r.prog
	if err := prog.Bind(l, nil); err != nil {
		t.Fatal(err)
	}
	if d.reads != 1 || *(*float64)(g.Host) != 5+small {
		t.Fatalf("after binding the larger call: %d reads, g = %v; want 1 and %v (the smaller call folded)", d.reads, *(*float64)(g.Host), 5+small)
	}
	if err := prog.Launch(exec.Range{First: 0, Last: big}); err != nil {
		t.Fatal(err)
	}
	if err := prog.Finish(l); err != nil {
		t.Fatal(err)
	}
	groups := float64(d.launches[len(d.launches)-1].groups)
	if groups <= small {
		t.Fatalf("the larger call ran %v work groups, the smaller %v", groups, small)
	}
	if err := g.HostAccess(false); err != nil {
		t.Fatal(err)
	}
	if got, want := *(*float64)(g.Host), 5+small+2*groups; got != want || d.reads != 2 {
		t.Errorf("g = %v after %d reads, want %v after 2", got, d.reads, want)
	}
}

// TestFoldDepthDocumented: the guide says how many of one loop's results
// wait on the device (foldDepth).
func TestFoldDepthDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/guide/data-and-kernels.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(doc)), " ")
	if want := fmt.Sprintf("up to %d of one loop's results wait on the device", foldDepth); !strings.Contains(text, want) {
		t.Errorf("docs/guide/data-and-kernels.md does not say %q", want)
	}
}

// TestFoldMinMaxAsHost: partial results of a MIN or MAX are folded as the
// host backends fold theirs (if (v < g) g = v): a NaN leaves the value,
// and of -0 and +0 the one already there stays.
func TestFoldMinMaxAsHost(t *testing.T) {
	nan, negz := math.NaN(), math.Copysign(0, -1)
	for _, c := range []struct {
		acc       core.Access
		dst, part []float64
		want      float64
	}{
		{core.Min, []float64{1}, []float64{nan, 2, 0.5, nan}, 0.5},
		{core.Max, []float64{1}, []float64{nan, 0.5, 3, nan}, 3},
		{core.Min, []float64{0}, []float64{negz}, 0},
		{core.Max, []float64{negz}, []float64{0}, negz},
	} {
		fold(c.acc, c.dst, c.part)
		if math.Float64bits(c.dst[0]) != math.Float64bits(c.want) {
			t.Errorf("%v of %v: %v, want %v", c.acc, c.part, c.dst[0], c.want)
		}
	}
}
