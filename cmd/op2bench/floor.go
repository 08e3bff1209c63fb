package main

import (
	"fmt"
	"io"
	"math"
	"runtime"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/airfoil"
	"github.com/goop2/op2/mesh"
)

// floorRun is one configuration of the compute floor (a backend and
// thread count, at the STREAM triad rate for its threads, GB/s) and what
// it measured per loop: the best time per element on the large mesh and
// in cache, in seconds, the fixed cost of an in-cache call, and the
// elements of the two in-cache meshes.
type floorRun struct {
	name    string
	backend string
	threads int
	simd    string // Config.SIMD: "off" (scalar) or a lane count
	triad   float64
	big     map[string]float64
	cache   map[string]float64
	call    map[string]float64
	elems   map[string][2]int
}

// floorSection measures a roofline of Airfoil's loops from measurements:
// for each loop, its time per element on the large mesh m (rounds rounds
// of iters iterations, after a warm-up iteration), its memory floor (the
// bytes per element op2's timing report counts, at the STREAM triad rate
// triad1 for one thread, triadN for threads threads, GB/s) and its
// in-cache floor: the time per element of the loop alone, repeated, on
// generated meshes small enough that the loop's bytes per call are about
// budget bytes per thread and a quarter of that, so its data stay in cache (the
// large mesh itself where that is smaller), taken between the two so that
// the fixed cost of a call cancels. It prints each loop's time against the larger floor,
// on sequential and openmp with 1 and threads threads; the figures are
// the best of the rounds, the configurations interleaved.
//
// Each configuration runs once per SIMD setting of simd (Config.SIMD
// values: "off" for the scalar code, "4" or "8" lanes), and a last table
// gives each loop's speed-up from lanes over the scalar code of the same
// configuration.
func floorSection(out io.Writer, m *mesh.Mesh, threads, iters, rounds, budget int, triad1, triadN float64, simd []string) error {
	if threads < 1 || iters < 1 || rounds < 1 || budget < 1 {
		return fmt.Errorf("compute floor: %d threads, %d iterations, %d rounds, %d bytes in cache: each must be at least 1", threads, iters, rounds, budget)
	}
	if triad1 <= 0 || triadN <= 0 {
		return fmt.Errorf("compute floor: STREAM triad rates %g and %g GB/s must be positive", triad1, triadN)
	}
	if len(simd) == 0 {
		simd = []string{"off"}
	}
	base := []floorRun{{name: "sequential", backend: "sequential", threads: 1, triad: triad1}, {name: "openmp 1", backend: "openmp", threads: 1, triad: triad1}}
	if threads > 1 {
		base = append(base, floorRun{name: fmt.Sprintf("openmp %d", threads), backend: "openmp", threads: threads, triad: triadN})
	}
	var runs []*floorRun
	for _, b := range base {
		for _, v := range simd {
			r := b
			r.simd = v
			if v != "off" {
				r.name += ", simd " + v
			}
			runs = append(runs, &r)
		}
	}
	for _, r := range runs {
		r.big, r.cache, r.call, r.elems = map[string]float64{}, map[string]float64{}, map[string]float64{}, map[string][2]int{}
	}
	defer op2.ResetTimings()
	defer op2.EnableTiming(false)

	// The large mesh: every loop in the iteration, its data evicted by
	// the others, as Airfoil runs.
	bigSize := setSizes(m)
	bytes := map[string]float64{} // bytes per element, op2's count
	sets := map[string]string{}   // each loop's iteration set
	for round := 0; round < rounds; round++ {
		for _, r := range runs {
			ts, err := floorIterate(r, m, iters)
			if err != nil {
				return fmt.Errorf("compute floor, %s: %w", r.name, err)
			}
			for _, lt := range ts {
				n := float64(bigSize[lt.Set] * lt.Calls)
				if n == 0 {
					continue
				}
				bytes[lt.Kernel], sets[lt.Kernel] = lt.Bytes/n, lt.Set
				r.big[lt.Kernel] = minPositive(r.big[lt.Kernel], lt.Time.Seconds()/n)
			}
		}
	}

	// In cache: each loop alone, on a mesh sized from its bytes per
	// element and on one with about a quarter of its elements, repeated
	// enough times for about 20 ms per round. Each thread has budget
	// bytes. The floor is the slope
	// between the two, so that the fixed cost of a call (the host's, and
	// opening a parallel region) cancels; it is the time of one call over
	// its elements where the two meshes coincide.
	meshes := map[int]*mesh.Mesh{}
	sized := func(set string, n int) (*mesh.Mesh, error) {
		grid := floorGrid(set, n)
		if gridSize(set, grid) >= bigSize[set] {
			return m, nil
		}
		if meshes[grid] == nil {
			sm, err := mesh.Generate(grid, floorJ(grid))
			if err != nil {
				return nil, err
			}
			meshes[grid] = sm
		}
		return meshes[grid], nil
	}
	for _, loop := range airfoil.Loops {
		set, b := sets[loop], bytes[loop]
		if set == "" || b <= 0 {
			return fmt.Errorf("compute floor: loop %s did not run on the large mesh", loop)
		}
		// Per thread: each has its own budget (a core's L2).
		type pair struct {
			large, small *mesh.Mesh
			n1, n2       int
		}
		pairs := map[*floorRun]pair{}
		for _, r := range runs {
			large, err := sized(set, int(math.Ceil(float64(r.threads*budget)/b)))
			if err != nil {
				return fmt.Errorf("compute floor, loop %s: %w", loop, err)
			}
			n1 := setSizes(large)[set]
			// At least 1024 elements where there are 2048: the openmp
			// backend runs loops under 512 on the calling thread.
			small, err := sized(set, max(n1/4, min(1024, n1/2)))
			if err != nil {
				return fmt.Errorf("compute floor, loop %s: %w", loop, err)
			}
			pairs[r] = pair{large, small, n1, setSizes(small)[set]}
		}
		t1, t2 := map[*floorRun]float64{}, map[*floorRun]float64{}
		for round := 0; round < rounds; round++ {
			for _, r := range runs {
				p := pairs[r]
				for _, c := range []struct {
					m *mesh.Mesh
					n int
					t map[*floorRun]float64
				}{{p.large, p.n1, t1}, {p.small, p.n2, t2}} {
					reps := int(math.Ceil(0.02 / (r.big[loop]*float64(c.n) + 20e-6)))
					reps = min(max(reps, 5), 100_000)
					call, err := floorRepeat(r, c.m, loop, reps)
					if err != nil {
						return fmt.Errorf("compute floor, %s, loop %s in cache: %w", r.name, loop, err)
					}
					c.t[r] = minPositive(c.t[r], call)
				}
			}
		}
		for _, r := range runs {
			n1, n2 := pairs[r].n1, pairs[r].n2
			f := t1[r] / float64(n1)
			if n2 < n1 && t1[r] > t2[r] {
				f = (t1[r] - t2[r]) / float64(n1-n2)
			}
			r.cache[loop], r.call[loop], r.elems[loop] = f, t1[r]-f*float64(n1), [2]int{n1, n2}
		}
	}

	fmt.Fprintf(out, "Compute floor: Airfoil's loops against max(memory floor, in-cache floor) (%s; best of %d rounds, the runs interleaved)\n", cpuModel(), rounds)
	fmt.Fprintf(out, "  large mesh: %d cells, %d edges, %d boundary edges, %d iterations per round after a warm-up one\n", m.NCell, m.NEdge, m.NBedge, iters)
	fmt.Fprintf(out, "  in cache: each loop alone, repeated, on generated meshes where its bytes per call are about %d KiB per thread and a quarter of that\n", budget>>10)
	fmt.Fprintf(out, "  (ns per element; B/elem: op2's bytes per element; memory: B/elem at the STREAM triad rate; in-cache: the time per element\n")
	fmt.Fprintf(out, "   between the two in-cache meshes (elements), the fixed cost per call (call µs) removed; time/floor: time over the larger floor, which bound names)\n")
	for _, r := range runs {
		fmt.Fprintf(out, "\n  %s (STREAM triad %.1f GB/s)\n", r.name, r.triad)
		fmt.Fprintf(out, "  %-10s %7s %9s %9s %9s %8s %11s %11s  %s\n", "loop", "B/elem", "time", "memory", "in-cache", "call µs", "elements", "time/floor", "bound")
		for _, loop := range airfoil.Loops {
			mem := bytes[loop] / (r.triad * 1e9)
			floor, bound := mem, "memory"
			if c := r.cache[loop]; c > mem {
				floor, bound = c, "in-cache"
			}
			e := r.elems[loop]
			fmt.Fprintf(out, "  %-10s %7.1f %9.2f %9.2f %9.2f %8.1f %11s %10.2fx  %s\n", loop, bytes[loop], r.big[loop]*1e9, mem*1e9,
				r.cache[loop]*1e9, r.call[loop]*1e6, fmt.Sprintf("%d/%d", e[0], e[1]), r.big[loop]/floor, bound)
		}
	}
	if len(simd) > 1 {
		fmt.Fprintf(out, "\n  SIMD lanes: each loop's time with lanes over the scalar code's (speed-up, large mesh / in cache)\n")
		fmt.Fprintf(out, "  %-24s", "configuration")
		for _, loop := range airfoil.Loops {
			fmt.Fprintf(out, " %15s", loop)
		}
		fmt.Fprintln(out)
		for _, r := range runs {
			if r.simd == "off" {
				continue
			}
			var scalar *floorRun
			for _, s := range runs {
				if s.backend == r.backend && s.threads == r.threads && s.simd == "off" {
					scalar = s
				}
			}
			if scalar == nil {
				continue
			}
			fmt.Fprintf(out, "  %-24s", r.name)
			for _, loop := range airfoil.Loops {
				fmt.Fprintf(out, " %15s", fmt.Sprintf("%.2fx/%.2fx", scalar.big[loop]/r.big[loop], scalar.cache[loop]/r.cache[loop]))
			}
			fmt.Fprintln(out)
		}
	}
	fmt.Fprintln(out)
	return nil
}

// floorIterate runs Airfoil on m in r's configuration, each loop at once
// (Lazy off, so that each loop is timed alone): a warm-up iteration, then
// iters timed ones, and returns op2's timing report.
func floorIterate(r *floorRun, m *mesh.Mesh, iters int) ([]op2.LoopTiming, error) {
	if err := op2.Configure(op2.Config{Backend: r.backend, Threads: r.threads, SIMD: r.simd, Timing: true}.Explicit("Lazy")); err != nil {
		return nil, err
	}
	s, err := airfoil.New(m)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if _, _, err := s.Iterate(1, io.Discard); err != nil {
		return nil, err
	}
	runtime.GC()
	op2.ResetTimings()
	if _, _, err := s.Iterate(iters, io.Discard); err != nil {
		return nil, err
	}
	return op2.Timings(), nil
}

// floorRepeat runs Airfoil's loop alone on m in r's configuration (each
// call at once, Lazy off): once
// to compile, plan and bring its data into cache, then reps times, and
// returns the mean time per call in seconds.
func floorRepeat(r *floorRun, m *mesh.Mesh, loop string, reps int) (float64, error) {
	if err := op2.Configure(op2.Config{Backend: r.backend, Threads: r.threads, SIMD: r.simd, Timing: true}.Explicit("Lazy")); err != nil {
		return 0, err
	}
	s, err := airfoil.New(m)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	if err := s.RunLoop(loop, 1); err != nil {
		return 0, err
	}
	runtime.GC()
	op2.ResetTimings()
	if err := s.RunLoop(loop, reps); err != nil {
		return 0, err
	}
	for _, lt := range op2.Timings() {
		if lt.Kernel == loop && lt.Calls > 0 {
			return lt.Time.Seconds() / float64(lt.Calls), nil
		}
	}
	return 0, fmt.Errorf("no time recorded")
}

// setSizes are the sizes of m's sets by the names airfoil gives them.
func setSizes(m *mesh.Mesh) map[string]int {
	return map[string]int{"nodes": m.NNode, "cells": m.NCell, "edges": m.NEdge, "bedges": m.NBedge}
}

// floorJ is the second grid size the compute floor pairs with I in
// mesh.Generate(I, J): the built-in mesh's proportions, J = 1.5 I.
func floorJ(i int) int { return (3*i + 1) / 2 }

// gridSize is the size of set in mesh.Generate(i, floorJ(i)) (as
// mesh.Generate counts them).
func gridSize(set string, i int) int {
	j := floorJ(i)
	switch set {
	case "cells":
		return 3 * i * j
	case "edges":
		return 6*i*j - 2*i - j
	case "bedges":
		return 4*i + 2*j
	case "nodes":
		return (3*i + 1) * (j + 1)
	}
	return 0
}

// floorGrid is the smallest I whose mesh.Generate(I, floorJ(I)) has at
// least n elements in set (at most 1 << 14).
func floorGrid(set string, n int) int {
	i := 1
	for i < 1<<14 && gridSize(set, i) < n {
		i++
	}
	return i
}

// minPositive is the smaller of a and b, a being unset while 0.
func minPositive(a, b float64) float64 {
	if a == 0 {
		return b
	}
	return min(a, b)
}
