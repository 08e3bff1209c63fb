package exec

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/jit"
	"github.com/goop2/op2/internal/tile"
)

// TileBuilder is implemented by backends that can run a loop over lists
// of elements grouped in tiles (the host backends), for the sparse tiling
// of loop chains (package tile).
type TileBuilder interface {
	// TileVariant names the variant of l's tile form to run: on the
	// host backends, the SIMD lanes its eager program would have
	// (host.SIMD.TileLanes). tuned is the tuner's variant for l's eager
	// calls, when the executor has one at hand, else "". It is called
	// for each loop of each tiled chain: it must be cheap and allocate
	// nothing.
	TileVariant(l *core.Loop, tuned string) string
	// BuildTiles builds l's tile form (its signature set) in variant,
	// which TileVariant named.
	BuildTiles(l *core.Loop, variant string) (TileProgram, error)
	// TileThreads is the number of threads that run the tiles of one
	// colour at once: 1 runs tiles one after another.
	TileThreads() int
}

// TileProgram is a loop's tile form. The executor calls Bind (with no
// plan), SetTiles, LaunchTiles for runs of tiles (or the backend's
// TileChainRunner runs them all), and Finish, as for a Program.
type TileProgram interface {
	Program
	// SetTiles gives the program its loop's tiles: runs holds the
	// loop's elements tile by tile as runs of consecutive elements
	// (int32 pairs: start, end), offsets the first run of each tile and
	// one past the last (int32), both pinned.
	SetTiles(runs, offsets unsafe.Pointer)
	// LaunchTiles runs the loop's elements of tiles [first, last). The
	// tiles run at once on the program's threads, so they must touch
	// disjoint data; each tile's elements run in order. Reductions
	// accumulate over the launches of a loop.
	LaunchTiles(first, last int) error
}

// TileChainRunner is implemented by backends that run a whole tiled chain
// in one call (openmp: one parallel region, each thread running its
// tiles of a colour through every loop in turn).
type TileChainRunner interface {
	// TileChainReady reports whether RunTileChain has what it runs the
	// chains with; PrepareTileChain builds it (the executor counts the
	// build as compile time, not as the chain's).
	TileChainReady() bool
	PrepareTileChain() error
	// RunTileChain runs the bound programs' loops in tiles, colour by
	// colour (the tiles of colour c are [colours[c], colours[c+1]),
	// pinned), the tiles of a colour at once; each program's tiles are
	// set (SetTiles).
	RunTileChain(progs []TileProgram, colours []int32) error
}

// TileProgram returns the tile form of l's program on b (whose backend
// must be a TileBuilder) in the variant the backend names for it
// (TileVariant: the SIMD lanes in effect on the host backends), building
// it the first time; l.Sig must be set (by Program). Finding a built one
// allocates nothing.
func (x *Executor) TileProgram(b *Opened, l *core.Loop) (TileProgram, error) {
	return x.tileProgram(b, l, 0)
}

// TileProgramCopy returns copy n (n ≥ 1) of l's tile form on b, which
// TileProgram (or TileProgramSoon) has built: a program of its own, with
// its own argument arrays and partial results, running the same compiled
// code, for a tiled chain that runs a loop of l's shape n+1 times (a
// program holds one loop's bindings at a time). Finding a built one
// allocates nothing.
func (x *Executor) TileProgramCopy(b *Opened, l *core.Loop, n int) (TileProgram, error) {
	return x.tileProgram(b, l, n)
}

// tileProgram is TileProgram (n 0) and TileProgramCopy.
func (x *Executor) tileProgram(b *Opened, l *core.Loop, n int) (TileProgram, error) {
	tb, ok := b.Backend.(TileBuilder)
	if !ok {
		return nil, fmt.Errorf("%s: the %s backend cannot run loops in tiles", l.Name(), b.Name())
	}
	variant := tb.TileVariant(l, x.tunedVariant(b, l))
	x.key = tileKey(x.key[:0], b.ID, variant, n, l)
	if p, _, ok := x.programs.get(x.key); ok {
		return p.(TileProgram), nil
	}
	x.generations++
	start := time.Now()
	before := jit.ReadStats()
	p, err := tb.BuildTiles(l, variant)
	x.countBuild(b, l, "tiles "+variant, time.Since(start), before, err, nil)
	if err != nil {
		return nil, err
	}
	x.programs.put(x.key, p, l.Sig)
	return p, nil
}

// tileVariant starts the variant of the tile forms' keys in the program
// cache, tileCopyVariant that of their copies (no backend variant starts
// so).
const (
	tileVariant     = "\x00tiles"
	tileCopyVariant = "\x00tilecopy"
)

// tileKey is the program cache's key of copy n (0: the form itself) of
// l's tile form in the backend's variant: programKey's, its variant
// tileVariant (tileCopyVariant for a copy) followed by variant, then n.
func tileKey(buf []byte, backend uint64, variant string, n int, l *core.Loop) []byte {
	prefix := tileVariant
	if n > 0 {
		prefix = tileCopyVariant
	}
	return variantKey(buf, backend, prefix, variant, n, l)
}

// TiledChain is a chain of loops to run in tiles (RunTiles): the loops,
// their tile programs and the schedule (package tile), whose element
// lists are pinned.
type TiledChain struct {
	Loops    []*core.Loop
	Programs []TileProgram
	Schedule *tile.Schedule
	// Threads is the number of tiles one launch runs at once (the
	// backend's TileThreads).
	Threads int
	// Bytes is each loop's LoopBytes, by which the time of a chain run
	// in one call (TileChainRunner) is shared among its loops for the
	// timing report.
	Bytes []float64
	// Moved is each loop's share of the bytes the chain moves
	// (ChainBytes shared in proportion to Bytes), for the timing report's
	// Moved. Bytes and Moved are read only when the executor times its
	// loops (Timing set), and may be nil otherwise.
	Moved []float64
	// Agree, under MPI (the executor's Halo set), is called before each
	// loop's exchanges (Begin) in the boundary: the ranks' agreement on
	// the loop (dist.Halo.Agree).
	Agree func(l *core.Loop) error
	// run is each loop's run time when timing (reused).
	run []time.Duration
}

// TileHalo is a Halo under which loops can run in tiles (RunTiles).
type TileHalo interface {
	Halo
	// StartReductions prepares l's reductions as Begin does (dist.Halo:
	// the INC reductions of ranks other than 0 start at zero), for a
	// chain whose early tiles accumulate into them before l's Begin;
	// the executor keeps the values across that Begin.
	StartReductions(l *core.Loop) error
}

// RunTiles runs the loops of c tile by tile: every tile runs its elements
// of the first loop, then of the second, and so on; the tiles of one
// colour run Threads at a time, the colours in order. The loops' data
// states are saved and put back if a loop fails before any launch (its
// error then satisfies NothingRan: no loop of the chain ran); a failure
// after launches leaves the data partly updated, as for one loop. failed
// is the index of the loop that failed.
//
// Under MPI (Halo set, a TileHalo) the schedule must have a boundary
// (tile.Schedule.Boundary): the tiles before it need no halo data and
// change nothing an exchange sends, so they run first, with no exchange;
// then the boundary runs loop by loop, each loop as Run would run it
// around its elements: Agree, Begin, Wait, its boundary elements (those
// of the exec halo apart, their reductions discarded), Finish, End. The
// reductions the early tiles accumulated are combined across ranks by
// the loop's End, with the rest.
func (x *Executor) RunTiles(b *Opened, c *TiledChain) (failed int, err error) {
	var th TileHalo
	if x.Halo != nil {
		var ok bool
		if th, ok = x.Halo.(TileHalo); !ok || !c.Schedule.Boundary || c.Agree == nil {
			return 0, fmt.Errorf("%s: loops under MPI run in tiles only with a boundary schedule and a TileHalo", c.Loops[0].Name())
		}
	}
	defer x.forget()
	for _, l := range c.Loops {
		for i := range l.Args {
			if l.Sig.Base[i] == i {
				s := l.Args[i].Data
				x.saved = append(x.saved, savedState{s: s, state: s.State, dev: s.Dev})
			}
		}
	}
	for j, l := range c.Loops {
		if err := c.Programs[j].Bind(l, nil); err != nil {
			x.restore()
			return j, beforeRun(err)
		}
	}
	c.run = append(c.run[:0], make([]time.Duration, len(c.Loops))...)
	s := c.Schedule
	for j, p := range c.Programs {
		var runs unsafe.Pointer
		if len(s.Runs[j]) > 0 {
			runs = unsafe.Pointer(&s.Runs[j][0])
		}
		p.SetTiles(runs, unsafe.Pointer(&s.RunOffsets[j][0]))
	}
	if th != nil {
		for j, l := range c.Loops {
			if err := th.StartReductions(l); err != nil {
				return j, x.partly(err, c)
			}
		}
	}
	if runner, ok := b.Backend.(TileChainRunner); ok {
		if err := x.runTileChain(b, runner, c); err != nil {
			return 0, err
		}
	} else if j, err := x.runColours(c); err != nil {
		return j, err
	}
	if th != nil {
		if j, err := x.runBoundary(th, c); err != nil {
			return j, x.partly(err, c)
		}
	} else {
		for j, l := range c.Loops {
			if err := c.Programs[j].Finish(l); err != nil {
				return j, err
			}
		}
	}
	if x.Timing != nil {
		for j, l := range c.Loops {
			x.Timing.addTiled(l, b.Name(), c.run[j], c.Moved[j])
		}
	}
	return 0, nil
}

// partly adds to err, of a tiled chain some of whose tiles ran, that the
// data may be partly updated.
func (x *Executor) partly(err error, c *TiledChain) error {
	return fmt.Errorf("%w (in a tiled chain of %d loops, after some of its tiles had run: the data the chain modifies may be partly updated)", err, len(c.Loops))
}

// runColours runs the colours of c's schedule, launch by launch: the
// failure of a loop's first launch puts the data states back.
func (x *Executor) runColours(c *TiledChain) (int, error) {
	s := c.Schedule
	timing := x.Timing != nil
	launched := false
	step := max(1, c.Threads)
	for col := 0; col+1 < len(s.Colours); col++ {
		end := int(s.Colours[col+1])
		for t := int(s.Colours[col]); t < end; t += step {
			last := min(t+step, end)
			for j, p := range c.Programs {
				var start time.Time
				if timing {
					start = time.Now()
				}
				if off := s.RunOffsets[j]; off[t] == off[last] {
					continue
				}
				if err := p.LaunchTiles(t, last); err != nil {
					if !launched && !mayHaveRun(err) {
						x.restore()
						return j, beforeRun(err)
					}
					return j, x.partly(err, c)
				}
				launched = true
				if timing {
					c.run[j] += time.Since(start)
				}
			}
		}
	}
	return 0, nil
}

// runTileChain runs the colours of c in one call of runner; the time
// goes to the loops in proportion to the bytes they move (they run
// interleaved).
func (x *Executor) runTileChain(b *Opened, runner TileChainRunner, c *TiledChain) error {
	if !runner.TileChainReady() {
		start, before := time.Now(), jit.ReadStats()
		err := runner.PrepareTileChain()
		x.countBuild(b, c.Loops[0], "chain driver", time.Since(start), before, err, nil)
		if err != nil {
			return fmt.Errorf("%s and the %d loops tiled with it: building the chain driver: %w", c.Loops[0].Name(), len(c.Loops)-1, err)
		}
	}
	start := time.Now()
	if err := runner.RunTileChain(c.Programs, c.Schedule.Colours); err != nil {
		return fmt.Errorf("%s and the %d loops tiled with it: %w (the data they modify may be partly updated)", c.Loops[0].Name(), len(c.Loops)-1, err)
	}
	if x.Timing != nil {
		run := time.Since(start)
		total := 0.0
		for _, b := range c.Bytes {
			total += b
		}
		for j := range c.Loops {
			share := 1 / float64(len(c.Loops))
			if total > 0 {
				share = c.Bytes[j] / total
			}
			c.run[j] += time.Duration(float64(run) * share)
		}
	}
	return nil
}

// runBoundary runs the boundary of c's schedule (its last two tiles)
// loop by loop under h, each loop as run does: Agree, Begin (its
// reductions kept as the early tiles left them), Wait, the loop's
// elements of the boundary below its set's Owned, then those of the exec
// halo (a loop with reductions discarding theirs), Finish, End.
func (x *Executor) runBoundary(h TileHalo, c *TiledChain) (int, error) {
	s := c.Schedule
	owned, exec := s.Tiles-2, s.Tiles-1
	timing := x.Timing != nil
	for j, l := range c.Loops {
		p := c.Programs[j]
		if err := c.Agree(l); err != nil {
			return j, err
		}
		var err error
		if x.kept, err = keepReductions(x.kept[:0], l); err != nil {
			return j, err
		}
		if err := h.Begin(l, false); err != nil { // tiles run on the host
			return j, err
		}
		err = putReductions(x.kept, l)
		if werr := h.Wait(l); err == nil {
			err = werr
		}
		if err != nil {
			return j, err
		}
		var start time.Time
		if timing {
			start = time.Now()
		}
		off := s.RunOffsets[j]
		if off[owned] < off[owned+1] {
			if err := p.LaunchTiles(owned, owned+1); err != nil {
				return j, err
			}
		}
		if off[exec] < off[exec+1] {
			if x.kept, err = keepReductions(x.kept[:0], l); err != nil {
				return j, err
			}
			if err := p.LaunchTiles(exec, exec+1); err != nil {
				return j, err
			}
			if err := putReductions(x.kept, l); err != nil {
				return j, err
			}
		}
		if timing {
			c.run[j] += time.Since(start)
		}
		if err := p.Finish(l); err != nil {
			return j, err
		}
		if err := h.End(l); err != nil {
			return j, err
		}
	}
	return 0, nil
}

// keepReductions appends the values of l's reduction Globals to buf, for
// putReductions to put back after a pass whose reduction results are
// discarded (the exec halo) or across a Begin that would reset them.
func keepReductions(buf []byte, l *core.Loop) ([]byte, error) {
	for _, i := range l.Sig.Reductions {
		s := l.Args[i].Data
		if err := s.HostAccess(false); err != nil {
			return buf, err
		}
		buf = append(buf, unsafe.Slice((*byte)(s.Host), s.Bytes())...)
	}
	return buf, nil
}

// putReductions puts back the values keepReductions kept in buf.
func putReductions(buf []byte, l *core.Loop) error {
	for _, i := range l.Sig.Reductions {
		s := l.Args[i].Data
		if err := s.HostAccess(true); err != nil {
			return err
		}
		buf = buf[copy(unsafe.Slice((*byte)(s.Host), s.Bytes()), buf):]
	}
	return nil
}
