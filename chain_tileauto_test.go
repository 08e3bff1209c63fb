package op2_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// TestAutoTiling: with Config.Tile TileAuto a chain of recorded
// loops runs in tiles when its data exceeds the last-level cache (here a
// small one the test sets) and its tiles move fewer bytes, and runs
// untiled when its data fits or with tiling off; by default it tiles on
// one thread (sequential) only; the scalar code (SIMD off) is tiled too;
// in every case the
// Dats hold, byte for byte, what running each loop at once gives (the
// values are integers, so increments reaching an item in another order
// give the same sums).
func TestAutoTiling(t *testing.T) {
	const small, large = 16 << 10, 64 << 20 // last-level caches; the chain's data is about 100 KiB
	// The tile forms of automatic tiles build in the background; here
	// the one forcing of each run must find them (TestBackgroundBuildsMatchEager
	// covers the background).
	defer op2.SetBuilds(op2.BuildAtOnce)()
	edges, nodes, pedge := scatteredEdges(4000, 3000, 7, 3)
	gather := op2.NewKernel("void ta_gather(double *w, const double **q) { *w = q[0][0] + q[1][1]; }", "ta_gather")
	scatter := op2.NewKernel("void ta_scatter(const double *w, double **q) { q[0][0] += *w; q[1][1] += 1; }", "ta_scatter")
	scale := op2.NewKernel("void ta_scale(double *q, double *x) { *x += q[0]; q[1] = q[1] * 2 - *x; }", "ta_scale")
	run := func(cfg op2.Config) (q, w, x []float64, tiled bool) {
		r := must(op2.NewRuntime(cfg))
		qd := must(op2.NewDat(nodes, 2, iota32[float64](6000), "q"))
		wd := must(op2.NewDat[float64](edges, 1, nil, "w"))
		xd := must(op2.NewDat[float64](nodes, 1, nil, "x"))
		for range 3 { // on one thread: seen once, then measured untiled, then tiled
			check(t, r.ParLoop(gather, edges, wd.Arg(op2.Write), qd.ArgVec(op2.Read, pedge)))
			check(t, r.ParLoop(scatter, edges, wd.Arg(op2.Read), qd.ArgVec(op2.Inc, pedge)))
			check(t, r.ParLoop(scale, nodes, qd.Arg(op2.RW), xd.Arg(op2.RW)))
		}
		check(t, r.Wait())
		return qd.DataRO(), wd.DataRO(), xd.DataRO(), tiledRan(r)
	}
	for _, backend := range []string{"sequential", "openmp"} {
		eager := op2.Config{Backend: backend, Threads: 2}.Explicit("Lazy")
		wq, ww, wx, _ := run(eager)
		for _, c := range []struct {
			name  string
			llc   int64
			cfg   op2.Config
			tiled bool
		}{
			{"exceeds the cache", small, op2.Config{Tile: op2.TileAuto}, true},
			{"fits the cache", large, op2.Config{Tile: op2.TileAuto}, false},
			{"scalar code", small, op2.Config{SIMD: "off", Tile: op2.TileAuto}, true},
			{"scalar code, fits", large, op2.Config{SIMD: "off", Tile: op2.TileAuto}, false},
			{"the default", small, op2.Config{}, backend == "sequential"}, // auto on one thread only
			{"tiling named off", small, op2.Config{}.Explicit("Tile"), false},
			{"a tile size", large, op2.Config{Tile: 100}, true},
		} {
			what := fmt.Sprintf("%s, %s", backend, c.name)
			restore := op2.SetTileCaches(4<<10, c.llc)
			cfg := c.cfg
			cfg.Backend, cfg.Threads, cfg.Timing = backend, 2, true
			q, w, x, tiled := run(cfg)
			restore()
			if tiled != c.tiled {
				t.Errorf("%s: ran in tiles %v, want %v", what, tiled, c.tiled)
			}
			if !slices.Equal(q, wq) || !slices.Equal(w, ww) || !slices.Equal(x, wx) {
				t.Errorf("%s: q %v w %v x %v, at once q %v w %v x %v", what, q[:4], w[:4], x[:4], wq[:4], ww[:4], wx[:4])
			}
		}
	}
}

// TestAutoTilingMeasured: by default, on one thread, a chain whose data
// exceeds the last-level cache and whose tiles would move fewer bytes
// runs untiled, then untiled and tiled in turn, timed, and the choice is
// logged once, after three runs of each; whatever it is, the Dats hold what
// running each loop at once gives, bit for bit (floating-point sums,
// whose order TestAutoTiling's integers would hide).
func TestAutoTilingMeasured(t *testing.T) {
	defer op2.SetBuilds(op2.BuildAtOnce)()
	edges, nodes, pedge := scatteredEdges(4000, 3000, 7, 3)
	gather := op2.NewKernel("void tm_gather(double *w, const double **q) { *w = q[0][0] * 0.3 + q[1][1] / 7.0; }", "tm_gather")
	scatter := op2.NewKernel("void tm_scatter(const double *w, double **q) { q[0][0] += *w * 0.1; q[1][1] += 1.0 / 3.0; }", "tm_scatter")
	scale := op2.NewKernel("void tm_scale(double *q, double *x) { *x += q[0] / 9.0; q[1] = q[1] * 0.5 - *x; }", "tm_scale")
	run := func(cfg op2.Config) (q, x []float64) {
		r := must(op2.NewRuntime(cfg))
		qd := must(op2.NewDat(nodes, 2, iota32[float64](6000), "q"))
		wd := must(op2.NewDat[float64](edges, 1, nil, "w"))
		xd := must(op2.NewDat[float64](nodes, 1, nil, "x"))
		for range 5 {
			for range 2 { // one forcing, two runs of the chain
				check(t, r.ParLoop(gather, edges, wd.Arg(op2.Write), qd.ArgVec(op2.Read, pedge)))
				check(t, r.ParLoop(scatter, edges, wd.Arg(op2.Read), qd.ArgVec(op2.Inc, pedge)))
				check(t, r.ParLoop(scale, nodes, qd.Arg(op2.RW), xd.Arg(op2.RW)))
			}
			check(t, r.Wait())
		}
		return qd.DataRO(), xd.DataRO()
	}
	wq, wx := run(op2.Config{}.Explicit("Lazy"))
	restore := op2.SetTileCaches(4<<10, 16<<10)
	defer restore()
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	q, x := run(op2.Config{Logger: logger})
	// The log shows the trial: a timing report names only a loop's last
	// way of running.
	if n := strings.Count(log.String(), "automatic tiling measured"); n != 1 {
		t.Errorf("the choice logged %d times, want once:\n%s", n, log.String())
	}
	if !slices.Equal(q, wq) || !slices.Equal(x, wx) {
		t.Errorf("q %v x %v, at once q %v x %v", q[:4], x[:4], wq[:4], wx[:4])
	}
}
