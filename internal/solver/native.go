package solver

import (
	"fmt"
	"sync"

	"github.com/goop2/op2/internal/core"
)

// Dat is a native solve's vector as the API has it (an op2 Dat of
// float64 values), A the API's loop argument.
type Dat[A any] interface {
	comparable
	Arg(acc core.Access) A
}

// Global is a Global of float64 values as the API has it, A the API's
// loop argument.
type Global[A any] interface {
	comparable
	Arg(acc core.Access) A
}

// API is what one native solve needs of the API beyond its objects'
// methods: V is its vector (on the matrix's row set, with the rows'
// dim), G its Global, A its loop argument and K its kernel.
type API[V Dat[A], G Global[A], A, K any] struct {
	// NewVec declares a vector with values vals (nil: zeros).
	NewVec func(vals []float64, name string) (V, error)
	// NewGlobal declares a Global of dim zeros.
	NewGlobal func(dim int, name string) (G, error)
	// NewKernel declares a kernel.
	NewKernel func(source, name string) K
	// ParLoop runs a loop over the row set on the solver's runtime.
	ParLoop func(k K, args ...A) error
	// Values returns g's values on the host, the slice itself, to change
	// when write is true, else to read before the next call. A solve is
	// collective: this, Zero and Fill run the loops recorded before them
	// (a Chain's) on every rank, as a collective call does.
	Values func(g G, write bool) ([]float64, error)
	// Zero zeroes vector v.
	Zero func(v V) error
	// Fill sets vector v's values (its owned elements') to vals.
	Fill func(v V, vals []float64) error
	// Mult sets y = A x on the solver's runtime.
	Mult func(x, y V) error
	// InverseDiagonal returns the inverses of the matrix's diagonal
	// entries (computed under the API's lock, on the host), or the row
	// element and component of a zero one (row -1: none).
	InverseDiagonal func() (vals []float64, row, comp int, err error)
	// Describe names a vector in errors.
	Describe func(v V) string
	// Err makes err an error as the API returns it (see Ops.Err).
	Err func(err error) error
}

// Native is what a solver keeps between its native solves: the loops'
// kernels, made once, by name and dim, and the work vectors, by set and
// dim, made by the first solve that needs them and reused (zeroed) by
// the next, so that the loops of every solve are the same (what
// automatic checkpoints look for) and a solve declares no data. Solves
// on one Native are one at a time. The zero value is ready to use.
type Native[V comparable, K any] struct {
	mu      sync.Mutex
	kernels map[kernelKey]K
	work    map[workKey]*work[V]
}

// kernelKey names a solver kernel: each name has one parameter list and
// body.
type kernelKey struct {
	name string
	dim  int
}

// workKey is a solve's set (the API's) and dim.
type workKey struct {
	set any
	dim int
}

// work is what the native solves on one set and dim reuse.
type work[V comparable] struct {
	vecs    []V
	dinv    V // the inverse diagonal (Jacobi), with hasDinv
	hasDinv bool
}

// SolveNative solves A x = b (see Solve), the matrix named matrix in
// errors, on set (the API's, a key) with dim values per element, with
// n's kernels and work vectors, running its operations through api: it
// declares the solve's Globals and, with opts.Precond "jacobi",
// computes the inverse diagonal first.
func SolveNative[V Dat[A], G Global[A], A, K any](n *Native[V, K], api API[V, G, A, K], set any, dim int, opts Options, matrix string, x, b V) (Info, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	key := workKey{set, dim}
	if n.work[key] == nil {
		if n.work == nil {
			n.work = map[workKey]*work[V]{}
		}
		n.work[key] = &work[V]{}
	}
	l := &loops[V, G, A, K]{n: n, api: api, dim: dim, work: n.work[key]}
	var err error
	if l.dot, err = api.NewGlobal(1, "solver dot"); err != nil {
		return Info{}, err
	}
	if l.coef, err = api.NewGlobal(2, "solver coefficients"); err != nil {
		return Info{}, err
	}
	if l.dots, err = api.NewGlobal(2, "solver dots"); err != nil {
		return Info{}, err
	}
	if opts.Precond == "jacobi" {
		if err := l.inverseDiagonal(matrix); err != nil {
			return Info{}, err
		}
		l.work.dinv, l.work.hasDinv = l.dinv, true
	}
	return Solve[V](l, opts, matrix, x, b)
}

// loops is one native solve's vector operations (Ops): loops over the
// matrix's row set through the API, using the solve's Globals and
// preconditioner.
type loops[V Dat[A], G Global[A], A, K any] struct {
	n         *Native[V, K]
	api       API[V, G, A, K]
	dim       int
	dot, coef G
	dots      G          // two products at once
	sum       [2]float64 // the sums of dot or dots, returned
	dinv      V          // the inverse diagonal (Jacobi)
	temporary int
	work      *work[V]
}

// inverseDiagonal sets the loops' inverse diagonal: the work's, its
// values computed again, or a new vector; an error names a zero entry.
func (l *loops[V, G, A, K]) inverseDiagonal(matrix string) error {
	vals, r, a, err := l.api.InverseDiagonal()
	if err == nil && r >= 0 {
		err = l.api.Err(fmt.Errorf("Solve: %s has a zero diagonal entry in scalar row %d (row element %d, component %d); the Jacobi preconditioner needs none (use Precond \"none\")", matrix, r*l.dim+a, r, a))
	}
	switch {
	case err != nil:
		return err
	case l.work.hasDinv:
		l.dinv = l.work.dinv
		return l.api.Fill(l.dinv, vals)
	}
	l.dinv, err = l.api.NewVec(vals, "solver inverse diagonal")
	return err
}

// Vec returns a work vector on the solve's set, zeroed: the next one the
// solver keeps, or a new one.
func (l *loops[V, G, A, K]) Vec() (V, error) {
	l.temporary++
	if l.temporary <= len(l.work.vecs) {
		v := l.work.vecs[l.temporary-1]
		return v, l.api.Zero(v)
	}
	v, err := l.api.NewVec(nil, fmt.Sprintf("solver vector %d", l.temporary))
	if err == nil {
		l.work.vecs = append(l.work.vecs, v)
	}
	return v, err
}

// Zero sets x to zero.
func (l *loops[V, G, A, K]) Zero(x V) error { return l.api.Zero(x) }

// Mult sets y = A x.
func (l *loops[V, G, A, K]) Mult(x, y V) error { return l.api.Mult(x, y) }

// Describe names v in errors.
func (l *loops[V, G, A, K]) Describe(v V) string { return l.api.Describe(v) }

// Err makes the solve's errors the API's.
func (l *loops[V, G, A, K]) Err(err error) error { return l.api.Err(err) }

// accessOf is the loop access of a vector argument.
func accessOf(a Access) core.Access {
	switch a {
	case Write:
		return core.Write
	case RW:
		return core.RW
	}
	return core.Read
}

// kernel returns the vector kernel name for dim values per element,
// made the first time: body is the loop over one element's dim values,
// k its index.
func (l *loops[V, G, A, K]) kernel(name, params, body string) K {
	key := kernelKey{name, l.dim}
	if k, ok := l.n.kernels[key]; ok {
		return k
	}
	fn := fmt.Sprintf("op2solver_%s", name)
	k := l.api.NewKernel(fmt.Sprintf("void %s(%s) {\n  for (int k = 0; k < %d; k++) { %s }\n}\n", fn, params, l.dim, body), fn)
	if l.n.kernels == nil {
		l.n.kernels = map[kernelKey]K{}
	}
	l.n.kernels[key] = k
	return k
}

// Loop runs a vector loop of the solve (see Ops) over the matrix's row
// set.
func (l *loops[V, G, A, K]) Loop(name, params, body string, coefs []float64, args []Arg[V]) ([]float64, error) {
	var buf [12]A
	loopArgs := buf[:0]
	var sums G
	var zero G
	for _, a := range args {
		switch a.Kind {
		case Vector:
			loopArgs = append(loopArgs, a.V.Arg(accessOf(a.Acc)))
		case Coefs:
			loopArgs = append(loopArgs, l.coef.Arg(core.Read))
			c, err := l.api.Values(l.coef, true)
			if err != nil {
				return nil, err
			}
			copy(c, coefs)
		case Diag:
			loopArgs = append(loopArgs, l.dinv.Arg(core.Read))
		case Dot, Sums:
			sums = l.dots
			if a.Kind == Dot {
				sums = l.dot
			}
			loopArgs = append(loopArgs, sums.Arg(core.Inc))
		}
	}
	if err := l.zero(sums); err != nil {
		return nil, err
	}
	if err := l.api.ParLoop(l.kernel(name, params, body), loopArgs...); err != nil || sums == zero {
		return nil, err
	}
	v, err := l.api.Values(sums, false)
	if err != nil {
		return nil, err
	}
	return l.sum[:copy(l.sum[:], v)], nil
}

// zero zeroes the sums before a loop adds into them.
func (l *loops[V, G, A, K]) zero(sums G) error {
	var none G
	if sums == none {
		return nil
	}
	d, err := l.api.Values(sums, true)
	if err != nil {
		return err
	}
	clear(d)
	return nil
}
