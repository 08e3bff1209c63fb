package backendtest

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/goop2/op2"
)

// matMesh is a random mesh for matrix tests: triangles and boundary-like
// edges over nodes, each element's nodes distinct.
type matMesh struct {
	tris, edges, nodes *op2.Set
	ptri, pedge        *op2.Map
	triTab, edgeTab    []int32
	nn                 int
}

func newMatMesh(r *rand.Rand, nTri, nEdge, nn int) *matMesh {
	m := &matMesh{nn: nn}
	m.tris = must(op2.NewSet(nTri, "tris"))
	m.edges = must(op2.NewSet(nEdge, "edges"))
	m.nodes = must(op2.NewSet(nn, "nodes"))
	pick := func(n, arity int) []int32 {
		tab := make([]int32, 0, n*arity)
		for range n {
			for _, v := range r.Perm(nn)[:arity] {
				tab = append(tab, int32(v))
			}
		}
		return tab
	}
	m.triTab, m.edgeTab = pick(nTri, 3), pick(nEdge, 2)
	m.ptri = must(op2.NewMap(m.tris, m.nodes, 3, m.triTab, "ptri"))
	m.pedge = must(op2.NewMap(m.edges, m.nodes, 2, m.edgeTab, "pedge"))
	return m
}

// elemValue is entry (i, j) of element e's element matrix in the
// matrix tests: a multiple of 1/4 small enough that every sum of them is
// exact in float32 as in float64, so any assembly order gives the same
// bits.
func elemValue(e, i, j, cols int) float64 {
	return float64(e%5+1) * float64((i*cols+j)%7+1) * 0.25
}

// elemMatSource is the kernel computing elemValue for T values and an
// element matrix of rows × cols.
func elemMatSource(t string, rows, cols int) string {
	return fmt.Sprintf(`void elem_mat(const int *e, %[1]s *A) {
  for (int i = 0; i < %[2]d; i++)
    for (int j = 0; j < %[3]d; j++)
      A[i * %[3]d + j] = (%[1]s)((*e %% 5) + 1) * (%[1]s)((i * %[3]d + j) %% 7 + 1) * (%[1]s)0.25;
}`, t, rows, cols)
}

// addElements adds elemValue's element matrices of the elements of tab
// (arity nodes each) to the dense matrix want, in blocks of dim × dim,
// times scale.
func addElements(want [][]float64, tab []int32, arity, dim int, scale float64) {
	n := arity * dim
	for e := 0; e < len(tab)/arity; e++ {
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				r := int(tab[e*arity+i/dim])*dim + i%dim
				c := int(tab[e*arity+j/dim])*dim + j%dim
				want[r][c] += scale * elemValue(e, i, j, n)
			}
		}
	}
}

func denseZeros(n int) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, n)
	}
	return out
}

// testMatAssembly assembles, on the backend under test, matrices of
// float64 and float32 values with scalar and 2×2 blocks from two map
// pairs (triangles and edges), twice (INC adds), and compares them with
// the sums made in Go: bit-identical, as every value is exact. Then
// Mult, Zero and assembling again.
func testMatAssembly(t *testing.T) {
	for _, dim := range []int{1, 2} {
		t.Run(fmt.Sprintf("float64 dim %d", dim), func(t *testing.T) { matAssembly[float64](t, dim, "double") })
		t.Run(fmt.Sprintf("float32 dim %d", dim), func(t *testing.T) { matAssembly[float32](t, dim, "float") })
	}
}

func matAssembly[T float32 | float64](t *testing.T, dim int, ctype string) {
	r := rand.New(rand.NewPCG(uint64(dim), 77))
	m := newMatMesh(r, 1500, 300, 200)
	sp := must(op2.NewSparsity(m.nodes, dim, m.nodes, dim, []op2.MapPair{{Row: m.ptri, Col: m.ptri}, {Row: m.pedge, Col: m.pedge}}, "sp"))
	A := must(op2.NewMat[T](sp, "A"))
	kt := op2.NewKernel(elemMatSource(ctype, 3*dim, 3*dim), "elem_mat")
	ke := op2.NewKernel(elemMatSource(ctype, 2*dim, 2*dim), "elem_mat")
	assemble := func() {
		check(t, op2.ParLoop(kt, m.tris, op2.ArgIdx(), A.Arg(op2.Inc, m.ptri, m.ptri)))
		check(t, op2.ParLoop(ke, m.edges, op2.ArgIdx(), A.Arg(op2.Inc, m.pedge, m.pedge)))
	}
	want := denseZeros(m.nn * dim)
	addElements(want, m.triTab, 3, dim, 1)
	addElements(want, m.edgeTab, 2, dim, 1)
	compare := func(what string, scale float64) [][]T {
		t.Helper()
		got := must(A.Dense())
		for i := range want {
			for j := range want[i] {
				if float64(got[i][j]) != scale*want[i][j] {
					t.Fatalf("%s: A[%d][%d] = %v, want %v", what, i, j, got[i][j], scale*want[i][j])
				}
			}
		}
		return got
	}
	assemble()
	assemble()
	got := compare("assembled twice", 2)
	// y = A x: each row's sum in the order of its columns.
	x := must(op2.NewDat[T](m.nodes, dim, nil, "x"))
	y := must(op2.NewDat[T](m.nodes, dim, nil, "y"))
	xs := x.Data()
	for i := range xs {
		xs[i] = T(i%5) - 2
	}
	check(t, A.Mult(x, y))
	for i, row := range got {
		var s T
		for j, v := range row {
			if v != 0 {
				s += v * xs[j]
			}
		}
		if y.DataRO()[i] != s {
			t.Fatalf("(A x)[%d] = %v, want %v", i, y.DataRO()[i], s)
		}
	}
	check(t, A.Zero())
	assemble()
	compare("zeroed and assembled", 1)
}

// testMatWrite stores element matrices with WRITE: each entry's value
// depends only on its row and column node, so whichever element writes
// an entry last, the result is known.
func testMatWrite(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	m := newMatMesh(r, 2000, 1, 300)
	sp := must(op2.NewSparsity(m.nodes, 1, m.nodes, 1, []op2.MapPair{{Row: m.ptri, Col: m.ptri}}, "sp"))
	A := must(op2.NewMat[float64](sp, "A"))
	ids := must(op2.NewDat(m.nodes, 1, iota32[int32](m.nn), "ids"))
	k := op2.NewKernel(`void put(const int **id, double *A) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      A[i * 3 + j] = id[i][0] * 1000.0 + id[j][0] + 0.5;
}`, "put")
	check(t, op2.ParLoop(k, m.tris, ids.ArgVec(op2.Read, m.ptri), A.Arg(op2.Write, m.ptri, m.ptri)))
	rowptr, colidx, vals := must3(A.Values())
	for i := 0; i+1 < len(rowptr); i++ {
		for k := rowptr[i]; k < rowptr[i+1]; k++ {
			j := colidx[k]
			want := float64(i)*1000 + float64(j) + 0.5
			if i == int(j) && vals[k] == 0 {
				continue // a diagonal entry no element reaches stays zero
			}
			if vals[k] != want {
				t.Fatalf("A[%d][%d] = %v, want %v", i, j, vals[k], want)
			}
		}
	}
}

func must3[A, B, C any](a A, b B, c C, err error) (A, B, C) {
	if err != nil {
		panic(err)
	}
	return a, b, c
}
