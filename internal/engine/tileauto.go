package engine

import (
	"context"
	"log/slog"
	"time"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/tile"
)

// Automatic sparse tiling (Config.Tile exec.TileAuto, OP2_TILE=auto).
//
// In one process, a run of recorded loops that could run in tiles does
// so when package tile's Auto says tiles pay for the chain: its data
// (each Dat and map once) does not fit the last-level cache, and the
// bytes it moves in tiles (exec.ChainBytes) are at most tile.AutoMinGain
// of those its loops move one by one (the sum of exec.LoopBytes). The
// tile size is chosen so that a tile's share of the chain's data fills
// half of one CPU's part of the last-level cache (tile.AutoL2 proposes a
// second, from the L2 cache). The choice is made once per distinct chain
// (chainKey) and kept, so that a repeated chain costs a map lookup, and
// no tile form is built for a chain that runs untiled. On one thread the
// chain's runs then measure running untiled against each size before
// one is kept (tileTrial, tile.go). Fusion stays on (Runtime.fuses), so
// fused loops run in tiles.

// autoChoice is automatic tiling's choice for a chain of loops: the
// tile sizes it proposes, tile.Auto's (0: the chain runs untiled) and
// tile.AutoL2's (0: none), and on one thread the measured choice among
// them and running untiled (tileTrial).
type autoChoice struct {
	sizes [maxTileWays - 1]int
	trial tileTrial
	seen  int // the chain's runs so far (from 1 as it runs)
}

// autoChoice returns automatic tiling's choice for the chain of loops,
// made the first time the chain is seen (see tile.Auto) and kept.
func (p *Process) autoChoice(r *Runtime, loops []*core.Loop) *autoChoice {
	key := chainKey(p.tiling.key[:0], loops, exec.TileAuto, false, false)
	p.tiling.key = key
	if a, ok := p.tiling.auto[string(key)]; ok {
		return a
	}
	if len(p.tiling.auto) >= maxTiledChains || p.tiling.auto == nil {
		p.tiling.auto = map[string]*autoChoice{}
	}
	caches := tile.MachineCaches()
	if p.tiling.caches != nil {
		caches = *p.tiling.caches
	}
	f := chainFootprint(loops)
	a := &autoChoice{}
	a.sizes[0] = tile.Auto(caches, f)
	a.sizes[1] = tile.AutoL2(caches, f, a.sizes[0])
	a.trial.ways = 1
	for _, s := range a.sizes {
		if s > 0 {
			a.trial.ways++
		}
	}
	p.tiling.auto[string(key)] = a
	if log := r.Logger(); log != nil {
		log.Debug("op2: automatic tiling", "loop", loops[0].Name(), "loops", len(loops), "data_bytes", f.Data,
			"moved_bytes", f.Loops, "tiled_bytes", f.Chain, "l2", caches.L2, "llc", caches.LLC, "llc_cpus", caches.Sharing,
			"tile", a.sizes[0], "tile_l2", a.sizes[1])
	}
	return a
}

// record adds a run of way w (tileTrial) of the chain whose first loop is
// l, which took d, logging the choice when that makes it.
func (a *autoChoice) record(r *Runtime, l *core.Loop, w int, d time.Duration) {
	if !a.trial.add(w, d) {
		return
	}
	if log := r.Logger(); log != nil {
		t := &a.trial
		size := 0
		if t.way > 0 {
			size = a.sizes[t.way-1]
		}
		log.LogAttrs(context.Background(), slog.LevelDebug, "op2: automatic tiling measured", slog.String("loop", l.Name()),
			slog.Duration("untiled", t.best[0]), slog.Int("tile", a.sizes[0]), slog.Duration("tiled", t.best[1]),
			slog.Int("tile_l2", a.sizes[1]), slog.Duration("tiled_l2", t.best[2]), slog.Int("chosen", size))
	}
}

// chainFootprint is what tile.Auto weighs of a chain of loops: the bytes
// of the distinct Dats and map tables they pass, estimates of the bytes
// they move one by one and in tiles, and the first loop's elements. The
// estimates look at the loops' arguments only, never at their elements,
// so that weighing a chain costs next to nothing: an indirect argument
// reaches as many items as its loop's elements times the map columns it
// goes through, at most its Dat's items (the exact counts, which
// exec.LoopBytes and exec.ChainBytes make for the timing report, mark
// every element reached, about 0.3 s for a chain on Airfoil's 720 000
// cells). Each loop counts a Dat once, with the accesses of all its
// arguments passing it; the chain counts it once, reaching the most items
// any of its loops reaches; maps likewise.
func chainFootprint(loops []*core.Loop) tile.Footprint {
	f := tile.Footprint{Seed: loops[0].IterEnd()}
	type use struct {
		items       int  // the items reached
		read, write bool // accessed so
	}
	chain := map[any]*use{}
	var loop map[any]*use
	note := func(m map[any]*use, key any, items int, read, write bool) {
		u := m[key]
		if u == nil {
			u = &use{}
			m[key] = u
		}
		u.items, u.read, u.write = max(u.items, items), u.read || read, u.write || write
	}
	bytes := func(m map[any]*use) float64 {
		total := 0.0
		for key, u := range m {
			switch key := key.(type) {
			case *core.Storage:
				times := 0
				if u.read {
					times++
				}
				if u.write {
					times++
				}
				total += float64(u.items * max(1, key.Dim) * key.Type.Size() * times)
			case *core.Map:
				total += float64(4 * key.Arity * u.items)
			}
		}
		return total
	}
	for _, l := range loops {
		n := l.IterEnd()
		clear(loop)
		if loop == nil {
			loop = map[any]*use{}
		}
		cols := map[*core.Storage]int{} // the map columns reaching each Dat
		for i := range l.Args {
			a := &l.Args[i]
			if a.Off || a.Kind == core.ArgGlobal || a.Kind == core.ArgMat {
				continue
			}
			if _, ok := chain[a.Data]; !ok {
				f.Data += float64(a.Data.Bytes())
			}
			size := a.Data.Len / max(1, a.Data.Dim)
			if a.Data.Set != nil {
				size = a.Data.Set.Total
			}
			items := min(n, size)
			if a.Map != nil {
				if _, ok := chain[a.Map]; !ok {
					f.Data += float64(4 * len(a.Map.Table))
				}
				note(loop, a.Map, n, true, false)
				note(chain, a.Map, n, true, false)
				if a.Kind == core.ArgIndirect {
					cols[a.Data]++
				} else {
					cols[a.Data] += a.Map.Arity
				}
				items = min(n*cols[a.Data], size)
			}
			read, write := a.Access != core.Write, a.Access.Modifies()
			note(loop, a.Data, items, read, write)
			note(chain, a.Data, items, read, write)
		}
		f.Loops += bytes(loop)
	}
	f.Chain = bytes(chain)
	return f
}

// SetTileCaches makes automatic tiling weigh chains against caches c
// instead of the machine's, forgetting the sizes chosen so far; nil puts
// the machine's back (tests). Caller holds the lock.
func (p *Process) SetTileCaches(c *tile.Caches) {
	p.tiling.caches, p.tiling.auto = c, nil
}
