package op2

import (
	"fmt"
	"time"

	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/mpi"
	"github.com/goop2/op2/internal/petsc"
	"github.com/goop2/op2/internal/solver"
)

// ErrPETScUnavailable is matched (errors.Is) by the errors Solve returns
// when a solver with Package "petsc" cannot load or start PETSc; their
// message says what to install.
var ErrPETScUnavailable = petsc.ErrUnavailable

// startPETSc loads PETSc and initialises it, once per process, and
// returns the world it runs on (solver.Process.Start). Collective.
func startPETSc() (*mpi.World, error) {
	return rt.proc.petsc.Start(mpiWorld, mpiFatal, rt.e.Logger())
}

// solvePETSc is Solve with Package "petsc".
func (s *Solver) solvePETSc(A *Mat[float64], x, b *Dat[float64]) (SolveInfo, error) {
	// PETSc started in NewSolver; this finds its world (and that it has
	// not been finalised since).
	w, err := startPETSc()
	if err != nil {
		return SolveInfo{}, fmt.Errorf("op2: Solve with PETSc: %w", err)
	}
	sys := s.petsc.System(A)
	var setup time.Duration
	if sys == nil {
		start := time.Now()
		if sys, err = s.newPETScSystem(w, A); err != nil {
			return SolveInfo{}, fmt.Errorf("op2: Solve with PETSc (%s): %w", A.s.Matrix, err)
		}
		setup = time.Since(start)
	}

	sp := A.sp
	n := sp.pat.NRows * sp.rdim
	err = lock(forCollective, "Solver.Solve")
	if err == nil {
		err = A.s.HostAccess(false)
	}
	if err == nil {
		err = b.s.HostAccess(false)
	}
	if err == nil && s.opts.InitialGuessNonzero {
		err = x.s.HostAccess(true)
	} else if err == nil {
		x.s.WriteOnly() // PETSc starts from zero: x's values are not read
	}
	if err == nil {
		dist.HostWrite(&x.s)
	}
	// Whatever failed here fails on this rank alone: agreed before any
	// collective.
	err = dist.AgreeStep(w, "PETSc solve", err)
	var res petsc.Result
	if err == nil {
		res, err = sys.Solve(A.data, x.data[:n], b.data[:n])
	}
	unlock()
	if err != nil {
		return SolveInfo{}, fmt.Errorf("op2: Solve with PETSc (%s): %w", A.s.Matrix, mpiFatal(err))
	}
	info := SolveInfo{Iterations: res.Iterations, Residual: res.Residual, Norm: NormType(res.Norm), Converged: res.Reason > 0,
		Reason: res.ReasonName, Setup: setup}
	if info.Method, info.Precond, err = sys.Types(); err != nil {
		return info, fmt.Errorf("op2: Solve with PETSc (%s): %w", A.s.Matrix, err)
	}
	if res.Reason < 0 && res.ReasonName != "DIVERGED_ITS" {
		return info, fmt.Errorf("op2: Solve with PETSc (%s/%s) on %s: %s after %d iterations (residual %g)",
			info.Method, info.Precond, A.s.Matrix, res.ReasonName, res.Iterations, res.Residual)
	}
	return info, nil
}

// newPETScSystem hands A's pattern to PETSc (collectively) and makes a
// KSP for it.
func (s *Solver) newPETScSystem(w *mpi.World, A *Mat[float64]) (*solver.System, error) {
	rstart, N, gcol, err := A.sp.globalColumns(w)
	if err != nil {
		return nil, err
	}
	sp, o := A.sp, s.opts
	return s.petsc.NewSystem(A, sp.rdim, sp.pat.RowPtr, sp.pat.ColIdx, gcol, rstart, N, solver.KSPOptions{Method: o.Method, Precond: o.Precond,
		RTol: o.RTol, ATol: o.ATol, MaxIts: o.MaxIts, Norm: petsc.NormType(o.Norm), InitialGuessNonzero: o.InitialGuessNonzero})
}

// globalColumns numbers the rows of a square sparsity contiguously over
// the ranks, as PETSc needs: rank p's owned row elements are rstart_p +
// i, rstart_p the number of elements the ranks before it own; it returns
// this rank's rstart, the number of row elements in all, and the global
// number of each local column element (owned, then halo: their owners'
// numbers, through a halo exchange). Collective.
func (sp *Sparsity) globalColumns(w *mpi.World) (rstart, total int64, gcol []int64, err error) {
	n := sp.pat.NRows
	if w.Size() == 1 {
		gcol = make([]int64, sp.pat.NCols)
		for i := range gcol {
			gcol[i] = int64(i)
		}
		return 0, int64(n), gcol, nil
	}
	if rstart, total, err = solver.RowStart(w, n); err != nil {
		return 0, 0, nil, mpiFatal(err)
	}
	g, err := NewDat(sp.rows, 1, solver.Numbers(rstart, n, sp.rows.c.Total), fmt.Sprintf("global numbers of %q", sp.rows.c.Name))
	if err != nil {
		return 0, 0, nil, err
	}
	// A loop reading g through the columns' map brings the whole halo
	// (exec and non-exec) from the owners, as Mat.Mult's does for x.
	col := sp.pairs[0].Col
	if err := ParLoop(rt.proc.matHalo, setOf(col.c.From), g.ArgMap(Read, col, 0)); err != nil {
		return 0, 0, nil, err
	}
	err = lock(forCollective, "Solver.Solve")
	if err == nil {
		err = g.s.HostAccess(false)
	}
	if err == nil {
		gcol, err = solver.Columns(g.data[:sp.pat.NCols], sp.pat.ColIdx)
	}
	unlock()
	if err != nil {
		return 0, 0, nil, err
	}
	return rstart, total, gcol, nil
}

// Close frees what the solver holds outside Go: with Package "petsc",
// PETSc's copies of the matrices it solved with and its KSPs. In a
// distributed run it is collective, like Solve. The solver must not be
// used afterwards. A solver that is not closed keeps them until the
// program ends; after Finalize, Close has nothing left to free.
func (s *Solver) Close() error {
	if s.petsc == nil {
		return nil
	}
	return s.petsc.Close()
}
