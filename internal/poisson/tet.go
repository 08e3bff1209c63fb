package poisson

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/mesh/gmsh"
	"github.com/goop2/op2/mesh/topology"
)

// The 3-D problem: −Δu = f on a tetrahedral mesh with P1 elements and
// Dirichlet values u = g on the boundary, applied as in 2-D: the element
// kernels assemble the whole operator, and applyBoundary
// (op2.Mat.ZeroRowsColumns) eliminates the boundary symmetrically,
// lifting the right-hand side.

// Problem3 is an exact solution in 3-D with its right-hand side: u and
// f = −Δu as C expressions in x, y and z, and u in Go.
type Problem3 struct {
	Name  string
	U, F  string
	Exact func(x, y, z float64) float64
}

// Problems3 are the built-in 3-D problems: a linear solution, which P1
// elements reproduce to rounding, and a smooth one.
var Problems3 = map[string]Problem3{
	"linear": {Name: "linear", U: "(1.0 + 2.0 * x - 3.0 * y + 0.5 * z)", F: "0.0",
		Exact: func(x, y, z float64) float64 { return 1 + 2*x - 3*y + 0.5*z }},
	"sine": {Name: "sine", U: "(sin(M_PI * x) * sin(M_PI * y) * sin(M_PI * z))", F: "(3.0 * M_PI * M_PI * sin(M_PI * x) * sin(M_PI * y) * sin(M_PI * z))",
		Exact: func(x, y, z float64) float64 {
			return math.Sin(math.Pi*x) * math.Sin(math.Pi*y) * math.Sin(math.Pi*z)
		}},
}

// Mesh3 is a tetrahedral mesh.
type Mesh3 struct {
	Nodes    int
	X        []float64 // 3 per node
	Tet      []int32   // 4 per tetrahedron, positively oriented
	Boundary []int32   // 1 per node: on the boundary
}

// FromGmsh3 takes a 3-D tetrahedral mesh read by package mesh/gmsh: the
// nodes, the tetrahedra (reoriented positively), and as the boundary the
// nodes of the faces of the physical group "boundary" when the mesh has
// one, else those of every face with one tetrahedron (mesh/topology). A
// node in no tetrahedron gets a boundary value too.
func FromGmsh3(g *gmsh.Mesh) (*Mesh3, error) {
	tet, bnd, err := gmshCells(g, gmsh.Tetrahedron, topology.Tetrahedron, g.X, 3)
	if err != nil {
		return nil, err
	}
	return &Mesh3{Nodes: g.NumNodes(), X: g.X, Tet: tet, Boundary: bnd}, nil
}

// tetKernels: the element matrix and load without any boundary
// treatment, the boundary values, and the L2 error by the 4-point rule
// (exact for quadratics).
const tetKernels = `
static double op2p_u(double x, double y, double z) { return UEXPR; }
static double op2p_f(double x, double y, double z) { return FEXPR; }

/* Gradients of the barycentric functions and the volume. */
static void op2p_grad3(const double *x[4], double g[4][3], double *vol) {
  double J[3][3];
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 3; k++) J[i][k] = x[i + 1][k] - x[0][k];
  double det = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1])
             - J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0])
             + J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
  double inv = 1.0 / det;
  /* Rows of the inverse transpose: the gradients of lambda_1..3. */
  g[1][0] = (J[1][1] * J[2][2] - J[1][2] * J[2][1]) * inv;
  g[1][1] = (J[1][2] * J[2][0] - J[1][0] * J[2][2]) * inv;
  g[1][2] = (J[1][0] * J[2][1] - J[1][1] * J[2][0]) * inv;
  g[2][0] = (J[0][2] * J[2][1] - J[0][1] * J[2][2]) * inv;
  g[2][1] = (J[0][0] * J[2][2] - J[0][2] * J[2][0]) * inv;
  g[2][2] = (J[0][1] * J[2][0] - J[0][0] * J[2][1]) * inv;
  g[3][0] = (J[0][1] * J[1][2] - J[0][2] * J[1][1]) * inv;
  g[3][1] = (J[0][2] * J[1][0] - J[0][0] * J[1][2]) * inv;
  g[3][2] = (J[0][0] * J[1][1] - J[0][1] * J[1][0]) * inv;
  for (int k = 0; k < 3; k++) g[0][k] = -(g[1][k] + g[2][k] + g[3][k]);
  *vol = det / 6.0;
}

void tet_stiffness(const double *x[4], double *K) {
  double g[4][3], vol;
  op2p_grad3(x, g, &vol);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++)
      K[i * 4 + j] = vol * (g[i][0] * g[j][0] + g[i][1] * g[j][1] + g[i][2] * g[j][2]);
}

void tet_load(const double *x[4], double *rhs[4]) {
  double g[4][3], vol;
  op2p_grad3(x, g, &vol);
  double c[3];
  for (int k = 0; k < 3; k++) c[k] = 0.25 * (x[0][k] + x[1][k] + x[2][k] + x[3][k]);
  double r = op2p_f(c[0], c[1], c[2]) * vol / 4.0;
  for (int i = 0; i < 4; i++) *rhs[i] += r;
}

void tet_boundary(const double *x, const int *bnd, double *g) {
  *g = *bnd ? op2p_u(x[0], x[1], x[2]) : 0.0;
}

void tet_l2error(const double *x[4], const double *u[4], double *err) {
  double g[4][3], vol;
  op2p_grad3(x, g, &vol);
  const double a = 0.5854101966249685, b = 0.1381966011250105;
  double s = 0.0;
  for (int q = 0; q < 4; q++) {
    double l[4] = {b, b, b, b};
    l[q] = a;
    double p[3] = {0, 0, 0}, uh = 0.0;
    for (int i = 0; i < 4; i++) {
      uh += l[i] * *u[i];
      for (int k = 0; k < 3; k++) p[k] += l[i] * x[i][k];
    }
    double d = uh - op2p_u(p[0], p[1], p[2]);
    s += d * d;
  }
  *err += vol * s / 4.0;
}
`

// Solve3 assembles and solves problem p on tetrahedral mesh m, with the
// default runtime's backend and opts (zero: GoOP2's CG with Jacobi to a
// relative tolerance of 1e-10). Under MPI rank 0 declares the mesh and
// Partition spreads it. Result.U and X are the solution and coordinates
// (dim 3), Tri the tetrahedron→node map.
func Solve3(m *Mesh3, p Problem3, opts op2.SolverOptions) (*Result, error) {
	if m == nil || len(m.Tet) == 0 {
		return nil, errors.New("poisson: the mesh has no tetrahedra")
	}
	if opts.RTol == 0 {
		opts.RTol = 1e-10
	}
	src := fmt.Sprintf("#define FEXPR %s\n#define UEXPR %s\n%s", p.F, p.U, tetKernels)
	kern := func(name string) *op2.Kernel { return op2.NewKernel(src, name) }
	nn, nt := m.Nodes, len(m.Tet)/4
	distributed := op2.Ranks() > 1
	if distributed && op2.Rank() != 0 {
		nn, nt = 0, 0
	}
	nodes, err := op2.NewSet(nn, "nodes")
	if err != nil {
		return nil, err
	}
	tets, err := op2.NewSet(nt, "tetrahedra")
	if err != nil {
		return nil, err
	}
	ptet, err := op2.NewMap(tets, nodes, 4, m.Tet[:4*nt], "ptet")
	if err != nil {
		return nil, err
	}
	x, err := op2.NewDat(nodes, 3, m.X[:3*nn], "x")
	if err != nil {
		return nil, err
	}
	bnd, err := op2.NewDat(nodes, 1, m.Boundary[:nn], "boundary")
	if err != nil {
		return nil, err
	}
	if distributed {
		if _, err := op2.Partition(op2.AutoPartitioner(ptet, x)); err != nil {
			return nil, err
		}
	} else if _, err := op2.Renumber(op2.RCMOrdering(ptet)); err != nil {
		return nil, err
	}
	rhs, err := op2.NewDat[float64](nodes, 1, nil, "rhs")
	if err != nil {
		return nil, err
	}
	u, err := op2.NewDat[float64](nodes, 1, nil, "u")
	if err != nil {
		return nil, err
	}
	sp, err := op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: ptet, Col: ptet}}, "P1 tetrahedra")
	if err != nil {
		return nil, err
	}
	K, err := op2.NewMat[float64](sp, "K")
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := op2.ParLoop(kern("tet_stiffness"), tets, x.ArgVec(op2.Read, ptet), K.Arg(op2.Inc, ptet, ptet)); err != nil {
		return nil, err
	}
	matrix := time.Since(start)
	if err := op2.ParLoop(kern("tet_load"), tets, x.ArgVec(op2.Read, ptet), rhs.ArgVec(op2.Inc, ptet)); err != nil {
		return nil, err
	}
	if err := applyBoundary(kern("tet_boundary"), nodes, x, bnd, K, rhs); err != nil {
		return nil, err
	}
	assembly := time.Since(start)
	info, solverStart, solve, err := solveSystem(opts, K, u, rhs)
	if err != nil {
		return nil, err
	}
	e2, err := op2.NewGlobal[float64](1, nil, "error")
	if err != nil {
		return nil, err
	}
	if err := op2.ParLoop(kern("tet_l2error"), tets, x.ArgVec(op2.Read, ptet), u.ArgVec(op2.Read, ptet), e2.Arg(op2.Inc)); err != nil {
		return nil, err
	}
	return &Result{Info: info, L2Error: math.Sqrt(e2.Value()), U: u, X: x, Tri: ptet, Assembly: assembly, MatrixAssembly: matrix, SolverStart: solverStart, Solve: solve}, nil
}
