package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/poisson"
)

// matRun is one way GoOP2 runs the matrix loops: a backend and thread
// count, with the STREAM triad rate of that thread count.
type matRun struct {
	name    string
	backend string
	threads int
	triad   float64 // GB/s
	pkg     string  // the solver package (op2.SolverOptions.Package) of its CG runs
}

// spread formats the median of v and its range, scaled by f.
func spread(v []float64, f float64, prec int) string {
	return fmt.Sprintf("%.*f (%.*f-%.*f)", prec, median(v)*f, prec, slices.Min(v)*f, prec, slices.Max(v)*f)
}

// matrixSection measures issue 23's matrix targets on the P1 Poisson
// problem of cmd/poisson on an n×n square mesh (2n² triangles): the
// assembly of the stiffness matrix by GoOP2 (sequential, openmp on 1
// and threads threads) against a C program assembling the same element
// matrices with PETSc's MatSetValues, and a CG iteration (Jacobi)
// against the memory-bandwidth bound of its matrix product and vector
// loops at the STREAM triad rates triad1 (1 thread) and triadN (threads
// threads), also solved by PETSc through GoOP2; and the creation of the
// pattern (op2.NewSparsity) against DOLFINx's, where a Python with
// DOLFINx is found (dolfinxPython). Every figure is the median of rounds rounds, the
// configurations interleaved in each round; each assembly figure is
// the best of 3 assemblies into a zeroed matrix, after one untimed
// assembly (plan, program, first touch).
func matrixSection(out io.Writer, n, rounds, threads int, triad1, triadN float64) error {
	if n < 1 || rounds < 1 || threads < 1 {
		return fmt.Errorf("matrix section: mesh %d, %d rounds, %d threads: each must be at least 1", n, rounds, threads)
	}
	m, err := poisson.Square(n, 0.25, 1)
	if err != nil {
		return err
	}
	prob := poisson.Problems["sine"]
	nt := len(m.Tri) / 3
	runs := []matRun{{name: "GoOP2 sequential", backend: "sequential", threads: 1, triad: triad1}, {name: "GoOP2 openmp 1", backend: "openmp", threads: 1, triad: triad1}}
	if threads > 1 {
		runs = append(runs, matRun{name: fmt.Sprintf("GoOP2 openmp %d", threads), backend: "openmp", threads: threads, triad: triadN})
	}
	defer op2.Configure(op2.Config{})
	if err := op2.Configure(op2.Config{Backend: "sequential"}); err != nil {
		return err
	}
	asm, err := poisson.NewAssembly(m, prob)
	if err != nil {
		return err
	}
	K := asm.Matrix()
	if err := asm.Stiffness(); err != nil {
		return err
	}
	rowptr, _, vals, err := K.Values()
	if err != nil {
		return err
	}
	nnz := len(vals)
	frob := 0.0
	for _, v := range vals {
		frob += v * v
	}
	frob = math.Sqrt(frob)

	dir, err := os.MkdirTemp("", "op2bench-petsc-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	pb, err := newPETScBench(dir, m, rowptr, prob)
	if err != nil {
		return err
	}

	assemble := func(r matRun) (float64, error) {
		if err := op2.Configure(op2.Config{Backend: r.backend, Threads: r.threads}); err != nil {
			return 0, err
		}
		if err := asm.Stiffness(); err != nil { // plan and program
			return 0, err
		}
		runtime.GC()
		best := math.Inf(1)
		for range 3 {
			if err := K.Zero(); err != nil {
				return 0, err
			}
			start := time.Now()
			if err := asm.Stiffness(); err != nil {
				return 0, err
			}
			best = min(best, time.Since(start).Seconds())
		}
		return best, nil
	}
	asmSecs := make([][]float64, len(runs))
	var spSecs, dolfinxSecs []float64
	var dolfinx string // the version line; "" when not measured
	noDOLFINx := error(nil)
	var petscSecs, petscFirst, petscCG []float64
	var petsc *petscRun
	var noPETSc error
	for round := 0; round < rounds; round++ {
		for i, r := range runs {
			s, err := assemble(r)
			if err != nil {
				return fmt.Errorf("%s: %w", r.name, err)
			}
			asmSecs[i] = append(asmSecs[i], s)
		}
		sp, err := sparsitySeconds(m)
		if err != nil {
			return err
		}
		spSecs = append(spSecs, sp)
		if noDOLFINx == nil {
			d, version, err := dolfinxSparsity(dir, pb.meshFile, 3)
			switch {
			case errors.Is(err, errNoDOLFINx):
				noDOLFINx = err
			case err != nil:
				return err
			default:
				dolfinx = version
				dolfinxSecs = append(dolfinxSecs, d)
			}
		}
		if noPETSc != nil {
			continue
		}
		pr, err := pb.run(4, cgShort, cgLong)
		if errors.Is(err, errNoPETSc) {
			noPETSc = err
			continue
		}
		if err != nil {
			return err
		}
		petsc = pr
		petscFirst = append(petscFirst, pr.seconds[0])
		petscSecs = append(petscSecs, slices.Min(pr.seconds[1:]))
		petscCG = append(petscCG, pr.cgIteration())
	}

	fmt.Fprintf(out, "Matrix assembly: P1 Poisson stiffness (internal/poisson, cmd/poisson -n %d), %d triangles, %d nodes, %d nonzeros;\n", n, nt, m.Nodes, nnz)
	fmt.Fprintf(out, "  medians of %d rounds (min-max), the runs interleaved; each the best of 3 assemblies into the zeroed matrix\n", rounds)
	fmt.Fprintf(out, "  %-24s %26s %10s\n", "run", "ns/triangle", "ms")
	for i, r := range runs {
		fmt.Fprintf(out, "  %-24s %26s %10.1f\n", r.name, spread(asmSecs[i], 1e9/float64(nt), 2), median(asmSecs[i])*1e3)
	}
	if petsc != nil {
		fmt.Fprintf(out, "  %-24s %26s %10.1f\n", "PETSc MatSetValues", spread(petscSecs, 1e9/float64(nt), 2), median(petscSecs)*1e3)
		fmt.Fprintf(out, "  %-24s %26s %10.1f\n", "PETSc, first assembly", spread(petscFirst, 1e9/float64(nt), 2), median(petscFirst)*1e3)
		fmt.Fprintf(out, "  (PETSc %s through dlopen: SeqAIJ preallocated with each row's nonzeros, MAT_NEW_NONZERO_ALLOCATION_ERR,\n", petscLibrary())
		fmt.Fprintf(out, "   per triangle GoOP2's element kernel and MatSetValues(ADD_VALUES), then MatAssemblyBegin/End, one process;\n")
		fmt.Fprintf(out, "   its matrix: %.0f nonzeros used, %.0f mallocs; Frobenius norm %.6g, GoOP2's %.6g, relative difference %.1e)\n",
			petsc.nonzeros, petsc.mallocs, petsc.frobenius, frob, math.Abs(petsc.frobenius-frob)/frob)
	} else {
		fmt.Fprintf(out, "  %-24s not measured: %v (install libpetsc-real3.18, or set OP2_PETSC_LIBRARY)\n", "PETSc MatSetValues", noPETSc)
	}

	fmt.Fprintf(out, "\n  Sparsity of the P1 pattern, medians of %d rounds (min-max), each the best of 3 after one untimed\n", rounds)
	fmt.Fprintf(out, "  %-50s %26s\n", "run", "ms")
	fmt.Fprintf(out, "  %-50s %26s\n", "GoOP2 op2.NewSparsity (with assembly offsets)", spread(spSecs, 1e3, 1))
	if dolfinx != "" {
		fmt.Fprintf(out, "  %-50s %26s\n", dolfinx+" create_sparsity_pattern + assemble", spread(dolfinxSecs, 1e3, 1))
		fmt.Fprintf(out, "  (DOLFINx: its mesh of the same triangles and coordinates, numbered as DOLFINx numbers it; one process)\n")
	} else {
		fmt.Fprintf(out, "  %-50s not measured: %v\n", "DOLFINx", noDOLFINx)
	}

	cgRuns := runs
	if petsc != nil {
		cgRuns = append(slices.Clip(runs), matRun{name: "GoOP2 sequential -> PETSc", backend: "sequential", threads: 1, triad: triad1, pkg: "petsc"})
	}
	cg, err := cgIterations(m, prob, cgRuns, rounds)
	if err != nil {
		return err
	}
	// Bytes a CG iteration must move (each value read or written once
	// per step, STREAM's convention): the product y = A x reads the
	// values (8 bytes), column indices (4) and row offsets (4 per row),
	// x and writes y; the vector loops are p·q (reads 2 vectors), the
	// update x += αp, r -= αq, z = M⁻¹r with r·r and r·z (reads x, r, p,
	// q and the inverse diagonal, writes x, r and z) and p = z + βp
	// (reads 2, writes 1): 13 vectors.
	nodes := float64(m.Nodes)
	spmvBytes := 12*float64(nnz) + 4*(nodes+1) + 16*nodes
	vecBytes := 13 * 8 * nodes
	fmt.Fprintf(out, "\n  CG iteration (Jacobi), %d unknowns: the time of %d iterations (the faster of 2 solves of %d less that of 2 of %d), medians of %d rounds\n",
		m.Nodes, cgLong-cgShort, cgLong, cgShort, rounds)
	fmt.Fprintf(out, "  bytes per iteration: SpMV %.1f MB + vector loops %.1f MB (13 vectors) = %.1f MB\n", spmvBytes/1e6, vecBytes/1e6, (spmvBytes+vecBytes)/1e6)
	fmt.Fprintf(out, "  %-24s %26s %10s %11s\n", "run", "ms per iteration", "bound ms", "time/bound")
	ratios := make([]float64, len(cgRuns))
	for i, r := range cgRuns {
		bound := (spmvBytes + vecBytes) / (r.triad * 1e9)
		ratios[i] = median(cg[i]) / bound
		fmt.Fprintf(out, "  %-24s %26s %10.2f %10.2fx\n", r.name, spread(cg[i], 1e3, 2), bound*1e3, ratios[i])
	}
	if petsc != nil {
		bound := (spmvBytes + vecBytes) / (triad1 * 1e9)
		fmt.Fprintf(out, "  %-24s %26s %10.2f %10.2fx\n", "PETSc KSPCG + PCJACOBI", spread(petscCG, 1e3, 2), bound*1e3, median(petscCG)/bound)
	}
	fmt.Fprintf(out, "  (bound: the bytes at the STREAM triad rate above for the run's thread count; PETSc: the same system\n")
	fmt.Fprintf(out, "   (MatZeroRowsColumns on the boundary nodes), one process, timed in the assembly program's runs; GoOP2 -> PETSc:\n")
	fmt.Fprintf(out, "   GoOP2's matrix solved with SolverOptions.Package \"petsc\", KSPCG + PCJACOBI, timed as GoOP2's own)\n\n")

	fmt.Fprintln(out, "  targets")
	target := func(what string, v, t float64, atMost bool) { printTarget(out, what, v, t, atMost) }
	if petsc != nil {
		target("assembly, GoOP2 sequential / PETSc", median(asmSecs[0])/median(petscSecs), 0.5, true)
		target("assembly, GoOP2 openmp 1 / PETSc", median(asmSecs[1])/median(petscSecs), 0.5, true)
	} else {
		fmt.Fprintln(out, "    assembly against PETSc: not measured (no PETSc)")
	}
	if dolfinx != "" {
		target("sparsity, GoOP2 / DOLFINx", median(spSecs)/median(dolfinxSecs), 1, true)
	}
	if threads > 1 {
		target(fmt.Sprintf("assembly speed-up, openmp 1 -> %d threads", threads), median(asmSecs[1])/median(asmSecs[2]), 1.7, false)
	}
	for i, r := range runs {
		target("CG iteration, "+r.name+": time/bound", ratios[i], 1.3, true)
	}
	if petsc != nil {
		target("CG iteration, GoOP2 sequential / PETSc", median(cg[0])/median(petscCG), 1.2, true)
		target("CG iteration, GoOP2 -> PETSc / PETSc's own KSPSolve", median(cg[len(runs)])/median(petscCG), 1.1, true)
	}
	fmt.Fprintln(out)
	return nil
}

// cgShort and cgLong are the iterations of the two CG solves whose
// difference times an iteration.
const cgShort, cgLong = 20, 120

// cgIterations measures, per run (solving with the run's package) and round, the seconds of one CG
// iteration: solves of cgShort and cgLong iterations (the tolerance out
// of reach), twice each, the difference of the faster of each over
// cgLong-cgShort, so that the set-up of a solve (assembly, work
// vectors, the inverse diagonal, the first residual) cancels and a
// solve slowed by other work on the machine does not count.
func cgIterations(m *poisson.Mesh, p poisson.Problem, runs []matRun, rounds int) ([][]float64, error) {
	secs := make([][]float64, len(runs))
	solve := func(r matRun, its int) (time.Duration, error) {
		res, err := poisson.Solve(m, p, op2.SolverOptions{Package: r.pkg, RTol: 1e-300, MaxIts: its})
		if err != nil {
			return 0, err
		}
		if res.Info.Iterations != its {
			return 0, fmt.Errorf("CG made %d iterations, want %d", res.Info.Iterations, its)
		}
		return res.Solve, nil
	}
	for round := 0; round < rounds; round++ {
		for i, r := range runs {
			if err := op2.Configure(op2.Config{Backend: r.backend, Threads: r.threads}); err != nil {
				return nil, err
			}
			if round == 0 {
				if _, err := solve(r, 2); err != nil { // compiles and plans
					return nil, fmt.Errorf("%s: %w", r.name, err)
				}
			}
			runtime.GC()
			short, long := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
			for range 2 {
				for _, s := range []struct {
					its  int
					best *time.Duration
				}{{cgShort, &short}, {cgLong, &long}} {
					d, err := solve(r, s.its)
					if err != nil {
						return nil, fmt.Errorf("%s: %w", r.name, err)
					}
					*s.best = min(*s.best, d)
				}
			}
			secs[i] = append(secs[i], (long-short).Seconds()/(cgLong-cgShort))
		}
	}
	return secs, nil
}
