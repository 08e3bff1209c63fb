package op2_test

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
)

// bcResult is what bcScenario gathers on rank 0.
type bcResult struct {
	Before, After [][]float64 // the matrix, declared numbering
	B0, B, X      []float64
	Rows          []int // the Dirichlet nodes, declared numbers
}

// bcScenario assembles a nonsymmetric matrix of dim 2 on a random graph
// (rank 0 declares it all; partitioned with partition when several
// ranks), with x holding prescribed values and b a right-hand side, and
// applies Dirichlet conditions at every seventh node with
// ZeroRowsColumns.
func bcScenario(t *testing.T) bcResult {
	const nn, dim = 60, 2
	rng := rand.New(rand.NewPCG(5, 6))
	var tab []int32
	for i := 1; i < nn; i++ {
		tab = append(tab, int32(rng.IntN(i)), int32(i))
	}
	n := func(total int) int {
		if op2.Rank() == 0 {
			return total
		}
		return 0
	}
	xs, bs := make([]float64, nn*dim), make([]float64, nn*dim)
	for i := range xs {
		xs[i], bs[i] = float64(rng.IntN(9))-4, float64(rng.IntN(17))-8
	}
	nodes := must(op2.NewSet(n(nn), "nodes"))
	edges := must(op2.NewSet(n(len(tab)/2), "edges"))
	pedge := must(op2.NewMap(edges, nodes, 2, tab[:2*n(len(tab)/2)], "pedge"))
	ident := must(op2.NewMap(nodes, nodes, 1, iota32[int32](n(nn)), "ident"))
	x := must(op2.NewDat(nodes, dim, xs[:dim*n(nn)], "x"))
	b := must(op2.NewDat(nodes, dim, bs[:dim*n(nn)], "b"))
	if op2.Ranks() > 1 {
		owner := make([]int32, n(nn))
		for i := range owner {
			owner[i] = int32(i/3) % int32(op2.Ranks())
		}
		must(op2.Partition(op2.OwnerPartitioner(must(op2.NewDat(nodes, 1, owner, "owner")))))
	}
	sp := must(op2.NewSparsity(nodes, dim, nodes, dim, []op2.MapPair{{Row: pedge, Col: pedge}, {Row: ident, Col: ident}}, "sp"))
	A := must(op2.NewMat[float64](sp, "A"))
	edge := op2.NewKernel(`
void bc_edge(double *A) {
  for (int a = 0; a < 2; a++) {
    A[a * 4 + a] = 1; A[a * 4 + 2 + a] = -0.5; A[a * 4 + 2 + 1 - a] = 0.25;
    A[(2 + a) * 4 + a] = -1.5; A[(2 + a) * 4 + 2 + a] = 1;
  }
}`, "bc_edge")
	diag := op2.NewKernel(`void bc_diag(double *A) { A[0] = 3; A[1] = 0.5; A[2] = -0.25; A[3] = 3; }`, "bc_diag")
	check(t, op2.ParLoop(edge, edges, A.Arg(op2.Inc, pedge, pedge)))
	check(t, op2.ParLoop(diag, nodes, A.Arg(op2.Inc, ident, ident)))
	var res bcResult
	res.Before = must(A.Dense())
	res.B0 = must(b.Gather())
	var rows []int
	for k, g := range nodes.DeclaredNumbers() {
		if g%7 == 0 {
			rows = append(rows, k)
		}
	}
	for g := 0; g < nn; g += 7 {
		res.Rows = append(res.Rows, g)
	}
	check(t, A.ZeroRowsColumns(rows, 2, x, b))
	res.After = must(A.Dense())
	res.B = must(b.Gather())
	res.X = must(x.Gather())
	return res
}

// TestZeroRowsColumns checks ZeroRowsColumns against the same
// elimination done on the dense matrix, and its refusals.
func TestZeroRowsColumns(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		r := bcScenario(t)
		const dim = 2
		isRow := map[int]bool{}
		for _, g := range r.Rows {
			isRow[g] = true
		}
		n := len(r.Before)
		wantB := slices.Clone(r.B0)
		for i := range n {
			if isRow[i/dim] {
				wantB[i] = 2 * r.X[i]
				continue
			}
			for j := range n {
				if isRow[j/dim] {
					wantB[i] -= r.Before[i][j] * r.X[j]
				}
			}
		}
		for i := range n {
			for j := range n {
				want := r.Before[i][j]
				switch {
				case isRow[i/dim] || isRow[j/dim]:
					want = 0
					if i == j {
						want = 2
					}
				}
				if r.After[i][j] != want {
					t.Fatalf("A[%d][%d] = %v, want %v", i, j, r.After[i][j], want)
				}
			}
		}
		if !slices.Equal(r.B, wantB) {
			t.Errorf("b = %v\nwant %v", r.B, wantB)
		}
	})
	nodes := must(op2.NewSet(3, "nodes"))
	other := must(op2.NewSet(3, "other"))
	ident := must(op2.NewMap(nodes, nodes, 1, []int32{0, 1, 2}, "ident"))
	A := must(op2.NewMat[float64](must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: ident, Col: ident}}, "sp")), "A"))
	x := must(op2.NewDat[float64](nodes, 1, nil, "x"))
	for _, c := range []struct {
		name string
		call func() error
		want string
	}{
		{"x without b", func() error { return A.ZeroRowsColumns([]int{0}, 1, x, nil) }, "both x and b"},
		{"b on another set", func() error {
			return A.ZeroRowsColumns([]int{0}, 1, x, must(op2.NewDat[float64](other, 1, nil, "b")))
		}, `must be on the matrix's set "nodes"`},
		{"x is b", func() error { return A.ZeroRowsColumns([]int{0}, 1, x, x) }, "the same"},
		{"row out of range", func() error { return A.ZeroRowsColumns([]int{3}, 1, nil, nil) }, "row element 3 (position 0) is outside"},
	} {
		if err := c.call(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}

// TestZeroRowsColumnsOnRanks: on 2 and 3 ranks (Dirichlet nodes owned by
// every rank, seen as halo columns by others) the matrix and b equal one
// process's.
func TestZeroRowsColumnsOnRanks(t *testing.T) {
	const outEnv = "OP2_TEST_BC_OUT"
	if mpitest.InRanks() {
		r := bcScenario(t)
		if op2.Rank() == 0 {
			check(t, os.WriteFile(os.Getenv(outEnv), must(json.Marshal(r)), 0o644))
		}
		check(t, op2.Finalize())
		return
	}
	want := bcScenario(t)
	for _, np := range []int{2, 3} {
		out := filepath.Join(t.TempDir(), "bc.json")
		mpitest.Run(t, np, 2*time.Minute, outEnv+"="+out)
		var got bcResult
		check(t, json.Unmarshal(must(os.ReadFile(out)), &got))
		for i := range want.After {
			if !slices.Equal(got.After[i], want.After[i]) {
				t.Fatalf("%d ranks: row %d of the matrix differs from one process's", np, i)
			}
		}
		if !slices.Equal(got.B, want.B) {
			t.Errorf("%d ranks: b = %v, want %v", np, got.B, want.B)
		}
	}
}
