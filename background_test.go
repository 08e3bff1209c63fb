package op2_test

import (
	"math"
	"strings"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/engine"
)

// bgLoops is a runtime's Dats for the background-build tests and the
// loops it issues on them: three direct loops over one set that fuse.
type bgLoops struct {
	r       *op2.Runtime
	set     *op2.Set
	x, w, y *op2.Dat[float64]
}

var bgKernels = []*op2.Kernel{
	op2.NewKernel("void bgf_a(double *x, const double *w) { x[0] = x[0] * 1.0001 + w[0] / 3.0; }", "bgf_a"),
	op2.NewKernel("void bgf_b(const double *x, double *y) { y[0] = x[0] * x[0] - 0.5; }", "bgf_b"),
	op2.NewKernel("void bgf_c(double *x, const double *y) { x[0] += y[0] / 7.0; }", "bgf_c"),
}

func newBGLoops(t *testing.T, cfg op2.Config) *bgLoops {
	t.Helper()
	const n = 1000
	x, w := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i], w[i] = math.Sin(float64(i)), math.Cos(float64(3*i))
	}
	b := &bgLoops{r: must(op2.NewRuntime(cfg)), set: must(op2.NewSet(n, "bg_cells"))}
	b.x = must(op2.NewDat(b.set, 1, x, "x"))
	b.w = must(op2.NewDat(b.set, 1, w, "w"))
	b.y = must(op2.NewDat[float64](b.set, 1, nil, "y"))
	return b
}

// iterate issues the three loops and forces them by reading x and y.
func (b *bgLoops) iterate(t *testing.T) (x, y []float64) {
	t.Helper()
	check(t, b.r.ParLoop(bgKernels[0], b.set, b.x.Arg(op2.RW), b.w.Arg(op2.Read)))
	check(t, b.r.ParLoop(bgKernels[1], b.set, b.x.Arg(op2.Read), b.y.Arg(op2.Write)))
	check(t, b.r.ParLoop(bgKernels[2], b.set, b.x.Arg(op2.RW), b.y.Arg(op2.Read)))
	return append([]float64(nil), b.x.DataRO()...), append([]float64(nil), b.y.DataRO()...)
}

// ran says how the runtime's loops ran since its timings were reset:
// whether a fused loop ran and whether a loop ran in tiles.
func (b *bgLoops) ran() (fused, tiled bool) {
	for _, lt := range b.r.Timings() {
		fused = fused || strings.HasPrefix(lt.Kernel, "fused_")
		tiled = tiled || lt.Tuned == "tiled"
	}
	b.r.ResetTimings()
	return fused, tiled
}

// sameBits fails unless got and want hold the same float64 bit patterns.
func sameBits(t *testing.T, what string, got, want []float64) {
	t.Helper()
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s[%d] = %v, eager %v", what, i, got[i], want[i])
		}
	}
}

// TestBackgroundBuildsMatchEager: with an empty compile cache, loops that
// fuse (Fusion "auto", the default) or run in tiles (here Tile, built in
// the background as tiles of a size the library chose will be) run one
// by one while their fused loop or tile forms build in the background,
// and fused or tiled once the build is done, with results equal to eager
// execution bit for bit at every forcing; Fusion "on" and Tile, named
// explicitly, build them at once (and the fused loops run in tiles; the
// tile cases turn fusion off to see tiles alone otherwise). On one
// thread a tile schedule is
// computed in the background too, once the tile forms are built (no
// build pending), so there tiles run a forcing later.
func TestBackgroundBuildsMatchEager(t *testing.T) {
	for _, backend := range hostBackends {
		for _, c := range []struct {
			name         string
			cfg          op2.Config
			builds       engine.BuildMode
			fused, tiled bool // the optimised form, once used
			atOnce       bool // used at the first forcing
		}{
			{"fusion auto", op2.Config{}, op2.BuildDefaults, true, false, false},
			{"fusion on", op2.Config{Fusion: "on"}, op2.BuildDefaults, true, false, true},
			{"tiles in the background", op2.Config{Tile: 100, Fusion: "off"}, op2.BuildInBackground, false, true, false},
			{"tiles named", op2.Config{Tile: 100, Fusion: "off"}, op2.BuildDefaults, false, true, true},
			{"tiles named, fused", op2.Config{Tile: 100, Fusion: "on"}, op2.BuildDefaults, true, true, true},
		} {
			t.Run(backend+"/"+c.name, func(t *testing.T) {
				dir := t.TempDir()
				t.Cleanup(op2.WaitBuilds) // before dir is removed
				defer op2.SetBuilds(c.builds)()
				eagerCfg := op2.Config{Backend: backend, CacheDir: dir, Threads: 2}.Explicit("Lazy")
				eager := newBGLoops(t, eagerCfg)
				cfg := c.cfg
				cfg.Backend, cfg.CacheDir, cfg.Threads, cfg.Timing = backend, dir, 2, true
				lazy := newBGLoops(t, cfg)
				ready := 2 // the first forcing after the builds
				if c.tiled && !c.atOnce && backend == "sequential" {
					ready = 3 // and after the schedule
				}
				for it := 0; it < 4; it++ {
					ex, ey := eager.iterate(t)
					x, y := lazy.iterate(t)
					sameBits(t, "x", x, ex)
					sameBits(t, "y", y, ey)
					fused, tiled := lazy.ran()
					use := c.atOnce || it >= ready
					if fused != (use && c.fused) || tiled != (use && c.tiled) {
						t.Errorf("forcing %d: fused %v, tiled %v; want %v, %v", it, fused, tiled, use && c.fused, use && c.tiled)
					}
					if it == 0 && !c.atOnce && op2.PendingBuilds() == 0 {
						t.Errorf("forcing %d: nothing builds in the background", it)
					}
					if it >= 1 {
						op2.WaitBuilds() // the next forcing finds the forms built
					}
				}
			})
		}
	}
}

// TestBackgroundFusionFailureRunsLoopsApart: a fused loop that fails to
// compile in the background (two kernels define the same static helper)
// is no error of the program: the loops keep running one by one, and
// their results are right.
func TestBackgroundFusionFailureRunsLoopsApart(t *testing.T) {
	dir := t.TempDir()
	t.Cleanup(op2.WaitBuilds)
	r := must(op2.NewRuntime(op2.Config{CacheDir: dir, Timing: true}))
	set := must(op2.NewSet(6, "cells"))
	x := must(op2.NewDat(set, 1, []float64{1, 2, 3, 4, 5, 6}, "x"))
	y := must(op2.NewDat[float64](set, 1, nil, "y"))
	k1 := op2.NewKernel("static double bgx_h(double v) { return v + 1; }\nvoid bgx_a(double *x) { x[0] = bgx_h(x[0]); }", "bgx_a")
	k2 := op2.NewKernel("static double bgx_h(double v) { return v * 3; }\nvoid bgx_b(const double *x, double *y) { y[0] = bgx_h(x[0]); }", "bgx_b")
	for it := 1; it <= 3; it++ {
		check(t, r.ParLoop(k1, set, x.Arg(op2.RW)))
		check(t, r.ParLoop(k2, set, x.Arg(op2.Read), y.Arg(op2.Write)))
		got, err := y.DataROErr()
		if err != nil {
			t.Fatalf("forcing %d: %v", it, err)
		}
		for i, v := range got {
			if want := 3 * float64(i+1+it); v != want {
				t.Fatalf("forcing %d: y[%d] = %v, want %v", it, i, v, want)
			}
		}
		if it == 1 {
			op2.WaitBuilds()
		}
	}
	for _, lt := range r.Timings() {
		if strings.HasPrefix(lt.Kernel, "fused_") {
			t.Errorf("a fused loop ran: %s ×%d", lt.Kernel, lt.Calls)
		}
	}
}

// TestConfigureWaitsForBuildsOfTheCacheItLeaves: a configuration naming
// another cache directory waits for the fused loops building in the
// background for the old one, so that the old one can be removed as soon
// as Configure returns.
func TestConfigureWaitsForBuildsOfTheCacheItLeaves(t *testing.T) {
	defer op2.SetBuilds(op2.BuildInBackground)()
	// Kernels of its own: a fused loop another test of the process has
	// loaded would not build again.
	ka := op2.NewKernel("void cfw_a(double *x, const double *w) { x[0] = x[0] * 1.5 + w[0]; }", "cfw_a")
	kb := op2.NewKernel("void cfw_b(const double *x, double *w) { w[0] = x[0] - 0.25; }", "cfw_b")
	b := newBGLoops(t, op2.Config{Backend: "sequential", CacheDir: t.TempDir()})
	check(t, b.r.ParLoop(ka, b.set, b.x.Arg(op2.RW), b.w.Arg(op2.Read)))
	check(t, b.r.ParLoop(kb, b.set, b.x.Arg(op2.Read), b.w.Arg(op2.Write)))
	check(t, b.r.Wait())
	if op2.PendingBuilds() == 0 {
		t.Fatal("nothing builds in the background")
	}
	check(t, b.r.Configure(op2.Config{Backend: "sequential", CacheDir: t.TempDir()}))
	if n := op2.PendingBuilds(); n != 0 {
		t.Errorf("%d builds pending after Configure left their cache", n)
	}
}
