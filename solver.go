package op2

import (
	"errors"
	"fmt"
	"sync"
	"time"

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
	// -options_left to list the options nothing used, misspelt ones
	// among them) belong there.
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
	opts SolverOptions
	// The loops, made once: kernels by name and block dim.
	kernels map[kernelKey]*Kernel
	petsc   *solver.PETSc // with Package "petsc"

	// The native solves' work vectors, by set and dim, made by the first
	// solve that needs them and reused (zeroed) by the next, so that the
	// loops of every solve are the same (what automatic checkpoints look
	// for) and a solve allocates no Dat; mu makes solves on one Solver
	// one at a time.
	mu   sync.Mutex
	work map[workKey]*solverWork
}

type workKey struct {
	set *Set
	dim int
}

// solverWork is what the native solves on one set and dim reuse.
type solverWork struct {
	vecs []*Dat[float64]
	dinv *Dat[float64] // the inverse diagonal (Jacobi)
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
	s := &Solver{opts: opts, kernels: map[kernelKey]*Kernel{}}
	if opts.Package == "petsc" {
		var err error
		if s.petsc, err = rt.proc.petsc.NewSolver(mpiWorld, mpiFatal, rt.e.Logger(), opts.PETScOptions); err != nil {
			return nil, fmt.Errorf("op2: NewSolver with PETSc: %w", err)
		}
	}
	return s, nil
}

// kernelKey names a solver kernel: each name has one parameter list and
// body.
type kernelKey struct {
	name string
	dim  int
}

// kernel returns the vector kernel name for dat dim dim, made the first
// time: body is the loop over one element's dim values, k its index.
func (s *Solver) kernel(name, params, body string, dim int) *Kernel {
	key := kernelKey{name, dim}
	if k, ok := s.kernels[key]; ok {
		return k
	}
	fn := fmt.Sprintf("op2solver_%s", name)
	k := NewKernel(fmt.Sprintf("void %s(%s) {\n  for (int k = 0; k < %d; k++) { %s }\n}\n", fn, params, dim, body), fn)
	s.kernels[key] = k
	return k
}

// Solve solves A x = b, from zero or (with InitialGuessNonzero) from
// x's values, and leaves the solution in x. A must be square (rows and columns on one set with one dim), x
// and b Dats on that set with that dim. An iteration that breaks down
// (for CG a zero or negative curvature, which a matrix that is not
// symmetric positive definite can give; for BiCGStab a vanishing inner
// product; with Jacobi a zero diagonal entry) stops with an error saying
// so; reaching MaxIts is not an error: SolveInfo.Converged says whether
// the tolerance was met.
func (s *Solver) Solve(A *Mat[float64], x, b *Dat[float64]) (SolveInfo, error) {
	if A == nil || x == nil || b == nil {
		return SolveInfo{}, errors.New("op2: Solve: the matrix, x and b must not be nil")
	}
	sp := A.sp
	if sp.rows != sp.cols || sp.rdim != sp.cdim {
		return SolveInfo{}, fmt.Errorf("op2: Solve: %s is not square (rows and columns on one set with one dim)", A.s.Matrix)
	}
	for _, d := range []*Dat[float64]{x, b} {
		if d.s.Set != &sp.rows.c || d.s.Dim != sp.rdim {
			return SolveInfo{}, fmt.Errorf("op2: Solve: %s must be on set %q with dim %d, as the rows of %s", d.s.Describe(), sp.rows.c.Name, sp.rdim, A.s.Matrix)
		}
	}
	if x == b {
		return SolveInfo{}, fmt.Errorf("op2: Solve: x and b are the same %s", x.s.Describe())
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

// solve is Solve, the arguments checked.
func (s *Solver) solve(A *Mat[float64], x, b *Dat[float64]) (SolveInfo, error) {
	sp := A.sp
	if s.petsc != nil {
		return s.solvePETSc(A, x, b)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := workKey{sp.rows, sp.rdim}
	if s.work[key] == nil {
		if s.work == nil {
			s.work = map[workKey]*solverWork{}
		}
		s.work[key] = &solverWork{}
	}
	k := &krylov{s: s, A: A, r: s.opts.Runtime, set: sp.rows, dim: sp.rdim, work: s.work[key]}
	o := s.opts
	norm := o.Norm
	if norm == NormDefault {
		norm = NormPreconditioned
	}
	var err error
	if k.dot, err = NewGlobal[float64](1, nil, "solver dot"); err != nil {
		return SolveInfo{}, err
	}
	if k.coef, err = NewGlobal[float64](2, nil, "solver coefficients"); err != nil {
		return SolveInfo{}, err
	}
	if k.dots, err = NewGlobal[float64](2, nil, "solver dots"); err != nil {
		return SolveInfo{}, err
	}
	if o.Precond == "jacobi" {
		if k.dinv, err = A.inverseDiagonal(k.set, k.dim, k.work.dinv); err != nil {
			return SolveInfo{}, err
		}
		k.work.dinv = k.dinv
	}
	info, err := solver.Solve[*Dat[float64]](k, solver.Options{Method: o.Method, Precond: o.Precond, RTol: o.RTol, ATol: o.ATol,
		MaxIts: o.MaxIts, Norm: petsc.NormType(norm), InitialGuessNonzero: o.InitialGuessNonzero}, A.s.Matrix, x, b)
	return SolveInfo{Iterations: info.Iterations, Residual: info.Residual, Norm: NormType(info.Norm), Converged: info.Converged,
		Reason: info.Reason, Method: info.Method, Precond: info.Precond}, err
}

// krylov is one native solve's vector operations (solver.Ops): loops on
// the runtime r over the matrix's row set, using the solve's Globals and
// preconditioner.
type krylov struct {
	s         *Solver
	A         *Mat[float64]
	r         *Runtime
	set       *Set
	dim       int
	dot, coef *Global[float64]
	dots      *Global[float64] // two products at once
	sum       [1]float64       // the product of dot, returned
	dinv      *Dat[float64]    // the inverse diagonal (Jacobi), or nil
	temporary int
	work      *solverWork
}

// Vec returns a work vector on the solve's set, zeroed: the next one the
// solver keeps, or a new one.
func (k *krylov) Vec() (*Dat[float64], error) {
	k.temporary++
	if k.temporary <= len(k.work.vecs) {
		v := k.work.vecs[k.temporary-1]
		return v, v.Zero()
	}
	v, err := NewDat[float64](k.set, k.dim, nil, fmt.Sprintf("solver vector %d", k.temporary))
	if err == nil {
		k.work.vecs = append(k.work.vecs, v)
	}
	return v, err
}

// Zero sets x to zero.
func (k *krylov) Zero(x *Dat[float64]) error { return x.Zero() }

// Mult sets y = A x on the solver's runtime.
func (k *krylov) Mult(x, y *Dat[float64]) error { return k.A.mult(k.r, x, y, "Solver.Solve") }

// Describe names v in errors.
func (k *krylov) Describe(v *Dat[float64]) string { return v.s.Describe() }

// Err makes the solve's errors the API's.
func (k *krylov) Err(err error) error { return apiError(err) }

// accessOf is the loop access of a vector argument.
func accessOf(a solver.Access) Access {
	switch a {
	case solver.Write:
		return Write
	case solver.RW:
		return RW
	}
	return Read
}

// Loop runs a vector loop of the solve (see solver.Ops) on the
// solver's runtime, over the matrix's row set.
func (k *krylov) Loop(name, params, body string, coefs []float64, args []solver.Arg[*Dat[float64]]) ([]float64, error) {
	var buf [12]Arg
	loopArgs := buf[:0]
	var sums *Global[float64]
	for _, a := range args {
		switch a.Kind {
		case solver.Vector:
			loopArgs = append(loopArgs, a.V.Arg(accessOf(a.Acc)))
		case solver.Coefs:
			loopArgs = append(loopArgs, k.coef.Arg(Read))
			c, err := k.coef.DataErr()
			if err != nil {
				return nil, err
			}
			copy(c, coefs)
		case solver.Diag:
			loopArgs = append(loopArgs, k.dinv.Arg(Read))
		case solver.Dot, solver.Sums:
			sums = k.dots
			if a.Kind == solver.Dot {
				sums = k.dot
			}
			loopArgs = append(loopArgs, sums.Arg(Inc))
		}
	}
	if err := k.zero(sums); err != nil {
		return nil, err
	}
	if err := k.r.ParLoop(k.s.kernel(name, params, body, k.dim), k.set, loopArgs...); err != nil || sums == nil {
		return nil, err
	}
	if sums == k.dot {
		v, err := k.dot.ValueErr()
		k.sum[0] = v
		return k.sum[:], err
	}
	return k.dots.DataROErr()
}

// zero zeroes the sums before a loop adds into them.
func (k *krylov) zero(sums *Global[float64]) error {
	switch sums {
	case nil:
		return nil
	case k.dot:
		return k.dot.SetValueErr(0)
	}
	d, err := k.dots.DataErr()
	if err != nil {
		return err
	}
	d[0], d[1] = 0, 0
	return nil
}

// inverseDiagonal returns a Dat on set with dim values per element: the
// inverses of the matrix's diagonal entries, or an error naming a zero
// one. The Dat is into, when not nil, else a new one.
func (A *Mat[T]) inverseDiagonal(set *Set, dim int, into *Dat[float64]) (*Dat[float64], error) {
	err := lock(forCollective, "Solver.Solve")
	if err == nil {
		err = A.s.HostAccess(false)
	}
	var vals []float64
	if err == nil {
		vals = make([]float64, A.sp.pat.NRows*dim)
		if r, a := A.block().InverseDiagonal(vals); r >= 0 {
			err = fmt.Errorf("op2: Solve: %s has a zero diagonal entry in scalar row %d (row element %d, component %d); the Jacobi preconditioner needs none (use Precond \"none\")", A.s.Matrix, r*dim+a, r, a)
		}
	}
	unlock()
	if err != nil {
		return nil, err
	}
	if into != nil {
		copy(into.DataWO(), vals)
		return into, nil
	}
	return NewDat(set, dim, vals, "solver inverse diagonal")
}
