package op2

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/goop2/op2/internal/petsc"
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
	petsc   *petscSolver // with Package "petsc"

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
	if opts.Package == "" {
		opts.Package = "native"
	}
	if opts.Method == "" {
		opts.Method = "cg"
	}
	if opts.Precond == "" {
		opts.Precond = "jacobi"
	}
	if opts.RTol == 0 && opts.ATol == 0 {
		opts.RTol = 1e-8
	}
	if opts.MaxIts == 0 {
		opts.MaxIts = 10000
	}
	switch {
	case opts.Package != "native" && opts.Package != "petsc":
		return nil, fmt.Errorf("op2: NewSolver: package %q; there are \"native\" (GoOP2's own solvers, the default) and \"petsc\"", opts.Package)
	case opts.Package == "native" && opts.PETScOptions != "":
		return nil, fmt.Errorf("op2: NewSolver: PETSc options %q for the native solver; they need Package \"petsc\"", opts.PETScOptions)
	case opts.Package == "petsc" && strings.ContainsRune(opts.Method+opts.Precond, ' '):
		return nil, fmt.Errorf("op2: NewSolver: method %q or preconditioner %q is not a PETSc type name (PETScOptions takes options)", opts.Method, opts.Precond)
	case opts.Package == "native" && opts.Method != "cg" && opts.Method != "bicgstab":
		return nil, fmt.Errorf("op2: NewSolver: method %q; the built-in solver has \"cg\" (conjugate gradients) and \"bicgstab\"", opts.Method)
	case opts.Package == "native" && opts.Precond != "jacobi" && opts.Precond != "none":
		return nil, fmt.Errorf("op2: NewSolver: preconditioner %q; the built-in solver has \"jacobi\" and \"none\"", opts.Precond)
	case opts.RTol < 0 || opts.ATol < 0 || math.IsNaN(opts.RTol) || math.IsNaN(opts.ATol):
		return nil, fmt.Errorf("op2: NewSolver: tolerances %g (relative) and %g (absolute) must be at least 0", opts.RTol, opts.ATol)
	case opts.MaxIts < 0:
		return nil, fmt.Errorf("op2: NewSolver: at most %d iterations", opts.MaxIts)
	case opts.Norm < NormDefault || opts.Norm > NormNone:
		return nil, fmt.Errorf("op2: NewSolver: norm type %d; there are NormDefault, NormPreconditioned, NormUnpreconditioned, NormNatural and NormNone", int(opts.Norm))
	case opts.Package == "native" && opts.Norm == NormNone:
		return nil, fmt.Errorf("op2: NewSolver: the native solvers do not support the norm %q (NormNone): their convergence test needs one", opts.Norm)
	case opts.Package == "native" && opts.Method == "bicgstab" && opts.Norm == NormNatural:
		return nil, fmt.Errorf("op2: NewSolver: method %q does not support the natural norm (NormNatural); it has NormPreconditioned (left preconditioning, the default) and NormUnpreconditioned (right preconditioning), as PETSc's bcgs", opts.Method)
	}
	if opts.Runtime == nil {
		opts.Runtime = rt
	}
	s := &Solver{opts: opts, kernels: map[kernelKey]*Kernel{}}
	if opts.Package == "petsc" {
		var err error
		if s.petsc, err = newPETScSolver(opts.PETScOptions); err != nil {
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
	if err := observe("Solve", &A.s, &x.s, &b.s); err != nil {
		return SolveInfo{}, err
	}
	info, err := s.solve(A, x, b)
	if oerr := observe("Solve", &A.s, &x.s, &b.s); err == nil {
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
	k.info.Method, k.info.Precond, k.info.Norm = s.opts.Method, s.opts.Precond, s.opts.Norm
	if k.info.Norm == NormDefault {
		k.info.Norm = NormPreconditioned
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
	if s.opts.Precond == "jacobi" {
		if k.dinv, err = A.inverseDiagonal(k.set, k.dim, k.work.dinv); err != nil {
			return SolveInfo{}, err
		}
		k.work.dinv = k.dinv
	}
	if s.opts.Method == "bicgstab" {
		return k.bicgstab(x, b)
	}
	return k.cg(x, b)
}

// krylov is one solve: the matrix, the runtime and set its vector loops
// run on, and the Globals and preconditioner they use.
type krylov struct {
	s         *Solver
	A         *Mat[float64]
	r         *Runtime
	set       *Set
	dim       int
	dot, coef *Global[float64]
	dots      *Global[float64] // two products at once (vecLoop)
	dinv      *Dat[float64]    // the inverse diagonal (Jacobi), or nil
	info      SolveInfo
	err       error   // why more ended the solve, if it failed
	bnorm     float64 // ‖b‖
	tol       float64
	temporary int
	work      *solverWork
}

// vec returns a work vector on the solve's set, zeroed: the next one the
// solver keeps, or a new one.
func (k *krylov) vec() (*Dat[float64], error) {
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

// vecs makes a work vector for each of vs.
func (k *krylov) vecs(vs ...**Dat[float64]) error {
	for _, v := range vs {
		var err error
		if *v, err = k.vec(); err != nil {
			return err
		}
	}
	return nil
}

// inner returns u·v (a loop reducing into a Global).
func (k *krylov) inner(u, v *Dat[float64]) (float64, error) {
	dotK := k.s.kernel("dot", "const double *x, const double *y, double *s", "*s += x[k] * y[k];", k.dim)
	if err := k.dot.SetValueErr(0); err != nil {
		return 0, err
	}
	if err := k.r.ParLoop(dotK, k.set, u.Arg(Read), v.Arg(Read), k.dot.Arg(Inc)); err != nil {
		return 0, err
	}
	return k.dot.ValueErr()
}

// setCoef sets the first coefficient to a.
func (k *krylov) setCoef(a float64) error {
	c, err := k.coef.DataErr()
	if err != nil {
		return err
	}
	c[0] = a
	return nil
}

// zeroDots zeroes the two products before a loop sums into them.
func (k *krylov) zeroDots() error {
	d, err := k.dots.DataErr()
	if err != nil {
		return err
	}
	d[0], d[1] = 0, 0
	return nil
}

// combine sets z = x + a y (z may be y but not x).
func (k *krylov) combine(x *Dat[float64], a float64, y, z *Dat[float64]) error {
	if z == y {
		xpayK := k.s.kernel("xpay", "const double *a, const double *x, double *y", "y[k] = x[k] + a[0] * y[k];", k.dim)
		if err := k.setCoef(a); err != nil {
			return err
		}
		return k.r.ParLoop(xpayK, k.set, k.coef.Arg(Read), x.Arg(Read), y.Arg(RW))
	}
	lin := k.s.kernel("lin", "const double *a, const double *x, const double *y, double *z", "z[k] = x[k] + a[0] * y[k];", k.dim)
	if err := k.setCoef(a); err != nil {
		return err
	}
	return k.r.ParLoop(lin, k.set, k.coef.Arg(Read), x.Arg(Read), y.Arg(Read), z.Arg(Write))
}

// precondition sets z = M⁻¹ r.
func (k *krylov) precondition(r, z *Dat[float64]) error {
	if k.dinv == nil {
		copyK := k.s.kernel("copy", "const double *r, double *z", "z[k] = r[k];", k.dim)
		return k.r.ParLoop(copyK, k.set, r.Arg(Read), z.Arg(Write))
	}
	mulK := k.s.kernel("mul", "const double *d, const double *r, double *z", "z[k] = d[k] * r[k];", k.dim)
	return k.r.ParLoop(mulK, k.set, k.dinv.Arg(Read), r.Arg(Read), z.Arg(Write))
}

// preRE finds vecLoop's PRE(z, s).
var preRE = regexp.MustCompile(`PRE\((\w+), (\w+)\)`)

// vecArg is a vector of a fused loop: its name in the kernel's body,
// the Dat and how the loop accesses it.
type vecArg struct {
	name string
	dat  *Dat[float64]
	acc  Access
}

// vecLoop runs one loop over the solve's set doing body for every
// value k of each element: coefs are a[0], a[1] (at most 2), and the
// body may add into acc[0] and acc[1], whose sums it returns. Fused
// loops compute each value as the separate operations (axpy, combine,
// inner, precondition) compute it, with sums in the same order, so the
// results are theirs. In body, PRE(z, s) stands for "z[k] = d[k] *
// s[k];" with the preconditioner and for nothing without (then the
// caller passes s as z). A Dat among args twice is passed once, its
// second name an alias of the first. Each name must have one body (the
// kernels are kept by name).
func (k *krylov) vecLoop(name string, coefs []float64, body string, args []vecArg) ([]float64, error) {
	params := "const double *a"
	loopArgs := []Arg{k.coef.Arg(Read)}
	seen := map[*Dat[float64]]string{}
	alias := ""
	for _, v := range args {
		c := ""
		if v.acc == Read {
			c = "const "
		}
		if first, ok := seen[v.dat]; ok { // z is s: one argument, two names
			alias += fmt.Sprintf("%sdouble *const %s = %s; (void)%s; ", c, v.name, first, v.name)
			continue
		}
		seen[v.dat] = v.name
		params += fmt.Sprintf(", %sdouble *%s", c, v.name)
		loopArgs = append(loopArgs, v.dat.Arg(v.acc))
	}
	body = alias + body
	if preRE.MatchString(body) {
		pre := ""
		if k.dinv != nil {
			pre = "$1[k] = d[k] * $2[k];"
			params += ", const double *d"
			loopArgs = append(loopArgs, k.dinv.Arg(Read))
			name += "j"
		}
		body = preRE.ReplaceAllString(body, pre)
	}
	params += ", double *acc"
	loopArgs = append(loopArgs, k.dots.Arg(Inc))
	data, err := k.coef.DataErr()
	if err != nil {
		return nil, err
	}
	copy(data, coefs)
	if err := k.zeroDots(); err != nil {
		return nil, err
	}
	if err := k.r.ParLoop(k.s.kernel(name, params, body, k.dim), k.set, loopArgs...); err != nil {
		return nil, err
	}
	return k.dots.DataROErr()
}

// begin sets r = b - A x (q is work space) or, without
// InitialGuessNonzero, x = 0 and r = b, and reports whether the solve is
// over before the first iteration: b = 0, whose solution is x = 0 (the
// relative tolerance would be 0, and an iteration from another x would
// only stop when the residual underflows). A NaN or infinity in b, or
// in the first residual (from the matrix or x), is an error.
func (k *krylov) begin(x, b, r, q *Dat[float64]) (done bool, err error) {
	bb, err := k.inner(b, b)
	if err != nil {
		return false, err
	}
	if !isFinite(bb) {
		return false, fmt.Errorf("op2: Solve: the right-hand side %s has ‖b‖² = %g: it holds a NaN or infinity, or values too large to square", b.s.Describe(), bb)
	}
	k.bnorm = math.Sqrt(bb)
	if bb == 0 {
		err := x.Zero()
		k.info.Residual, k.info.Converged, k.info.Reason = 0, true, "b is zero, so x is zero"
		return true, err
	}
	if !k.s.opts.InitialGuessNonzero {
		if err := x.Zero(); err != nil {
			return false, err
		}
		return false, k.combine(b, 0, b, r) // r = b
	}
	if err := k.A.mult(k.r, x, q); err != nil {
		return false, err
	}
	if err := k.combine(b, -1, q, r); err != nil {
		return false, err
	}
	rr, err := k.inner(r, r)
	if err != nil {
		return false, err
	}
	if !isFinite(rr) {
		return false, fmt.Errorf("op2: Solve: the first residual b - A x has ‖r‖² = %g: %s or the starting %s holds a NaN or infinity", rr, k.A.s.Matrix, x.s.Describe())
	}
	return false, nil
}

// setTolerance sets info.Residual to r0, the first residual's norm in
// info.Norm, and the tolerance as PETSc's KSPConvergedDefault does:
// RTol times r0 from a zero initial guess; from a nonzero one, RTol
// times b's norm in the same norm (‖b‖ when right is set: the
// unpreconditioned norm, or BiCGStab preconditioned on the right), or
// r0 when that is 0; and ATol if larger.
func (k *krylov) setTolerance(r0 float64, b *Dat[float64], right bool) error {
	k.info.Residual = r0
	ref := r0
	if k.s.opts.InitialGuessNonzero {
		snorm := k.bnorm
		if !right && k.dinv != nil && k.info.Norm != NormUnpreconditioned {
			// ‖B b‖² and b·B b in one loop.
			bK := k.s.kernel("bnorms", "const double *d, const double *b, double *acc",
				"const double z = d[k] * b[k]; acc[0] += z * z; acc[1] += b[k] * z;", k.dim)
			if err := k.zeroDots(); err != nil {
				return err
			}
			if err := k.r.ParLoop(bK, k.set, k.dinv.Arg(Read), b.Arg(Read), k.dots.Arg(Inc)); err != nil {
				return err
			}
			dots, err := k.dots.DataROErr()
			if err != nil {
				return err
			}
			if k.info.Norm == NormNatural {
				snorm = math.Sqrt(math.Abs(dots[1]))
			} else {
				snorm = math.Sqrt(dots[0])
			}
		}
		if snorm != 0 {
			ref = snorm
		}
	}
	k.tol = max(k.s.opts.RTol*ref, k.s.opts.ATol)
	return nil
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// more says whether to iterate again, setting the end of info otherwise;
// a residual that is a NaN or infinity ends the solve with an error
// (k.err).
func (k *krylov) more() bool {
	if !isFinite(k.info.Residual) {
		k.err = fmt.Errorf("op2: Solve: %s diverged: the residual is %g at iteration %d (%s)", k.info.Method, k.info.Residual, k.info.Iterations, k.A.s.Matrix)
		k.info.Reason = "the residual is not finite"
		return false
	}
	if k.info.Residual <= k.tol {
		k.info.Converged = true
		k.info.Reason = fmt.Sprintf("%s residual norm %g at most the tolerance %g", k.info.Norm, k.info.Residual, k.tol)
		return false
	}
	if k.info.Iterations >= k.s.opts.MaxIts {
		k.info.Reason = fmt.Sprintf("%d iterations (MaxIts) without reaching the tolerance %g (%s residual norm %g)", k.info.Iterations, k.tol, k.info.Norm, k.info.Residual)
		return false
	}
	return true
}

func (k *krylov) breakdown(method, what string, v float64) error {
	return fmt.Errorf("op2: Solve: %s broke down at iteration %d: %s = %g (%s)", method, k.info.Iterations, what, v, k.A.s.Matrix)
}

// cgSteps are the bodies of CG's fused loop per norm: x += α p,
// r -= α q, z = M⁻¹ r, and into acc[1] r·z and into acc[0] the square
// of the residual's norm (the natural norm's is r·z itself).
var cgSteps = map[NormType]struct{ name, body string }{
	NormUnpreconditioned: {"cgstep", "x[k] += a[0] * p[k]; r[k] += a[1] * q[k]; PRE(z, r) acc[0] += r[k] * r[k]; acc[1] += r[k] * z[k];"},
	NormPreconditioned:   {"cgstepp", "x[k] += a[0] * p[k]; r[k] += a[1] * q[k]; PRE(z, r) acc[0] += z[k] * z[k]; acc[1] += r[k] * z[k];"},
	NormNatural:          {"cgstepn", "x[k] += a[0] * p[k]; r[k] += a[1] * q[k]; PRE(z, r) acc[1] += r[k] * z[k];"},
}

// cg is preconditioned conjugate gradients (PETSc's KSPCG), testing
// the residual in info.Norm.
func (k *krylov) cg(x, b *Dat[float64]) (SolveInfo, error) {
	var r, z, p, q *Dat[float64]
	if err := k.vecs(&r, &z, &p, &q); err != nil {
		return k.info, err
	}
	if done, err := k.begin(x, b, r, q); done || err != nil {
		return k.info, err
	}
	if err := k.precondition(r, z); err != nil {
		return k.info, err
	}
	if err := k.combine(z, 0, z, p); err != nil { // p = z
		return k.info, err
	}
	rz, err := k.inner(r, z)
	if err != nil {
		return k.info, err
	}
	r0 := math.Sqrt(math.Abs(rz)) // natural
	if k.info.Norm != NormNatural {
		v := r // unpreconditioned
		if k.info.Norm == NormPreconditioned {
			v = z
		}
		vv, err := k.inner(v, v)
		if err != nil {
			return k.info, err
		}
		r0 = math.Sqrt(vv)
	}
	if err := k.setTolerance(r0, b, false); err != nil {
		return k.info, err
	}
	step := cgSteps[k.info.Norm]
	for k.more() {
		// q = A p; α = (r·z)/(p·q); then one loop: x += α p, r -= α q,
		// z = M⁻¹ r and the products r·z and the norm's.
		if err := k.A.mult(k.r, p, q); err != nil {
			return k.info, err
		}
		pq, err := k.inner(p, q)
		if err != nil {
			return k.info, err
		}
		if !isFinite(pq) {
			return k.info, fmt.Errorf("%w; the matrix or a vector holds a NaN or infinity, or the iteration diverged", k.breakdown("conjugate gradients", "p·Ap", pq))
		}
		if !(pq > 0) {
			return k.info, fmt.Errorf("%w; the matrix is not symmetric positive definite", k.breakdown("conjugate gradients", "p·Ap", pq))
		}
		alpha := rz / pq
		// z is r without a preconditioner.
		zr := z
		if k.dinv == nil {
			zr = r
		}
		dots, err := k.vecLoop(step.name, []float64{alpha, -alpha}, step.body,
			[]vecArg{{"p", p, Read}, {"q", q, Read}, {"x", x, RW}, {"r", r, RW}, {"z", zr, Write}})
		if err != nil {
			return k.info, err
		}
		rzNew := dots[1]
		k.info.Iterations++
		if k.info.Norm == NormNatural {
			k.info.Residual = math.Sqrt(math.Abs(rzNew))
		} else {
			k.info.Residual = math.Sqrt(dots[0])
		}
		// β = (r·z)new/(r·z)old; p = z + β p.
		if err := k.combine(zr, rzNew/rz, p, p); err != nil {
			return k.info, err
		}
		rz = rzNew
	}
	return k.info, k.err
}

// bicgstab is BiCGStab (PETSc's KSPBCGS): preconditioned on the left
// (B A x = B b, whose residual is B r) for the preconditioned norm, on
// the right (A B y = b, x = B y) for the unpreconditioned one.
func (k *krylov) bicgstab(x, b *Dat[float64]) (SolveInfo, error) {
	left := k.dinv != nil && k.info.Norm == NormPreconditioned
	var r, r0, p, v, y, sv, z, t *Dat[float64]
	if err := k.vecs(&r, &r0, &p, &v, &y, &sv, &z, &t); err != nil {
		return k.info, err
	}
	if done, err := k.begin(x, b, r, v); done || err != nil {
		return k.info, err
	}
	if left { // r = B r (z is free: left preconditioning needs none)
		if err := k.precondition(r, z); err != nil {
			return k.info, err
		}
		r, z = z, r
	}
	rr, err := k.inner(r, r)
	if err != nil {
		return k.info, err
	}
	if err := k.setTolerance(math.Sqrt(rr), b, !left); err != nil {
		return k.info, err
	}
	if err := k.combine(r, 0, r, r0); err != nil { // r̂ = r
		return k.info, err
	}
	if err := k.combine(r, 0, r, p); err != nil { // p = r
		return k.info, err
	}
	rho, err := k.inner(r0, r)
	if err != nil {
		return k.info, err
	}
	// Left: y is the work vector of the products A p and A s, and the
	// iterates' updates are p and s themselves.
	q, rname := y, "bicgr"
	if left {
		y, z, rname = p, sv, "bicgrl"
	}
	for k.more() {
		if rho == 0 {
			return k.info, k.breakdown("BiCGStab", "r̂·r", rho)
		}
		// v = A M⁻¹ p (right) or M⁻¹ A p (left); α = ρ/(r̂·v).
		var r0v float64
		if left {
			if err := k.A.mult(k.r, p, q); err != nil {
				return k.info, err
			}
			dots, err := k.vecLoop("bicglv", nil, "PRE(v, q) acc[0] += r0[k] * v[k];", []vecArg{{"q", q, Read}, {"r0", r0, Read}, {"v", v, Write}})
			if err != nil {
				return k.info, err
			}
			r0v = dots[0]
		} else {
			if err := k.precondition(p, y); err != nil {
				return k.info, err
			}
			if err := k.A.mult(k.r, y, v); err != nil {
				return k.info, err
			}
			if r0v, err = k.inner(r0, v); err != nil {
				return k.info, err
			}
		}
		if r0v == 0 {
			return k.info, k.breakdown("BiCGStab", "r̂·Av", r0v)
		}
		alpha := rho / r0v
		// One loop: s = r - α v, x += α y, (right) z = M⁻¹ s (z is s
		// without a preconditioner) and s·s.
		var ss []float64
		if left {
			ss, err = k.vecLoop("bicgls", []float64{alpha, -alpha}, "s[k] = r[k] + a[1] * v[k]; x[k] += a[0] * p[k]; acc[0] += s[k] * s[k];",
				[]vecArg{{"r", r, Read}, {"v", v, Read}, {"p", p, Read}, {"x", x, RW}, {"s", sv, Write}})
		} else {
			if k.dinv == nil {
				z = sv
			}
			ss, err = k.vecLoop("bicgs", []float64{alpha, -alpha}, "s[k] = r[k] + a[1] * v[k]; x[k] += a[0] * y[k]; PRE(z, s) acc[0] += s[k] * s[k];",
				[]vecArg{{"r", r, Read}, {"v", v, Read}, {"y", y, Read}, {"x", x, RW}, {"s", sv, Write}, {"z", z, Write}})
		}
		if err != nil {
			return k.info, err
		}
		k.info.Iterations++
		if k.info.Residual = math.Sqrt(ss[0]); k.info.Residual <= k.tol {
			k.more()
			break
		}
		// t = A z (right) or M⁻¹ A s (left); ω = (t·s)/(t·t) (one loop
		// for both products).
		var dots []float64
		if left {
			if err := k.A.mult(k.r, sv, q); err != nil {
				return k.info, err
			}
			dots, err = k.vecLoop("bicglt", nil, "PRE(t, q) acc[0] += t[k] * s[k]; acc[1] += t[k] * t[k];", []vecArg{{"q", q, Read}, {"s", sv, Read}, {"t", t, Write}})
		} else {
			if err := k.A.mult(k.r, z, t); err != nil {
				return k.info, err
			}
			dots, err = k.vecLoop("bicgt", nil, "acc[0] += t[k] * s[k]; acc[1] += t[k] * t[k];", []vecArg{{"t", t, Read}, {"s", sv, Read}})
		}
		if err != nil {
			return k.info, err
		}
		ts, tt := dots[0], dots[1]
		if tt == 0 || ts == 0 {
			return k.info, k.breakdown("BiCGStab", "t·s", ts)
		}
		omega := ts / tt
		// One loop: x += ω z, r = s - ω t, r·r and r̂·r.
		dots, err = k.vecLoop(rname, []float64{omega, -omega}, "x[k] += a[0] * z[k]; r[k] = s[k] + a[1] * t[k]; acc[0] += r[k] * r[k]; acc[1] += r0[k] * r[k];",
			[]vecArg{{"z", z, Read}, {"s", sv, Read}, {"t", t, Read}, {"r0", r0, Read}, {"x", x, RW}, {"r", r, Write}})
		if err != nil {
			return k.info, err
		}
		k.info.Residual = math.Sqrt(dots[0])
		rhoNew := dots[1]
		// β = (ρnew/ρ)(α/ω); p = r + β (p - ω v), in one loop.
		beta := rhoNew / rho * alpha / omega
		if _, err := k.vecLoop("bicgp", []float64{-omega, beta}, "p[k] += a[0] * v[k]; p[k] = r[k] + a[1] * p[k];",
			[]vecArg{{"v", v, Read}, {"r", r, Read}, {"p", p, RW}}); err != nil {
			return k.info, err
		}
		rho = rhoNew
	}
	return k.info, k.err
}

// inverseDiagonal returns a Dat on set with dim values per element: the
// inverses of the matrix's diagonal entries, or an error naming a zero
// one. The Dat is into, when not nil, else a new one.
func (A *Mat[T]) inverseDiagonal(set *Set, dim int, into *Dat[float64]) (*Dat[float64], error) {
	err := lock(forCollective)
	if err == nil {
		err = A.s.HostAccess(false)
	}
	var vals []float64
	if err == nil {
		sp := A.sp
		vals = make([]float64, sp.pat.NRows*dim)
		bs := dim * dim
		for r := 0; r < sp.pat.NRows && err == nil; r++ {
			k := int(sp.pat.Find(int32(r), int32(r)))
			for a := 0; a < dim; a++ {
				d := float64(A.data[k*bs+a*dim+a])
				if d == 0 {
					err = fmt.Errorf("op2: Solve: %s has a zero diagonal entry in scalar row %d (row element %d, component %d); the Jacobi preconditioner needs none (use Precond \"none\")", A.s.Matrix, r*dim+a, r, a)
					break
				}
				vals[r*dim+a] = 1 / d
			}
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
