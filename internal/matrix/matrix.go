// Package matrix holds what op2.Mat computes on the host from a block
// sparse matrix's values: rows zeroed for Dirichlet conditions, with or
// without their columns and the lifting of the right-hand side, the
// inverse of the diagonal for the Jacobi preconditioner, and the records
// that Mat.Gather exchanges and assembles in the declared numbering.
//
// The API checks the arguments, takes the lock, tells the automatic
// checkpoints and brings the values to the host; the functions here
// only compute.
package matrix

import (
	"encoding/binary"
	"slices"
	"sort"
	"unsafe"

	"github.com/goop2/op2/internal/sparsity"
)

// Block is a matrix's values on its block pattern: the blocks in the
// pattern's order, each RDim×CDim values, row-major.
type Block[T float32 | float64] struct {
	Pat        *sparsity.Pattern
	RDim, CDim int
	Data       []T
}

// ZeroRows zeroes the rows of the row elements rows (every component of
// each) and puts diag on their diagonal; the matrix is square.
func (m Block[T]) ZeroRows(rows []int, diag T) {
	for _, r := range rows {
		m.dirichletRow(r, diag, nil, nil)
	}
}

// ZeroRowsColumns zeroes the rows and the columns of the local elements
// dirichlet marks (a flag per column element; the owned ones are the
// rows) and puts diag on their diagonal; with x and b (the values of
// Dats on the matrix's set, or nil) it lifts the right-hand side first,
// b -= A[:, dirichlet] x on the other rows, and sets b = diag × x on the
// Dirichlet rows. The matrix is square.
func (m Block[T]) ZeroRowsColumns(dirichlet []bool, diag T, x, b []T) {
	for i := range m.Pat.NRows {
		if dirichlet[i] {
			m.dirichletRow(i, diag, x, b)
		} else {
			m.eliminate(i, dirichlet, x, b)
		}
	}
}

// dirichletRow zeroes row element i, puts diag on its diagonal and,
// with b, sets b's values at i to diag × x's.
func (m Block[T]) dirichletRow(i int, diag T, x, b []T) {
	dim, bs := m.RDim, m.RDim*m.CDim
	lo, hi := int(m.Pat.RowPtr[i]), int(m.Pat.RowPtr[i+1])
	clear(m.Data[lo*bs : hi*bs])
	d := int(m.Pat.Find(int32(i), int32(i)))
	for a := range dim {
		m.Data[d*bs+a*m.CDim+a] = diag
		if b != nil {
			b[i*dim+a] = diag * x[i*dim+a]
		}
	}
}

// eliminate zeroes the blocks of row element i in Dirichlet columns,
// with b first subtracting their products with x's values there.
func (m Block[T]) eliminate(i int, dirichlet []bool, x, b []T) {
	dim, bs := m.RDim, m.RDim*m.CDim
	for e := m.Pat.RowPtr[i]; e < m.Pat.RowPtr[i+1]; e++ {
		j := int(m.Pat.ColIdx[e])
		if !dirichlet[j] {
			continue
		}
		block := m.Data[int(e)*bs : (int(e)+1)*bs]
		if b != nil {
			lift(b[i*dim:(i+1)*dim], block, x[j*dim:(j+1)*dim])
		}
		clear(block)
	}
}

// lift subtracts the product of a square block with x from b.
func lift[T float32 | float64](b, block, x []T) {
	dim := len(b)
	for a := range dim {
		for c := range dim {
			b[a] -= block[a*dim+c] * x[c]
		}
	}
}

// InverseDiagonal sets inv to the inverses of the diagonal entries of a
// square matrix, scalar row by scalar row, and returns -1, or the row
// element and component of the first zero entry, where it stops.
func (m Block[T]) InverseDiagonal(inv []float64) (row, comp int) {
	dim, bs := m.RDim, m.RDim*m.CDim
	for r := 0; r < m.Pat.NRows; r++ {
		k := int(m.Pat.Find(int32(r), int32(r)))
		for a := 0; a < dim; a++ {
			d := float64(m.Data[k*bs+a*dim+a])
			if d == 0 {
				return r, a
			}
			inv[r*dim+a] = 1 / d
		}
	}
	return -1, 0
}

// Entries returns the matrix's entries as records of a scalar row and a
// scalar column in the declared numbering (uint32 each, little-endian)
// and the value's bytes: rowG and colG give the declared number of each
// local row and column element, nil where that is its own.
func (m Block[T]) Entries(rowG, colG []int32) []byte {
	declared := func(g []int32, i int32) int {
		if g == nil {
			return int(i) // never renumbered
		}
		return int(g[i])
	}
	bs := m.RDim * m.CDim
	var z T
	size := int(unsafe.Sizeof(z))
	msg := make([]byte, 0, len(m.Data)*(8+size))
	for r := 0; r < m.Pat.NRows; r++ {
		gr := declared(rowG, int32(r))
		for k := m.Pat.RowPtr[r]; k < m.Pat.RowPtr[r+1]; k++ {
			gc := declared(colG, m.Pat.ColIdx[k])
			for a := 0; a < m.RDim; a++ {
				for b := 0; b < m.CDim; b++ {
					msg = binary.LittleEndian.AppendUint32(msg, uint32(gr*m.RDim+a))
					msg = binary.LittleEndian.AppendUint32(msg, uint32(gc*m.CDim+b))
					v := m.Data[int(k)*bs+a*m.CDim+b]
					msg = append(msg, unsafe.Slice((*byte)(unsafe.Pointer(&v)), size)...)
				}
			}
		}
	}
	return msg
}

// Assemble makes a matrix of R scalar rows in compressed row form from
// the records of Entries in got, each row's entries sorted by column.
// Rows are owned by one rank each: it counts per row, places, then sorts
// each row.
func Assemble[T float32 | float64](R int, got [][]byte) (rowptr, colidx []int32, vals []T) {
	var z T
	rec := 8 + int(unsafe.Sizeof(z))
	rowptr = make([]int32, R+1)
	n := 0
	for _, b := range got {
		for ; len(b) >= rec; b = b[rec:] {
			rowptr[binary.LittleEndian.Uint32(b)+1]++
			n++
		}
	}
	for i := 0; i < R; i++ {
		rowptr[i+1] += rowptr[i]
	}
	colidx, vals = make([]int32, n), make([]T, n)
	next := slices.Clone(rowptr[:R])
	for _, b := range got {
		for ; len(b) >= rec; b = b[rec:] {
			r := binary.LittleEndian.Uint32(b)
			k := next[r]
			next[r]++
			colidx[k] = int32(binary.LittleEndian.Uint32(b[4:]))
			copy(unsafe.Slice((*byte)(unsafe.Pointer(&vals[k])), rec-8), b[8:rec])
		}
	}
	for r := 0; r < R; r++ {
		lo, hi := rowptr[r], rowptr[r+1]
		sortRow(colidx[lo:hi], vals[lo:hi])
	}
	return rowptr, colidx, vals
}

// Dense returns the r×c dense rows of a matrix in compressed row form.
func Dense[T any](r, c int, rowptr, colidx []int32, vals []T) [][]T {
	out := make([][]T, r)
	for i := range out {
		out[i] = make([]T, c)
		for k := rowptr[i]; k < rowptr[i+1]; k++ {
			out[i][colidx[k]] = vals[k]
		}
	}
	return out
}

// sortRow sorts one row's entries by column: by insertion when the row
// is short, as rows of finite-element matrices are, else by sort.Sort.
func sortRow[T any](cols []int32, vals []T) {
	if len(cols) > 32 {
		sort.Sort(rowEntries[T]{cols, vals})
		return
	}
	for i := 1; i < len(cols); i++ {
		c, v := cols[i], vals[i]
		j := i
		for ; j > 0 && cols[j-1] > c; j-- {
			cols[j], vals[j] = cols[j-1], vals[j-1]
		}
		cols[j], vals[j] = c, v
	}
}

// rowEntries sorts a row's columns and values together.
type rowEntries[T any] struct {
	cols []int32
	vals []T
}

func (r rowEntries[T]) Len() int           { return len(r.cols) }
func (r rowEntries[T]) Less(i, j int) bool { return r.cols[i] < r.cols[j] }
func (r rowEntries[T]) Swap(i, j int) {
	r.cols[i], r.cols[j] = r.cols[j], r.cols[i]
	r.vals[i], r.vals[j] = r.vals[j], r.vals[i]
}

// Comm is what Gather needs of an MPI world.
type Comm interface {
	Rank() int
	Size() int
	Alltoallv(send [][]byte) ([][]byte, error)
}

// Gather assembles the entries records (Block.Entries) of every rank of
// c on rank 0 into the scalar compressed rows of R rows that Assemble
// makes; the other ranks get nils. With c nil only this rank's records
// are assembled. Collective.
func Gather[T float32 | float64](c Comm, R int, mine []byte) (rowptr, colidx []int32, vals []T, err error) {
	got := [][]byte{mine}
	if c != nil {
		send := make([][]byte, c.Size())
		send[0] = mine
		got, err = c.Alltoallv(send)
		if err != nil || c.Rank() != 0 {
			return nil, nil, nil, err
		}
	}
	rowptr, colidx, vals = Assemble[T](R, got)
	return rowptr, colidx, vals, nil
}
