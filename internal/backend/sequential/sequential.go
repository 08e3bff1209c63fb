// Package sequential is the "sequential" backend: one C function with a
// plain loop over the iteration set that calls the user kernel, compiled
// together with the kernel so the call is inlined, and run on one core.
package sequential

import (
	"unsafe"

	"log/slog"

	"github.com/goop2/op2/internal/codegen/hostc"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/host"
)

// Name is the name the backend is registered under.
const Name = "sequential"

func init() {
	// Static generation writes what the default configuration builds.
	exec.RegisterGenerator(Name, func(l *core.Loop) (string, error) {
		return host.BuildLanes(host.DefaultSIMD, l, func(lanes int) (string, error) { return hostc.SequentialLanes(l, lanes) })
	})
	exec.Register(Name, func(cfg *exec.Config) (exec.Backend, error) {
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
		return &backend{cc: cc, simd: simd}, nil
	})
}

type backend struct {
	cc     *host.Compilers
	simd   host.SIMD
	driver host.LazyChainDriver // runs tiled chains (RunTileChain), built the first time
	chain  []host.TileLoop      // the chain being run, kept to allocate nothing
}

func (b *backend) Name() string { return Name }

// Describe names the compiler (exec.Describer).
func (b *backend) Describe() []slog.Attr {
	return []slog.Attr{slog.String("platform", "host"), slog.String("compiler", b.cc.C.CC), slog.Int("threads", 1)}
}

// Generate writes the translation unit: prelude, kernel and a wrapper that
// loops over [op2_iv[0], op2_iv[1]). Global reductions accumulate into
// local copies, combined into the Global after the loop.
// With SIMD lanes configured, a loop that cannot have them gets the
// scalar code.
func (b *backend) Generate(l *core.Loop) (string, error) {
	return host.BuildLanes(b.simd, l, func(lanes int) (string, error) { return hostc.SequentialLanes(l, lanes) })
}

// Build builds l's program, in SIMD lanes when configured (Config.SIMD);
// a loop that cannot have lanes, or whose lane variant does not build,
// gets the scalar code.
func (b *backend) Build(l *core.Loop) (exec.Program, error) {
	return host.BuildLanes(b.simd, l, func(lanes int) (exec.Program, error) { return b.build(l, lanes) })
}

// Variants offers the scalar code and the SIMD lane counts, the
// configured one first, for loops that can have lanes
// (exec.VariantBuilder).
func (b *backend) Variants(l *core.Loop) []string { return b.simd.Variants(l) }

// BuildVariant builds l's program with the lanes variant names
// (exec.VariantBuilder).
func (b *backend) BuildVariant(l *core.Loop, variant string) (exec.Program, error) {
	lanes, err := host.ParseLaneVariant(variant)
	if err != nil {
		return nil, err
	}
	return b.build(l, lanes)
}

func (b *backend) build(l *core.Loop, lanes int) (exec.Program, error) {
	src, err := hostc.SequentialLanes(l, lanes)
	if err != nil {
		return nil, err
	}
	p, err := host.NewProgram(b.cc, l, src, 0, host.LaneFlags(lanes)...)
	if err != nil {
		return nil, err
	}
	return &program{Program: p}, nil
}

// program runs the wrapper once per launched range of elements.
type program struct {
	*host.Program
	l *core.Loop // the bound loop, between Bind and Finish
}

func (p *program) PlanNeeds() *exec.PlanNeeds { return nil }

func (p *program) Bind(l *core.Loop, _ *exec.Plan) error {
	p.l = l
	return p.Program.Bind(l)
}

func (p *program) Launch(r exec.Range) error {
	p.SetInt(hostc.IvStart, r.First)
	p.SetInt(hostc.IvEnd, r.Last)
	return p.Call(p.l)
}

func (p *program) Finish(l *core.Loop) error {
	p.l = nil
	return p.Program.Finish(l)
}

// KeepsOrder reports whether fused keeps l's order of summing
// (exec.OrderKeeper): the same lanes.
func (b *backend) KeepsOrder(fused *core.Loop, _ exec.Program, l *core.Loop, _ exec.Program) bool {
	return b.simd.KeepsOrder(fused, l)
}

// TileVariant names the lanes of l's tile form: those its eager calls
// run with (host.SIMD.TileLanes; exec.TileBuilder).
func (b *backend) TileVariant(l *core.Loop, tuned string) string { return b.simd.TileVariant(l, tuned) }

// BuildTiles builds l's tile form (hostc.SequentialTilesLanes), for
// sparse tiling of loop chains, with the lanes variant names; a loop that
// cannot have lanes, or whose lane form does not build, gets the scalar
// code (exec.TileBuilder).
func (b *backend) BuildTiles(l *core.Loop, variant string) (exec.TileProgram, error) {
	return host.WithLaneVariant(variant, func(lanes int) (exec.TileProgram, error) {
		src, err := hostc.SequentialTilesLanes(l, lanes)
		if err != nil {
			return nil, err
		}
		p, err := host.NewProgram(b.cc, l, src, hostc.PvTileCount, host.LaneFlags(lanes)...)
		if err != nil {
			return nil, err
		}
		tp := &tileProgram{program: program{Program: p}}
		if tp.fns, err = host.NewTileLoop(p, l); err != nil {
			p.Release()
			return nil, err
		}
		return tp, nil
	})
}

// RunTileChain runs a tiled chain tile by tile with the chain driver
// (host.ChainDriver without OpenMP, built the first time): each tile runs
// through every loop in turn, and each loop's Global reductions
// accumulate over all its tiles in one partial result, combined into the
// Globals after the last, so that they meet in a run of the loop's
// elements in order as when it runs alone (exec.TileChainRunner).
func (b *backend) RunTileChain(progs []exec.TileProgram, colours []int32) error {
	if err := b.PrepareTileChain(); err != nil {
		return err
	}
	b.chain = b.chain[:0]
	for _, p := range progs {
		b.chain = append(b.chain, p.(*tileProgram).fns)
	}
	err := b.driver.Run(b.chain, colours, 1)
	clear(b.chain)
	b.chain = b.chain[:0]
	return err
}

// TileChainReady reports whether the chain driver is built
// (exec.TileChainRunner).
func (b *backend) TileChainReady() bool { return b.driver.Ready() }

// PrepareTileChain builds the chain driver, once (exec.TileChainRunner).
func (b *backend) PrepareTileChain() error { return b.driver.Prepare(b.cc.C, false) }

// TileThreads is 1: tiles run one after another (exec.TileBuilder).
func (b *backend) TileThreads() int { return 1 }

// tileProgram runs the tile form: through the chain driver
// (RunTileChain), or once per launched run of tiles.
type tileProgram struct {
	program
	offsets unsafe.Pointer // the first run of each tile (SetTiles)
	fns     host.TileLoop
}

// SetTiles gives the program its loop's tiles (exec.TileProgram).
func (p *tileProgram) SetTiles(runs, offsets unsafe.Pointer) {
	p.SetPtr(hostc.PvTileRuns, runs)
	p.SetPtr(hostc.PvTileOffsets, offsets)
	p.offsets = offsets
}

// LaunchTiles runs the runs of tiles [first, last) (exec.TileProgram).
func (p *tileProgram) LaunchTiles(first, last int) error {
	off := unsafe.Slice((*int32)(p.offsets), last+1)
	p.SetInt(hostc.IvStart, int(off[first]))
	p.SetInt(hostc.IvEnd, int(off[last]))
	return host.LaunchFailed(p.l, p.Call(p.l)) // a later run of tiles may fail after the first ran
}

// PrepareBuild generates l's program as Build builds it and returns nil
// when it is compiled already, else the job that compiles it into the
// disk cache (exec.BackgroundBuilder).
func (b *backend) PrepareBuild(l *core.Loop) (func() error, error) {
	return host.PrepareLanes(b.simd, b.cc, l, func(lanes int) (string, error) { return hostc.SequentialLanes(l, lanes) }, host.LaneFlags)
}

// PrepareTiles is PrepareBuild for l's tile form in variant, as
// BuildTiles builds it (exec.BackgroundBuilder).
func (b *backend) PrepareTiles(l *core.Loop, variant string) (func() error, error) {
	return host.PrepareWithLaneVariant(variant, b.cc, l, func(lanes int) (string, error) { return hostc.SequentialTilesLanes(l, lanes) }, host.LaneFlags)
}

// The host backends compile fused loops and tile forms in the background.
var _ exec.BackgroundBuilder = (*backend)(nil)

// The sequential backend runs tiled chains with its chain driver.
var _ exec.TileChainRunner = (*backend)(nil)
