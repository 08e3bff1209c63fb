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
// in cache, in seconds, and the elements of the in-cache loop.
type floorRun struct {
	name    string
	backend string
	threads int
	triad   float64
	big     map[string]float64
	cache   map[string]float64
	elems   map[string]int
}

// floorSection measures a roofline of Airfoil's loops from measurements:
// for each loop, its time per element on the large mesh m (rounds rounds
// of iters iterations, after a warm-up iteration), its memory floor (the
// bytes per element op2's timing report counts, at the STREAM triad rate
// triad1 for one thread, triadN for threads threads, GB/s) and its
// in-cache floor: the time per element of the loop alone, repeated, on a
// generated mesh small enough that the loop's bytes per call are about
// budget bytes, so its data stay in cache (the large mesh itself where
// that is smaller). It prints each loop's time against the larger floor,
// on sequential and openmp with 1 and threads threads; the figures are
// the best of the rounds, the configurations interleaved.
func floorSection(out io.Writer, m *mesh.Mesh, threads, iters, rounds, budget int, triad1, triadN float64) error {
	if threads < 1 || iters < 1 || rounds < 1 || budget < 1 {
		return fmt.Errorf("compute floor: %d threads, %d iterations, %d rounds, %d bytes in cache: each must be at least 1", threads, iters, rounds, budget)
	}
	if triad1 <= 0 || triadN <= 0 {
		return fmt.Errorf("compute floor: STREAM triad rates %g and %g GB/s must be positive", triad1, triadN)
	}
	runs := []*floorRun{{name: "sequential", backend: "sequential", threads: 1, triad: triad1}, {name: "openmp 1", backend: "openmp", threads: 1, triad: triad1}}
	if threads > 1 {
		runs = append(runs, &floorRun{name: fmt.Sprintf("openmp %d", threads), backend: "openmp", threads: threads, triad: triadN})
	}
	for _, r := range runs {
		r.big, r.cache, r.elems = map[string]float64{}, map[string]float64{}, map[string]int{}
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

	// In cache: each loop alone on a mesh sized from its bytes per
	// element, repeated enough times for about 10 ms per round.
	meshes := map[int]*mesh.Mesh{}
	for _, loop := range airfoil.Loops {
		set, b := sets[loop], bytes[loop]
		if set == "" || b <= 0 {
			return fmt.Errorf("compute floor: loop %s did not run on the large mesh", loop)
		}
		small := m
		if grid := floorGrid(set, int(math.Ceil(float64(budget)/b))); gridSize(set, grid) < bigSize[set] {
			if meshes[grid] == nil {
				sm, err := mesh.Generate(grid, floorJ(grid))
				if err != nil {
					return fmt.Errorf("compute floor, loop %s: %w", loop, err)
				}
				meshes[grid] = sm
			}
			small = meshes[grid]
		}
		n := setSizes(small)[set]
		for round := 0; round < rounds; round++ {
			for _, r := range runs {
				reps := int(math.Ceil(0.01 / (r.big[loop] * float64(n))))
				reps = min(max(reps, 5), 100_000)
				perElem, err := floorRepeat(r, small, loop, reps)
				if err != nil {
					return fmt.Errorf("compute floor, %s, loop %s in cache: %w", r.name, loop, err)
				}
				r.cache[loop] = minPositive(r.cache[loop], perElem/float64(n))
				r.elems[loop] = n
			}
		}
	}

	fmt.Fprintf(out, "Compute floor: Airfoil's loops against max(memory floor, in-cache floor) (%s; best of %d rounds, the runs interleaved)\n", cpuModel(), rounds)
	fmt.Fprintf(out, "  large mesh: %d cells, %d edges, %d boundary edges, %d iterations per round after a warm-up one\n", m.NCell, m.NEdge, m.NBedge, iters)
	fmt.Fprintf(out, "  in cache: each loop alone, repeated, on a generated mesh where its bytes per call are about %d KiB\n", budget>>10)
	fmt.Fprintf(out, "  (ns per element; B/elem: op2's bytes per element; memory: B/elem at the STREAM triad rate; time/floor: time over the larger floor)\n")
	for _, r := range runs {
		fmt.Fprintf(out, "\n  %s (STREAM triad %.1f GB/s)\n", r.name, r.triad)
		fmt.Fprintf(out, "  %-10s %7s %9s %9s %9s %10s %11s  %s\n", "loop", "B/elem", "time", "memory", "in-cache", "(elements)", "time/floor", "bound")
		for _, loop := range airfoil.Loops {
			mem := bytes[loop] / (r.triad * 1e9)
			floor, bound := mem, "memory"
			if c := r.cache[loop]; c > mem {
				floor, bound = c, "in-cache"
			}
			fmt.Fprintf(out, "  %-10s %7.1f %9.2f %9.2f %9.2f %10d %10.2fx  %s\n", loop, bytes[loop], r.big[loop]*1e9, mem*1e9,
				r.cache[loop]*1e9, r.elems[loop], r.big[loop]/floor, bound)
		}
	}
	fmt.Fprintln(out)
	return nil
}

// floorIterate runs Airfoil on m in r's configuration: a warm-up
// iteration, then iters timed ones, and returns op2's timing report.
func floorIterate(r *floorRun, m *mesh.Mesh, iters int) ([]op2.LoopTiming, error) {
	if err := op2.Configure(op2.Config{Backend: r.backend, Threads: r.threads, Timing: true}); err != nil {
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

// floorRepeat runs Airfoil's loop alone on m in r's configuration: once
// to compile, plan and bring its data into cache, then reps times, and
// returns the mean time per call in seconds.
func floorRepeat(r *floorRun, m *mesh.Mesh, loop string, reps int) (float64, error) {
	if err := op2.Configure(op2.Config{Backend: r.backend, Threads: r.threads, Timing: true}); err != nil {
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
