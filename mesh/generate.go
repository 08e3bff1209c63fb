package mesh

import (
	"fmt"
	"math"
	"math/cmplx"
	"sort"
	"strconv"
)

// Arithmetic note for this file: the generated coordinates must match the
// reference mesh bit for bit, so every product that feeds an addition or
// subtraction is wrapped in an explicit float64 conversion. The Go
// specification allows x*y+z to be fused into one FMA instruction (and the
// compiler does so on arm64, ppc64 and s390x); an explicit conversion forces
// the product to be rounded first and so forbids the fusion on every
// platform.

// surfacePoints is the number of points used to sample the upper half of
// the NACA0012 profile.
const surfacePoints = 100

// Generate builds the NACA0012 C-grid used by OP2's Airfoil benchmark, with
// I cells along each of the three thirds of the inner (j=1) grid line and J
// cells from the inner line to the far field. Generate(400, 600) reproduces
// OP2's new_grid.dat exactly: its coordinates are rounded to the file's six
// decimals, so the mesh equals what reading the file gives.
//
// The grid is built in a conformally transformed plane: a column of nodes
// is placed at each of 3I+1 equally spaced abscissae in [-3, 3] and spread
// equally from the transformed airfoil surface (the middle third, on a
// not-a-knot cubic spline through the transformed profile) or from the wake
// line y=0 (outer thirds) up to y=3; each point w is then mapped to w*w.
// The first I cells of the bottom row face the last I cells of the bottom
// row across the wake cut, which is made of interior edges.
//
// The resulting counts are
//
//	NNode  = (3I+1)(J+1)
//	NCell  = 3I·J
//	NEdge  = 6I·J − 2I − J   (I wake edges, 3I(J−1) "horizontal" and (3I−1)J "vertical" interior edges)
//	NBedge = 4I + 2J         (I wall edges, J + 3I + J far-field edges)
//
// Constraints: I ≥ 1 and J ≥ 1, and every count must fit in an int32
// (in particular (3I+1)(J+1) ≤ 2^31−1). The spline always uses the fixed
// 199-point transformed profile, so it imposes no constraint on I or J.
func Generate(I, J int) (*Mesh, error) {
	if err := checkGrid(I, J); err != nil {
		return nil, fmt.Errorf("mesh: Generate(%d, %d): %v", I, J, err)
	}
	ni := 3*I + 1 // nodes per grid line
	nc := 3 * I   // cells per grid row
	m := &Mesh{
		NNode:  ni * (J + 1),
		NCell:  nc * J,
		NEdge:  6*I*J - 2*I - J,
		NBedge: 4*I + 2*J,
	}
	sp := airfoilSpline()

	// Base line of the transformed plane: abscissae xb and the lower end yb
	// of each column (on the spline over the airfoil, 0 on the wake).
	xb := linspace(-3, 3, ni)
	yb := make([]float64, ni)
	for i := I + 1; i <= 2*I-1; i++ { // 1-based I+2..2I
		yb[i] = sp.eval(xb[i])
	}

	// Nodes: node (i,j) (0-based) has index i + j*ni.
	m.X = make([]float64, 2*m.NNode)
	yg := make([]float64, J+1)
	for i := 0; i < ni; i++ {
		a := xb[i]
		linspaceInto(yg, yb[i], 3)
		for j, b := range yg {
			// (a + ib)^2, written out the way the reference evaluates a
			// complex product; the 0*s and 0*r terms decide the sign of
			// zero results and must stay.
			r := float64(a*a) - float64(b*b)
			s := float64(a*b) + float64(b*a)
			n := 2 * (i + j*ni)
			m.X[n] = r - float64(0*s)
			m.X[n+1] = s + float64(0*r)
		}
	}

	node := func(i, j int) int32 { return int32(i + j*ni) } // 0-based i, j
	cell := func(i, j int) int32 { return int32(i + j*nc) } // 0-based i, j

	m.Cell = make([]int32, 0, 4*m.NCell)
	for j := 0; j < J; j++ {
		for i := 0; i < nc; i++ {
			m.Cell = append(m.Cell, node(i, j), node(i+1, j), node(i+1, j+1), node(i, j+1))
		}
	}

	m.Edge = make([]int32, 0, 2*m.NEdge)
	m.Ecell = make([]int32, 0, 2*m.NEdge)
	for j := 0; j < J; j++ {
		for i := 0; i < nc; i++ {
			if j == 0 && i < I {
				// Wake cut: the cell below is the mirror cell at the
				// other end of the bottom row.
				m.Edge = append(m.Edge, node(i, 0), node(i+1, 0))
				m.Ecell = append(m.Ecell, cell(nc-1-i, 0), cell(i, 0))
			}
			if j < J-1 {
				m.Edge = append(m.Edge, node(i, j+1), node(i+1, j+1))
				m.Ecell = append(m.Ecell, cell(i, j), cell(i, j+1))
			}
			if i < nc-1 {
				m.Edge = append(m.Edge, node(i+1, j), node(i+1, j+1))
				m.Ecell = append(m.Ecell, cell(i+1, j), cell(i, j))
			}
		}
	}

	m.Bedge = make([]int32, 0, 2*m.NBedge)
	m.Becell = make([]int32, 0, m.NBedge)
	m.Bound = make([]int32, 0, m.NBedge)
	bedge := func(n1, n2, c int32, kind int32) {
		m.Bedge = append(m.Bedge, n1, n2)
		m.Becell = append(m.Becell, c)
		m.Bound = append(m.Bound, kind)
	}
	for i := I; i < 2*I; i++ { // the airfoil: middle third of the bottom line
		bedge(node(i+1, 0), node(i, 0), cell(i, 0), BoundWall)
	}
	for j := 0; j < J; j++ { // last grid column, upwards
		bedge(node(ni-1, j+1), node(ni-1, j), cell(nc-1, j), BoundFarField)
	}
	for i := nc - 1; i >= 0; i-- { // top grid line, right to left
		bedge(node(i, J), node(i+1, J), cell(i, J-1), BoundFarField)
	}
	for j := J - 1; j >= 0; j-- { // first grid column, downwards
		bedge(node(0, j), node(0, j+1), cell(0, j), BoundFarField)
	}
	// The mesh is defined by its file: keep exactly the coordinates a
	// reader of the written file gets, so that the built-in mesh and
	// new_grid.dat give the same results.
	var buf []byte
	for i, v := range m.X {
		buf = appendFixed6(buf[:0], v)
		m.X[i], _ = strconv.ParseFloat(string(buf), 64)
	}
	return m, nil
}

// checkGrid checks the arguments of Generate and GenerateBlock.
func checkGrid(I, J int) error {
	if I < 1 || J < 1 {
		return fmt.Errorf("the grid sizes I and J must be at least 1")
	}
	// Check the sizes in float64 first so that the int products of the
	// callers cannot overflow.
	if float64(3*float64(I)+1)*float64(J+1) > maxCount ||
		6*float64(I)*float64(J) > maxCount {
		return fmt.Errorf("mesh too large for int32 indices")
	}
	return nil
}

// linspace returns n values from a to b with equal spacing, computed
// symmetrically from both ends: r[k] = a + k*d and r[n-1-k] = b - k*d with
// d = (b-a)/(n-1); for odd n the middle value is exactly 0 when a == -b and
// (a+b)/2 otherwise. For n == 1 the result is [b].
func linspace(a, b float64, n int) []float64 {
	r := make([]float64, n)
	linspaceInto(r, a, b)
	return r
}

// linspaceInto fills r like linspace(a, b, len(r)).
func linspaceInto(r []float64, a, b float64) {
	n := len(r)
	switch n {
	case 0:
		return
	case 1:
		r[0] = b
		return
	}
	r[0] = a
	r[n-1] = b
	d := (b - a) / float64(n-1)
	for k := 1; k <= n/2-1; k++ {
		kd := float64(float64(k) * d)
		r[k] = a + kd
		r[n-1-k] = b - kd
	}
	if n%2 == 1 {
		if a == -b {
			r[n/2] = 0
		} else {
			r[n/2] = (a + b) / 2
		}
	}
}

// spline is a cubic spline in piecewise polynomial form: on [x[k], x[k+1]]
// it is ((d[k]*t + c[k])*t + b[k])*t + a[k] with t = x - x[k].
type spline struct {
	x, a, b, c, d []float64
}

// eval evaluates the spline at xi, extrapolating with the first or last
// piece outside the knot range.
func (s *spline) eval(xi float64) float64 {
	n := len(s.x)
	// Last k with x[k] <= xi, clamped to [0, n-2].
	k := sort.Search(n, func(i int) bool { return s.x[i] > xi }) - 1
	k = max(0, min(k, n-2))
	dx := xi - s.x[k]
	return float64(float64(float64(float64(s.d[k]*dx)+s.c[k])*dx)+s.b[k])*dx + s.a[k]
}

// airfoilSpline returns the not-a-knot cubic spline through the NACA0012
// profile after the conformal map w -> sqrt(w - 0.0077): the upper surface
// is sampled at 100 points clustered at both ends, mapped, and mirrored
// into a 199-point contour whose abscissae increase from about -1 to 1.
func airfoilSpline() *spline {
	const np = surfacePoints
	t := linspace(0, math.Pi/2, np)
	z := make([]complex128, np)
	for k, tk := range t {
		s := math.Sin(tk)
		x := s * s
		y := naca0012(x)
		if k == np-1 {
			y = 0 // close the trailing edge exactly
		}
		z[k] = cmplx.Sqrt(complex(x-0.0077, y))
	}
	n := 2*np - 1
	X := make([]float64, n)
	Y := make([]float64, n)
	for k := 0; k < np; k++ {
		// -conj(z) of the mirrored points, then z itself.
		X[k] = -real(z[np-1-k])
		Y[k] = imag(z[np-1-k])
	}
	for k := 1; k < np; k++ {
		X[np-1+k] = real(z[k])
		Y[np-1+k] = imag(z[k])
	}
	return notAKnotSpline(X, Y)
}

// naca0012 returns the half thickness of the NACA0012 profile (with the
// scaling used by the reference generator) at chord position x in [0,1].
func naca0012(x float64) float64 {
	x2 := x * x
	x3 := float64(x*x) * x
	x4 := math.Pow(x, 4)
	p := float64(0.298222773*math.Sqrt(x)) - float64(0.127125232*x)
	p -= float64(0.357907906 * x2)
	p += float64(0.291984971 * x3)
	p -= float64(0.105174696 * x4)
	return 0.594689181 * p
}

// notAKnotSpline computes the cubic spline through (X[k], Y[k]) whose third
// derivative is continuous at X[1] and X[n-2] ("not-a-knot" end
// conditions). X must be strictly increasing and n >= 4. The second
// derivative coefficients are found from a tridiagonal system solved by
// Gaussian elimination without pivoting, in the order the reference uses.
func notAKnotSpline(X, Y []float64) *spline {
	n := len(X)
	a := Y
	h := make([]float64, n-1)
	for k := range h {
		h[k] = X[k+1] - X[k]
	}
	N := n - 2 // unknowns c[1..n-2]

	B := make([]float64, N)
	B[0] = 3 / (h[0] + h[1]) * ((a[2] - a[1]) - float64(h[1]/h[0]*(a[1]-a[0])))
	B[N-1] = 3 / (h[n-2] + h[n-3]) * (float64(h[n-3]/h[n-2]*(a[n-1]-a[n-2])) - (a[n-2] - a[n-3]))
	for m := 1; m <= n-4; m++ {
		B[m] = 3*(a[m+2]-a[m+1])/h[m+1] - 3*(a[m+1]-a[m])/h[m]
	}

	D := make([]float64, N)
	for k := range D {
		D[k] = 2 * (h[k] + h[k+1])
	}
	D[0] -= h[0]
	D[N-1] -= h[n-2]
	DL := make([]float64, N-1)
	DU := make([]float64, N-1)
	copy(DL, h[1:n-2])
	copy(DU, h[1:n-2])
	DU[0] -= h[0]
	DL[N-2] -= h[n-2]

	for i := 0; i < N-1; i++ {
		f := DL[i] / D[i]
		D[i+1] -= float64(f * DU[i])
		B[i+1] -= float64(f * B[i])
	}
	B[N-1] /= D[N-1]
	B[N-2] = (B[N-2] - float64(DU[N-2]*B[N-1])) / D[N-2]
	for i := N - 3; i >= 0; i-- {
		B[i] = (B[i] - float64(DU[i]*B[i+1]) - float64(0*B[i+2])) / D[i]
	}

	c := make([]float64, n)
	copy(c[1:], B)
	c[0] = c[1] + float64(h[0]/h[1]*(c[1]-c[2]))
	c[n-1] = c[n-2] + float64(h[n-2]/h[n-3]*(c[n-2]-c[n-3]))
	b := make([]float64, n-1)
	d := make([]float64, n-1)
	for k := 0; k < n-1; k++ {
		b[k] = (a[k+1]-a[k])/h[k] - float64(h[k]/3*(c[k+1]+2*c[k]))
		d[k] = (c[k+1] - c[k]) / (3 * h[k])
	}
	return &spline{x: X, a: a, b: b, c: c, d: d}
}
