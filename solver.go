package op2

import (
	"errors"
	"fmt"
	"time"

	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/petsc"
	"github.com/goop2/op2/internal/solver"
)

// SolverOptions configure a Solver. The zero value is GoOP2's own
// conjugate gradients with a Jacobi preconditioner, a relative tolerance
// of 1e-8 and at most 10 000 iterations.
type SolverOptions struct {
	// Package chooses who solves: "" or "native" for GoOP2's own
	// solvers, whose vector operations are loops on the solver's runtime
	// (every backend, every rank count, no library needed); "petsc" for
	// PETSc's KSP, loaded at run time (Debian: apt-get install
	// libpetsc-real3.18 libopenmpi-dev; OP2_PETSC_LIBRARY names another
	// build). See Solver for how PETSc is used.
	Package string
	// Method is the Krylov method: "cg" (conjugate gradients, for
	// symmetric positive definite matrices; the default) or "bicgstab"
	// (BiCGStab, for nonsymmetric matrices). With PETSc they are its
	// "cg" and "bcgs", and any other PETSc KSP type ("gmres",
	// "minres"...) may be named.
	Method string
	// Precond is the preconditioner: "jacobi" (the inverse of the
	// diagonal; the default) or "none". With PETSc any PC type may be
	// named ("gamg", "ilu", "hypre"...).
	Precond string
	// PETScOptions are PETSc options in its command-line syntax
	// ("-ksp_type gmres -pc_type gamg -ksp_monitor"), for Package
	// "petsc" only. They apply to this solver alone (GoOP2 puts them
	// under the solver's own options prefix) and after Method, Precond
	// and the tolerances, which they override. Options from PETSc's
	// environment (PETSC_OPTIONS) without the prefix do not reach
	// GoOP2's solvers; process-wide options (-log_view, -malloc_debug,
	// -help) belong there. Options the solver's first solve did not
	// look up (misspelt ones among them) are named in a warning on the
	// runtime's logger.
	PETScOptions string
	// RTol and ATol stop the iteration when the residual's norm (in
	// Norm) is at most max(RTol × ‖b‖, ATol), ‖b‖ the right-hand side's
	// norm in the same norm: ‖B b‖ for NormPreconditioned, sqrt(b·B b)
	// for NormNatural, ‖b‖ for NormUnpreconditioned, B the
	// preconditioner. This is PETSc's default test (KSPConvergedDefault):
	// from a zero initial guess ‖b‖ is the first residual's norm; from a
	// nonzero one it is still b's (the first residual's if b's is 0).
	// When both are 0, RTol is 1e-8; an ATol with RTol 0 is an absolute
	// tolerance alone.
	RTol, ATol float64
	// MaxIts bounds the iterations (default 10 000).
	MaxIts int
	// Norm is the norm of the residual that the tolerances test
	// (PETSc's KSPSetNormType, -ksp_norm_type); the default, as in
	// PETSc, is the preconditioned residual's norm. See NormType.
	Norm NormType
	// InitialGuessNonzero makes Solve start from x's values (PETSc's
	// KSPSetInitialGuessNonzero). Without it (the default, as in PETSc)
	// Solve starts from zero and ignores x's values; PETSc's direct
	// solves (Method "preonly" with Precond "lu" or "cholesky") need it
	// so.
	InitialGuessNonzero bool
	// Runtime runs the solver's vector loops (nil: the default
	// runtime), so they run on its backend.
	Runtime *Runtime
}

// NormType is the norm of the residual r = b − A x that a solver's
// convergence test measures: PETSc's KSPNormType (-ksp_norm_type). B is
// the preconditioner (the inverse of the diagonal with "jacobi", the
// identity with "none").
type NormType int

// The norms. The native "cg" has the first four; "bicgstab" has
// NormDefault, NormPreconditioned and NormUnpreconditioned, as PETSc's
// bcgs; PETSc says which of its other methods have which.
const (
	// NormDefault is the method's own: NormPreconditioned for "cg" and
	// "bicgstab" (and most of PETSc's methods), NormNone for PETSc's
	// "preonly". SolveInfo.Norm says which one ran.
	NormDefault NormType = iota
	// NormPreconditioned is ‖B r‖ (KSP_NORM_PRECONDITIONED);
	// BiCGStab then preconditions on the left, B A x = B b.
	NormPreconditioned
	// NormUnpreconditioned is ‖r‖ (KSP_NORM_UNPRECONDITIONED);
	// BiCGStab then preconditions on the right, A B y = b, x = B y.
	NormUnpreconditioned
	// NormNatural is sqrt(r·B r) (KSP_NORM_NATURAL), the norm CG
	// minimises; CG only.
	NormNatural
	// NormNone is no norm (KSP_NORM_NONE): with PETSc, MaxIts
	// iterations and no test; the native solvers refuse it.
	NormNone
)

// String is the norm's name in PETSc's -ksp_norm_type.
func (n NormType) String() string { return petsc.NormType(n).String() }

// SolveInfo says how a solve ended.
type SolveInfo struct {
	Iterations int // iterations made
	// Residual is the residual's norm at the end, in Norm: the norm the
	// convergence test measured.
	Residual float64
	// Norm is the norm of Residual and of the convergence test (never
	// NormDefault: the one the default chose).
	Norm      NormType
	Converged bool   // the tolerance was met
	Reason    string // why it stopped: in words, or PETSc's name ("CONVERGED_RTOL", "DIVERGED_ITS")
	// Method and Precond are the Krylov method and the preconditioner
	// that ran (with PETSc, its type names, as its options left them).
	Method, Precond string
	// Setup is the part of the Solve's time spent setting up for this
	// and later solves rather than solving: with PETSc, the first Solve
	// with each matrix hands its pattern to PETSc and makes a KSP for
	// it. It is zero for later solves with that matrix and for the
	// native solvers. (PETSc itself starts in NewSolver.)
	Setup time.Duration
}

// Solver solves linear systems A x = b with a matrix assembled by loops
// (PyOP2's Solver), by a preconditioned Krylov method. GoOP2's own
// methods (Package "native") make their vector operations (products of
// vectors, updates) GoOP2 loops on the solver's runtime and their matrix
// products Mat.Mult.
//
// With Package "petsc", PETSc solves: its library is loaded, and PETSc
// started on GoOP2's MPI (a world of one without a launcher), by the
// first NewSolver that asks for it, so that no Solve pays for it;
// Finalize ends it. PETSc starts without its signal
// handlers, so Go's stay in place, and its errors come back as error
// values carrying PETSc's message. The first Solve with a matrix hands
// its pattern to PETSc (an AIJ matrix of block size the sparsity's dim,
// exactly preallocated; -mat_type baij in PETScOptions makes it BAIJ)
// and makes a KSP for it; every Solve copies the matrix's current
// values (its pattern never changes), so PETSc sets its preconditioner
// up again (-ksp_reuse_preconditioner keeps the first). x and b are
// used in place, on the host. In a distributed run the rows are
// numbered contiguously over the ranks for PETSc, and NewSolver (with
// Package "petsc"), Solve and Close are collective.
type Solver struct {
	opts   SolverOptions
	native solver.Native[*Dat[float64], *Kernel] // kernels and work vectors of the native solves
	petsc  *solver.PETSc                         // with Package "petsc"
}

// NewSolver checks opts and returns a solver. With Package "petsc" it
// starts PETSc, if no solver did, and gives it the solver's
// PETScOptions: an error matching ErrPETScUnavailable says that PETSc
// cannot be loaded or started, and what to install.
func NewSolver(opts SolverOptions) (*Solver, error) {
	c := solver.Choice{Package: opts.Package, Method: opts.Method, Precond: opts.Precond, PETScOptions: opts.PETScOptions,
		RTol: opts.RTol, ATol: opts.ATol, MaxIts: opts.MaxIts, Norm: petsc.NormType(opts.Norm)}
	if err := c.Settle(); err != nil {
		return nil, fmt.Errorf("op2: NewSolver: %w", err)
	}
	opts.Package, opts.Method, opts.Precond, opts.RTol, opts.MaxIts = c.Package, c.Method, c.Precond, c.RTol, c.MaxIts
	if opts.Runtime == nil {
		opts.Runtime = rt
	}
	s := &Solver{opts: opts}
	if opts.Package == "petsc" {
		var err error
		if s.petsc, err = rt.proc.petsc.NewSolver(mpiWorld, mpiFatal, rt.e.Logger(), opts.PETScOptions); err != nil {
			return nil, fmt.Errorf("op2: NewSolver with PETSc: %w", err)
		}
	}
	return s, nil
}

// Solve solves A x = b, from zero or (with InitialGuessNonzero) from
// x's values, and leaves the solution in x. A must be square (rows and columns on one set with one dim), x
// and b Dats on that set with that dim. An iteration that breaks down
// (for CG a zero or negative curvature, which a matrix that is not
// symmetric positive definite can give; for BiCGStab a vanishing inner
// product; with Jacobi a zero diagonal entry) stops with an error saying
// so, as does a residual grown to 10^5 times the first (from a nonzero
// initial guess, b's norm), PETSc's default divergence tolerance;
// reaching MaxIts is not an error: SolveInfo.Converged says whether the
// tolerance was met.
func (s *Solver) Solve(A *Mat[float64], x, b *Dat[float64]) (SolveInfo, error) {
	// Collective: a rank that refuses its arguments says so to every
	// rank before any of them solves.
	made := error(nil)
	if s == nil || s.opts.Runtime == nil {
		made = errors.New("op2: Solve: the Solver was not made by NewSolver")
	}
	if err := agreeArgs("Solver.Solve", errors.Join(made, checkSolve(A, x, b))); err != nil {
		return SolveInfo{}, err
	}
	// The host reads A, x and b, and gets what the solve found: a
	// restart from an automatic checkpoint runs the loops up to here.
	if err := observe("Solver.Solve", "Solve", &A.s, &x.s, &b.s); err != nil {
		return SolveInfo{}, err
	}
	info, err := s.solve(A, x, b)
	if oerr := observe("Solver.Solve", "Solve", &A.s, &x.s, &b.s); err == nil {
		err = oerr
	}
	return info, err
}

// checkSolve checks Solve's arguments.
func checkSolve(A *Mat[float64], x, b *Dat[float64]) error {
	if A == nil || x == nil || b == nil {
		return errors.New("op2: Solve: the matrix, x and b must not be nil")
	}
	sp := A.sp
	if sp.rows != sp.cols || sp.rdim != sp.cdim {
		return fmt.Errorf("op2: Solve: %s is not square (rows and columns on one set with one dim)", A.s.Matrix)
	}
	for _, d := range []*Dat[float64]{x, b} {
		if d.s.Set != &sp.rows.c || d.s.Dim != sp.rdim {
			return fmt.Errorf("op2: Solve: %s must be on set %q with dim %d, as the rows of %s", d.s.Describe(), sp.rows.c.Name, sp.rdim, A.s.Matrix)
		}
	}
	if x == b {
		return fmt.Errorf("op2: Solve: x and b are the same %s", x.s.Describe())
	}
	return nil
}

// solve is Solve, the arguments checked.
func (s *Solver) solve(A *Mat[float64], x, b *Dat[float64]) (SolveInfo, error) {
	sp, o := A.sp, s.opts
	var info solver.Info
	var err error
	if s.petsc != nil {
		info, err = s.solvePETSc(A, x, b)
	} else {
		norm := o.Norm
		if norm == NormDefault {
			norm = NormPreconditioned
		}
		info, err = solver.SolveNative(&s.native, nativeAPI(A, o.Runtime), sp.rows, sp.rdim, solver.Options{Method: o.Method,
			Precond: o.Precond, RTol: o.RTol, ATol: o.ATol, MaxIts: o.MaxIts, Norm: petsc.NormType(norm),
			InitialGuessNonzero: o.InitialGuessNonzero}, A.s.Matrix, x, b)
	}
	return SolveInfo{Iterations: info.Iterations, Residual: info.Residual, Norm: NormType(info.Norm), Converged: info.Converged,
		Reason: info.Reason, Method: info.Method, Precond: info.Precond, Setup: info.Setup}, err
}

// nativeAPI is what a native solve with A on runtime r needs of the API.
func nativeAPI(A *Mat[float64], r *Runtime) solver.API[*Dat[float64], *Global[float64], Arg, *Kernel] {
	sp := A.sp
	return solver.API[*Dat[float64], *Global[float64], Arg, *Kernel]{
		NewVec: func(vals []float64, name string) (*Dat[float64], error) {
			return own(NewDat(sp.rows, sp.rdim, vals, name))
		},
		NewGlobal: func(dim int, name string) (*Global[float64], error) { return own(NewGlobal[float64](dim, nil, name)) },
		NewKernel: NewKernel,
		ParLoop:   func(k *Kernel, args ...Arg) error { return r.ParLoop(k, sp.rows, args...) },
		Zero:      func(v *Dat[float64]) error { return v.zero(forCollective, "Solver.Solve") },
		Fill: func(v *Dat[float64], vals []float64) error {
			d, err := v.dataWOErr(forCollective, "Solver.Solve")
			copy(d, vals)
			return err
		},
		Values: func(g *Global[float64], write bool) ([]float64, error) {
			return g.hostData(forCollective, write, "Solver.Solve")
		},
		Mult: func(x, y *Dat[float64]) error { return A.mult(r, x, y, "Solver.Solve") },
		InverseDiagonal: func() (vals []float64, row, comp int, err error) {
			row = -1
			func() {
				err = lock(forCollective, "Solver.Solve")
				defer unlock()
				if err == nil {
					err = A.s.HostAccess(false)
				}
				if err == nil {
					vals = make([]float64, sp.pat.NRows*sp.rdim)
					row, comp = A.block().InverseDiagonal(vals)
				}
			}()
			if w, _ := mpiWorld(); w != nil && w.Size() > 1 {
				// Collective: a rank whose rows hold a zero diagonal
				// entry (or that failed) says so to every rank, before
				// any of them iterates.
				local := err
				if local == nil && row >= 0 {
					local = fmt.Errorf("%s has a zero diagonal entry in its row element %d (this rank's numbering), component %d; the Jacobi preconditioner needs none (use Precond \"none\")", A.s.Matrix, row, comp)
				}
				if err = mpiFatal(dist.AgreeStep(w, "Solver.Solve: the Jacobi preconditioner", local)); err != nil {
					return nil, -1, 0, fmt.Errorf("op2: Solve: %w", err)
				}
			}
			return vals, row, comp, err
		},
		Describe: func(v *Dat[float64]) string { return v.s.Describe() },
		Err:      apiError,
	}
}
