package exec

import (
	"encoding/binary"
	"fmt"
	"time"
	"unsafe"

	"github.com/goop2/op2/internal/core"
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
	tb, ok := b.Backend.(TileBuilder)
	if !ok {
		return nil, fmt.Errorf("%s: the %s backend cannot run loops in tiles", l.Name(), b.Name())
	}
	tuned := ""
	if x.Tuner != nil {
		if c, ok := x.tuned[string(x.tunedChoiceKey(b, l))]; ok {
			tuned = c.Variant
		}
	}
	variant := tb.TileVariant(l, tuned)
	x.key = tileKey(x.key[:0], b.ID, variant, l)
	if p, _, ok := x.programs.get(x.key); ok {
		return p.(TileProgram), nil
	}
	x.generations++
	p, err := tb.BuildTiles(l, variant)
	if err != nil {
		return nil, err
	}
	x.programs.put(x.key, p, l.Sig)
	return p, nil
}

// tileVariant starts the variant of the tile forms' keys in the program
// cache (no backend variant starts so).
const tileVariant = "\x00tiles"

// tileKey is the program cache's key of l's tile form in the backend's
// variant: programKey's, its variant tileVariant followed by variant.
func tileKey(buf []byte, backend uint64, variant string, l *core.Loop) []byte {
	buf = binary.LittleEndian.AppendUint64(buf, backend)
	buf = binary.AppendUvarint(buf, uint64(len(tileVariant)+len(variant)))
	buf = append(buf, tileVariant...)
	buf = append(buf, variant...)
	return core.AppendKey(buf, l)
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
	// Moved.
	Moved []float64
	// run is each loop's run time when timing (reused).
	run []time.Duration
}

// RunTiles runs the loops of c tile by tile: every tile runs its elements
// of the first loop, then of the second, and so on; the tiles of one
// colour run Threads at a time, the colours in order. The loops' data
// states are saved and put back if a loop fails before any launch; a
// failure after launches leaves the data partly updated, as for one
// loop. failed is the index of the loop that failed. Under MPI (Halo
// set) loops cannot run in tiles.
func (x *Executor) RunTiles(b *Opened, c *TiledChain) (failed int, err error) {
	if x.Halo != nil {
		return 0, fmt.Errorf("%s: loops under MPI cannot run in tiles", c.Loops[0].Name())
	}
	x.tuning = false
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
			return j, err
		}
	}
	timing := x.Timing != nil
	if timing {
		c.run = append(c.run[:0], make([]time.Duration, len(c.Loops))...)
	}
	s := c.Schedule
	for j, p := range c.Programs {
		var runs unsafe.Pointer
		if len(s.Runs[j]) > 0 {
			runs = unsafe.Pointer(&s.Runs[j][0])
		}
		p.SetTiles(runs, unsafe.Pointer(&s.RunOffsets[j][0]))
	}
	if runner, ok := b.Backend.(TileChainRunner); ok {
		return x.runTileChain(b, runner, c)
	}
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
					if !launched {
						x.restore()
						return j, err
					}
					return j, fmt.Errorf("%w (in a tiled chain of %d loops, after some of its tiles had run: the data the chain modifies may be partly updated)", err, len(c.Loops))
				}
				launched = true
				if timing {
					c.run[j] += time.Since(start)
				}
			}
		}
	}
	for j, l := range c.Loops {
		if err := c.Programs[j].Finish(l); err != nil {
			return j, err
		}
	}
	if timing {
		for j, l := range c.Loops {
			x.Timing.addTiled(l, b.Name(), c.run[j], c.Moved[j])
		}
	}
	return 0, nil
}

// runTileChain runs c in one call of runner; the time goes to the loops
// in proportion to the bytes they move (they run interleaved).
func (x *Executor) runTileChain(b *Opened, runner TileChainRunner, c *TiledChain) (int, error) {
	start := time.Now()
	if err := runner.RunTileChain(c.Programs, c.Schedule.Colours); err != nil {
		return 0, fmt.Errorf("%s and the %d loops tiled with it: %w (the data they modify may be partly updated)", c.Loops[0].Name(), len(c.Loops)-1, err)
	}
	run := time.Since(start)
	for j, l := range c.Loops {
		if err := c.Programs[j].Finish(l); err != nil {
			return j, err
		}
	}
	if x.Timing != nil {
		total := 0.0
		for _, b := range c.Bytes {
			total += b
		}
		for j, l := range c.Loops {
			share := 1 / float64(len(c.Loops))
			if total > 0 {
				share = c.Bytes[j] / total
			}
			x.Timing.addTiled(l, b.Name(), time.Duration(float64(run)*share), c.Moved[j])
		}
	}
	return 0, nil
}
