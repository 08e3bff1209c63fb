package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/airfoil"
	"github.com/goop2/op2/mesh"
)

// chainMode is one way of running Airfoil's loops in the chain section.
type chainMode struct {
	name string
	// config sets the mode's fields on a configuration.
	config func(c *op2.Config)
}

// chainModes are the chain section's modes: every loop at once (Lazy
// false, named explicitly); the defaults (lazy mode,
// Airfoil's loops running when it reads its rms Global, every 100
// iterations, or MaxRecordedLoops are recorded, fused where
// Config.Fusion's auto says, on one thread in tiles where they were
// measured faster); the defaults with automatic tiles on every thread
// count ("auto-tiles": Config.Tile TileAuto); recorded and run one by
// one; recorded and fused (both with Tile 0 named explicitly:
// "chain+fusion" is the default on SIMD lanes, "chain" on the scalar
// code); and with
// tile > 0 recorded and run in sparse tiles of tile cells, without and
// with fusion, and for each size of more recorded, fused and run in
// tiles of that many cells ("fus+tile/N"). only, when not empty, keeps
// the modes it names (eager is always kept: the others are compared
// with it); a name of no mode is an error.
func chainModes(tile int, more []int, only []string) ([]chainMode, error) {
	modes := []chainMode{
		{"eager", func(c *op2.Config) { *c = c.Explicit("Lazy") }},
		{"default", func(c *op2.Config) {}},
		{"auto-tiles", func(c *op2.Config) { c.Tile = op2.TileAuto }},
		{"chain", func(c *op2.Config) { c.Lazy, c.Fusion = true, "off"; *c = c.Explicit("Tile") }},
		{"chain+fusion", func(c *op2.Config) { c.Lazy, c.Fusion = true, "on"; *c = c.Explicit("Tile") }},
	}
	if tile > 0 {
		modes = append(modes,
			chainMode{"chain+tiling", func(c *op2.Config) { c.Lazy, c.Fusion, c.Tile = true, "off", tile }},
			chainMode{"chain+fus+tile", func(c *op2.Config) { c.Lazy, c.Fusion, c.Tile = true, "on", tile }})
	}
	for _, n := range more {
		modes = append(modes, chainMode{fmt.Sprintf("fus+tile/%d", n), func(c *op2.Config) { c.Lazy, c.Fusion, c.Tile = true, "on", n }})
	}
	var names []string
	for _, m := range modes {
		names = append(names, m.name)
	}
	for _, n := range only {
		if !slices.Contains(names, n) {
			return nil, fmt.Errorf("-chains-modes: no mode %q (with these tile sizes: %s)", n, strings.Join(names, ", "))
		}
	}
	if len(only) > 0 {
		modes = slices.DeleteFunc(modes, func(m chainMode) bool { return m.name != "eager" && !slices.Contains(only, m.name) })
	}
	return modes, nil
}

// chainOpts are the chain section's settings.
type chainOpts struct {
	iters, rounds, threads int
	simd                   []string // Config.SIMD values
	tile                   int      // Config.Tile of the tiled modes; 0: none
	modes                  []string // the modes to run (chainModes' only)
	moreTiles              []int    // more tile sizes, each a fused and tiled mode
}

// chainRun is one backend, SIMD setting and mode of the chain section,
// with what its rounds measured.
type chainRun struct {
	backend string
	threads int
	simd    string
	mode    chainMode
	secs    []float64 // the loops' time per iteration, per round
	bytes   float64   // bytes per iteration (OP2's convention, the timing report)
	moved   float64   // bytes moved per iteration as run (LoopTiming.Moved)
	loops   []op2.LoopTiming
	lines   string // what Airfoil printed in the last round
}

// chainSection runs Airfoil on m, iters iterations per run, in every mode
// of chainModes on the sequential backend and on openmp with threads
// threads, for each SIMD setting, the runs of a round interleaved, and
// prints the loop time and bytes per iteration of each against eager
// execution, the bytes both one loop at a time and as moved (tiled
// chains move each Dat once per chain), and the time against the memory
// floor of eager execution (its bytes at the STREAM triad rate).
func chainSection(out io.Writer, m *mesh.Mesh, o chainOpts, triad1, triadN float64) error {
	if o.iters < 1 || o.rounds < 1 || o.threads < 1 {
		return fmt.Errorf("chains: %d iterations, %d rounds, %d threads: each must be at least 1", o.iters, o.rounds, o.threads)
	}
	fmt.Fprintf(out, "Loop chains: Airfoil %d cells, %d iterations per run, %d rounds interleaved (medians); %s\n", m.NCell, o.iters, o.rounds, cpuModel())
	if o.tile > 0 {
		fmt.Fprintf(out, "  tiles of %d cells (Config.Tile)\n", o.tile)
	}
	modes, err := chainModes(o.tile, o.moreTiles, o.modes)
	if err != nil {
		return err
	}
	var runs []*chainRun
	for _, b := range []struct {
		name    string
		threads int
	}{{"sequential", 1}, {"openmp", o.threads}} {
		for _, simd := range o.simd {
			for _, mode := range modes {
				runs = append(runs, &chainRun{backend: b.name, threads: b.threads, simd: simd, mode: mode})
			}
		}
	}
	for round := 0; round < o.rounds; round++ {
		for _, r := range runs {
			if err := r.measure(m, o.iters); err != nil {
				return fmt.Errorf("chains: %s simd %s %s: %w", r.backend, r.simd, r.mode.name, err)
			}
		}
	}
	var eager *chainRun
	for _, r := range runs {
		if r.mode.name == "eager" {
			eager = r
		} else if r.lines != eager.lines {
			return fmt.Errorf("chains: %s simd %s %s printed\n%s\nwhere eager execution printed\n%s", r.backend, r.simd, r.mode.name, r.lines, eager.lines)
		}
	}
	fmt.Fprintf(out, "Airfoil's output lines are the same in every mode\n")
	fmt.Fprintf(out, "%-10s %-4s %-14s %9s %9s %9s %9s %9s %9s %9s\n", "backend", "simd", "mode", "ms/iter", "vs eager", "MB/iter", "moved MB", "vs eager", "floor ms", "vs floor")
	for _, r := range runs {
		if r.mode.name == "eager" {
			eager = r
		}
		triad := triad1
		if r.backend == "openmp" {
			triad = triadN
		}
		floor := eager.bytes / (triad * 1e9) // eager's seconds per iteration at the triad rate
		t := median(r.secs)
		fmt.Fprintf(out, "%-10s %-4s %-14s %9.3f %8.2f× %9.1f %9.1f %8.2f× %9.3f %8.2f×\n", r.backend, r.simd, r.mode.name, t*1e3, t/median(eager.secs),
			r.bytes/1e6, r.moved/1e6, r.moved/eager.bytes, floor*1e3, t/floor)
	}
	fmt.Fprintln(out, "(ms/iter: the loops' own time per iteration; MB/iter: the bytes the loops must move per iteration one loop at a time, OP2's convention; moved MB: the bytes they must move as they ran (tiled chains: each Dat and map once per chain, a model that holds when a tile's data stays in cache), both from the timing report (LoopTiming.Bytes, Moved); floor: eager execution's MB/iter at the STREAM triad rate)")
	for _, r := range runs {
		if r.mode.name == "eager" {
			continue
		}
		var names []string
		for _, lt := range r.loops {
			if strings.HasPrefix(lt.Kernel, "fused_") {
				names = append(names, fmt.Sprintf("%s ×%d %.2f ms", lt.Kernel, lt.Calls, lt.Mean().Seconds()*1e3))
			}
		}
		if len(names) > 0 {
			slices.Sort(names)
			fmt.Fprintf(out, "  %s simd %s %s: %s\n", r.backend, r.simd, r.mode.name, strings.Join(names, "; "))
		}
	}
	fmt.Fprintln(out)
	return nil
}

// measure runs one round of r: Airfoil twice to compile and plan, then
// (settle) once more with the programs built in the background, then
// iters iterations timed, and the reference lines checked.
func (r *chainRun) measure(m *mesh.Mesh, iters int) error {
	cfg := op2.Config{Backend: r.backend, Threads: r.threads, SIMD: r.simd, Timing: true}
	r.mode.config(&cfg)
	if err := op2.Configure(cfg); err != nil {
		return err
	}
	defer op2.Configure(op2.Config{})
	s, err := airfoil.New(m)
	if err != nil {
		return err
	}
	defer s.Close()
	if _, _, err := s.Iterate(2, io.Discard); err != nil {
		return err
	}
	// Every mode warms up alike, so that their output lines compare.
	if err := settle(true, func() error { _, _, err := s.Iterate(1, io.Discard); return err }); err != nil {
		return err
	}
	runtime.GC()
	op2.ResetTimings()
	var out strings.Builder
	if _, _, err := s.Iterate(iters, &out); err != nil {
		return err
	}
	r.lines = out.String()
	ts := op2.Timings()
	r.secs = append(r.secs, loopSeconds(ts)/float64(iters))
	bytes, moved := 0.0, 0.0
	for _, lt := range ts {
		bytes += lt.Bytes // all the calls'
		moved += lt.Moved
	}
	r.bytes, r.moved, r.loops = bytes/float64(iters), moved/float64(iters), ts
	return nil
}
