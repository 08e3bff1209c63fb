package op2

import (
	"errors"
	"fmt"
	"math"
)

// SolverOptions configure a Solver. The zero value is conjugate
// gradients with a Jacobi preconditioner, a relative tolerance of 1e-8
// and at most 10 000 iterations.
type SolverOptions struct {
	// Method is the Krylov method: "cg" (conjugate gradients, for
	// symmetric positive definite matrices; the default).
	Method string
	// Precond is the preconditioner: "jacobi" (the inverse of the
	// diagonal; the default) or "none".
	Precond string
	// RTol and ATol stop the iteration when the residual's norm is at
	// most max(RTol × ‖b‖, ATol) (defaults 1e-8 and 0).
	RTol, ATol float64
	// MaxIts bounds the iterations (default 10 000).
	MaxIts int
	// Runtime runs the solver's vector loops (nil: the default
	// runtime), so they run on its backend.
	Runtime *Runtime
}

// SolveInfo says how a solve ended.
type SolveInfo struct {
	Iterations int     // iterations made
	Residual   float64 // the residual's 2-norm at the end
	Converged  bool    // the tolerance was met
	Reason     string  // why it stopped, in words
}

// Solver solves linear systems A x = b with a matrix assembled by loops
// (PyOP2's Solver), by a preconditioned Krylov method whose vector
// operations (products of vectors, updates) are GoOP2 loops on the
// solver's runtime and whose matrix products are Mat.Mult.
type Solver struct {
	opts SolverOptions
	// The loops, made once: kernels by block dim.
	kernels map[string]*Kernel
}

// NewSolver checks opts and returns a solver.
func NewSolver(opts SolverOptions) (*Solver, error) {
	if opts.Method == "" {
		opts.Method = "cg"
	}
	if opts.Precond == "" {
		opts.Precond = "jacobi"
	}
	if opts.RTol == 0 {
		opts.RTol = 1e-8
	}
	if opts.MaxIts == 0 {
		opts.MaxIts = 10000
	}
	switch {
	case opts.Method != "cg":
		return nil, fmt.Errorf("op2: NewSolver: method %q; the built-in solver has \"cg\" (conjugate gradients)", opts.Method)
	case opts.Precond != "jacobi" && opts.Precond != "none":
		return nil, fmt.Errorf("op2: NewSolver: preconditioner %q; the built-in solver has \"jacobi\" and \"none\"", opts.Precond)
	case opts.RTol < 0 || opts.ATol < 0 || math.IsNaN(opts.RTol) || math.IsNaN(opts.ATol):
		return nil, fmt.Errorf("op2: NewSolver: tolerances %g (relative) and %g (absolute) must be at least 0", opts.RTol, opts.ATol)
	case opts.MaxIts < 0:
		return nil, fmt.Errorf("op2: NewSolver: at most %d iterations", opts.MaxIts)
	}
	if opts.Runtime == nil {
		opts.Runtime = rt
	}
	return &Solver{opts: opts, kernels: map[string]*Kernel{}}, nil
}

// kernel returns the vector kernel name for dat dim dim, made the first
// time: body is the loop over one element's dim values, k its index.
func (s *Solver) kernel(name, params, body string, dim int) *Kernel {
	key := fmt.Sprintf("%s/%d", name, dim)
	if k, ok := s.kernels[key]; ok {
		return k
	}
	fn := fmt.Sprintf("op2solver_%s", name)
	k := NewKernel(fmt.Sprintf("void %s(%s) {\n  for (int k = 0; k < %d; k++) { %s }\n}\n", fn, params, dim, body), fn)
	s.kernels[key] = k
	return k
}

// Solve solves A x = b, starting from x's values, and leaves the solution
// in x. A must be square (rows and columns on one set with one dim), x
// and b Dats on that set with that dim. An iteration that breaks down
// (a zero or negative curvature, which a matrix that is not symmetric
// positive definite can give, or a zero diagonal entry with Jacobi)
// stops with an error saying so; reaching MaxIts is not an error:
// SolveInfo.Converged says whether the tolerance was met.
func (s *Solver) Solve(A *Mat[float64], x, b *Dat[float64]) (SolveInfo, error) {
	var info SolveInfo
	if A == nil || x == nil || b == nil {
		return info, errors.New("op2: Solve: the matrix, x and b must not be nil")
	}
	sp := A.sp
	if sp.rows != sp.cols || sp.rdim != sp.cdim {
		return info, fmt.Errorf("op2: Solve: %s is not square (rows and columns on one set with one dim)", A.s.Matrix)
	}
	for _, d := range []*Dat[float64]{x, b} {
		if d.s.Set != &sp.rows.c || d.s.Dim != sp.rdim {
			return info, fmt.Errorf("op2: Solve: %s must be on set %q with dim %d, as the rows of %s", d.s.Describe(), sp.rows.c.Name, sp.rdim, A.s.Matrix)
		}
	}
	if x == b {
		return info, fmt.Errorf("op2: Solve: x and b are the same %s", x.s.Describe())
	}
	r := s.opts.Runtime
	set, dim := sp.rows, sp.rdim
	tmp := func(name string) (*Dat[float64], error) { return NewDat[float64](set, dim, nil, "solver "+name) }
	var res, z, p, q, dinv *Dat[float64]
	var err error
	for _, v := range []struct {
		d    **Dat[float64]
		name string
	}{{&res, "r"}, {&z, "z"}, {&p, "p"}, {&q, "q"}} {
		if *v.d, err = tmp(v.name); err != nil {
			return info, err
		}
	}
	if s.opts.Precond == "jacobi" {
		if dinv, err = A.inverseDiagonal(set, dim); err != nil {
			return info, err
		}
	}
	scalar := func(name string) (*Global[float64], error) { return NewGlobal[float64](1, nil, "solver "+name) }
	dot, err := scalar("dot")
	if err != nil {
		return info, err
	}
	coef, err := scalar("coefficient")
	if err != nil {
		return info, err
	}
	dotK := s.kernel("dot", "const double *x, const double *y, double *s", "*s += x[k] * y[k];", dim)
	axpyK := s.kernel("axpy", "const double *a, const double *x, double *y", "y[k] += a[0] * x[k];", dim)
	xpayK := s.kernel("xpay", "const double *a, const double *x, double *y", "y[k] = x[k] + a[0] * y[k];", dim)
	subK := s.kernel("sub", "const double *b, const double *ax, double *r", "r[k] = b[k] - ax[k];", dim)
	mulK := s.kernel("mul", "const double *d, const double *r, double *z", "z[k] = d[k] * r[k];", dim)
	copyK := s.kernel("copy", "const double *r, double *z", "z[k] = r[k];", dim)
	inner := func(u, v *Dat[float64]) (float64, error) {
		dot.SetValue(0)
		if err := r.ParLoop(dotK, set, u.Arg(Read), v.Arg(Read), dot.Arg(Inc)); err != nil {
			return 0, err
		}
		return dot.Value(), nil
	}
	update := func(k *Kernel, a float64, u, v *Dat[float64]) error {
		coef.SetValue(a)
		return r.ParLoop(k, set, coef.Arg(Read), u.Arg(Read), v.Arg(RW))
	}
	precondition := func() error { // z = M⁻¹ r
		if dinv == nil {
			return r.ParLoop(copyK, set, res.Arg(Read), z.Arg(Write))
		}
		return r.ParLoop(mulK, set, dinv.Arg(Read), res.Arg(Read), z.Arg(Write))
	}

	// r = b - A x; z = M⁻¹ r; p = z.
	if err := A.Mult(x, q); err != nil {
		return info, err
	}
	if err := r.ParLoop(subK, set, b.Arg(Read), q.Arg(Read), res.Arg(Write)); err != nil {
		return info, err
	}
	bb, err := inner(b, b)
	if err != nil {
		return info, err
	}
	tol := max(s.opts.RTol*math.Sqrt(bb), s.opts.ATol)
	rr, err := inner(res, res)
	if err != nil {
		return info, err
	}
	info.Residual = math.Sqrt(rr)
	if err := precondition(); err != nil {
		return info, err
	}
	if err := r.ParLoop(copyK, set, z.Arg(Read), p.Arg(Write)); err != nil {
		return info, err
	}
	rz, err := inner(res, z)
	if err != nil {
		return info, err
	}
	for info.Residual > tol {
		if info.Iterations == s.opts.MaxIts {
			info.Reason = fmt.Sprintf("%d iterations (MaxIts) without reaching the tolerance %g", info.Iterations, tol)
			return info, nil
		}
		// q = A p; α = (r·z)/(p·q); x += α p; r -= α q.
		if err := A.Mult(p, q); err != nil {
			return info, err
		}
		pq, err := inner(p, q)
		if err != nil {
			return info, err
		}
		if !(pq > 0) {
			return info, fmt.Errorf("op2: Solve: conjugate gradients broke down at iteration %d: p·Ap = %g (%s is not symmetric positive definite)", info.Iterations, pq, A.s.Matrix)
		}
		alpha := rz / pq
		if err := update(axpyK, alpha, p, x); err != nil {
			return info, err
		}
		if err := update(axpyK, -alpha, q, res); err != nil {
			return info, err
		}
		info.Iterations++
		if rr, err = inner(res, res); err != nil {
			return info, err
		}
		info.Residual = math.Sqrt(rr)
		// z = M⁻¹ r; β = (r·z)new/(r·z)old; p = z + β p.
		if err := precondition(); err != nil {
			return info, err
		}
		rzNew, err := inner(res, z)
		if err != nil {
			return info, err
		}
		if err := update(xpayK, rzNew/rz, z, p); err != nil {
			return info, err
		}
		rz = rzNew
	}
	info.Converged = true
	info.Reason = fmt.Sprintf("residual %g at most the tolerance %g", info.Residual, tol)
	return info, nil
}

// inverseDiagonal returns a Dat on set with dim values per element: the
// inverses of the matrix's diagonal entries, or an error naming a zero
// one.
func (A *Mat[T]) inverseDiagonal(set *Set, dim int) (*Dat[float64], error) {
	mu.Lock()
	err := A.s.HostAccess(false)
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
	mu.Unlock()
	if err != nil {
		return nil, err
	}
	return NewDat(set, dim, vals, "solver inverse diagonal")
}
