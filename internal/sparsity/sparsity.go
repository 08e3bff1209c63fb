// Package sparsity builds the nonzero pattern of a sparse matrix assembled
// from element contributions (PyOP2's Sparsity): the rows are the elements
// of one set, the columns those of another, and each pair of maps from an
// iteration set (a row map into the rows' set, a column map into the
// columns') makes every element couple each of its row entries with each
// of its column entries. The pattern is stored by blocks: one entry per
// (row element, column element) pair, which a matrix with dims rdim×cdim
// expands into an rdim×cdim block of values (block CSR, blocks row-major).
// Scalar gives the equivalent scalar CSR, as PETSc's AIJ matrices use.
//
// Everything is linear in the element contributions: the elements that
// reach each row are found by a counting sort, and each row's columns are
// gathered from them and made unique with a marker, never by sorting
// pairs, so that patterns of meshes with millions of elements cost what
// their maps cost.
package sparsity

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
)

// Pair is one (row map, column map) pair contributing to a pattern: both
// maps go from the same iteration set, whose first N elements contribute.
// Element e couples rows Rows[e*RowArity : (e+1)*RowArity] with columns
// Cols[e*ColArity : (e+1)*ColArity].
type Pair struct {
	Rows, Cols         []int32
	RowArity, ColArity int
	N                  int
	// DropRows makes row entries at or beyond the pattern's rows (a
	// rank's halo rows, which their owners assemble) drop out: they add
	// nothing to the pattern, and their offsets are -1. Otherwise they
	// are an error.
	DropRows bool
}

// Pattern is a block sparsity pattern in compressed row form: the columns
// of row r are ColIdx[RowPtr[r]:RowPtr[r+1]], increasing.
type Pattern struct {
	NRows, NCols int
	RowPtr       []int32 // NRows+1 offsets
	ColIdx       []int32 // NNZ column indices
}

// NNZ is the number of block entries.
func (p *Pattern) NNZ() int { return len(p.ColIdx) }

// check validates a pair's shape and entries against the pattern's sizes.
func (q *Pair) check(k, nRows, nCols int) error {
	if q.RowArity < 1 || q.ColArity < 1 {
		return fmt.Errorf("sparsity: map pair %d: arities %d and %d; both must be at least 1", k, q.RowArity, q.ColArity)
	}
	if q.N < 0 || len(q.Rows) < q.N*q.RowArity || len(q.Cols) < q.N*q.ColArity {
		return fmt.Errorf("sparsity: map pair %d: %d elements need %d row and %d column entries; the maps have %d and %d",
			k, q.N, q.N*q.RowArity, q.N*q.ColArity, len(q.Rows), len(q.Cols))
	}
	for i, r := range q.Rows[:q.N*q.RowArity] {
		if r < 0 || int(r) >= nRows && !q.DropRows {
			return fmt.Errorf("sparsity: map pair %d: row map entry %d (element %d, column %d) is %d, outside the %d rows", k, i, i/q.RowArity, i%q.RowArity, r, nRows)
		}
	}
	for i, c := range q.Cols[:q.N*q.ColArity] {
		if c < 0 || int(c) >= nCols {
			return fmt.Errorf("sparsity: map pair %d: column map entry %d (element %d, column %d) is %d, outside the %d columns", k, i, i/q.ColArity, i%q.ColArity, c, nCols)
		}
	}
	return nil
}

// Build returns the pattern of an nRows×nCols block matrix from the
// pairs' element contributions; with diagonal (rows and columns on one
// set; a rank's rows are its owned elements, its columns the halo too)
// every row also holds its diagonal entry, so that rows can later be given a
// diagonal value (ZeroRows) whatever the maps reach.
func Build(nRows, nCols int, pairs []Pair, diagonal bool) (*Pattern, error) {
	p, _, err := build(nRows, nCols, pairs, diagonal, false)
	return p, err
}

// BuildOffsets returns Build's pattern and, for each pair, what Offsets
// returns for it, made in the same pass over the rows: cheaper than
// Offsets' search.
func BuildOffsets(nRows, nCols int, pairs []Pair, diagonal bool) (*Pattern, [][]int32, error) {
	return build(nRows, nCols, pairs, diagonal, true)
}

// build is Build, with the pairs' offsets when withOffsets.
//
// It works row by row: the row entries of the pairs are first sorted by
// row (a counting sort: each row's incidences, the elements that reach
// it), then each row's columns are gathered from its incidences, made
// unique with a marker per column (the last row that took the column),
// and sorted; with the row's columns at hand, each incidence's offsets
// are their positions in the row. Every write but the counting sort's is
// in row order, so that the cost is close to that of reading the maps.
func build(nRows, nCols int, pairs []Pair, diagonal, withOffsets bool) (*Pattern, [][]int32, error) {
	if nRows < 0 || nCols < 0 {
		return nil, nil, fmt.Errorf("sparsity: %d rows and %d columns", nRows, nCols)
	}
	if diagonal && nRows > nCols {
		return nil, nil, fmt.Errorf("sparsity: a diagonal needs at least as many columns as rows, not %d rows × %d columns", nRows, nCols)
	}
	if nRows >= math.MaxInt32 || nCols >= math.MaxInt32 {
		return nil, nil, fmt.Errorf("sparsity: %d rows × %d columns do not fit 32-bit indices", nRows, nCols)
	}
	total := int64(0)
	for k := range pairs {
		if err := pairs[k].check(k, nRows, nCols); err != nil {
			return nil, nil, err
		}
		total += int64(pairs[k].N) * int64(pairs[k].RowArity) * int64(pairs[k].ColArity)
	}
	if diagonal {
		total += int64(nRows)
	}
	if total >= math.MaxInt32 {
		return nil, nil, fmt.Errorf("sparsity: %d element contributions do not fit 32-bit indices", total)
	}
	// The incidences: row entry s of pair k is incidence base[k]+s; those
	// of row r are inc[iptr[r]:iptr[r+1]], in pair and entry order.
	base := make([]int32, len(pairs)+1)
	for k, q := range pairs {
		base[k+1] = base[k] + int32(q.N*q.RowArity)
	}
	var offsets [][]int32
	if withOffsets {
		offsets = make([][]int32, len(pairs))
		for k, q := range pairs {
			offsets[k] = make([]int32, q.N*q.RowArity*q.ColArity)
		}
	}
	iptr := make([]int32, nRows+1)
	for k, q := range pairs {
		for s, r := range q.Rows[:q.N*q.RowArity] {
			if int(r) >= nRows { // dropped (DropRows)
				if withOffsets {
					for j := range q.ColArity {
						offsets[k][s*q.ColArity+j] = -1
					}
				}
				continue
			}
			iptr[r+1]++
		}
	}
	for r := range nRows {
		iptr[r+1] += iptr[r]
	}
	inc := make([]int32, iptr[nRows])
	for k, q := range pairs {
		for s, r := range q.Rows[:q.N*q.RowArity] {
			if int(r) < nRows {
				inc[iptr[r]] = base[k] + int32(s)
				iptr[r]++
			}
		}
	}
	copy(iptr[1:], iptr[:nRows])
	iptr[0] = 0

	// The rows are cut into ranges of at least minRowsPerWorker, one per
	// goroutine; each gathers its rows' columns into its own array, with
	// positions (offsets) counted from its first row. The arrays are then
	// joined and the later ranges' offsets moved by where they start.
	w := &rowWorker{pairs: pairs, base: base, inc: inc, iptr: iptr, offsets: offsets, diagonal: diagonal}
	workers := min(runtime.GOMAXPROCS(0), max(1, nRows/minRowsPerWorker))
	parts := make([]rowPart, workers)
	var wg sync.WaitGroup
	for i := range parts {
		parts[i].lo, parts[i].hi = int32(nRows*i/workers), int32(nRows*(i+1)/workers)
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.rows(&parts[i], nCols)
		}()
	}
	wg.Wait()
	ptr := make([]int32, nRows+1)
	n := 0
	for _, p := range parts {
		n += len(p.col)
	}
	col := make([]int32, 0, n)
	for _, p := range parts {
		at := int32(len(col))
		col = append(col, p.col...)
		for r := p.lo; r < p.hi; r++ {
			ptr[r+1] = at + p.end[r-p.lo]
		}
		if at > 0 && offsets != nil {
			for _, x := range inc[iptr[p.lo]:iptr[p.hi]] {
				k, s := w.pairOf(x)
				for j := range pairs[k].ColArity {
					offsets[k][s*pairs[k].ColArity+j] += at
				}
			}
		}
	}
	return &Pattern{NRows: nRows, NCols: nCols, RowPtr: ptr, ColIdx: col}, offsets, nil
}

// minRowsPerWorker is the fewest rows Build gives a goroutine of its own
// (a variable for the tests).
var minRowsPerWorker = 1 << 15

// rowWorker holds what the goroutines of build share: the pairs, the
// incidences of each row (row entry s of pair k is incidence base[k]+s;
// row r's are inc[iptr[r]:iptr[r+1]]), and the offsets to fill in (nil
// when none are wanted).
type rowWorker struct {
	pairs    []Pair
	base     []int32
	inc      []int32
	iptr     []int32
	offsets  [][]int32
	diagonal bool
}

// rowPart is one goroutine's rows, lo to hi, their columns (col) and
// where each row's end in col (end[r-lo]).
type rowPart struct {
	lo, hi int32
	col    []int32
	end    []int32
}

// pairOf returns the pair of incidence x and its row entry there.
func (w *rowWorker) pairOf(x int32) (int, int) {
	k := 0
	for x >= w.base[k+1] {
		k++
	}
	return k, int(x - w.base[k])
}

// rows gathers the columns of p's rows, sorted and without repeats, and
// their offsets, counted from the first row's first column.
func (w *rowWorker) rows(p *rowPart, nCols int) {
	// Per column, the last row that took it and, with offsets, its
	// position in that row: side by side, as they are used together.
	type colState struct{ row, at int32 }
	cs := make([]colState, nCols)
	for c := range cs {
		cs[c].row = -1
	}
	p.end = make([]int32, p.hi-p.lo)
	col := make([]int32, 0, 2*int(w.iptr[p.hi]-w.iptr[p.lo])+int(p.hi-p.lo))
	for r := p.lo; r < p.hi; r++ {
		start := len(col)
		if w.diagonal {
			cs[r].row = r
			col = append(col, r)
		}
		incs := w.inc[w.iptr[r]:w.iptr[r+1]]
		for _, x := range incs {
			k, s := w.pairOf(x)
			q := &w.pairs[k]
			e := s / q.RowArity
			for _, c := range q.Cols[e*q.ColArity : (e+1)*q.ColArity] {
				if cs[c].row != r {
					cs[c].row = r
					col = append(col, c)
				}
			}
		}
		row := col[start:]
		slices.Sort(row)
		p.end[r-p.lo] = int32(len(col))
		if w.offsets == nil {
			continue
		}
		for t, c := range row {
			cs[c].at = int32(start + t)
		}
		for _, x := range incs {
			k, s := w.pairOf(x)
			q := &w.pairs[k]
			e := s / q.RowArity
			off := w.offsets[k][s*q.ColArity : (s+1)*q.ColArity]
			for j, c := range q.Cols[e*q.ColArity : (e+1)*q.ColArity] {
				off[j] = cs[c].at
			}
		}
	}
	p.col = col
}

// CompactRows sorts the entries of each row of a compressed-row structure
// (row r's are col[ptr[r]:ptr[r+1]]) and drops repeats, in place: ptr is
// updated and the shortened col returned. Linear in the entries when rows
// are short, as a mesh's are.
func CompactRows[P int32 | int64](ptr []P, col []int32) []int32 {
	w, lo := P(0), P(0)
	for r := 0; r+1 < len(ptr); r++ {
		hi := ptr[r+1]
		row := col[lo:hi]
		slices.Sort(row)
		ptr[r] = w
		for _, c := range row {
			if w == ptr[r] || c != col[w-1] {
				col[w] = c
				w++
			}
		}
		lo = hi
	}
	ptr[len(ptr)-1] = w
	return col[:w]
}

// Find returns the position of entry (row, col) in ColIdx, or -1 when
// the pattern does not hold it (or row is not a row of it).
func (p *Pattern) Find(row, col int32) int32 {
	if row < 0 || int(row) >= p.NRows {
		return -1
	}
	lo, hi := p.RowPtr[row], p.RowPtr[row+1]
	for lo < hi {
		mid := int32(uint32(lo+hi) >> 1)
		switch c := p.ColIdx[mid]; {
		case c == col:
			return mid
		case c < col:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return -1
}

// ErrNotInPattern is wrapped by Offsets' error when an element couples a
// row and a column that the pattern does not hold.
var ErrNotInPattern = errors.New("entry not in the sparsity pattern")

// Offsets returns, for each element e of the pair and each of its row
// entries i and column entries j, the position in ColIdx of block
// (Rows[e*RowArity+i], Cols[e*ColArity+j]), at
// [(e*RowArity+i)*ColArity+j]: where assembly adds the element's block
// without searching; -1 for a row dropped (DropRows). It fails, wrapping ErrNotInPattern, when the pair's
// entries are not all in the pattern (a pair the pattern was not built
// from).
func (p *Pattern) Offsets(q Pair) ([]int32, error) {
	if err := q.check(0, p.NRows, p.NCols); err != nil {
		return nil, err
	}
	off := make([]int32, q.N*q.RowArity*q.ColArity)
	k := 0
	for e := 0; e < q.N; e++ {
		cols := q.Cols[e*q.ColArity : (e+1)*q.ColArity]
		for _, r := range q.Rows[e*q.RowArity : (e+1)*q.RowArity] {
			for _, c := range cols {
				if int(r) >= p.NRows { // dropped (DropRows)
					off[k] = -1
					k++
					continue
				}
				at := p.Find(r, c)
				if at < 0 {
					return nil, fmt.Errorf("sparsity: element %d couples row %d with column %d: %w", e, r, c, ErrNotInPattern)
				}
				off[k] = at
				k++
			}
		}
	}
	return off, nil
}

// Scalar returns the scalar compressed rows of the pattern with rdim×cdim
// blocks: block row r becomes rows r*rdim .. r*rdim+rdim-1, and block
// (r, c) columns c*cdim .. c*cdim+cdim-1. The scalar entries of one row
// follow the block entries of its block row in order, so that scalar row
// r*rdim+a's t-th entry, in block k = RowPtr[r] + t/cdim, column b =
// t%cdim, is value k*rdim*cdim + a*cdim + b of the block values.
func (p *Pattern) Scalar(rdim, cdim int) (rowptr, colidx []int32, err error) {
	if rdim < 1 || cdim < 1 {
		return nil, nil, fmt.Errorf("sparsity: block dims %d×%d; both must be at least 1", rdim, cdim)
	}
	if int64(p.NNZ())*int64(rdim)*int64(cdim) >= math.MaxInt32 || int64(p.NRows)*int64(rdim) >= math.MaxInt32 || int64(p.NCols)*int64(cdim) >= math.MaxInt32 {
		return nil, nil, fmt.Errorf("sparsity: %d block entries of %d×%d do not fit 32-bit indices", p.NNZ(), rdim, cdim)
	}
	rowptr = make([]int32, p.NRows*rdim+1)
	colidx = make([]int32, 0, p.NNZ()*rdim*cdim)
	for r := 0; r < p.NRows; r++ {
		blocks := p.ColIdx[p.RowPtr[r]:p.RowPtr[r+1]]
		for a := 0; a < rdim; a++ {
			for _, c := range blocks {
				for b := 0; b < cdim; b++ {
					colidx = append(colidx, c*int32(cdim)+int32(b))
				}
			}
			rowptr[r*rdim+a+1] = int32(len(colidx))
		}
	}
	return rowptr, colidx, nil
}

// ScalarValues returns block values (rdim×cdim per block entry, blocks in
// ColIdx order, each row-major) in the order of Scalar's entries.
func ScalarValues[T any](p *Pattern, rdim, cdim int, block []T) []T {
	out := make([]T, 0, len(block))
	bs := rdim * cdim
	for r := 0; r < p.NRows; r++ {
		lo, hi := int(p.RowPtr[r]), int(p.RowPtr[r+1])
		for a := 0; a < rdim; a++ {
			for k := lo; k < hi; k++ {
				out = append(out, block[k*bs+a*cdim:k*bs+a*cdim+cdim]...)
			}
		}
	}
	return out
}
