// Package poisson solves −Δu = f on the unit square with P1 (linear)
// finite elements on an unstructured triangle mesh and Dirichlet
// boundary values u = g, with GoOP2: the stiffness matrix and the load
// vector are assembled by loops over the triangles (a matrix argument and
// vector increments through the triangle→node map) without any boundary
// treatment, the Dirichlet values are applied as users write them, with
// op2.Mat.ZeroRowsColumns (the boundary rows and columns eliminated
// symmetrically, the right-hand side lifted), and the system is solved by
// the built-in conjugate gradients. cmd/poisson runs it.
//
// Solve takes a mesh in plain slices (Square, ReadTriangle), which rank 0
// declares under MPI. SolveMesh takes a mesh declared by package
// mesh/unstructured (Load: a Gmsh .msh file, or the HDF5 file `op2mesh
// convert` writes), whose Dirichlet nodes loops over its boundary facets
// find (Dirichlet), and under MPI of which no rank holds the whole;
// SolveMesh3 solves the 3-D problem on its tetrahedra the same way.
package poisson

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/regfile"
)

// Problem is an exact solution with its right-hand side: u is the
// solution and boundary value, f = −Δu. Both are C expressions in x and y.
type Problem struct {
	Name string
	U, F string
	// Exact is u in Go, for the error.
	Exact func(x, y float64) float64
}

// Problems are the built-in problems: a linear solution (which P1
// elements reproduce to rounding on any mesh) and a smooth one (whose L2
// error falls by about 4 per halving of the mesh size).
var Problems = map[string]Problem{
	"linear": {Name: "linear", U: "(1.0 + 2.0 * x - 3.0 * y)", F: "0.0",
		Exact: func(x, y float64) float64 { return 1 + 2*x - 3*y }},
	"sine": {Name: "sine", U: "(sin(M_PI * x) * sin(M_PI * y))", F: "(2.0 * M_PI * M_PI * sin(M_PI * x) * sin(M_PI * y))",
		Exact: func(x, y float64) float64 { return math.Sin(math.Pi*x) * math.Sin(math.Pi*y) }},
}

// Mesh is a triangulation of the unit square.
type Mesh struct {
	Nodes    int
	X        []float64 // 2 per node
	Tri      []int32   // 3 per triangle, counter-clockwise
	Boundary []int32   // 1 per node: on the boundary
}

// Square triangulates the unit square with n×n squares cut into two
// triangles each; with jitter > 0 the interior nodes move randomly by up
// to jitter times the spacing (seeded), so that the mesh is unstructured
// in its geometry.
func Square(n int, jitter float64, seed uint64) (*Mesh, error) {
	if n < 1 || n > 32767 {
		return nil, fmt.Errorf("poisson: a %d×%d mesh; n must be 1 to 32767 (2n² triangles, numbered in int32)", n, n)
	}
	if !(jitter >= 0 && jitter < 0.5) { // NaN too
		return nil, fmt.Errorf("poisson: jitter %g; it must be in [0, 0.5) so that triangles keep their orientation", jitter)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	m := &Mesh{Nodes: (n + 1) * (n + 1)}
	h := 1 / float64(n)
	for j := 0; j <= n; j++ {
		for i := 0; i <= n; i++ {
			x, y := float64(i)*h, float64(j)*h
			bnd := i == 0 || j == 0 || i == n || j == n
			if !bnd && jitter > 0 {
				x += (rng.Float64()*2 - 1) * jitter * h
				y += (rng.Float64()*2 - 1) * jitter * h
			}
			m.X = append(m.X, x, y)
			b := int32(0)
			if bnd {
				b = 1
			}
			m.Boundary = append(m.Boundary, b)
		}
	}
	for j := 0; j < n; j++ {
		for i := 0; i < n; i++ {
			a := int32(j*(n+1) + i)
			b, c, d := a+1, a+int32(n)+2, a+int32(n)+1
			if (i+j)%2 == 0 {
				m.Tri = append(m.Tri, a, b, c, a, c, d)
			} else {
				m.Tri = append(m.Tri, a, b, d, b, c, d)
			}
		}
	}
	return m, nil
}

// Result is what Solve found.
type Result struct {
	Info    op2.SolveInfo
	L2Error float64 // ‖u_h − u‖ over the domain (2-D: edge-midpoint quadrature; 3-D: the 4-point rule)
	MaxNode float64 // the largest |u_h − u| at a node
	// Assembly is the time of the stiffness matrix and load loops and of
	// applying the boundary (MatrixAssembly the matrix's loop alone),
	// SolverStart NewSolver's (with PETSc, starting it), Solve the
	// Solve's (Info.Setup of it set-up).
	Assembly, MatrixAssembly, SolverStart, Solve time.Duration
	// U is the solution on the nodes, X their coordinates (2 or 3 per
	// node), Cells the cell→node map (triangles or tetrahedra) and
	// Boundary the Dirichlet flag of each node (1: u = g there).
	U, X     *op2.Dat[float64]
	Cells    *op2.Map
	Boundary *op2.Dat[int32]
}

// kernels: the element matrix and load without any boundary treatment
// (the whole operator; ZeroRowsColumns applies the boundary), the
// boundary values, and the L2 error by edge midpoints.
const kernels = `
static double op2p_u(double x, double y) { return UEXPR; }
static double op2p_f(double x, double y) { return FEXPR; }

static void op2p_grad(const double *x[3], double b[3], double c[3], double *area) {
  double det = (x[1][0] - x[0][0]) * (x[2][1] - x[0][1]) - (x[2][0] - x[0][0]) * (x[1][1] - x[0][1]);
  double inv = 1.0 / det;
  for (int i = 0; i < 3; i++) {
    int j = (i + 1) % 3, k = (i + 2) % 3;
    b[i] = (x[j][1] - x[k][1]) * inv;
    c[i] = (x[k][0] - x[j][0]) * inv;
  }
  *area = 0.5 * det;
}

void stiffness(const double *x[3], double *K) {
  double b[3], c[3], area;
  op2p_grad(x, b, c, &area);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      K[i * 3 + j] = area * (b[i] * b[j] + c[i] * c[j]);
}

void load(const double *x[3], double *rhs[3]) {
  double b[3], c[3], area;
  op2p_grad(x, b, c, &area);
  double fc = op2p_f((x[0][0] + x[1][0] + x[2][0]) / 3.0, (x[0][1] + x[1][1] + x[2][1]) / 3.0);
  for (int i = 0; i < 3; i++) *rhs[i] += fc * area / 3.0;
}

void boundary(const double *x, const int *bnd, double *g) {
  *g = *bnd ? op2p_u(x[0], x[1]) : 0.0;
}

void maxval(double *m) { (void)m; }

void l2error(const double *x[3], const double *u[3], double *err) {
  double det = (x[1][0] - x[0][0]) * (x[2][1] - x[0][1]) - (x[2][0] - x[0][0]) * (x[1][1] - x[0][1]);
  double s = 0.0;
  for (int i = 0; i < 3; i++) {
    int j = (i + 1) % 3;
    double d = 0.5 * (*u[i] + *u[j]) - op2p_u(0.5 * (x[i][0] + x[j][0]), 0.5 * (x[i][1] + x[j][1]));
    s += d * d;
  }
  *err += 0.5 * det * s / 3.0;
}
`

// Solve assembles and solves problem p on mesh m with the default
// runtime's backend and opts (zero: GoOP2's CG with Jacobi to a relative
// tolerance of 1e-10; opts.Package "petsc" solves with PETSc).
func Solve(m *Mesh, p Problem, opts op2.SolverOptions) (*Result, error) {
	return SolveWith(m, p, Options{Solver: opts})
}

// Options are how SolveWith declares and solves a problem.
type Options struct {
	// Solver configures the solver (see Solve).
	Solver op2.SolverOptions
	// Renumber reorders the mesh for locality before anything runs
	// (op2.Renumber): "rcm" (reverse Cuthill–McKee on the nodes, so that
	// the matrix is banded), "rcb" (recursive coordinate bisection of the
	// nodes) or "" (the mesh's own numbering). Distributed runs refuse
	// it: Partition orders each rank's part.
	Renumber string
}

// SolveWith is Solve with the mesh renumbered as o says.
func SolveWith(m *Mesh, p Problem, o Options) (*Result, error) {
	a, err := newAssembly(m, p, o.Renumber)
	if err != nil {
		return nil, err
	}
	return a.solve(o.Solver)
}

// solve assembles the matrix and the load, applies the boundary, solves
// with opts (a zero RTol is 1e-10) and measures the errors.
func (a *assembly) solve(opts op2.SolverOptions) (*Result, error) {
	if opts.RTol == 0 {
		opts.RTol = 1e-10
	}
	start := time.Now()
	if err := a.stiffness(); err != nil {
		return nil, err
	}
	matrix := time.Since(start)
	if err := op2.ParLoop(a.kern("load"), a.cells, a.x.ArgVec(op2.Read, a.cellNodes), a.rhs.ArgVec(op2.Inc, a.cellNodes)); err != nil {
		return nil, err
	}
	if err := applyBoundary(a.kern("boundary"), a.nodes, a.x, a.bnd, a.K, a.rhs); err != nil {
		return nil, err
	}
	assembly := time.Since(start)
	info, solverStart, solve, err := solveSystem(opts, a.K, a.u, a.rhs)
	if err != nil {
		return nil, err
	}
	e2, err := op2.NewGlobal[float64](1, nil, "error")
	if err != nil {
		return nil, err
	}
	if err := op2.ParLoop(a.kern("l2error"), a.cells, a.x.ArgVec(op2.Read, a.cellNodes), a.u.ArgVec(op2.Read, a.cellNodes), e2.Arg(op2.Inc)); err != nil {
		return nil, err
	}
	res := &Result{Info: info, L2Error: math.Sqrt(e2.Value()), U: a.u, X: a.x, Cells: a.cellNodes, Boundary: a.bnd,
		Assembly: assembly, MatrixAssembly: matrix, SolverStart: solverStart, Solve: solve}
	// The largest nodal error over every rank's nodes (collective).
	xs, us := a.x.DataRO(), a.u.DataRO()
	worst, err := op2.NewGlobal[float64](1, nil, "largest nodal error")
	if err != nil {
		return nil, err
	}
	local := 0.0
	for i := 0; i < a.nodes.Size(); i++ {
		local = max(local, math.Abs(us[i]-a.exact(xs[a.dim*i:a.dim*(i+1)])))
	}
	worst.SetValue(local)
	if err := op2.ParLoop(a.kern("maxval"), a.nodes, worst.Arg(op2.Max)); err != nil {
		return nil, err
	}
	res.MaxNode = worst.Value()
	return res, nil
}

// applyBoundary applies the Dirichlet values as users write them: the
// boundary kernel (node coordinates x, the flag bnd, the value g, which
// it sets to u on the boundary and 0 elsewhere) writes g, and
// K.ZeroRowsColumns zeroes the boundary nodes' rows and columns with 1
// on the diagonal, lifting rhs (rhs -= K[:, rows] g[rows], rhs[rows] =
// g[rows]), so that the solution takes g's values there. Every rank
// calls it.
func applyBoundary(boundary *op2.Kernel, nodes *op2.Set, x *op2.Dat[float64], bnd *op2.Dat[int32], K *op2.Mat[float64], rhs *op2.Dat[float64]) error {
	g, err := op2.NewDat[float64](nodes, 1, nil, "g")
	if err != nil {
		return err
	}
	if err := op2.ParLoop(boundary, nodes, x.Arg(op2.Read), bnd.Arg(op2.Read), g.Arg(op2.Write)); err != nil {
		return err
	}
	return K.ZeroRowsColumns(boundaryRows(bnd, nodes), 1, g, rhs)
}

// boundaryRows lists this rank's boundary nodes (bnd not 0).
func boundaryRows(bnd *op2.Dat[int32], nodes *op2.Set) []int {
	var rows []int
	for i, b := range bnd.DataRO()[:nodes.Size()] {
		if b != 0 {
			rows = append(rows, i)
		}
	}
	return rows
}

// solveSystem solves K u = rhs with a solver made with opts, and returns how
// it ended and the times of making the solver and of the solve.
func solveSystem(opts op2.SolverOptions, K *op2.Mat[float64], u, rhs *op2.Dat[float64]) (info op2.SolveInfo, start, solve time.Duration, err error) {
	t := time.Now()
	s, err := op2.NewSolver(opts)
	if err != nil {
		return info, 0, 0, err
	}
	start = time.Since(t)
	t = time.Now()
	info, err = s.Solve(K, u, rhs)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	return info, start, time.Since(t), err
}

// assembly is the problem declared to GoOP2: the mesh, its data, the
// matrix and the kernels.
type assembly struct {
	dim          int // 2: triangles, 3: tetrahedra
	nodes, cells *op2.Set
	cellNodes    *op2.Map
	x            *op2.Dat[float64]
	bnd          *op2.Dat[int32]
	rhs, u       *op2.Dat[float64]
	K            *op2.Mat[float64]
	// src holds the kernels, each named prefix + stiffness, load,
	// boundary, l2error and maxval; exact is u at a node's coordinates.
	src, prefix string
	exact       func(x []float64) float64
}

// newAssembly declares mesh m and problem p, renumbered by ordering (see
// Options.Renumber).
func newAssembly(m *Mesh, p Problem, ordering string) (*assembly, error) {
	if m == nil || len(m.Tri) == 0 {
		return nil, errors.New("poisson: the mesh has no triangles")
	}
	if err := checkOrdering(ordering); err != nil {
		return nil, err
	}
	a := &assembly{dim: 2, src: KernelSource(p), exact: func(x []float64) float64 { return p.Exact(x[0], x[1]) }}
	// Under MPI rank 0 declares the mesh and Partition spreads it.
	nn, nt := m.Nodes, len(m.Tri)/3
	distributed := op2.Ranks() > 1
	if distributed && op2.Rank() != 0 {
		nn, nt = 0, 0
	}
	var err error
	if a.nodes, err = op2.NewSet(nn, "nodes"); err != nil {
		return nil, err
	}
	if a.cells, err = op2.NewSet(nt, "triangles"); err != nil {
		return nil, err
	}
	if a.cellNodes, err = op2.NewMap(a.cells, a.nodes, 3, m.Tri[:3*nt], "ptri"); err != nil {
		return nil, err
	}
	if a.x, err = op2.NewDat(a.nodes, 2, m.X[:2*nn], "x"); err != nil {
		return nil, err
	}
	if a.bnd, err = op2.NewDat(a.nodes, 1, m.Boundary[:nn], "boundary"); err != nil {
		return nil, err
	}
	if distributed {
		if _, err := op2.Partition(op2.AutoPartitioner(a.cellNodes, a.x)); err != nil {
			return nil, err
		}
	}
	if err := renumber(ordering, a.cellNodes, a.x); err != nil {
		return nil, err
	}
	return a, a.declareSystem()
}

// checkOrdering checks a renumbering (Options.Renumber) and refuses one
// under MPI.
func checkOrdering(ordering string) error {
	switch ordering {
	case "", "rcm", "rcb":
	default:
		return fmt.Errorf("poisson: unknown renumbering %q (rcm or rcb)", ordering)
	}
	if ordering != "" && op2.Ranks() > 1 {
		return fmt.Errorf("poisson: renumbering (%s) is for one process; under MPI Partition orders each rank's part", ordering)
	}
	return nil
}

// renumber renumbers the mesh of cellNodes and x as ordering says (see
// Options.Renumber).
func renumber(ordering string, cellNodes *op2.Map, x *op2.Dat[float64]) error {
	var err error
	switch ordering {
	case "rcm":
		_, err = op2.Renumber(op2.RCMOrdering(cellNodes))
	case "rcb":
		_, err = op2.Renumber(op2.RCBOrdering(x))
	}
	return err
}

// declareSystem declares the load, the solution and the matrix on the
// declared (and partitioned or renumbered) mesh.
func (a *assembly) declareSystem() error {
	var err error
	if a.rhs, err = op2.NewDat[float64](a.nodes, 1, nil, "rhs"); err != nil {
		return err
	}
	if a.u, err = op2.NewDat[float64](a.nodes, 1, nil, "u"); err != nil {
		return err
	}
	sp, err := op2.NewSparsity(a.nodes, 1, a.nodes, 1, []op2.MapPair{{Row: a.cellNodes, Col: a.cellNodes}}, fmt.Sprintf("P1 %s", a.cells.Name()))
	if err != nil {
		return err
	}
	a.K, err = op2.NewMat[float64](sp, "K")
	return err
}

// kern is the kernel called a.prefix + name.
func (a *assembly) kern(name string) *op2.Kernel { return op2.NewKernel(a.src, a.prefix+name) }

// stiffness adds the element stiffness matrices into K.
func (a *assembly) stiffness() error {
	return op2.ParLoop(a.kern("stiffness"), a.cells, a.x.ArgVec(op2.Read, a.cellNodes), a.K.Arg(op2.Inc, a.cellNodes, a.cellNodes))
}

// KernelSource is the C source of problem p's element kernels, the
// stiffness matrix's among them:
//
//	void stiffness(const double *x[3], double *K);
//
// (the coordinates of a triangle's three nodes, and the 3×3 element
// matrix, row-major, zeroed by the caller: the whole operator, with no
// boundary treatment, which Solve applies afterwards with
// Mat.ZeroRowsColumns). op2bench compiles it into its PETSc assembly, so
// that both assemble the same element matrices.
func KernelSource(p Problem) string {
	return fmt.Sprintf("#define FEXPR %s\n#define UEXPR %s\n%s", p.F, p.U, kernels)
}

// Assembly is mesh m and problem p declared to GoOP2 with its stiffness
// matrix, for timing the matrix assembly alone (op2bench).
type Assembly struct{ a *assembly }

// NewAssembly declares mesh m and problem p on the default runtime, as
// Solve does, with the matrix zero.
func NewAssembly(m *Mesh, p Problem) (*Assembly, error) {
	a, err := newAssembly(m, p, "")
	if err != nil {
		return nil, err
	}
	return &Assembly{a}, nil
}

// Stiffness adds the element stiffness matrices into the matrix: one
// loop over the triangles with a matrix argument, on the default
// runtime's backend. The matrix is the whole operator, boundary rows
// and columns included (Solve eliminates them afterwards).
func (a *Assembly) Stiffness() error { return a.a.stiffness() }

// Matrix returns the stiffness matrix.
func (a *Assembly) Matrix() *op2.Mat[float64] { return a.a.K }

// ReadTriangle reads a mesh in the format of Shewchuk's Triangle: base.node
// (a header "n 2 attributes markers", then per node "index x y [attributes]
// [marker]") and base.ele (a header "m 3 attributes", then per triangle
// "index a b c [attributes]"), indices from 0 or 1 as the first node's
// says. A node is on the boundary when its marker is not 0; the .node
// file must have markers. Triangles are reoriented counter-clockwise.
func ReadTriangle(base string) (*Mesh, error) {
	nodeLines, err := readNumbers(base + ".node")
	if err != nil {
		return nil, err
	}
	eleLines, err := readNumbers(base + ".ele")
	if err != nil {
		return nil, err
	}
	bad := func(file string, line int, format string, a ...any) error {
		return fmt.Errorf("poisson: %s:%d: %s", file, line, fmt.Sprintf(format, a...))
	}
	nf, ef := base+".node", base+".ele"
	if len(nodeLines) == 0 || len(nodeLines[0].f) < 4 {
		return nil, fmt.Errorf("poisson: %s: no header \"nodes 2 attributes markers\"", nf)
	}
	// counts reads a header's numbers as counts: whole, from 0 to 2^31-1.
	counts := func(file string, l numberLine, names ...string) ([]int, error) {
		out := make([]int, len(names))
		for i, name := range names {
			v := l.f[i]
			if v != math.Trunc(v) || v < 0 || v > math.MaxInt32 {
				return nil, bad(file, l.line, "the header's %s is %v; it must be a whole number from 0", name, v)
			}
			out[i] = int(v)
		}
		return out, nil
	}
	h := nodeLines[0]
	hc, err := counts(nf, h, "node count", "dimension", "attribute count", "marker count")
	if err != nil {
		return nil, err
	}
	n, dim, nattr, markers := hc[0], hc[1], hc[2], hc[3]
	switch {
	case dim != 2:
		return nil, bad(nf, h.line, "dimension %d; the Poisson solver is 2-D", dim)
	case markers != 1:
		return nil, bad(nf, h.line, "no boundary markers (the header's fourth number is %d, not 1): the boundary nodes cannot be told", markers)
	case len(nodeLines)-1 < n:
		return nil, fmt.Errorf("poisson: %s: %d nodes declared, %d given", nf, n, len(nodeLines)-1)
	}
	m := &Mesh{Nodes: n}
	first := 0
	for k, l := range nodeLines[1 : n+1] {
		if len(l.f) != 4+nattr {
			return nil, bad(nf, l.line, "%d numbers; a node has index, x, y, %d attributes and a marker", len(l.f), nattr)
		}
		if k == 0 {
			first = int(l.f[0])
		}
		if int(l.f[0]) != first+k {
			return nil, bad(nf, l.line, "node index %v, want %d (nodes are numbered in order)", l.f[0], first+k)
		}
		m.X = append(m.X, l.f[1], l.f[2])
		b := int32(0)
		if l.f[3+nattr] != 0 {
			b = 1
		}
		m.Boundary = append(m.Boundary, b)
	}
	if len(eleLines) == 0 || len(eleLines[0].f) < 3 {
		return nil, fmt.Errorf("poisson: %s: no header \"triangles 3 attributes\"", ef)
	}
	eh := eleLines[0]
	ec, err := counts(ef, eh, "triangle count", "nodes per triangle", "attribute count")
	if err != nil {
		return nil, err
	}
	nt, per, eattr := ec[0], ec[1], ec[2]
	if per != 3 {
		return nil, bad(ef, eh.line, "%d nodes per triangle; the solver takes linear (3-node) triangles", per)
	}
	if len(eleLines)-1 < nt {
		return nil, fmt.Errorf("poisson: %s: %d triangles declared, %d given", ef, nt, len(eleLines)-1)
	}
	for _, l := range eleLines[1 : nt+1] {
		if len(l.f) != 4+eattr {
			return nil, bad(ef, l.line, "%d numbers; a triangle has index, 3 nodes and %d attributes", len(l.f), eattr)
		}
		var v [3]int32
		for j := range v {
			i := int(l.f[1+j]) - first
			if i < 0 || i >= n {
				return nil, bad(ef, l.line, "node %v is not one of the %d nodes", l.f[1+j], n)
			}
			v[j] = int32(i)
		}
		ax, ay := m.X[2*v[0]], m.X[2*v[0]+1]
		det := (m.X[2*v[1]]-ax)*(m.X[2*v[2]+1]-ay) - (m.X[2*v[2]]-ax)*(m.X[2*v[1]+1]-ay)
		if det == 0 {
			return nil, bad(ef, l.line, "a degenerate triangle (zero area)")
		}
		if det < 0 {
			v[1], v[2] = v[2], v[1]
		}
		m.Tri = append(m.Tri, v[0], v[1], v[2])
	}
	return m, nil
}

// WriteTriangle writes m as base.node (with boundary markers) and
// base.ele, indices from 0, in the format ReadTriangle reads; a failure
// leaves neither new file (base.node is removed when base.ele fails).
func WriteTriangle(m *Mesh, base string) error {
	var nb, eb strings.Builder
	fmt.Fprintf(&nb, "%d 2 0 1\n", m.Nodes)
	for i := 0; i < m.Nodes; i++ {
		fmt.Fprintf(&nb, "%d %s %s %d\n", i, strconv.FormatFloat(m.X[2*i], 'g', -1, 64), strconv.FormatFloat(m.X[2*i+1], 'g', -1, 64), m.Boundary[i])
	}
	fmt.Fprintf(&eb, "%d 3 0\n", len(m.Tri)/3)
	for t := 0; t < len(m.Tri)/3; t++ {
		fmt.Fprintf(&eb, "%d %d %d %d\n", t, m.Tri[3*t], m.Tri[3*t+1], m.Tri[3*t+2])
	}
	if err := regfile.WriteFile(base+".node", []byte(nb.String())); err != nil {
		return err
	}
	if err := regfile.WriteFile(base+".ele", []byte(eb.String())); err != nil {
		os.Remove(base + ".node") // half a mesh
		return err
	}
	return nil
}

// numberLine is one line of numbers and where it was.
type numberLine struct {
	line int
	f    []float64
}

// readNumbers reads the lines of numbers of a Triangle file, skipping
// blank lines and # comments.
func readNumbers(path string) ([]numberLine, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("poisson: %w", err)
	}
	var out []numberLine
	for i, text := range strings.Split(string(b), "\n") {
		if c := strings.IndexByte(text, '#'); c >= 0 {
			text = text[:c]
		}
		fields := strings.Fields(text)
		if len(fields) == 0 {
			continue
		}
		l := numberLine{line: i + 1}
		for _, f := range fields {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				return nil, fmt.Errorf("poisson: %s:%d: %q is not a number", path, i+1, f)
			}
			l.f = append(l.f, v)
		}
		out = append(out, l)
	}
	return out, nil
}
