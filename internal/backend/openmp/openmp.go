// Package openmp is the "openmp" backend: the generated wrapper runs the
// loop on all cores through OpenMP.
//
// Loops that modify nothing through a map are split evenly between threads.
// Loops that do (an INC, RW or WRITE through a map) follow an execution
// plan, in one of two schemes (Config.OpenMPScheme, OP2_OPENMP_SCHEME):
//
//   - "owner" (the default): the set is split into one contiguous piece per
//     thread; the elements whose modified targets no other piece modifies
//     (the interior) run first, each thread on its own piece, in element
//     order; the separators run afterwards in block colours. Each thread's
//     targets stay in its cache, and a loop on a mesh numbered for locality
//     needs one or two colours beyond the interior.
//   - "colour": the set is cut into blocks, the blocks are coloured so that
//     no two blocks of one colour touch the same target element, and the
//     colours run one after another with the blocks of each colour shared
//     among the threads (OP2's OpenMP scheme).
//
// Global
// reductions accumulate per thread and are combined in thread order after
// the loop, so a run is repeatable for a given thread count.
package openmp

import (
	"log/slog"
	"os"
	"runtime"
	"strings"
	"unsafe"

	"github.com/goop2/op2/internal/codegen/hostc"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/host"
)

// Name is the name the backend is registered under.
const Name = "openmp"

func init() {
	// Static generation writes what the default configuration builds.
	exec.RegisterGenerator(Name, func(l *core.Loop) (string, error) {
		return host.BuildLanes(host.DefaultSIMD, l, func(lanes int) (string, error) { return hostc.OpenMPLanes(l, lanes) })
	})
	exec.Register(Name, func(cfg *exec.Config) (exec.Backend, error) {
		setWaitDefaults()
		threads := cfg.Threads
		if threads < 1 {
			threads = min(runtime.NumCPU(), exec.MaxThreads)
		}
		if err := exec.CheckThreads(threads, "openmp: thread count"); err != nil {
			return nil, err
		}
		owner, err := ParseScheme(cfg.OpenMPScheme)
		if err != nil {
			return nil, err
		}
		simd, err := host.ParseSIMD(cfg.SIMD)
		if err != nil {
			return nil, err
		}
		cc, err := host.NewCompiler(cfg)
		if err != nil {
			return nil, err
		}
		simd.Tune = cfg.Tune
		simd.UseCompilers(cc)
		return &backend{cc: cc, threads: threads, owner: owner, simd: simd}, nil
	})
}

// SpinCount is the GOMP_SPINCOUNT the backend sets when neither it nor
// OMP_WAIT_POLICY is in the environment: how many times (some 100 to the
// microsecond) a thread of libgomp's team spins at a barrier or between
// parallel regions before it sleeps, here some 10 µs, enough to catch
// the next loop of a program running loops back to back. libgomp's own
// default is 300 000 (about 3 ms): on a machine whose cores other work
// keeps busy, or with more threads than free cores (several MPI ranks per
// node), a thread spinning that long holds a core that the thread it
// waits for needs, and an indirect loop of 518 elements took 0.15-6 ms
// on 2 threads against 2 µs on one (docs/perf.md).
const SpinCount = "1000"

// setWaitDefaults sets GOMP_SPINCOUNT to SpinCount unless the environment
// sets it or OMP_WAIT_POLICY (the user's choice stands), before the
// backend's first loop loads libgomp, which reads them once, when it is
// loaded. GoOP2 loads libgomp only with the openmp backend's generated
// code (package internal/linalg uses goroutines); a program that links
// libgomp itself has it read the environment at start-up, unchanged.
// Calling it again does nothing (GOMP_SPINCOUNT is then set), and two
// calls at once both set the same value.
func setWaitDefaults() {
	_, policy := os.LookupEnv("OMP_WAIT_POLICY")
	_, spin := os.LookupEnv("GOMP_SPINCOUNT")
	if !policy && !spin {
		os.Setenv("GOMP_SPINCOUNT", SpinCount)
	}
}

type backend struct {
	cc      *host.Compilers
	threads int
	owner   bool // the owner-compute scheme
	simd    host.SIMD
	// driver runs tiled chains (RunTileChain), built the first time;
	// chain and colours are the chain it runs.
	driver  host.LazyChainDriver
	chain   []host.TileLoop
	colours []int32
}

// Schemes of Config.OpenMPScheme.
const (
	SchemeOwner  = exec.OpenMPOwner
	SchemeColour = exec.OpenMPColour
)

// DefaultScheme is the scheme used when none is configured.
const DefaultScheme = exec.DefaultOpenMPScheme

// ParseScheme reports whether scheme (a Config.OpenMPScheme value; empty
// means DefaultScheme; "color" is accepted for "colour") is the
// owner-compute scheme, or returns an error for an unknown scheme
// (exec.ParseOpenMPScheme).
func ParseScheme(scheme string) (owner bool, err error) { return exec.ParseOpenMPScheme(scheme) }

func (b *backend) Name() string { return Name }

// Describe names the compiler and the thread count (exec.Describer).
func (b *backend) Describe() []slog.Attr {
	scheme := SchemeColour
	if b.owner {
		scheme = SchemeOwner
	}
	return []slog.Attr{slog.String("platform", "host"), slog.String("compiler", b.cc.C.CC), slog.Int("threads", b.threads), slog.String("scheme", scheme)}
}

// Generate writes the OpenMP wrapper for the loop.
// With SIMD lanes configured, a loop that cannot have them gets the
// scalar code.
func (b *backend) Generate(l *core.Loop) (string, error) {
	return host.BuildLanes(b.simd, l, func(lanes int) (string, error) { return hostc.OpenMPLanes(l, lanes) })
}

// Build builds l's program in the configured scheme, in SIMD lanes when
// configured (Config.SIMD); a loop that cannot have lanes, or whose lane
// variant does not build, gets the scalar code.
func (b *backend) Build(l *core.Loop) (exec.Program, error) {
	return host.BuildLanes(b.simd, l, func(lanes int) (exec.Program, error) { return b.build(l, b.owner, lanes) })
}

// Variants offers, the configured way first, the two schemes for loops
// that follow a plan on more than one thread, each with the scalar code
// and the SIMD lane counts for loops that can have lanes
// (exec.VariantBuilder): "owner", "owner+simd4", "colour+scalar"...;
// the lane variant alone ("simd8") for loops with no scheme to choose.
func (b *backend) Variants(l *core.Loop) []string {
	var schemes []string
	if l.Sig.Colour && b.threads > 1 {
		schemes = []string{SchemeOwner, SchemeColour}
		if !b.owner {
			schemes = []string{SchemeColour, SchemeOwner}
		}
	}
	lanes := b.simd.Variants(l)
	switch {
	case len(lanes) == 0:
		return schemes
	case len(schemes) == 0:
		return lanes
	}
	var out []string
	for _, s := range schemes {
		for _, v := range lanes {
			out = append(out, s+"+"+v)
		}
	}
	return out
}

// BuildVariant builds l's program in the variant Variants named: its
// parts, joined by "+", a scheme and a lane count, either left out for
// the configured one (exec.VariantBuilder).
func (b *backend) BuildVariant(l *core.Loop, variant string) (exec.Program, error) {
	owner, lanes := b.owner, b.simd.For(l)
	for _, part := range strings.Split(variant, "+") {
		if n, err := host.ParseLaneVariant(part); err == nil {
			lanes = n
			continue
		}
		var err error
		if owner, err = ParseScheme(part); err != nil {
			return nil, err
		}
	}
	return b.build(l, owner, lanes)
}

// build builds l's program for the owner-compute scheme (owner) or the
// block colouring, with lanes SIMD lanes (0: scalar code). On one thread
// no loop is coloured: its elements run in order.
func (b *backend) build(l *core.Loop, owner bool, lanes int) (exec.Program, error) {
	gen, coloured := hostc.OpenMPLanes, l.Sig.Colour
	if b.threads <= 1 {
		gen, coloured = hostc.OpenMPOneThread, false
	}
	src, err := gen(l, lanes)
	if err != nil {
		return nil, err
	}
	p, err := host.NewProgram(b.cc, l, src, hostc.PvCount, "-fopenmp")
	if err != nil {
		return nil, err
	}
	needs := exec.PlanNeeds{Threads: b.threads}
	if owner {
		needs.Owners = b.threads
	}
	return &program{Program: p, b: b, coloured: coloured, needs: needs}, nil
}

// MinPerThread is the fewest elements a loop gives each thread: a loop
// of n elements runs on at most n/MinPerThread threads (one below
// 2×MinPerThread). Waking a thread costs microseconds on an idle machine
// and a scheduler's time slice on a busy one, more than a few hundred
// elements' work.
const MinPerThread = 512

// program runs the wrapper once per launched range: elements for a loop
// split evenly between threads, block colours of the plan for a coloured
// one.
type program struct {
	*host.Program
	pending  *core.Loop // the loop handed to the master thread
	b        *backend
	coloured bool
	needs    exec.PlanNeeds // of a coloured loop

	l       *core.Loop // the bound loop, between Bind and Finish
	threads int        // threads for the bound loop
}

func (p *program) PlanNeeds() *exec.PlanNeeds {
	if !p.coloured {
		return nil
	}
	return &p.needs
}

func (p *program) Bind(l *core.Loop, pl *exec.Plan) error {
	if err := p.Program.Bind(l); err != nil {
		return err
	}
	p.l = l
	p.threads = max(1, min(p.b.threads, l.IterEnd()/MinPerThread))
	p.SetInt(hostc.IvThreads, p.threads)
	if p.coloured {
		p.SetPtr(hostc.PvBlkMap, slicePtr(pl.BlkMap))
		p.SetPtr(hostc.PvOffset, slicePtr(pl.Offset))
		p.SetPtr(hostc.PvNElems, slicePtr(pl.NElems))
		p.SetPtr(hostc.PvColOffset, slicePtr(pl.ColOffset))
		p.SetPtr(hostc.PvOwnerOffset, slicePtr(pl.OwnerOffset))
		p.SetInt(hostc.IvOwners, pl.Owners)
	}
	return nil
}

func (p *program) Launch(r exec.Range) error {
	p.SetInt(hostc.IvStart, r.First)
	p.SetInt(hostc.IvEnd, r.Last)
	return host.LaunchFailed(p.l, p.call(p.l, p.threads))
}

func (p *program) Finish(l *core.Loop) error {
	p.l = nil
	return p.Program.Finish(l)
}

// call runs the wrapper: on the calling thread for one thread, else on
// the master thread that starts every parallel region (host.OnMaster).
func (p *program) call(l *core.Loop, threads int) error {
	if threads <= 1 {
		return p.Call(l)
	}
	p.pending = l
	err := host.OnMaster(p)
	p.pending = nil
	return err
}

// RunOnMaster runs the pending loop's wrapper (host.MasterJob).
func (p *program) RunOnMaster() error { return p.Call(p.pending) }

func slicePtr(s []int32) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

// KeepsOrder reports whether fused keeps l's order of summing
// (exec.OrderKeeper): the same lanes. Threads split a loop's elements
// evenly, or its plan's blocks, which Executor.KeepsOrder compares.
func (b *backend) KeepsOrder(fused *core.Loop, _ exec.Program, l *core.Loop, _ exec.Program) bool {
	return b.simd.KeepsOrder(fused, l)
}

// TileVariant names the lanes of l's tile form: those its eager calls
// run with (host.SIMD.TileLanes; the scheme part of a tuned variant does
// not apply to tiles; exec.TileBuilder).
func (b *backend) TileVariant(l *core.Loop, tuned string) string { return b.simd.TileVariant(l, tuned) }

// BuildTiles builds l's tile form (hostc.OpenMPTilesLanes), for sparse
// tiling of loop chains, with the lanes variant names; a loop that cannot
// have lanes, or whose lane form does not build, gets the scalar code
// (exec.TileBuilder).
func (b *backend) BuildTiles(l *core.Loop, variant string) (exec.TileProgram, error) {
	return host.WithLaneVariant(variant, func(lanes int) (exec.TileProgram, error) { return b.buildTiles(l, lanes) })
}

// buildTiles builds l's tile form with lanes SIMD lanes (0: scalar code).
func (b *backend) buildTiles(l *core.Loop, lanes int) (exec.TileProgram, error) {
	src, err := hostc.OpenMPTilesLanes(l, lanes)
	if err != nil {
		return nil, err
	}
	p, err := host.NewProgram(b.cc, l, src, hostc.PvTileCount, "-fopenmp")
	if err != nil {
		return nil, err
	}
	tp := &tileProgram{program: program{Program: p, b: b}}
	if tp.fns, err = host.NewTileLoop(p, l); err != nil {
		p.Release()
		return nil, err
	}
	return tp, nil
}

// TileChainReady reports whether the chain driver is built
// (exec.TileChainRunner).
func (b *backend) TileChainReady() bool { return b.driver.Ready() }

// PrepareTileChain builds the chain driver, once (exec.TileChainRunner).
func (b *backend) PrepareTileChain() error { return b.driver.Prepare(b.cc.C, true) }

// TileThreads is the backend's thread count: the tiles of one colour are
// shared among them (exec.TileBuilder).
func (b *backend) TileThreads() int { return b.threads }

// RunTileChain runs a tiled chain in one parallel region (host.ChainDriver,
// built the first time): for each colour, the colour's tiles are split
// among the threads, and each thread runs each of its tiles through every
// loop in turn (exec.TileChainRunner).
func (b *backend) RunTileChain(progs []exec.TileProgram, colours []int32) error {
	if err := b.PrepareTileChain(); err != nil {
		return err
	}
	b.chain = b.chain[:0]
	for _, p := range progs {
		b.chain = append(b.chain, p.(*tileProgram).fns)
	}
	b.colours = colours
	var err error
	if b.threads > 1 {
		err = host.OnMaster(b)
	} else {
		err = b.RunOnMaster()
	}
	clear(b.chain)
	b.chain, b.colours = b.chain[:0], nil
	return err
}

// RunOnMaster runs the pending chain (host.MasterJob).
func (b *backend) RunOnMaster() error { return b.driver.Run(b.chain, b.colours, b.threads) }

// tileProgram runs the tile form: through the chain driver
// (RunTileChain), or once per launched run of tiles, one tile per
// thread.
type tileProgram struct {
	program
	fns host.TileLoop
}

func (p *tileProgram) Bind(l *core.Loop, _ *exec.Plan) error {
	if err := p.Program.Bind(l); err != nil {
		return err
	}
	p.l = l
	return nil
}

// LaunchTiles runs tiles [first, last) split evenly among the threads
// (the backend runs whole chains with RunTileChain instead).
func (p *tileProgram) LaunchTiles(first, last int) error {
	threads := min(p.b.threads, last-first)
	p.SetInt(hostc.IvStart, first)
	p.SetInt(hostc.IvEnd, last)
	p.SetInt(hostc.IvThreads, threads)
	return host.LaunchFailed(p.l, p.call(p.l, threads))
}

// SetTiles gives the program its loop's tiles (exec.TileProgram).
func (p *tileProgram) SetTiles(runs, offsets unsafe.Pointer) {
	p.SetPtr(hostc.PvTileRuns, runs)
	p.SetPtr(hostc.PvTileOffsets, offsets)
}

// openMPFlags are the extra flags of the backend's programs, whatever
// their lanes (-fopenmp includes the simd pragma).
func openMPFlags(int) []string { return []string{"-fopenmp"} }

// PrepareBuild generates l's program as Build builds it and returns nil
// when it is compiled already, else the job that compiles it into the
// disk cache (exec.BackgroundBuilder).
func (b *backend) PrepareBuild(l *core.Loop) (func() error, error) {
	return host.PrepareLanes(b.simd, b.cc, l, func(lanes int) (string, error) { return hostc.OpenMPLanes(l, lanes) }, openMPFlags)
}

// PrepareTiles is PrepareBuild for l's tile form in variant, as
// BuildTiles builds it (exec.BackgroundBuilder).
func (b *backend) PrepareTiles(l *core.Loop, variant string) (func() error, error) {
	return host.PrepareWithLaneVariant(variant, b.cc, l, func(lanes int) (string, error) { return hostc.OpenMPTilesLanes(l, lanes) }, openMPFlags)
}

// The host backends compile fused loops and tile forms in the background.
var _ exec.BackgroundBuilder = (*backend)(nil)
