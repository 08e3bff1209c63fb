// Package solver holds the linear solvers under op2.Solver: GoOP2's own
// preconditioned Krylov methods (conjugate gradients and BiCGStab, as
// PETSc's KSPCG and KSPBCGS), written over the vector operations of one
// solve (Ops), which the API runs as loops on its runtime; and the glue
// between a matrix's block pattern and PETSc's KSP (petsc.go).
//
// The API checks the options and the arguments, takes the lock and
// tells the automatic checkpoints what the host reads; the code here
// computes, and its errors are the API's (Ops.Err makes them).
package solver

import (
	"fmt"
	"math"
	"regexp"
	"time"

	"github.com/goop2/op2/internal/petsc"
)

// Options are a native solve's settings, checked and defaulted by
// op2.NewSolver.
type Options struct {
	Method  string // "cg" or "bicgstab"
	Precond string // "jacobi" or "none"
	// RTol and ATol are the relative and absolute tolerances (see
	// op2.SolverOptions).
	RTol, ATol          float64
	MaxIts              int
	Norm                petsc.NormType // never petsc.NormDefault: the API chose
	InitialGuessNonzero bool
}

// Info says how a solve ended: op2.SolveInfo's fields.
type Info struct {
	Iterations int
	Residual   float64
	Norm       petsc.NormType
	Converged  bool
	Reason     string
	// Method and Precond are Options' (with PETSc, its type names).
	Method, Precond string
	// Setup is the time a PETSc solve spent setting up (zero for the
	// native methods).
	Setup time.Duration
}

// Access is how a loop uses a vector.
type Access int

// The accesses of a Vector argument.
const (
	Read Access = iota
	Write
	RW
)

// Kind is what an argument of a vector loop passes.
type Kind int

// The kinds of Arg.
const (
	// Vector is Arg.V, with access Arg.Acc.
	Vector Kind = iota
	// Coefs are the loop's coefficients (a Global of 2, read): the
	// coefs of Ops.Loop, set before the loop.
	Coefs
	// Diag is the inverse diagonal (read).
	Diag
	// Dot is one sum (a Global of 1, incremented), zeroed before the
	// loop and returned after it.
	Dot
	// Sums are two sums (a Global of 2, incremented), zeroed before the
	// loop and returned after it.
	Sums
)

// Arg is an argument of a vector loop.
type Arg[V comparable] struct {
	Kind Kind
	V    V
	Acc  Access
}

// Vec is a vector argument of a fused loop with its name in the body.
type Vec[V comparable] struct {
	Name string
	V    V
	Acc  Access
}

// Ops are what one solve on one set and dim needs of the caller, which
// runs its vector operations as loops; V names a vector.
type Ops[V comparable] interface {
	// Vec returns a work vector, zeroed.
	Vec() (V, error)
	// Zero sets x to zero.
	Zero(x V) error
	// Mult sets y = A x.
	Mult(x, y V) error
	// Loop runs the loop whose kernel is name, with parameters params,
	// doing body for every component k of an element, on args in
	// order: the coefficients are set to coefs first (when args has
	// Coefs), and the sums zeroed; it returns the sums (of Dot or Sums,
	// nil without). Each name has one parameter list and body.
	Loop(name, params, body string, coefs []float64, args []Arg[V]) ([]float64, error)
	// Describe names a vector in errors.
	Describe(v V) string
	// Err makes err an error as the API returns it ("op2: " before
	// the message).
	Err(err error) error
}

// Solve solves A x = b, A the matrix named matrix (in errors), from
// zero or (with InitialGuessNonzero) from x's values, by opts.Method
// with opts.Precond (with "jacobi", loops pass the inverse diagonal as
// their Diag argument).
func Solve[V comparable](ops Ops[V], opts Options, matrix string, x, b V) (Info, error) {
	k := &krylov[V]{ops: ops, opts: opts, matrix: matrix, jacobi: opts.Precond == "jacobi"}
	k.info.Method, k.info.Precond, k.info.Norm = opts.Method, opts.Precond, opts.Norm
	if opts.Method == "bicgstab" {
		return k.bicgstab(x, b)
	}
	return k.cg(x, b)
}

// krylov is one solve.
type krylov[V comparable] struct {
	ops    Ops[V]
	opts   Options
	matrix string // A, in errors
	jacobi bool   // preconditioned by the inverse diagonal
	info   Info
	err    error   // why more ended the solve, if it failed
	bnorm  float64 // ‖b‖
	tol    float64
	r0     float64    // the tolerance's reference (setTolerance), PETSc's rnorm0
	args   []Arg[V]   // the loop's arguments, reused
	coefs  [2]float64 // the loop's coefficients, reused
}

// work makes a work vector for each of vs.
func (k *krylov[V]) work(vs ...*V) error {
	for _, v := range vs {
		var err error
		if *v, err = k.ops.Vec(); err != nil {
			return err
		}
	}
	return nil
}

// preRE finds vecLoop's PRE(z, s).
var preRE = regexp.MustCompile(`PRE\((\w+), (\w+)\)`)

// vecLoop runs one loop over the solve's set doing body for every
// value k of each element: coefs are a[0], a[1] (at most 2), and the
// body may add into acc[0] and acc[1], whose sums it returns. Fused
// loops compute each value as the separate operations (axpy, combine,
// inner, precondition) compute it, with sums in the same order, so the
// results are theirs. In body, PRE(z, s) stands for "z[k] = d[k] *
// s[k];" with the preconditioner and for nothing without (then the
// caller passes s as z). A vector among args twice is passed once, its
// second name an alias of the first. Each name must have one body (the
// caller keeps the kernels by name).
func (k *krylov[V]) vecLoop(name string, coefs []float64, body string, args []Vec[V]) ([]float64, error) {
	params := "const double *a"
	loopArgs := append(k.args[:0], Arg[V]{Kind: Coefs})
	seen := map[V]string{}
	alias := ""
	for _, v := range args {
		c := ""
		if v.Acc == Read {
			c = "const "
		}
		if first, ok := seen[v.V]; ok { // z is s: one argument, two names
			alias += fmt.Sprintf("%sdouble *const %s = %s; (void)%s; ", c, v.Name, first, v.Name)
			continue
		}
		seen[v.V] = v.Name
		params += fmt.Sprintf(", %sdouble *%s", c, v.Name)
		loopArgs = append(loopArgs, Arg[V]{Kind: Vector, V: v.V, Acc: v.Acc})
	}
	body = alias + body
	if preRE.MatchString(body) {
		pre := ""
		if k.jacobi {
			pre = "$1[k] = d[k] * $2[k];"
			params += ", const double *d"
			loopArgs = append(loopArgs, Arg[V]{Kind: Diag})
			name += "j"
		}
		body = preRE.ReplaceAllString(body, pre)
	}
	params += ", double *acc"
	k.args = append(loopArgs, Arg[V]{Kind: Sums})
	n := copy(k.coefs[:], coefs)
	return k.ops.Loop(name, params, body, k.coefs[:n], k.args)
}

// inner returns u·v.
func (k *krylov[V]) inner(u, v V) (float64, error) {
	k.args = append(k.args[:0], Arg[V]{Kind: Vector, V: u, Acc: Read}, Arg[V]{Kind: Vector, V: v, Acc: Read}, Arg[V]{Kind: Dot})
	s, err := k.ops.Loop("dot", "const double *x, const double *y, double *s", "*s += x[k] * y[k];", nil, k.args)
	if err != nil {
		return 0, err
	}
	return s[0], nil
}

// combine sets z = x + a y (z may be y but not x).
func (k *krylov[V]) combine(x V, a float64, y, z V) error {
	k.coefs[0] = a
	var err error
	if z == y {
		k.args = append(k.args[:0], Arg[V]{Kind: Coefs}, Arg[V]{Kind: Vector, V: x, Acc: Read}, Arg[V]{Kind: Vector, V: y, Acc: RW})
		_, err = k.ops.Loop("xpay", "const double *a, const double *x, double *y", "y[k] = x[k] + a[0] * y[k];", k.coefs[:1], k.args)
	} else {
		k.args = append(k.args[:0], Arg[V]{Kind: Coefs}, Arg[V]{Kind: Vector, V: x, Acc: Read}, Arg[V]{Kind: Vector, V: y, Acc: Read}, Arg[V]{Kind: Vector, V: z, Acc: Write})
		_, err = k.ops.Loop("lin", "const double *a, const double *x, const double *y, double *z", "z[k] = x[k] + a[0] * y[k];", k.coefs[:1], k.args)
	}
	return err
}

// precondition sets z = M⁻¹ r.
func (k *krylov[V]) precondition(r, z V) error {
	var err error
	if !k.jacobi {
		k.args = append(k.args[:0], Arg[V]{Kind: Vector, V: r, Acc: Read}, Arg[V]{Kind: Vector, V: z, Acc: Write})
		_, err = k.ops.Loop("copy", "const double *r, double *z", "z[k] = r[k];", nil, k.args)
	} else {
		k.args = append(k.args[:0], Arg[V]{Kind: Diag}, Arg[V]{Kind: Vector, V: r, Acc: Read}, Arg[V]{Kind: Vector, V: z, Acc: Write})
		_, err = k.ops.Loop("mul", "const double *d, const double *r, double *z", "z[k] = d[k] * r[k];", nil, k.args)
	}
	return err
}

// bnorms returns ‖B b‖² and b·B b, in one loop.
func (k *krylov[V]) bnorms(b V) (bb, bBb float64, err error) {
	k.args = append(k.args[:0], Arg[V]{Kind: Diag}, Arg[V]{Kind: Vector, V: b, Acc: Read}, Arg[V]{Kind: Sums})
	s, err := k.ops.Loop("bnorms", "const double *d, const double *b, double *acc",
		"const double z = d[k] * b[k]; acc[0] += z * z; acc[1] += b[k] * z;", nil, k.args)
	if err != nil {
		return 0, 0, err
	}
	return s[0], s[1], nil
}

// begin sets r = b - A x (q is work space) or, without
// InitialGuessNonzero, x = 0 and r = b, and reports whether the solve is
// over before the first iteration: b = 0, whose solution is x = 0 (the
// relative tolerance would be 0, and an iteration from another x would
// only stop when the residual underflows). A NaN or infinity in b, or
// in the first residual (from the matrix or x), is an error.
func (k *krylov[V]) begin(x, b, r, q V) (done bool, err error) {
	bb, err := k.inner(b, b)
	if err != nil {
		return false, err
	}
	if !isFinite(bb) {
		return false, k.ops.Err(fmt.Errorf("Solve: the right-hand side %s has ‖b‖² = %g: it holds a NaN or infinity, or values too large to square", k.ops.Describe(b), bb))
	}
	k.bnorm = math.Sqrt(bb)
	if bb == 0 {
		err := k.ops.Zero(x)
		k.info.Residual, k.info.Converged, k.info.Reason = 0, true, "b is zero, so x is zero"
		return true, err
	}
	if !k.opts.InitialGuessNonzero {
		if err := k.ops.Zero(x); err != nil {
			return false, err
		}
		return false, k.combine(b, 0, b, r) // r = b
	}
	if err := k.ops.Mult(x, q); err != nil {
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
		return false, k.ops.Err(fmt.Errorf("Solve: the first residual b - A x has ‖r‖² = %g: %s or the starting %s holds a NaN or infinity", rr, k.matrix, k.ops.Describe(x)))
	}
	return false, nil
}

// setTolerance sets info.Residual to r0, the first residual's norm in
// info.Norm, and the tolerance as PETSc's KSPConvergedDefault does:
// RTol times r0 from a zero initial guess; from a nonzero one, RTol
// times b's norm in the same norm (‖b‖ when right is set: the
// unpreconditioned norm, or BiCGStab preconditioned on the right), or
// r0 when that is 0; and ATol if larger.
func (k *krylov[V]) setTolerance(r0 float64, b V, right bool) error {
	k.info.Residual = r0
	ref := r0
	if k.opts.InitialGuessNonzero {
		snorm := k.bnorm
		if !right && k.jacobi && k.info.Norm != petsc.NormUnpreconditioned {
			bb, bBb, err := k.bnorms(b)
			if err != nil {
				return err
			}
			if k.info.Norm == petsc.NormNatural {
				snorm = math.Sqrt(math.Abs(bBb))
			} else {
				snorm = math.Sqrt(bb)
			}
		}
		if snorm != 0 {
			ref = snorm
		}
	}
	k.tol = max(k.opts.RTol*ref, k.opts.ATol)
	k.r0 = ref // PETSc's rnorm0: the divergence test's reference too
	return nil
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// DivergenceTolerance is how many times the tolerance's reference (the
// first residual's norm; from a nonzero initial guess b's, see
// setTolerance) a residual may reach before the solve stops as diverged:
// PETSc's default (KSPSetTolerances' dtol), with which
// KSPConvergedDefault gives KSP_DIVERGED_DTOL.
const DivergenceTolerance = 1e5

// more says whether to iterate again, setting the end of info otherwise;
// a residual that is a NaN or infinity ends the solve with an error
// (k.err).
func (k *krylov[V]) more() bool {
	if !isFinite(k.info.Residual) {
		k.err = k.ops.Err(fmt.Errorf("Solve: %s diverged: the residual is %g at iteration %d (%s)", k.info.Method, k.info.Residual, k.info.Iterations, k.matrix))
		k.info.Reason = "the residual is not finite"
		return false
	}
	if k.info.Residual <= k.tol {
		k.info.Converged = true
		k.info.Reason = fmt.Sprintf("%s residual norm %g at most the tolerance %g", k.info.Norm, k.info.Residual, k.tol)
		return false
	}
	if k.r0 > 0 && k.info.Residual >= DivergenceTolerance*k.r0 {
		k.err = k.ops.Err(fmt.Errorf("Solve: %s diverged: the %s residual norm %g at iteration %d is at least %g times the reference %g (the first residual's, or from a nonzero guess b's), as PETSc's DIVERGED_DTOL (is the matrix singular, or one the method does not suit?) (%s)",
			k.info.Method, k.info.Norm, k.info.Residual, k.info.Iterations, DivergenceTolerance, k.r0, k.matrix))
		k.info.Reason = fmt.Sprintf("the residual grew past %g times the reference", DivergenceTolerance)
		return false
	}
	if k.info.Iterations >= k.opts.MaxIts {
		k.info.Reason = fmt.Sprintf("%d iterations (MaxIts) without reaching the tolerance %g (%s residual norm %g)", k.info.Iterations, k.tol, k.info.Norm, k.info.Residual)
		return false
	}
	return true
}

func (k *krylov[V]) breakdown(method, what string, v float64) error {
	return k.ops.Err(fmt.Errorf("Solve: %s broke down at iteration %d: %s = %g (%s)", method, k.info.Iterations, what, v, k.matrix))
}
