package op2_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// tiledRan reports whether runtime r's timing report has a loop whose
// last call ran in tiles.
func tiledRan(r *op2.Runtime) bool {
	return slices.ContainsFunc(r.Timings(), func(lt op2.LoopTiming) bool { return lt.Tuned == "tiled" })
}

// TestTiledChainAllocatesNothing: a repeated chain of recorded loops run
// in tiles (Config.Tile) finds its schedule and programs again and
// allocates nothing, on both host backends, with SIMD lanes too (whose
// tile forms then run in lanes: their sources in the cache say so).
func TestTiledChainAllocatesNothing(t *testing.T) {
	for _, c := range []struct{ backend, simd string }{{"sequential", "8"}, {"openmp", "4"}} {
		t.Run(c.backend+"/simd"+c.simd, func(t *testing.T) {
			cache := t.TempDir()
			r := closeAtEnd(t, must(op2.NewRuntime(op2.Config{Backend: c.backend, Threads: 2, Lazy: true, Tile: 3, Timing: true, SIMD: c.simd, CacheDir: cache})))
			loops := tiledChain(t, r, "at_w", "at_a", "at_b")
			loops()
			if !tiledRan(r) {
				t.Fatal("the chain did not run in tiles")
			}
			// The tiled loops share q and the map: the chain moves less
			// than the loops would one at a time.
			var bytes, moved float64
			for _, lt := range r.Timings() {
				bytes += lt.Bytes
				moved += lt.Moved
			}
			if moved <= 0 || moved >= bytes {
				t.Errorf("the tiled chain moves %v bytes; run loop by loop %v", moved, bytes)
			}
			if a := testing.AllocsPerRun(20, loops); a != 0 {
				t.Errorf("a repeated tiled chain allocates %v times", a)
			}
			if got, want := laneTileForms(t, cache), 3; got != want {
				t.Errorf("%d tile forms in SIMD lanes, want %d (one per loop)", got, want)
			}
		})
	}
}

// laneTileForms returns the number of tile forms in SIMD lanes in cache
// directory dir: sources whose op2_range runs runs of elements in chunks
// of lanes.
func laneTileForms(t *testing.T, dir string) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.c"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(src, []byte("<= op2_e; op2_n +=")) && bytes.Contains(src, []byte("op2_lanes_")) {
			n++
		}
	}
	return n
}

// TestTiledChainGlobals: a loop that reduces a Global ends a tiled chain
// before a later loop that reads it, and a loop reading a Global ends it
// before a later loop that reduces it: the results are those of running
// each loop at once, bit for bit (the values are integers).
func TestTiledChainGlobals(t *testing.T) {
	edges, nodes, pedge := scatteredEdges(400, 300, 7, 3)
	count := op2.NewKernel("void tg_count(const double *x, double *g) { *g += *x; }", "tg_count")
	spread := op2.NewKernel("void tg_spread(double **y, const double *g, double *h) { y[0][0] += *g; y[1][0] += 1; if (*g > *h) *h = *g; }", "tg_spread")
	bump := op2.NewKernel("void tg_bump(double *x, const double *y) { *x += *y; }", "tg_bump")
	run := func(cfg op2.Config) ([]float64, float64, float64, bool) {
		r := must(op2.NewRuntime(cfg))
		x := must(op2.NewDat(nodes, 1, iota32[float64](300), "x"))
		y := must(op2.NewDat[float64](nodes, 1, nil, "y"))
		g := must(op2.NewGlobal(1, []float64{1}, "g"))
		h := must(op2.NewGlobal(1, []float64{0}, "h"))
		for range 3 {
			check(t, r.ParLoop(count, nodes, x.Arg(op2.Read), g.Arg(op2.Inc)))
			check(t, r.ParLoop(spread, edges, y.ArgVec(op2.Inc, pedge), g.Arg(op2.Read), h.Arg(op2.Max)))
			check(t, r.ParLoop(bump, nodes, x.Arg(op2.RW), y.Arg(op2.Read)))
			check(t, r.ParLoop(spread, edges, y.ArgVec(op2.Inc, pedge), g.Arg(op2.Read), h.Arg(op2.Max)))
			check(t, r.ParLoop(count, nodes, y.Arg(op2.Read), g.Arg(op2.Inc)))
		}
		check(t, r.Wait())
		return x.DataRO(), g.Value(), h.Value(), tiledRan(r)
	}
	wx, wg, wh, _ := run(op2.Config{})
	for _, backend := range []string{"sequential", "openmp"} {
		for _, size := range []int{1, 20, 1000} {
			what := fmt.Sprintf("%s, tile %d", backend, size)
			x, g, h, tiled := run(op2.Config{Backend: backend, Threads: 2, Lazy: true, Tile: size, Timing: true})
			if !tiled {
				t.Errorf("%s: no loop ran in tiles", what)
			}
			if !slices.Equal(x, wx) || g != wg || h != wh {
				t.Errorf("%s: x %v g %v h %v, at once x %v g %v h %v", what, x[:4], g, h, wx[:4], wg, wh)
			}
		}
	}
}

// TestTileConfig: a Config.Tile below TileAuto is refused; TileAuto is
// taken.
func TestTileConfig(t *testing.T) {
	_, err := op2.NewRuntime(op2.Config{Tile: -2})
	wantErr(t, err, "Config.Tile")
	if _, err := op2.NewRuntime(op2.Config{Tile: op2.TileAuto}); err != nil {
		t.Errorf("Config{Tile: TileAuto}: %v", err)
	}
}

// TestTiledChainProgramsDropped: with the program cache too small for a
// chain's tile programs, the loops run one by one, with the results of
// running each at once.
func TestTiledChainProgramsDropped(t *testing.T) {
	cache := os.Getenv("OP2_CACHE_DIR")
	check(t, op2.Configure(op2.Config{CacheDir: cache, PlanCheck: true, Lazy: true, Tile: 4, Timing: true}))
	defer func() { check(t, op2.Configure(op2.Config{CacheDir: cache, PlanCheck: true})) }()
	defer op2.ResetTimings()
	defer op2.SetMaxPrograms(2)()
	set := must(op2.NewSet(50, "cells"))
	x := must(op2.NewDat(set, 1, iota32[float64](50), "x"))
	r := op2.Default()
	for i := range 4 {
		k := op2.NewKernel(fmt.Sprintf("void pd_%d(double *x) { *x = *x * 2 + %d; }", i, i), fmt.Sprintf("pd_%d", i))
		check(t, r.ParLoop(k, set, x.Arg(op2.RW)))
	}
	check(t, r.Wait())
	if got, want := x.DataRO()[3], ((((3.0*2+0)*2+1)*2+2)*2 + 3); got != want {
		t.Errorf("x[3] = %v, want %v", got, want)
	}
	if tiledRan(r) {
		t.Error("the loops ran in tiles with their programs dropped")
	}
}

// TestTiledRunSpansAssignments: on one thread a tiled run goes on past
// Global.SetValue and runs two loops of one shape (a copy of its
// program): an iteration of a flux loop, an assignment of 0 to rms, a
// loop reducing into rms, an assignment to a Global a later loop reads,
// and again with the other reducing loop, whose first reduction into rms
// the second assignment makes dead. The loops run in tiles, and q, the
// rms of every iteration and the read Global's effect equal eager
// execution's bit for bit (floating-point values), with a tile size and
// with the default automatic tiles (a small test-set cache).
func TestTiledRunSpansAssignments(t *testing.T) {
	defer op2.SetBuilds(op2.BuildAtOnce)()
	edges, nodes, pedge := scatteredEdges(4000, 3000, 7, 3)
	flux := op2.NewKernel("void sa_flux(const double **q, double **r) { double f = q[0][0] * 0.37 - q[1][0] / 3.0; r[0][0] += f; r[1][0] -= f; }", "sa_flux")
	update0 := op2.NewKernel("void sa_update0(double *q, double *r, double *rms) { q[0] += r[0] * 0.01; *rms += r[0] * r[0]; r[0] = 0.0; }", "sa_update0")
	update1 := op2.NewKernel("void sa_update1(double *q, double *r, double *rms) { q[0] -= r[0] * 0.003; *rms += r[0] * r[0] / 3.0; r[0] = 0.0; }", "sa_update1")
	scale := op2.NewKernel("void sa_scale(double *q, const double *s) { q[0] *= 1.0 + *s * 1e-3; }", "sa_scale")
	run := func(cfg op2.Config) (q, rms []float64, r *op2.Runtime) {
		r = must(op2.NewRuntime(cfg))
		q0 := iota32[float64](3000)
		for i := range q0 {
			q0[i] = q0[i]/7 + 0.1
		}
		qd := must(op2.NewDat(nodes, 1, q0, "q"))
		rd := must(op2.NewDat[float64](nodes, 1, nil, "r"))
		g := must(op2.NewGlobal[float64](1, nil, "rms"))
		s := must(op2.NewGlobal[float64](1, nil, "s"))
		for it := range 8 {
			for stage, update := range []*op2.Kernel{update0, update1} {
				check(t, r.ParLoop(flux, edges, qd.ArgVec(op2.Read, pedge), rd.ArgVec(op2.Inc, pedge)))
				g.SetValue(0)
				check(t, r.ParLoop(update, nodes, qd.Arg(op2.RW), rd.Arg(op2.RW), g.Arg(op2.Inc)))
				s.SetValue(float64(it + stage))
				check(t, r.ParLoop(scale, nodes, qd.Arg(op2.RW), s.Arg(op2.Read)))
			}
			rms = append(rms, g.Value())
		}
		return qd.DataRO(), rms, r
	}
	wq, wrms, _ := run(op2.Config{}.Explicit("Lazy"))
	for _, c := range []struct {
		name string
		cfg  op2.Config
	}{
		{"tiles of 100", op2.Config{Tile: 100, Fusion: "off", Timing: true}},
		{"the default", op2.Config{}},
	} {
		restore := op2.SetTileCaches(4<<10, 16<<10)
		q, rms, r := run(c.cfg)
		restore()
		if !slices.Equal(q, wq) || !slices.Equal(rms, wrms) {
			t.Errorf("%s: q %v rms %v, at once q %v rms %v", c.name, q[:3], rms, wq[:3], wrms)
		}
		if !c.cfg.Timing {
			continue
		}
		for _, name := range []string{"sa_update0", "sa_update1", "sa_flux"} {
			if !slices.ContainsFunc(r.Timings(), func(lt op2.LoopTiming) bool { return lt.Kernel == name && lt.Tuned == "tiled" }) {
				t.Errorf("%s: %s did not run in tiles: %+v", c.name, name, r.Timings())
			}
		}
	}
}

// TestTiledScheduleKnowsGlobalSums: a chain tiled first with its
// floating-point sum into a Global off (op2.Opt) and then on, or with a
// kernel reading the Global and then one summing into it, gets a
// schedule that keeps the sum's elements in order the second time: the
// sums equal eager execution's bits on one thread (the schedule was kept
// by a key blind to Global arguments, and the sums differed).
func TestTiledScheduleKnowsGlobalSums(t *testing.T) {
	read := op2.NewKernel(`void ts_read(const double **q, const double *g) { (void)q; (void)g; }`, "ts_read")
	sum := op2.NewKernel(`void ts_sum(const double **q, double *g) { if (g) *g += q[0][0] * 1.1 + q[1][0]; }`, "ts_sum")
	fill := op2.NewKernel(`void ts_fill(double *q, const int *i) { *q = 1.0 / (3.0 + *i); }`, "ts_fill")
	for _, c := range []struct {
		name  string
		first func(q *op2.Dat[float64], m *op2.Map, g *op2.Global[float64]) (*op2.Kernel, op2.Arg, op2.Arg)
	}{
		{"optional sum off first", func(q *op2.Dat[float64], m *op2.Map, g *op2.Global[float64]) (*op2.Kernel, op2.Arg, op2.Arg) {
			return sum, q.ArgVec(op2.Read, m), op2.Opt(false, g.Arg(op2.Inc))
		}},
		{"reading kernel first", func(q *op2.Dat[float64], m *op2.Map, g *op2.Global[float64]) (*op2.Kernel, op2.Arg, op2.Arg) {
			return read, q.ArgVec(op2.Read, m), g.Arg(op2.Read)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := func(cfg op2.Config) []uint64 {
				r := must(op2.NewRuntime(cfg))
				defer func() {
					if cfg.Lazy && !tiledRan(r) {
						t.Errorf("fusion %s, tiles of 64: nothing ran in tiles", cfg.Fusion)
					}
					r.Close()
				}()
				const n = 4000
				nodes := must(op2.NewSet(n, "ts_nodes"))
				edges := must(op2.NewSet(n, "ts_edges"))
				table := make([]int32, 2*n)
				for e := range n {
					table[2*e], table[2*e+1] = int32(e), int32((e*7919+1234)%n)
				}
				m := must(op2.NewMap(edges, nodes, 2, table, "ts_map"))
				q := must(op2.NewDat[float64](nodes, 1, nil, "ts_q"))
				g := must(op2.NewGlobal[float64](1, nil, "ts_g"))
				var sums []uint64
				for it := range 3 {
					check(t, r.ParLoop(fill, nodes, q.Arg(op2.Write), op2.ArgIdx()))
					k, a, b := c.first(q, m, g)
					if it > 0 {
						k, a, b = sum, q.ArgVec(op2.Read, m), g.Arg(op2.Inc)
					}
					check(t, r.ParLoop(k, edges, a, b))
					_ = q.DataRO() // runs the chain
					sums = append(sums, math.Float64bits(g.Value()))
					g.SetValue(0)
				}
				return sums
			}
			eager := run(op2.Config{}.Explicit("Lazy"))
			for _, cfg := range []op2.Config{{Lazy: true, Fusion: "off", Tile: 64, Timing: true}, {Lazy: true, Fusion: "on", Tile: 64, Timing: true}} {
				if got := run(cfg); !slices.Equal(got, eager) {
					t.Errorf("fusion %s, tiles of 64: sums %x, eager %x", cfg.Fusion, got, eager)
				}
			}
		})
	}
}

// TestTiledRunKeepsRedeclaredConsts: loops recorded before a Const is
// removed and declared again under its name, and one after, run in tiles
// with the value each was issued with (the loops of one generated source
// share a library, into which a tiled run copied the last loop's value
// for all of them).
func TestTiledRunKeepsRedeclaredConsts(t *testing.T) {
	k := op2.NewKernel(`void tc_k(double *x) { *x = *x * 2 + tc_c[0]; }`, "tc_k")
	for _, cfg := range []op2.Config{{Lazy: true, Fusion: "off", Tile: 8}, {Lazy: true, Fusion: "on", Tile: 8}, {Lazy: true}} {
		r := must(op2.NewRuntime(cfg))
		nodes := must(op2.NewSet(50, "tc_nodes"))
		x := must(op2.NewDat[float64](nodes, 1, nil, "tc_x"))
		c1 := must(op2.NewConstIn(r, 2, []float64{1, 0}, "tc_c"))
		check(t, r.ParLoop(k, nodes, x.Arg(op2.RW))) // 1
		check(t, r.ParLoop(k, nodes, x.Arg(op2.RW))) // 3
		c1.Remove()
		c2 := must(op2.NewConstIn(r, 2, []float64{100, 0}, "tc_c"))
		check(t, r.ParLoop(k, nodes, x.Arg(op2.RW))) // 106
		if got := x.DataRO()[0]; got != 106 {
			t.Errorf("fusion %q, tile %d: x = %v, want 106", cfg.Fusion, cfg.Tile, got)
		}
		c2.Remove()
		r.Close()
	}
}

// TestTiledMovedKnowsViewsAndGlobals: a tiled chain's bytes moved (the
// timing report's Moved) are those of the chain as it runs, when the same
// chain ran before with the whole Dat instead of a view, or with another
// Global (they were kept by a key blind to both).
func TestTiledMovedKnowsViewsAndGlobals(t *testing.T) {
	fill := op2.NewKernel(`void am_fill(double *q, double *w) { for (int i = 0; i < 8; i++) q[i] = i; *w = 0; }`, "am_fill")
	use := op2.NewKernel(`void am_use(const double *q, double *w, const double *g) { *w += q[0] + g[0]; }`, "am_use")
	type args func(q *op2.Dat[float64], g1, g2 *op2.Global[float64]) (op2.Arg, op2.Arg)
	whole := func(q *op2.Dat[float64], g1, g2 *op2.Global[float64]) (op2.Arg, op2.Arg) {
		return q.Arg(op2.Read), g1.Arg(op2.Read)
	}
	view := func(q *op2.Dat[float64], g1, g2 *op2.Global[float64]) (op2.Arg, op2.Arg) {
		return must(q.View(0)).Arg(op2.Read), g1.Arg(op2.Read)
	}
	bigGlobal := func(q *op2.Dat[float64], g1, g2 *op2.Global[float64]) (op2.Arg, op2.Arg) {
		return q.Arg(op2.Read), g2.Arg(op2.Read)
	}
	run := func(first, second args) float64 {
		r := must(op2.NewRuntime(op2.Config{Lazy: true, Fusion: "off", Tile: 64, Timing: true}))
		defer r.Close()
		cells := must(op2.NewSet(4000, "am_cells"))
		q := must(op2.NewDat[float64](cells, 8, nil, "am_q"))
		w := must(op2.NewDat[float64](cells, 1, nil, "am_w"))
		g1 := must(op2.NewGlobal[float64](1, nil, "am_g1"))
		g2 := must(op2.NewGlobal[float64](100000, nil, "am_g2"))
		moved := 0.0
		for it := range 3 {
			a, b := first(q, g1, g2)
			if it > 0 {
				a, b = second(q, g1, g2)
			}
			r.ResetTimings()
			check(t, r.ParLoop(fill, cells, q.Arg(op2.Write), w.Arg(op2.Write)))
			check(t, r.ParLoop(use, cells, a, w.Arg(op2.RW), b))
			check(t, r.Wait())
			if !tiledRan(r) {
				t.Errorf("iteration %d: nothing ran in tiles", it)
			}
			for _, lt := range r.Timings() {
				if lt.Kernel == "am_use" {
					moved = lt.Moved / float64(lt.Calls)
				}
			}
		}
		return moved
	}
	for _, c := range []struct {
		name          string
		first, second args
	}{{"whole then view", whole, view}, {"view then whole", view, whole}, {"small then big Global", whole, bigGlobal}} {
		got, want := run(c.first, c.second), run(c.second, c.second)
		if got != want {
			t.Errorf("%s: am_use moved %v bytes a call, want %v (a fresh chain's)", c.name, got, want)
		}
	}
}

// TestTiledChainBuildsCounted: a tiled chain's first run from an empty
// cache builds each loop's tile form and the chain driver; each build is
// logged and counted in its loop's compile column, not in the loops'
// time (the driver's went into the time, and the tile forms' nowhere).
func TestTiledChainBuildsCounted(t *testing.T) {
	for _, backend := range hostBackends {
		t.Run(backend, func(t *testing.T) {
			h := &logCapture{}
			r := closeAtEnd(t, must(op2.NewRuntime(op2.Config{Backend: backend, Threads: 2, Lazy: true, Tile: 3, Timing: true, SIMD: "off",
				CacheDir: t.TempDir(), Logger: slog.New(debugOnly{h})})))
			tiledChain(t, r, "tb_w", "tb_a", "tb_q")()
			if !tiledRan(r) {
				t.Fatal("the chain did not run in tiles")
			}
			_, attrs := h.find("op2: program built")
			built := map[string]int{}
			for _, a := range attrs {
				if v := a["variant"]; strings.HasPrefix(v, "tiles") || v == "chain driver" {
					built[a["kernel"]+" "+strings.Fields(v)[0]]++
				}
			}
			if built["tb_w tiles"] != 1 || built["tb_q tiles"] != 1 || built["tb_a tiles"] != 1 || built["tb_w chain"] != 1 {
				t.Errorf("builds logged %v, want one tile form per loop and the chain driver (with the first loop)", built)
			}
			for _, lt := range r.Timings() {
				if lt.Tuned == "tiled" && lt.Compile <= 0 {
					t.Errorf("loop %s: compile %v, want its tile form's build", lt.Kernel, lt.Compile)
				}
			}
		})
	}
}

// debugOnly is a log handler that takes Debug and above: not the trace
// level, at which loops run one by one to be logged.
type debugOnly struct{ slog.Handler }

func (d debugOnly) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelDebug && d.Handler.Enabled(ctx, l)
}

// tiledChain declares a chain of three loops that runs in tiles on r (a
// Tile set): one writing w on edges from q through a map, one
// incrementing q through it, one on another set reducing into a Global;
// its kernels are named w, a and q. It returns what issues the loops and
// waits for them.
func tiledChain(t *testing.T, r *op2.Runtime, w, a, q string) func() {
	t.Helper()
	set := must(op2.NewSet(8, "cells"))
	edges, nodes, pedge := scatteredEdges(600, 500, 3, 2)
	xd := must(op2.NewDat[float64](set, 1, nil, "x"))
	qd := must(op2.NewDat[float64](nodes, 2, nil, "q"))
	wd := must(op2.NewDat[float64](edges, 1, nil, "w"))
	g := must(op2.NewGlobal[float64](1, nil, "g"))
	kw := op2.NewKernel("void "+w+"(double *w, const double **q) { *w = q[0][0] + q[1][1]; }", w)
	ka := op2.NewKernel("void "+a+"(double *x, double *g) { *x += 1; *g += *x; }", a)
	kq := op2.NewKernel("void "+q+"(const double *w, double **q) { q[0][0] += *w; q[1][1] += 1; }", q)
	return func() {
		check(t, r.ParLoop(kw, edges, wd.Arg(op2.Write), qd.ArgVec(op2.Read, pedge)))
		check(t, r.ParLoop(kq, edges, wd.Arg(op2.Read), qd.ArgVec(op2.Inc, pedge)))
		check(t, r.ParLoop(ka, set, xd.Arg(op2.RW), g.Arg(op2.Inc)))
		check(t, r.Wait())
	}
}

// TestUseTakesTheBackendsTileDefault: a runtime that switches backends
// with Use tiles its chains as one configured with the new backend does
// where Tile was left to its default (automatic on one thread, off on
// several): the default worked out for the old backend was kept.
func TestUseTakesTheBackendsTileDefault(t *testing.T) {
	defer op2.SetBuilds(op2.BuildAtOnce)()
	defer op2.SetTileCaches(4<<10, 16<<10)() // the chain's data exceeds the "last-level cache"
	edges, nodes, pedge := scatteredEdges(4000, 3000, 7, 3)
	gather := op2.NewKernel("void ut_g(double *w, const double **q) { *w = q[0][0] + q[1][1]; }", "ut_g")
	scatter := op2.NewKernel("void ut_s(const double *w, double **q) { q[0][0] += *w; q[1][1] += 1; }", "ut_s")
	tiled := func(r *op2.Runtime) bool {
		q := must(op2.NewDat(nodes, 2, iota32[float64](6000), "q"))
		w := must(op2.NewDat[float64](edges, 1, nil, "w"))
		for range 3 {
			check(t, r.ParLoop(gather, edges, w.Arg(op2.Write), q.ArgVec(op2.Read, pedge)))
			check(t, r.ParLoop(scatter, edges, w.Arg(op2.Read), q.ArgVec(op2.Inc, pedge)))
		}
		check(t, r.Wait())
		return tiledRan(r)
	}
	for _, c := range []struct {
		from, to string
		want     bool
	}{{"sequential", "openmp", false}, {"openmp", "sequential", true}} {
		configured := tiled(closeAtEnd(t, must(op2.NewRuntime(op2.Config{Backend: c.to, Threads: 2, Timing: true}))))
		r := closeAtEnd(t, must(op2.NewRuntime(op2.Config{Backend: c.from, Threads: 2, Timing: true})))
		check(t, r.Use(c.to))
		if used := tiled(r); configured != c.want || used != c.want {
			t.Errorf("%s on 2 threads: tiled %v when configured, %v after Use from %s; want %v", c.to, configured, used, c.from, c.want)
		}
	}
}
