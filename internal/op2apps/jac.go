package op2apps

import (
	"fmt"
	"math"

	"github.com/goop2/op2"
)

// The kernels of OP2-Common's apps/c/jac1/dp (res.h, update.h and
// user_types.h's maxfun), with res's printf of its index arguments left
// out, as apps/c/jac1/longint/res.h leaves it: JacIndex records them
// instead.
const (
	jac1DPResSrc = `
inline void res(const double *A, const double *u, double *du,
                const double *beta, const int *index, const int *idx_ppedge0,
                const int *idx_ppedge1) {
  *du += (*beta) * (*A) * (*u);
  // printf("edge %d, nodes %d, %d\n", *index, *idx_ppedge0, *idx_ppedge1);
}
`
	jac1DPUpdateSrc = `
static inline double maxfun(double a, double b) {
   return a>b ? a : b;
}

inline void update(const double *r, double *du, double *u, int *index, double *u_sum,
                   double *u_max) {
  *u += *du + alpha * (*r);
  *du = 0.0f;
  *u_sum += (*u) * (*u);
  *u_max = maxfun(*u_max, *u);
}
`
	// jac1DPPrintfResSrc is jac1/dp's res.h verbatim, printing each
	// edge's index arguments.
	jac1DPPrintfResSrc = `
inline void res(const double *A, const double *u, double *du,
                const double *beta, const int *index, const int *idx_ppedge0,
                const int *idx_ppedge1) {
  *du += (*beta) * (*A) * (*u);
  printf("edge %d, nodes %d, %d\n", *index, *idx_ppedge0, *idx_ppedge1);
}
`
	// jacIndexSrc stands in for jac1/dp res.h's printf("edge %d, nodes
	// %d, %d\n", ...): it stores the three index arguments.
	jacIndexSrc = `
void record_idx(int *out, const int *index, const int *idx_ppedge0,
                const int *idx_ppedge1) {
  out[0] = *index;
  out[1] = *idx_ppedge0;
  out[2] = *idx_ppedge1;
}
`
)

// The kernels of apps/c/jac1/sp.
const (
	jac1SPResSrc = `
inline void res(const float *A, const float *u, float *du, const float *beta) {
  *du += (*beta) * (*A) * (*u);
}
`
	jac1SPUpdateSrc = `
inline void update(const float *r, float *du, float *u, float *u_sum,
                   float *u_max) {
  *u += *du + alpha * (*r);
  *du = 0.0f;
  *u_sum += (*u) * (*u);
  *u_max = MAX(*u_max, *u);
}
`
)

// The kernels of apps/c/jac2: A in double with dim 3, the node data in
// float with dims 2 and 3.
const (
	jac2ResSrc = `
inline void res(const double *A, const float *u, float *du, const float *beta) {
  *du += (float)((*beta) * (*A) * (*u));
}
`
	jac2UpdateSrc = jac1SPUpdateSrc
)

// JacVariant names one of OP2's jac applications.
type JacVariant string

// The jac applications of OP2-Common's apps/c.
const (
	Jac1DP      JacVariant = "jac1/dp"      // double, index arguments (op_arg_idx)
	Jac1SP      JacVariant = "jac1/sp"      // float
	Jac1Longint JacVariant = "jac1/longint" // double, the map declared from 64-bit values (op_decl_map_long), each rank its block
	Jac2        JacVariant = "jac2"         // A double of dim 3, node data float of dims 2 and 3
	// Jac1DPPrintf is Jac1DP with res.h as OP2 ships it: res prints
	// "edge %d, nodes %d, %d" with its index arguments, on the process's
	// standard output, for every edge in every iteration.
	Jac1DPPrintf JacVariant = "jac1/dp+printf"
)

// JacVariants lists the jac applications but Jac1DPPrintf.
var JacVariants = []JacVariant{Jac1DP, Jac1SP, Jac1Longint, Jac2}

// JacResult is what a jac application prints: per iteration u's maximum
// and rms ("u max/rms = %f %f"), and the first component of u at every
// node in the declared numbering (rank 0 only under MPI), the grid OP2
// prints with " %7.4f" and check_result checks.
type JacResult struct {
	UMax, URMS []float64
	U          []float64
	// Index holds, for Jac1DP (and Jac1DPPrintf), each edge's index arguments (the edge, its
	// two nodes: res's op_arg_idx(-1, OP_ID), op_arg_idx(0, ppedge),
	// op_arg_idx(1, ppedge)) as a loop over the edges with the same
	// arguments receives them after res in the last iteration, in the
	// declared numbering of the edges (rank 0 only under MPI): what OP2's
	// res prints.
	Index [][3]int32
}

// jacSpec is what distinguishes the jac variants.
type jacSpec struct {
	resSrc, updateSrc  string
	dimA, dimR, dimDU  int // r and u share a dim
	index, map64, mine bool
}

var jacSpecs = map[JacVariant]jacSpec{
	Jac1DP:       {jac1DPResSrc, jac1DPUpdateSrc, 1, 1, 1, true, false, false},
	Jac1DPPrintf: {jac1DPPrintfResSrc, jac1DPUpdateSrc, 1, 1, 1, true, false, false},
	Jac1SP:       {jac1SPResSrc, jac1SPUpdateSrc, 1, 1, 1, false, false, false},
	Jac1Longint:  {jac1DPResSrc, jac1DPUpdateSrc, 1, 1, 1, true, true, true},
	Jac2:         {jac2ResSrc, jac2UpdateSrc, 3, 2, 3, false, false, false},
}

// JacIters is the iteration count of OP2's jac applications (NITER).
const JacIters = 2

// RunJac runs jac application v on the (nn-1)×(nn-1) grid of nodes (OP2's
// NN; 6 in OP2's sources but for jac1/longint) for JacIters iterations. Under
// MPI it is collective: rank 0 declares the mesh (jac1/longint: each rank
// its block of nodes and their edges, as jac_mpi.cpp does) and the mesh is
// partitioned with the partitioner p makes for the nodes and their
// coordinates, p_coords (which only jac1/longint declares in OP2; by blocks
// where p is nil).
func RunJac(v JacVariant, nn int, p PartitionFunc) (*JacResult, error) {
	spec, ok := jacSpecs[v]
	if !ok {
		return nil, fmt.Errorf("op2apps: unknown jac variant %q", v)
	}
	if nn < 3 {
		return nil, fmt.Errorf("op2apps: jac needs NN at least 3, not %d", nn)
	}
	switch v {
	case Jac1SP:
		return runJac[float32, float32](spec, nn, p)
	case Jac2:
		return runJac[float64, float32](spec, nn, p)
	}
	return runJac[float64, float64](spec, nn, p)
}

// jacMesh is a rank's block of the jac problem: its nodes from first on,
// their edges, the map in the global numbering, A and r.
type jacMesh struct {
	first, nnode int64
	pp           []int64
	a, r         []float64
	coords       []float64
}

// jacBlock builds the nodes first to first+n-1 of the grid and their
// edges as OP2's jac_mpi.cpp (jac1/longint) does: nodes in order, each
// with its self edge and then an edge per interior neighbour, i fastest.
func jacBlock(nn, first, n int64) *jacMesh {
	m := &jacMesh{first: first, nnode: n, r: make([]float64, n), coords: make([]float64, 2*n)}
	for local := int64(0); local < n; local++ {
		global := first + local
		m.addNode(nn, local, global/(nn-1)+1, global%(nn-1)+1)
	}
	return m
}

// addNode adds grid node (i, j), number i-1+(j-1)*(nn-1), as row row of
// the mesh's nodes: its coordinates, its self edge (-1) and an edge
// (0.25) per interior neighbour, each boundary neighbour adding 0.25 to
// its r instead, as OP2's jac apps build them.
func (m *jacMesh) addNode(nn, row, i, j int64) {
	n := i - 1 + (j-1)*(nn-1)
	m.coords[2*row], m.coords[2*row+1] = float64(i-1), float64(j-1)
	m.pp = append(m.pp, n, n)
	m.a = append(m.a, -1)
	for pass := 0; pass < 4; pass++ {
		i2, j2 := neighbour(i, j, pass)
		if i2 == 0 || i2 == nn || j2 == 0 || j2 == nn {
			m.r[row] += 0.25
		} else {
			m.pp = append(m.pp, n, i2-1+(j2-1)*(nn-1))
			m.a = append(m.a, 0.25)
		}
	}
}

// jacWhole builds the whole grid as OP2's jac.cpp does: i outer, j inner,
// node i-1+(j-1)*(NN-1).
func jacWhole(nn int64) *jacMesh {
	nnode := (nn - 1) * (nn - 1)
	m := &jacMesh{nnode: nnode, r: make([]float64, nnode), coords: make([]float64, 2*nnode)}
	for i := int64(1); i < nn; i++ {
		for j := int64(1); j < nn; j++ {
			m.addNode(nn, i-1+(j-1)*(nn-1), i, j)
		}
	}
	return m
}

func neighbour(i, j int64, pass int) (int64, int64) {
	switch pass {
	case 0:
		return i - 1, j
	case 1:
		return i + 1, j
	case 2:
		return i, j - 1
	}
	return i, j + 1
}

// spread gives each element dim values, v[e] first and zeros after it
// (jac2 sets only the first component of each element).
func spread[T op2.Scalar](v []float64, dim int) []T {
	out := make([]T, dim*len(v))
	for e, x := range v {
		out[dim*e] = T(x)
	}
	return out
}

func runJac[TA, TU float32 | float64](spec jacSpec, nn int, p PartitionFunc) (res *JacResult, err error) {
	n := int64(nn)
	var m *jacMesh
	switch {
	case spec.mine:
		start, count := blockOf((n-1)*(n-1), int64(op2.Rank()), int64(op2.Ranks()))
		m = jacBlock(n, start, count)
	case op2.Rank() == 0:
		m = jacWhole(n)
	default:
		m = &jacMesh{}
	}
	nedge := len(m.a)
	nodes, err := op2.NewSet(int(m.nnode), "nodes")
	if err != nil {
		return nil, err
	}
	edges, err := op2.NewSet(nedge, "edges")
	if err != nil {
		return nil, err
	}
	var ppedge *op2.Map
	if spec.map64 {
		ppedge, err = op2.NewMap64(edges, nodes, 2, m.pp, "ppedge")
	} else {
		pp := make([]int32, len(m.pp))
		for k, x := range m.pp {
			pp[k] = int32(x)
		}
		ppedge, err = op2.NewMap(edges, nodes, 2, pp, "ppedge")
	}
	if err != nil {
		return nil, err
	}
	pA, err := op2.NewDat(edges, spec.dimA, spread[TA](m.a, spec.dimA), "p_A")
	if err != nil {
		return nil, err
	}
	pR, err := op2.NewDat(nodes, spec.dimR, spread[TU](m.r, spec.dimR), "p_r")
	if err != nil {
		return nil, err
	}
	pU, err := op2.NewDat[TU](nodes, spec.dimR, nil, "p_u")
	if err != nil {
		return nil, err
	}
	pDU, err := op2.NewDat[TU](nodes, spec.dimDU, nil, "p_du")
	if err != nil {
		return nil, err
	}
	coords, err := op2.NewDat(nodes, 2, m.coords, "p_coords")
	if err != nil {
		return nil, err
	}
	alpha, err := op2.NewConst(1, []TU{1}, "alpha")
	if err != nil {
		return nil, err
	}
	defer alpha.Remove()
	var ids *op2.Dat[int32]
	if spec.index {
		if ids, err = op2.NewDat[int32](edges, 3, nil, "ids"); err != nil {
			return nil, err
		}
	}
	if err := partition(nodes, coords, p); err != nil {
		return nil, err
	}
	beta, err := op2.NewGlobal(1, []TU{1}, "beta")
	if err != nil {
		return nil, err
	}
	uSum, err := op2.NewGlobal[TU](1, nil, "u_sum")
	if err != nil {
		return nil, err
	}
	uMax, err := op2.NewGlobal[TU](1, nil, "u_max")
	if err != nil {
		return nil, err
	}
	resK := op2.NewKernel(spec.resSrc, "res")
	updateK := op2.NewKernel(spec.updateSrc, "update")
	idxK := op2.NewKernel(jacIndexSrc, "record_idx")
	res = &JacResult{}
	for iter := 0; iter < JacIters; iter++ {
		args := []op2.Arg{pA.Arg(op2.Read), pU.ArgMap(op2.Read, ppedge, 1), pDU.ArgMap(op2.Inc, ppedge, 0), beta.Arg(op2.Read)}
		if spec.index {
			args = append(args, op2.ArgIdx(), ppedge.ArgIdx(0), ppedge.ArgIdx(1))
		}
		if err := op2.ParLoop(resK, edges, args...); err != nil {
			return nil, err
		}
		if spec.index {
			if err := op2.ParLoop(idxK, edges, ids.Arg(op2.Write), op2.ArgIdx(), ppedge.ArgIdx(0), ppedge.ArgIdx(1)); err != nil {
				return nil, err
			}
		}
		uSum.SetValue(0)
		uMax.SetValue(0)
		args = []op2.Arg{pR.Arg(op2.Read), pDU.Arg(op2.RW), pU.Arg(op2.Inc)}
		if spec.index {
			args = append(args, op2.ArgIdx())
		}
		args = append(args, uSum.Arg(op2.Inc), uMax.Arg(op2.Max))
		if err := op2.ParLoop(updateK, nodes, args...); err != nil {
			return nil, err
		}
		sum, err := uSum.ValueErr()
		if err != nil {
			return nil, err
		}
		max, err := uMax.ValueErr()
		if err != nil {
			return nil, err
		}
		res.UMax = append(res.UMax, float64(max))
		// OP2 divides by nnode in the precision of u_sum (jac1/dp,
		// jac1/sp, jac2) or by (double)g_nnode (jac1/longint).
		res.URMS = append(res.URMS, float64(TU(math.Sqrt(float64(sum/TU(nodes.GlobalSize()))))))
	}
	u, err := pU.Gather()
	if err != nil {
		return nil, err
	}
	for e := 0; e < len(u); e += spec.dimR {
		res.U = append(res.U, float64(u[e]))
	}
	if spec.index {
		v, err := ids.Gather()
		if err != nil {
			return nil, err
		}
		for e := 0; e+2 < len(v); e += 3 {
			res.Index = append(res.Index, [3]int32{v[e], v[e+1], v[e+2]})
		}
	}
	return res, nil
}

// blockOf is OP2's compute_local_size and compute_local_offset
// (jac_mpi.cpp): n split over ranks, the first n%ranks blocks one larger.
func blockOf(n, rank, ranks int64) (first, count int64) {
	base, rem := n/ranks, n%ranks
	if rank < rem {
		return rank * (base + 1), base + 1
	}
	return rem*(base+1) + (rank-rem)*base, base
}
