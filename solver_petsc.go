package op2

import (
	"fmt"

	"github.com/goop2/op2/internal/petsc"
	"github.com/goop2/op2/internal/solver"
)

// ErrPETScUnavailable is matched (errors.Is) by the error NewSolver
// returns when a solver with Package "petsc" cannot load or start PETSc,
// its message saying what to install, and by the errors of a PETSc solve
// after Finalize has ended PETSc.
var ErrPETScUnavailable = petsc.ErrUnavailable

// solvePETSc is Solve with Package "petsc".
func (s *Solver) solvePETSc(A *Mat[float64], x, b *Dat[float64]) (solver.Info, error) {
	sp, o := A.sp, s.opts
	info, err := s.petsc.Solve(&solver.PETScSolve{Matrix: A.s.Matrix, Key: A, Dim: sp.rdim, RowPtr: sp.pat.RowPtr, ColIdx: sp.pat.ColIdx,
		NRows: sp.pat.NRows, NCols: sp.pat.NCols, Total: sp.rows.c.Total,
		Opts: solver.KSPOptions{Method: o.Method, Precond: o.Precond, RTol: o.RTol, ATol: o.ATol, MaxIts: o.MaxIts,
			Norm: petsc.NormType(o.Norm), InitialGuessNonzero: o.InitialGuessNonzero},
		A: &A.s, X: &x.s, B: &b.s, Vals: &A.data, XV: &x.data, BV: &b.data,
		Proc: &rt.proc.petsc, Launcher: mpiWorld, Fatal: mpiFatal, Logger: rt.e.Logger(), Report: rt.e.Report,
		Lock: func() error { return lock(forCollective, "Solver.Solve") }, Unlock: unlock,
		Exchange: func(nums []int32) ([]int32, error) { return globalNumbers(sp, nums) }})
	if err != nil {
		err = fmt.Errorf("op2: %w", err)
	}
	return info, err
}

// globalNumbers returns the global numbers of the local column elements
// of a square sparsity: nums, a value per local row element, with the
// halo's from their owners. Collective.
func globalNumbers(sp *Sparsity, nums []int32) ([]int32, error) {
	g, err := own(NewDat(sp.rows, 1, nums, fmt.Sprintf("global numbers of %q", sp.rows.c.Name)))
	if err != nil {
		return nil, err
	}
	// A loop reading g through the columns' map brings the whole halo
	// (exec and non-exec) from the owners, as Mat.Mult's does for x.
	col := sp.pairs[0].Col
	if err := ParLoop(rt.proc.matHalo, setOf(col.c.From), g.ArgMap(Read, col, 0)); err != nil {
		return nil, err
	}
	err = lock(forCollective, "Solver.Solve")
	defer unlock()
	if err == nil {
		err = g.s.HostAccess(false)
	}
	if err == nil {
		nums = append([]int32(nil), g.data[:sp.pat.NCols]...)
	}
	return nums, err
}

// Close frees what the solver holds outside Go: with Package "petsc",
// PETSc's copies of the matrices it solved with and its KSPs. In a
// distributed run it is collective, like Solve. The solver must not be
// used afterwards. A solver that is not closed keeps them until the
// program ends; after Finalize, Close has nothing left to free.
func (s *Solver) Close() error {
	if s == nil || s.petsc == nil { // a nil Solver: NewSolver failed
		return nil
	}
	return s.petsc.Close()
}
