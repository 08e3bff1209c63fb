package poisson

import (
	"fmt"
	"math"
)

// The 3-D problem: −Δu = f on a tetrahedral mesh with P1 elements and
// Dirichlet values u = g on the boundary, applied as in 2-D: the element
// kernels assemble the whole operator, and applyBoundary
// (op2.Mat.ZeroRowsColumns) eliminates the boundary symmetrically,
// lifting the right-hand side. SolveMesh3 solves it on a mesh declared by
// package mesh/unstructured.

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

// tetKernels: the element matrix and load without any boundary
// treatment, the boundary values, the L2 error by the 4-point rule
// (exact for quadratics), and the largest nodal error's reduction.
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

void tet_maxval(double *m) { (void)m; }
`

// tetSource is the C source of the 3-D kernels of problem p, among them
//
//	void tet_stiffness(const double *x[4], double *K);
//
// (the coordinates of a tetrahedron's four nodes, and the 4×4 element
// matrix, row-major, zeroed by the caller).
func tetSource(p Problem3) string {
	return fmt.Sprintf("#define FEXPR %s\n#define UEXPR %s\n%s", p.F, p.U, tetKernels)
}
