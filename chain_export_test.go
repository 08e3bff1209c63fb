package op2

import "github.com/goop2/op2/internal/tile"

// RecordedLoops is the number of loops recorded and not yet run (see
// Chain).
func RecordedLoops() int {
	rt.proc.Lock(forNoData, "test")
	defer rt.proc.Unlock()
	return rt.proc.Recorded()
}

// TiledDistributedRuns is the number of tiled runs of recorded loops
// under MPI so far.
func TiledDistributedRuns() int {
	rt.proc.Lock(forNoData, "test")
	defer rt.proc.Unlock()
	return rt.proc.TiledDistributedRuns()
}

// SetTileCaches makes automatic tiling (Config.Tile TileAuto) weigh
// chains against an L2 cache of l2 bytes per core and a last-level cache
// of llc bytes, and returns the function that puts the machine's back.
func SetTileCaches(l2, llc int64) (restore func()) {
	rt.proc.Lock(forNoData, "test")
	defer rt.proc.Unlock()
	rt.proc.SetTileCaches(&tile.Caches{L2: l2, LLC: llc, Sharing: 1})
	return func() {
		rt.proc.Lock(forNoData, "test")
		defer rt.proc.Unlock()
		rt.proc.SetTileCaches(nil)
	}
}
