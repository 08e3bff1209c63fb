package matrix

import (
	"slices"
	"testing"

	"github.com/goop2/op2/internal/sparsity"
)

// pattern3 is the 3×3 tridiagonal pattern with blocks of dim 1.
func pattern3(t *testing.T) *sparsity.Pattern {
	t.Helper()
	p, err := sparsity.Build(3, 3, []sparsity.Pair{{Rows: []int32{0, 1, 1, 2}, Cols: []int32{0, 1, 1, 2}, RowArity: 2, ColArity: 2, N: 2}}, true)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestZeroRowsColumns: A = tridiag(-1, 2, -1) with row and column 0
// Dirichlet (x₀ = 5) lifts b₁ by 5 and keeps the rest symmetric.
func TestZeroRowsColumns(t *testing.T) {
	p := pattern3(t)
	m := Block[float64]{Pat: p, RDim: 1, CDim: 1, Data: []float64{2, -1, -1, 2, -1, -1, 2}}
	x, b := []float64{5, 0, 0}, []float64{1, 1, 1}
	m.ZeroRowsColumns([]bool{true, false, false}, 1, x, b)
	if want := []float64{1, 0, 0, 2, -1, -1, 2}; !slices.Equal(m.Data, want) {
		t.Errorf("values %v, want %v", m.Data, want)
	}
	if want := []float64{5, 6, 1}; !slices.Equal(b, want) {
		t.Errorf("b %v, want %v", b, want)
	}
	m.ZeroRows([]int{2}, 3)
	if want := []float64{1, 0, 0, 2, -1, 0, 3}; !slices.Equal(m.Data, want) {
		t.Errorf("after ZeroRows: values %v, want %v", m.Data, want)
	}
}

// TestInverseDiagonal: the inverses, or the first zero entry.
func TestInverseDiagonal(t *testing.T) {
	p := pattern3(t)
	m := Block[float32]{Pat: p, RDim: 1, CDim: 1, Data: []float32{2, -1, -1, 4, -1, -1, 0}}
	inv := make([]float64, 3)
	if r, a := m.InverseDiagonal(inv); r != 2 || a != 0 || inv[0] != 0.5 || inv[1] != 0.25 {
		t.Errorf("zero entry (%d, %d), inverses %v; want (2, 0), [0.5 0.25 …]", r, a, inv)
	}
	m.Data[6] = 8
	if r, _ := m.InverseDiagonal(inv); r != -1 || inv[2] != 0.125 {
		t.Errorf("zero entry in row %d, inverses %v", r, inv)
	}
}

// TestEntriesAssemble: the records of two halves of a matrix, renumbered,
// assemble into the matrix in the declared numbering, rows sorted.
func TestEntriesAssemble(t *testing.T) {
	p := pattern3(t)
	m := Block[float64]{Pat: p, RDim: 1, CDim: 1, Data: []float64{1, 2, 3, 4, 5, 6, 7}}
	rev := []int32{2, 1, 0} // local i is declared 2-i
	msg := m.Entries(rev, rev)
	rowptr, colidx, vals := Assemble[float64](3, [][]byte{msg[:3*16], msg[3*16:]})
	if !slices.Equal(rowptr, []int32{0, 2, 5, 7}) || !slices.Equal(colidx, []int32{0, 1, 0, 1, 2, 1, 2}) ||
		!slices.Equal(vals, []float64{7, 6, 5, 4, 3, 2, 1}) {
		t.Errorf("assembled %v %v %v", rowptr, colidx, vals)
	}
	if d := Dense(3, 3, rowptr, colidx, vals); !slices.Equal(d[0], []float64{7, 6, 0}) {
		t.Errorf("dense row 0 %v", d[0])
	}
}
