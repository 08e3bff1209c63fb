package exec_test

import (
	"crypto/md5"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/goop2/op2/internal/cfront"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/tile"

	_ "github.com/goop2/op2/internal/backend/openmp"
	_ "github.com/goop2/op2/internal/backend/sequential"
)

// fakeBackend builds fakePrograms, which record what the executor asks.
type fakeBackend struct {
	needs    *exec.PlanNeeds
	bindErr  error
	launchOK int  // launches that succeed before one fails (-1: all)
	partly   bool // the failing launch ran in part (exec.PartlyRan)
	progs    []*fakeProgram
}

func (b *fakeBackend) Name() string                          { return "fake" }
func (b *fakeBackend) Generate(l *core.Loop) (string, error) { return "fake " + l.Kernel.Name, nil }
func (b *fakeBackend) Build(l *core.Loop) (exec.Program, error) {
	p := &fakeProgram{b: b, src: "fake " + l.Kernel.Name}
	b.progs = append(b.progs, p)
	return p, nil
}

type fakeProgram struct {
	b      *fakeBackend
	src    string
	calls  []string
	plans  []*exec.Plan
	device *fakeBuffer
}

func (p *fakeProgram) Source() string             { return p.src }
func (p *fakeProgram) PlanNeeds() *exec.PlanNeeds { return p.b.needs }

func (p *fakeProgram) Bind(l *core.Loop, pl *exec.Plan) error {
	p.calls = append(p.calls, "bind")
	p.plans = append(p.plans, pl)
	// Act as a device backend: make every argument current on the device.
	for i := range l.Args {
		s := l.Args[i].Data
		if err := s.DeviceAccess(p, true, l.Args[i].Access.Modifies(), func(bool) (core.DeviceBuffer, error) {
			p.device = &fakeBuffer{owner: p}
			return p.device, nil
		}); err != nil {
			return err
		}
	}
	return p.b.bindErr
}

func (p *fakeProgram) Launch(r exec.Range) error {
	if p.b.launchOK >= 0 && len(p.launches()) >= p.b.launchOK {
		if p.b.partly {
			return exec.PartlyRan(errors.New("launch failed"))
		}
		return errors.New("launch failed")
	}
	unit := "elements"
	if r.Colours {
		unit = "colours"
	}
	p.calls = append(p.calls, fmt.Sprintf("launch %s [%d,%d)", unit, r.First, r.Last))
	return nil
}

func (p *fakeProgram) launches() []string {
	var out []string
	for _, c := range p.calls {
		if c != "bind" && c != "finish" {
			out = append(out, c)
		}
	}
	return out
}

func (p *fakeProgram) Finish(*core.Loop) error {
	p.calls = append(p.calls, "finish")
	return nil
}

// queuedError stands for an error of launches queued before (a device
// batch's, cuda.QueuedError) that a later call returns.
type queuedError struct{ err error }

func (e *queuedError) Error() string    { return e.err.Error() }
func (e *queuedError) MayHaveRun() bool { return true }

type fakeBuffer struct {
	owner any
	freed bool
}

func (d *fakeBuffer) Upload(*core.Storage) error   { return nil }
func (d *fakeBuffer) Download(*core.Storage) error { return nil }
func (d *fakeBuffer) Owner() any                   { return d.owner }
func (d *fakeBuffer) Free()                        { d.freed = true }

// mesh is a set with core, owned and exec-halo elements (as a partitioned
// MPI rank has), a map to a node set, and data.
type mesh struct {
	edges, nodes *core.Set
	m            *core.Map
	x, y         *core.Storage
	pin          runtime.Pinner
}

func newMesh(t *testing.T, coreN, owned, exec int) *mesh {
	ms := &mesh{}
	ms.edges = &core.Set{Name: "edges", Core: coreN, Owned: owned, Exec: exec, Total: exec, ID: core.NewID()}
	ms.nodes = &core.Set{Name: "nodes", Core: exec + 1, Owned: exec + 1, Exec: exec + 1, Total: exec + 1, ID: core.NewID()}
	tab := make([]int32, 2*exec)
	for e := 0; e < exec; e++ {
		tab[2*e], tab[2*e+1] = int32(e), int32(e+1)
	}
	ms.pin.Pin(&tab[0])
	ms.m = &core.Map{Name: "pedge", From: ms.edges, To: ms.nodes, Arity: 2, Table: tab, ID: core.NewID()}
	xv := make([]float64, exec+1)
	yv := make([]float64, exec)
	ms.pin.Pin(&xv[0])
	ms.pin.Pin(&yv[0])
	ms.x = &core.Storage{Name: "x", Type: core.Float64, Dim: 1, Set: ms.nodes, Host: unsafe.Pointer(&xv[0]), Len: exec + 1, ID: core.NewID()}
	ms.y = &core.Storage{Name: "y", Type: core.Float64, Dim: 1, Set: ms.edges, Host: unsafe.Pointer(&yv[0]), Len: exec, ID: core.NewID()}
	t.Cleanup(ms.pin.Unpin)
	return ms
}

func (ms *mesh) values(s *core.Storage) []float64 { return unsafe.Slice((*float64)(s.Host), s.Len) }

func kernel(t *testing.T, src, name string) *core.Kernel {
	info, err := cfront.ParseKernel(src, name)
	if err != nil {
		t.Fatal(err)
	}
	return &core.Kernel{Name: name, Source: src, Info: info, ID: core.NewID(), Sum: md5.Sum([]byte(name + "\x00" + src))}
}

// incLoop increments x through both columns of the map by y.
func (ms *mesh) incLoop(t *testing.T) *core.Loop {
	k := kernel(t, "void exec_inc(const double *y, double *a, double *b) { *a += *y; *b += *y; }", "exec_inc")
	return &core.Loop{Kernel: k, Set: ms.edges, Args: []core.Arg{
		{Data: ms.y, Access: core.Read, Kind: core.ArgDirect},
		{Data: ms.x, Map: ms.m, Idx: 0, Access: core.Inc, Kind: core.ArgIndirect},
		{Data: ms.x, Map: ms.m, Idx: 1, Access: core.Inc, Kind: core.ArgIndirect},
	}}
}

// directLoop writes y.
func (ms *mesh) directLoop(t *testing.T) *core.Loop {
	k := kernel(t, "void exec_set(double *y) { *y = 2; }", "exec_set")
	return &core.Loop{Kernel: k, Set: ms.edges, Args: []core.Arg{{Data: ms.y, Access: core.Write, Kind: core.ArgDirect}}}
}

// TestExecutorLaunchesCoreThenRest: the executor binds once, launches the
// core part, the other owned elements and the exec halo (elements of a direct loop, plan colours of
// a planned one), and finishes; a second loop reuses the program and the
// plan.
func TestExecutorLaunchesCoreThenRest(t *testing.T) {
	ms := newMesh(t, 40, 100, 120)
	for _, c := range []struct {
		name  string
		loop  *core.Loop
		needs *exec.PlanNeeds
		want  func(pl *exec.Plan) []string
	}{
		{"direct", ms.directLoop(t), nil, func(*exec.Plan) []string {
			// Only owned elements: a direct loop does not compute the halo.
			return []string{"bind", "launch elements [0,40)", "launch elements [40,100)", "finish"}
		}},
		{"planned", ms.incLoop(t), &exec.PlanNeeds{Threads: 2}, func(pl *exec.Plan) []string {
			if pl.NColorsCore == 0 || pl.NColorsCore == pl.NColors {
				t.Fatalf("the plan has %d core colours of %d: no core/rest split to test", pl.NColorsCore, pl.NColors)
			}
			return []string{"bind", fmt.Sprintf("launch colours [0,%d)", pl.NColorsCore), fmt.Sprintf("launch colours [%d,%d)", pl.NColorsCore, pl.NColorsOwned),
				fmt.Sprintf("launch colours [%d,%d)", pl.NColorsOwned, pl.NColors), "finish"}
		}},
	} {
		fb := &fakeBackend{needs: c.needs, launchOK: -1}
		x := exec.New()
		b := &exec.Opened{Backend: fb, ID: core.NewID()}
		for run := 0; run < 2; run++ {
			if err := x.Run(b, c.loop); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		if len(fb.progs) != 1 {
			t.Fatalf("%s: %d programs built for one loop shape", c.name, len(fb.progs))
		}
		p := fb.progs[0]
		if c.needs != nil && (p.plans[0] == nil || p.plans[1] != p.plans[0]) {
			t.Fatalf("%s: plans %v: want one plan, reused", c.name, p.plans)
		}
		want := c.want(p.plans[0])
		want = append(want, want...)
		if !slices.Equal(p.calls, want) {
			t.Errorf("%s: calls\n%q\nwant\n%q", c.name, p.calls, want)
		}
	}
}

// TestExecutorRestoresStatesOnFailure: a loop that fails in Bind, or in its
// first launch, leaves every data state as it was and frees the device
// buffers it allocated, and its error satisfies NothingRan (but for an
// error saying launches queued before may have run); one that fails after
// a launch, or in a first launch that ran in part (PartlyRan: an openmp
// thread's, a device colour's), says the data may be partly updated, and
// does not.
func TestExecutorRestoresStatesOnFailure(t *testing.T) {
	for _, c := range []struct {
		name       string
		bindErr    error
		launchOK   int
		partly     bool
		restored   bool
		nothingRan bool
	}{
		{"bind fails", errors.New("bind failed"), -1, false, true, true},
		{"bind fails with launches queued before", &queuedError{errors.New("an earlier kernel failed")}, -1, false, true, false},
		{"first launch fails", nil, 0, false, true, true},
		{"first launch fails after running in part", nil, 0, true, false, false},
		{"second launch fails", nil, 1, false, false, false},
	} {
		ms := newMesh(t, 40, 100, 120)
		fb := &fakeBackend{bindErr: c.bindErr, launchOK: c.launchOK, partly: c.partly}
		x := exec.New()
		b := &exec.Opened{Backend: fb, ID: core.NewID()}
		l := ms.directLoop(t)
		err := x.Run(b, l)
		if err == nil {
			t.Fatalf("%s: no error", c.name)
		}
		if exec.NothingRan(err) != c.nothingRan {
			t.Errorf("%s: NothingRan(%v) = %v, want %v", c.name, err, !c.nothingRan, c.nothingRan)
		}
		dev := fb.progs[0].device
		if c.restored {
			if ms.y.State != core.StateDeviceUnallocated || ms.y.Dev != nil || !dev.freed {
				t.Errorf("%s: y is %v with device buffer %v (freed %v); want DEVICE_UNALLOCATED, the buffer freed", c.name, ms.y.State, ms.y.Dev, dev.freed)
			}
			continue
		}
		if ms.y.State != core.StateDevice || dev.freed {
			t.Errorf("%s: y is %v: a launched loop's data stays where it ran", c.name, ms.y.State)
		}
		wantSubstr := "partly updated"
		if !strings.Contains(err.Error(), wantSubstr) {
			t.Errorf("%s: error %q does not say %q", c.name, err, wantSubstr)
		}
	}
}

// TestOpenMPCoreThenRest: on the openmp backend (threads 2) the executor
// runs the core colours, the owned ones and the exec halo's as three launches of the same
// program, and the result is what one pass over every element gives.
func TestOpenMPCoreThenRest(t *testing.T) {
	for _, name := range []string{"openmp", "sequential"} {
		cfg, err := exec.ConfigFromEnv()
		if err != nil {
			t.Fatal(err)
		}
		cfg.CacheDir = t.TempDir()
		cfg.Threads = 2
		opened, err := exec.Open(name, &cfg)
		if err != nil {
			t.Fatal(err)
		}
		b := &exec.Opened{Backend: opened, ID: core.NewID()}
		x := exec.New()
		var ranges []exec.Range
		x.OnLaunch = func(_ *core.Loop, r exec.Range) { ranges = append(ranges, r) }
		ms := newMesh(t, 700, 1500, 2000)
		y := ms.values(ms.y)
		for e := range y {
			y[e] = float64(e%7 + 1)
		}
		if err := x.Run(b, ms.incLoop(t)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(ranges) != 3 || ranges[0].Last != ranges[1].First || ranges[1].Last != ranges[2].First || ranges[0].First != 0 || ranges[0].Last == 0 {
			t.Fatalf("%s: launches %+v: want the core part, the other owned elements, then the exec halo", name, ranges)
		}
		want := make([]float64, ms.x.Len)
		for e := range y { // the loop covers the exec halo too: it increments through a map
			want[e] += y[e]
			want[e+1] += y[e]
		}
		if got := ms.values(ms.x); !slices.Equal(got, want) {
			t.Errorf("%s: x differs from one pass over every element", name)
		}
	}
}

// variantBackend is a fakeBackend with two ways to run a loop: "one" (the
// configured one, Build's program) and "two", whose plans have owner
// pieces.
type variantBackend struct {
	fakeBackend
	variants []string
	built    []string // variants built by BuildVariant
}

func (b *variantBackend) Variants(*core.Loop) []string { return b.variants }

func (b *variantBackend) BuildVariant(l *core.Loop, v string) (exec.Program, error) {
	b.built = append(b.built, v)
	if v == "three" {
		return nil, errors.New("too many resources")
	}
	needs := *b.needs
	if v == "two" {
		needs.Owners = 2
	}
	p := &fakeProgram{b: &fakeBackend{needs: &needs, launchOK: -1}, src: v + " " + l.Kernel.Name}
	b.progs = append(b.progs, p)
	return p, nil
}

// TestExecutorTunesVariants: with a tuner, the executor measures the
// backend's configured variant with its usual program and builds each
// other variant once; a variant that fails to build is skipped (its call
// runs as configured); each variant's plans are its own (the owner pieces
// its program asks for); once chosen, every call runs the chosen program
// and the timing report says which.
func TestExecutorTunesVariants(t *testing.T) {
	ms := newMesh(t, 120, 120, 120)
	l := ms.incLoop(t)
	fb := &variantBackend{fakeBackend: fakeBackend{needs: &exec.PlanNeeds{Threads: 2}, launchOK: -1}, variants: []string{"one", "two", "three"}}
	x := exec.New()
	x.Tuner = exec.NewTuner("", "test")
	x.Tuner.BlockSizes, x.Tuner.Reps = []int{0, 16}, 1
	var chosen exec.Setting
	x.Tuner.Chosen = func(_ string, s exec.Setting, tried []exec.Trial) {
		chosen = s
		if len(tried) != 4 || !tried[2].Failed {
			t.Errorf("tried %v, want three variants (the third failed to build), then the other block size", tried)
		}
	}
	x.Timing = exec.NewTimings()
	b := &exec.Opened{Backend: fb, ID: core.NewID()}
	for range 7 {
		if err := x.Run(b, l); err != nil {
			t.Fatal(err)
		}
	}
	if chosen.Variant == "" {
		t.Fatalf("no choice made")
	}
	if !slices.Equal(fb.built, []string{"two", "three"}) {
		t.Errorf("variants built %v, want two and three (one is the configured program)", fb.built)
	}
	if len(fb.progs) != 2 {
		t.Fatalf("%d programs, want 2", len(fb.progs))
	}
	for _, p := range fb.progs {
		for _, pl := range p.plans {
			if want := p.b.needs.Owners; pl.Owners != want {
				t.Errorf("program %q ran with a plan of %d owner pieces, want %d", p.src, pl.Owners, want)
			}
		}
	}
	// The last three calls ran the chosen variant's program.
	want := fb.progs[0]
	if chosen.Variant == "two" {
		want = fb.progs[1]
	}
	calls := len(want.plans)
	if calls < 3 {
		t.Errorf("the chosen program %q ran %d times, want at least the 3 calls after tuning", want.src, calls)
	}
	if recs := x.Timing.Records(); len(recs) != 1 || recs[0].Tuned != chosen.String() {
		t.Errorf("timing records %+v, want one with Tuned %q", recs, chosen)
	}
}

// TestExecutorNothingToTune: a loop with one way to run and no plan is not
// measured; the timing report says so.
func TestExecutorNothingToTune(t *testing.T) {
	ms := newMesh(t, 50, 50, 50)
	fb := &fakeBackend{launchOK: -1}
	x := exec.New()
	x.Tuner = exec.NewTuner("", "test")
	x.Tuner.Chosen = func(string, exec.Setting, []exec.Trial) { t.Error("a loop with nothing to choose was tuned") }
	x.Timing = exec.NewTimings()
	b := &exec.Opened{Backend: fb, ID: core.NewID()}
	for range 12 {
		if err := x.Run(b, ms.directLoop(t)); err != nil {
			t.Fatal(err)
		}
	}
	if recs := x.Timing.Records(); len(recs) != 1 || recs[0].Tuned != "nothing to choose" {
		t.Errorf("timing records %+v", recs)
	}
}

// fakeHalo records the executor's calls in the program's log.
type fakeHalo struct{ fb *fakeBackend }

func (h fakeHalo) log(s string) {
	p := h.fb.progs[len(h.fb.progs)-1]
	p.calls = append(p.calls, s)
}
func (h fakeHalo) Begin(*core.Loop, bool) error                 { h.log("halo begin"); return nil }
func (h fakeHalo) Wait(*core.Loop) error                        { h.log("halo wait"); return nil }
func (h fakeHalo) End(*core.Loop) error                         { h.log("halo end"); return nil }
func (h fakeHalo) Agree(l *core.Loop, trace *slog.Logger) error { return nil }

// TestHaloWaitsAfterTheCore: in a distributed run the executor starts the
// exchanges before Bind and completes them only after launching the core
// elements, so that messages travel while they run — on every backend,
// device ones (the fake program binds device copies) included: the rows
// that arrive go to the device copy the program bound.
func TestHaloWaitsAfterTheCore(t *testing.T) {
	ms := newMesh(t, 40, 100, 120)
	fb := &fakeBackend{launchOK: -1}
	x := exec.New()
	x.Halo = fakeHalo{fb}
	b := &exec.Opened{Backend: fb, ID: core.NewID()}
	if err := x.Run(b, ms.directLoop(t)); err != nil {
		t.Fatal(err)
	}
	want := []string{"halo begin", "bind", "launch elements [0,40)", "halo wait", "launch elements [40,100)", "finish", "halo end"}
	if got := fb.progs[0].calls; !slices.Equal(got, want) {
		t.Errorf("calls\n%q\nwant\n%q", got, want)
	}
}

// TestRunMarksOutermostDecides checks that a launch failure marked as
// run in part stays so when its cause was marked as nothing run: the
// outermost mark decides, so the loop is never run again.
func TestRunMarksOutermostDecides(t *testing.T) {
	err := exec.PartlyRan(exec.BeforeRun(errors.New("no memory")))
	if exec.NothingRan(err) {
		t.Errorf("PartlyRan(beforeRun(err)): NothingRan true, want false")
	}
	if !exec.MayHaveRun(err) {
		t.Errorf("PartlyRan(beforeRun(err)): MayHaveRun false, want true")
	}
	if err := exec.BeforeRun(errors.New("no program")); !exec.NothingRan(err) || exec.MayHaveRun(err) {
		t.Errorf("beforeRun(err): NothingRan %v, MayHaveRun %v; want true, false", exec.NothingRan(err), exec.MayHaveRun(err))
	}
}

// The fake programs as tile forms: SetTiles does nothing, LaunchTiles
// counts as a launch.
func (p *fakeProgram) SetTiles(runs, offsets unsafe.Pointer) {}

func (p *fakeProgram) LaunchTiles(first, last int) error {
	if p.b.launchOK >= 0 && len(p.launches()) >= p.b.launchOK {
		return errors.New("launch failed")
	}
	p.calls = append(p.calls, fmt.Sprintf("launch tiles [%d,%d)", first, last))
	return nil
}

// TestTiledChainFailingBeforeAnyRan: a tiled chain whose later loop fails
// in Bind, or whose first launch fails, ran nothing: its error satisfies
// NothingRan (the chain's loops may then run one by one), and the data
// states are as before. A failure after a tile ran says the data may be
// partly updated.
func TestTiledChainFailingBeforeAnyRan(t *testing.T) {
	for _, c := range []struct {
		name       string
		bindErr    error // the second loop's
		launchOK   int   // the second loop's launches that succeed (-1: all)
		firstOK    int   // the first loop's
		nothingRan bool
	}{
		{"second loop's bind fails", errors.New("bind failed"), -1, -1, true},
		{"first launch fails", nil, -1, 0, true},
		{"second loop's first launch fails", nil, 0, -1, false},
	} {
		ms := newMesh(t, 100, 100, 100)
		x := exec.New()
		b := &exec.Opened{Backend: &fakeBackend{launchOK: -1}, ID: core.NewID()}
		l1, l2 := ms.directLoop(t), ms.directLoop(t)
		l2.Args[0].Access = core.RW
		for _, l := range []*core.Loop{l1, l2} {
			if _, err := x.Program(b, l); err != nil {
				t.Fatal(err)
			}
		}
		p1 := &fakeProgram{b: &fakeBackend{launchOK: c.firstOK}}
		p2 := &fakeProgram{b: &fakeBackend{bindErr: c.bindErr, launchOK: c.launchOK}}
		ch := &exec.TiledChain{
			Loops:    []*core.Loop{l1, l2},
			Programs: []exec.TileProgram{p1, p2},
			Schedule: &tile.Schedule{Tiles: 1, Runs: [][]int32{{0, 100}, {0, 100}},
				RunOffsets: [][]int32{{0, 1}, {0, 1}}, Colours: []int32{0, 1}},
			Threads: 1,
		}
		before := ms.y.State
		_, err := x.RunTiles(b, ch)
		if err == nil {
			t.Fatalf("%s: no error", c.name)
		}
		if exec.NothingRan(err) != c.nothingRan {
			t.Errorf("%s: NothingRan(%v) = %v, want %v", c.name, err, !c.nothingRan, c.nothingRan)
		}
		if c.nothingRan && ms.y.State != before {
			t.Errorf("%s: y is %v, want %v as before", c.name, ms.y.State, before)
		}
		if !c.nothingRan && !strings.Contains(err.Error(), "partly updated") {
			t.Errorf("%s: %v does not say the data may be partly updated", c.name, err)
		}
	}
}
