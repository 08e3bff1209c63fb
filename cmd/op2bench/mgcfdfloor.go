package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/mgcfd"
)

// mgcfdFloorRun is one configuration of MG-CFD's compute floor and what
// it measured per loop of the finest level: seconds per element on the
// large mesh (best of the rounds), and seconds per call on each of the
// two small meshes.
type mgcfdFloorRun struct {
	name    string
	backend string
	threads int
	triad   float64 // GB/s
	big     map[string]float64
	small   [2]map[string]float64
}

// mgcfdFloorSection measures MG-CFD's loops on the finest level against
// max(memory floor, in-cache floor), as floorSection does Airfoil's: each
// loop's time per element on the large mesh (o.n nodes per side, o.levels
// levels, o.cycles cycles per round after a warm-up one), its memory floor
// (op2's bytes per element at the STREAM triad rate, triad1 for one
// thread, triadN for o.threads) and its in-cache floor: the time per
// element between two small meshes of small[0] and small[1] nodes per
// side (same levels), whose data stay in the caches, so that the fixed
// cost of a call cancels. The loops run in their cycles, with the
// defaults (SIMD "auto"); the figures are the best of o.rounds rounds,
// the configurations interleaved. A loop's share is its part of the
// finest level's loop time on the large mesh.
func mgcfdFloorSection(out io.Writer, o mgcfdOpts, small [2]int, triad1, triadN float64) error {
	if o.cycles < 1 || o.rounds < 1 || o.threads < 1 {
		return fmt.Errorf("mgcfd floor: %d cycles, %d rounds, %d threads: each must be at least 1", o.cycles, o.rounds, o.threads)
	}
	if small[0] >= small[1] || small[1] >= o.n {
		return fmt.Errorf("mgcfd floor: small meshes of %d and %d nodes per side must be increasing and smaller than the large one's %d", small[0], small[1], o.n)
	}
	big, err := mgcfd.Generate(o.n, o.levels)
	if err != nil {
		return err
	}
	var smalls [2]*mgcfd.Mesh
	for i, n := range small {
		if smalls[i], err = mgcfd.Generate(n, o.levels); err != nil {
			return fmt.Errorf("mgcfd floor, small mesh: %w", err)
		}
	}
	runs := []*mgcfdFloorRun{{name: "sequential", backend: "sequential", threads: 1, triad: triad1}}
	if o.threads > 1 {
		runs = append(runs, &mgcfdFloorRun{name: fmt.Sprintf("openmp %d", o.threads), backend: "openmp", threads: o.threads, triad: triadN})
	}
	for _, r := range runs {
		r.big = map[string]float64{}
		r.small = [2]map[string]float64{{}, {}}
	}
	defer op2.Configure(op2.Config{})
	defer op2.ResetTimings()
	defer op2.EnableTiming(false)

	// finest returns, per loop on the finest level (its sets end in
	// "_L0"), the timing row.
	finest := func() map[string]op2.LoopTiming {
		rows := map[string]op2.LoopTiming{}
		for _, lt := range op2.Timings() {
			if strings.HasSuffix(lt.Set, "_L0") && lt.Calls > 0 {
				rows[lt.Kernel] = lt
			}
		}
		return rows
	}
	sizeOf := func(m *mgcfd.Mesh, set string) int {
		l := m.Levels[0]
		switch strings.TrimSuffix(set, "_L0") {
		case "edges":
			return l.NEdges
		case "bnd_nodes":
			return l.NBnd
		}
		return l.NNodes
	}
	// Enough cycles on a small mesh for about as long as the large
	// mesh's cycles: the cycle's work scales with the nodes.
	smallCycles := func(m *mgcfd.Mesh) int {
		return max(o.cycles, o.cycles*big.Levels[0].NNodes/m.Levels[0].NNodes/4)
	}
	bytes := map[string]float64{} // bytes per element, op2's count
	sets := map[string]string{}
	share := map[string]float64{}
	for round := 0; round < o.rounds; round++ {
		for _, r := range runs {
			if err := op2.Configure(op2.Config{Backend: r.backend, Threads: r.threads, Timing: true}.Explicit("Lazy")); err != nil {
				return err
			}
			for _, c := range []struct {
				m      *mgcfd.Mesh
				cycles int
				record func(k string, lt op2.LoopTiming)
			}{
				{big, o.cycles, func(k string, lt op2.LoopTiming) {
					n := float64(sizeOf(big, lt.Set) * lt.Calls)
					bytes[k], sets[k] = lt.Bytes/n, lt.Set
					r.big[k] = minPositive(r.big[k], lt.Time.Seconds()/n)
				}},
				{smalls[0], smallCycles(smalls[0]), func(k string, lt op2.LoopTiming) {
					r.small[0][k] = minPositive(r.small[0][k], lt.Time.Seconds()/float64(lt.Calls))
				}},
				{smalls[1], smallCycles(smalls[1]), func(k string, lt op2.LoopTiming) {
					r.small[1][k] = minPositive(r.small[1][k], lt.Time.Seconds()/float64(lt.Calls))
				}},
			} {
				if round == 0 { // compile, plan, first touch
					if _, _, err := mgcfdCycles(c.m, 1, nil); err != nil {
						return err
					}
				}
				op2.ResetTimings()
				runtime.GC()
				if _, _, err := mgcfdCycles(c.m, c.cycles, nil); err != nil {
					return fmt.Errorf("mgcfd floor, %s: %w", r.name, err)
				}
				rows := finest()
				total := 0.0
				for k, lt := range rows {
					c.record(k, lt)
					total += lt.Time.Seconds()
				}
				if c.m == big && r == runs[0] && round == 0 {
					for k, lt := range rows {
						share[k] = lt.Time.Seconds() / total
					}
				}
			}
		}
	}

	loops := make([]string, 0, len(share))
	for k := range share {
		loops = append(loops, k)
	}
	slices.SortFunc(loops, func(a, b string) int {
		switch {
		case share[a] > share[b]:
			return -1
		case share[a] < share[b]:
			return 1
		}
		return strings.Compare(a, b)
	})
	fine := [3]*mgcfd.Mesh{big, smalls[0], smalls[1]}
	fmt.Fprintf(out, "Compute floor: MG-CFD's loops on the finest level against max(memory floor, in-cache floor) (%s; best of %d rounds, the runs interleaved, defaults)\n", cpuModel(), o.rounds)
	fmt.Fprintf(out, "  large mesh: %d nodes, %d edges, %d boundary nodes on the finest of %d levels, %d cycles per round after a warm-up one\n",
		fine[0].Levels[0].NNodes, fine[0].Levels[0].NEdges, fine[0].Levels[0].NBnd, o.levels, o.cycles)
	fmt.Fprintf(out, "  in cache: the cycles on meshes of %d and %d nodes per side (%d and %d nodes on the finest level), %d and %d cycles\n",
		small[0], small[1], fine[1].Levels[0].NNodes, fine[2].Levels[0].NNodes, smallCycles(smalls[0]), smallCycles(smalls[1]))
	fmt.Fprintf(out, "  (ns per element; share: of the finest level's loop time, sequential; B/elem: op2's bytes per element; memory: B/elem at the\n")
	fmt.Fprintf(out, "   STREAM triad rate; in-cache: the time per element between the two small meshes; time/floor: over the larger floor, which bound names)\n")
	for _, r := range runs {
		fmt.Fprintf(out, "\n  %s (STREAM triad %.1f GB/s)\n", r.name, r.triad)
		fmt.Fprintf(out, "  %-18s %6s %7s %9s %9s %9s %11s  %s\n", "loop", "share", "B/elem", "time", "memory", "in-cache", "time/floor", "bound")
		for _, k := range loops {
			mem := bytes[k] / (r.triad * 1e9)
			n1, n2 := sizeOf(smalls[0], sets[k]), sizeOf(smalls[1], sets[k])
			cache := r.small[1][k] / float64(n2)
			if n2 > n1 && r.small[1][k] > r.small[0][k] {
				cache = (r.small[1][k] - r.small[0][k]) / float64(n2-n1)
			}
			floor, bound := mem, "memory"
			if cache > mem {
				floor, bound = cache, "in-cache"
			}
			fmt.Fprintf(out, "  %-18s %5.1f%% %7.1f %9.2f %9.2f %9.2f %10.2fx  %s\n", k, 100*share[k], bytes[k], r.big[k]*1e9, mem*1e9, cache*1e9, r.big[k]/floor, bound)
		}
	}
	fmt.Fprintln(out)
	return nil
}
