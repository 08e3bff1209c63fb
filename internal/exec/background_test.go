package exec_test

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
)

// bgBackend is a fakeBackend whose programs (and tile forms) build in the
// background: prepare says what PrepareBuild and PrepareTiles do.
type bgBackend struct {
	fakeBackend
	ready    bool          // the program is compiled already: no job
	gate     chan struct{} // a job waits for it to close
	jobErr   error         // what a job returns
	prepErr  error         // what PrepareBuild returns
	prepared []string      // the forms prepared, in order ("build x", "tiles x")
	ran      []string      // the jobs run, in order (under mu)
	tiles    int           // tile forms built
	mu       sync.Mutex
	running  atomic.Int32
	overlap  atomic.Bool // two jobs ran at once
}

func (b *bgBackend) prepare(form string, l *core.Loop) (func() error, error) {
	name := form + " " + l.Kernel.Name
	b.prepared = append(b.prepared, name)
	if b.prepErr != nil {
		return nil, b.prepErr
	}
	if b.ready {
		return nil, nil
	}
	gate, err := b.gate, b.jobErr
	return func() error {
		if b.running.Add(1) > 1 {
			b.overlap.Store(true)
		}
		defer b.running.Add(-1)
		<-gate
		b.mu.Lock()
		b.ran = append(b.ran, name)
		b.mu.Unlock()
		return err
	}, nil
}

func (b *bgBackend) PrepareBuild(l *core.Loop) (func() error, error) { return b.prepare("build", l) }
func (b *bgBackend) PrepareTiles(l *core.Loop, variant string) (func() error, error) {
	return b.prepare("tiles", l)
}
func (b *bgBackend) TileVariant(*core.Loop, string) string { return "" }
func (b *bgBackend) TileThreads() int                      { return 1 }
func (b *bgBackend) BuildTiles(l *core.Loop, _ string) (exec.TileProgram, error) {
	b.tiles++
	return &fakeTileProgram{fakeProgram{b: &b.fakeBackend, src: "tiles " + l.Kernel.Name}}, nil
}

type fakeTileProgram struct{ fakeProgram }

func (p *fakeTileProgram) SetTiles(runs, offsets unsafe.Pointer) {}
func (p *fakeTileProgram) LaunchTiles(first, last int) error     { return nil }

var _ exec.BackgroundBuilder = (*bgBackend)(nil)

// TestProgramSoon: a program compiled already is built at once; one that
// is not is nil until its build in the background is done, then built
// (once); a failed build's error comes back every time it is asked for,
// without another try; a backend that builds nothing in the background
// builds at once.
func TestProgramSoon(t *testing.T) {
	ms := newMesh(t, 10, 10, 10)
	boom := errors.New("the compiler refuses it")
	for _, c := range []struct {
		name    string
		b       *bgBackend
		now     bool  // built at the first ask
		wantErr error // of the asks after the build
	}{
		{"compiled already", &bgBackend{ready: true}, true, nil},
		{"built in the background", &bgBackend{}, false, nil},
		{"build fails", &bgBackend{jobErr: boom}, false, boom},
		{"source fails", &bgBackend{prepErr: boom}, false, boom},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.b.launchOK, c.b.gate = -1, make(chan struct{})
			x := exec.New()
			b := &exec.Opened{Backend: c.b, ID: core.NewID()}
			l := ms.directLoop(t)
			p, err := x.ProgramSoon(b, l)
			switch {
			case c.now && (p == nil || err != nil):
				t.Fatalf("first ask: %v, %v; want the program", p, err)
			case c.b.prepErr != nil:
				if !errors.Is(err, boom) || p != nil {
					t.Fatalf("first ask: %v, %v; want the error", p, err)
				}
			case !c.now && (p != nil || err != nil):
				t.Fatalf("first ask: %v, %v; want nil while it builds", p, err)
			}
			if !c.now && c.b.prepErr == nil {
				if p, err := x.ProgramSoon(b, l); p != nil || err != nil || exec.PendingBuilds() == 0 {
					t.Fatalf("asked again while it builds: %v, %v (%d pending)", p, err, exec.PendingBuilds())
				}
			}
			close(c.b.gate)
			exec.WaitBuilds()
			for ask := 0; ask < 2; ask++ {
				p, err := x.ProgramSoon(b, l)
				if c.wantErr != nil {
					if !errors.Is(err, c.wantErr) || p != nil {
						t.Fatalf("ask %d after the build: %v, %v; want its error", ask, p, err)
					}
					continue
				}
				if err != nil || p == nil || l.Sig == nil {
					t.Fatalf("ask %d after the build: %v, %v (signature %v)", ask, p, err, l.Sig)
				}
				if err := x.RunProgram(b, l, p); err != nil {
					t.Fatal(err)
				}
			}
			if len(c.b.prepared) != 1 {
				t.Errorf("prepared %q, want once", c.b.prepared)
			}
			if want := 1; c.wantErr == nil && len(c.b.progs) != want {
				t.Errorf("%d programs built, want %d", len(c.b.progs), want)
			}
			if c.wantErr != nil && len(c.b.progs) != 0 {
				t.Errorf("%d programs built after a failed build", len(c.b.progs))
			}
		})
	}
	t.Run("no background builder", func(t *testing.T) {
		fb := &fakeBackend{launchOK: -1}
		x := exec.New()
		p, err := x.ProgramSoon(&exec.Opened{Backend: fb, ID: core.NewID()}, ms.directLoop(t))
		if p == nil || err != nil || len(fb.progs) != 1 {
			t.Fatalf("%v, %v, %d programs; want one built at once", p, err, len(fb.progs))
		}
	})
}

// TestTileProgramSoon: a tile form not compiled is nil until its build in
// the background is done, then built once and found again.
func TestTileProgramSoon(t *testing.T) {
	ms := newMesh(t, 10, 10, 10)
	bb := &bgBackend{gate: make(chan struct{})}
	bb.launchOK = -1
	x := exec.New()
	b := &exec.Opened{Backend: bb, ID: core.NewID()}
	l := ms.incLoop(t)
	if _, err := x.Program(b, l); err != nil { // sets l.Sig
		t.Fatal(err)
	}
	if p, err := x.TileProgramSoon(b, l); p != nil || err != nil {
		t.Fatalf("first ask: %v, %v; want nil while it builds", p, err)
	}
	close(bb.gate)
	exec.WaitBuilds()
	p, err := x.TileProgramSoon(b, l)
	if p == nil || err != nil {
		t.Fatalf("after the build: %v, %v", p, err)
	}
	if q, err := x.TileProgramSoon(b, l); q != p || err != nil {
		t.Fatalf("asked again: %v, %v; want the same form", q, err)
	}
	if !slices.Equal(bb.prepared, []string{"tiles exec_inc"}) || bb.tiles != 1 {
		t.Errorf("prepared %q, %d tile forms built; want one each", bb.prepared, bb.tiles)
	}
}

// TestBackgroundBuildsOneAtATime: builds asked for by several executors
// run one at a time, in the order asked, and WaitBuilds waits for all.
func TestBackgroundBuildsOneAtATime(t *testing.T) {
	ms := newMesh(t, 10, 10, 10)
	bb := &bgBackend{gate: make(chan struct{})}
	close(bb.gate) // jobs run as soon as they start
	var want []string
	for i, src := range []string{"void bg_a(double *y) { *y = 1; }", "void bg_b(double *y) { *y = 2; }", "void bg_c(double *y) { *y = 3; }"} {
		name := []string{"bg_a", "bg_b", "bg_c"}[i]
		l := &core.Loop{Kernel: kernel(t, src, name), Set: ms.edges, Args: []core.Arg{{Data: ms.y, Access: core.Write, Kind: core.ArgDirect}}}
		if p, err := exec.New().ProgramSoon(&exec.Opened{Backend: bb, ID: core.NewID()}, l); p != nil || err != nil {
			t.Fatalf("%s: %v, %v", name, p, err)
		}
		want = append(want, "build "+name)
	}
	exec.WaitBuilds()
	if n := exec.PendingBuilds(); n != 0 {
		t.Errorf("%d builds pending after WaitBuilds", n)
	}
	bb.mu.Lock()
	defer bb.mu.Unlock()
	if !slices.Equal(bb.ran, want) {
		t.Errorf("ran %q, want %q", bb.ran, want)
	}
	if bb.overlap.Load() {
		t.Error("two builds ran at once")
	}
}

// TestProgramSoonPatience: a build still pending after BackgroundPatience
// is made at once by the next ask; the build in the background, when it
// ends, changes nothing.
func TestProgramSoonPatience(t *testing.T) {
	ms := newMesh(t, 10, 10, 10)
	bb := &bgBackend{gate: make(chan struct{})}
	bb.launchOK = -1
	old := exec.BackgroundPatience
	exec.BackgroundPatience = 20 * time.Millisecond
	defer func() { exec.BackgroundPatience = old }()
	x := exec.New()
	b := &exec.Opened{Backend: bb, ID: core.NewID()}
	l := ms.directLoop(t)
	if p, err := x.ProgramSoon(b, l); p != nil || err != nil {
		t.Fatalf("first ask: %v, %v; want nil while it builds", p, err)
	}
	time.Sleep(2 * exec.BackgroundPatience)
	p, err := x.ProgramSoon(b, l)
	if p == nil || err != nil || len(bb.progs) != 1 {
		t.Fatalf("ask after the patience: %v, %v, %d programs; want one built at once", p, err, len(bb.progs))
	}
	close(bb.gate)
	exec.WaitBuilds()
	if q, err := x.ProgramSoon(b, l); q != p || err != nil || len(bb.progs) != 1 {
		t.Fatalf("after the build: %v, %v, %d programs; want the same program", q, err, len(bb.progs))
	}
}

// TestEndBuilds: an executor's EndBuilds drops its builds still queued
// and returns once its build running is done; another executor's builds
// go on; a program dropped is queued again when asked for again.
func TestEndBuilds(t *testing.T) {
	ms := newMesh(t, 10, 10, 10)
	bb := &bgBackend{gate: make(chan struct{})}
	bb.launchOK = -1
	loop := func(name string) *core.Loop {
		src := "void " + name + "(double *y) { *y = 1; }"
		return &core.Loop{Kernel: kernel(t, src, name), Set: ms.edges, Args: []core.Arg{{Data: ms.y, Access: core.Write, Kind: core.ArgDirect}}}
	}
	x, other := exec.New(), exec.New()
	b := &exec.Opened{Backend: bb, ID: core.NewID()}
	ob := &exec.Opened{Backend: bb, ID: core.NewID()}
	running, dropped, kept := loop("end_running"), loop("end_dropped"), loop("end_kept")
	for _, c := range []struct {
		x *exec.Executor
		b *exec.Opened
		l *core.Loop
	}{{x, b, running}, {x, b, dropped}, {other, ob, kept}} {
		if p, err := c.x.ProgramSoon(c.b, c.l); p != nil || err != nil {
			t.Fatalf("%s: %v, %v; want nil while it builds", c.l.Kernel.Name, p, err)
		}
	}
	for bb.running.Load() == 0 { // the first build has started
		time.Sleep(time.Millisecond)
	}
	ended := make(chan []string)
	go func() {
		x.EndBuilds()
		bb.mu.Lock()
		defer bb.mu.Unlock()
		ended <- slices.Clone(bb.ran)
	}()
	for exec.PendingBuilds() > 2 { // the queued build of x dropped
		time.Sleep(time.Millisecond)
	}
	close(bb.gate)
	if ran := <-ended; !slices.Contains(ran, "build end_running") {
		t.Errorf("ran %q when EndBuilds returned, want the build that was running", ran)
	}
	exec.WaitBuilds()
	bb.mu.Lock()
	ran := slices.Clone(bb.ran)
	bb.mu.Unlock()
	if want := []string{"build end_running", "build end_kept"}; !slices.Equal(ran, want) {
		t.Errorf("ran %q, want %q: the other executor's build, not the dropped one", ran, want)
	}
	if p, err := x.ProgramSoon(b, dropped); p != nil || err != nil || countOf(bb.prepared, "build end_dropped") != 2 {
		t.Fatalf("dropped build asked again: %v, %v (prepared %q); want it queued again", p, err, bb.prepared)
	}
	exec.WaitBuilds()
	if p, err := x.ProgramSoon(b, dropped); p == nil || err != nil {
		t.Fatalf("dropped build after its new build: %v, %v", p, err)
	}
}

// TestEndAllBuilds: EndAllBuilds drops every executor's queued builds and
// returns once the running one is done; an executor whose build it
// dropped queues it again when it asks for the program again.
func TestEndAllBuilds(t *testing.T) {
	ms := newMesh(t, 10, 10, 10)
	bb := &bgBackend{gate: make(chan struct{})}
	bb.launchOK = -1
	loop := func(name string) *core.Loop {
		src := "void " + name + "(double *y) { *y = 2; }"
		return &core.Loop{Kernel: kernel(t, src, name), Set: ms.edges, Args: []core.Arg{{Data: ms.y, Access: core.Write, Kind: core.ArgDirect}}}
	}
	x, other := exec.New(), exec.New()
	b := &exec.Opened{Backend: bb, ID: core.NewID()}
	ob := &exec.Opened{Backend: bb, ID: core.NewID()}
	running, dropped := loop("endall_running"), loop("endall_dropped")
	if p, err := x.ProgramSoon(b, running); p != nil || err != nil {
		t.Fatalf("first build: %v, %v", p, err)
	}
	if p, err := other.ProgramSoon(ob, dropped); p != nil || err != nil {
		t.Fatalf("second build: %v, %v", p, err)
	}
	for bb.running.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	ended := make(chan []string)
	go func() {
		exec.EndAllBuilds()
		bb.mu.Lock()
		defer bb.mu.Unlock()
		ended <- slices.Clone(bb.ran)
	}()
	for exec.PendingBuilds() > 1 { // the queued build dropped
		time.Sleep(time.Millisecond)
	}
	close(bb.gate)
	if ran := <-ended; !slices.Equal(ran, []string{"build endall_running"}) {
		t.Errorf("ran %q when EndAllBuilds returned, want the running build alone", ran)
	}
	if n := exec.PendingBuilds(); n != 0 {
		t.Errorf("%d builds pending after EndAllBuilds", n)
	}
	if p, err := other.ProgramSoon(ob, dropped); p != nil || err != nil || countOf(bb.prepared, "build endall_dropped") != 2 {
		t.Fatalf("dropped build asked again: %v, %v (prepared %q); want it queued again", p, err, bb.prepared)
	}
	exec.WaitBuilds()
	if p, err := other.ProgramSoon(ob, dropped); p == nil || err != nil {
		t.Fatalf("dropped build after its new build: %v, %v", p, err)
	}
	if p, err := x.ProgramSoon(b, running); p == nil || err != nil {
		t.Fatalf("the build that ran: %v, %v", p, err)
	}
}

// countOf is the number of times s holds v.
func countOf(s []string, v string) int {
	n := 0
	for _, e := range s {
		if e == v {
			n++
		}
	}
	return n
}
