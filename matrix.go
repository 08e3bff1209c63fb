package op2

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/engine"
	"github.com/goop2/op2/internal/matrix"
	"github.com/goop2/op2/internal/sparsity"
)

// MapPair is one (row map, column map) pair of a Sparsity: both maps go
// from the same set, and each element of it couples every row its row map
// gives with every column its column map gives.
type MapPair struct{ Row, Col *Map }

// Sparsity is the nonzero pattern of sparse matrices (PyOP2's Sparsity):
// the rows are the elements of one set, each a block of rowDim rows, the
// columns those of another, each a block of colDim columns, and every
// element of a pair's iteration set couples the blocks its maps give. A
// square pattern (the same set for rows and columns, the same dims) also
// holds every diagonal block, so that rows can be given a diagonal value
// (Mat.ZeroRows) whatever the maps reach. Matrices (NewMat) share their
// sparsity's pattern.
//
// A sparsity fixes the numbering of its sets: Renumber refuses them
// afterwards, as it does sets a loop has used. Matrices are assembled on
// every backend: on the host backends and in the device backends' staged
// scheme the elements are coloured by the row map, so no two elements
// of a colour add to one row; in the device atomics scheme each value is
// added atomically at its precomputed offset. A matrix assembled on a
// device stays there until the host reads it (Values, Dense, Mult,
// ZeroRows), like a Dat.
//
// In a distributed run a sparsity is declared after Partition, and each
// rank holds the rows of its owned elements, with columns in its local
// numbering (owned elements, then halo): loops run over the exec halo
// (owner compute), so every contribution to an owned row is made on its
// owner, and contributions to halo rows are dropped. Shape, NNZ, CSR
// and Mat.Values describe the rank's rows; Mat.Dense gathers the whole
// matrix, in the declared numbering, on rank 0; Mat.Mult and Solve are
// collective.
type Sparsity struct {
	name       string
	rows, cols *Set
	rdim, cdim int
	pairs      []MapPair
	pat        *sparsity.Pattern
	offsets    [][]int32 // per pair, pinned: see sparsity.Pattern.Offsets
	// offsetData are the offsets as storage, per pair, for device
	// backends (core.MatArg.OffsetData).
	offsetData []*core.Storage
	// rowPtrData and colIdxData are the block pattern as storage, for
	// products on device backends; made on first use.
	rowPtrData, colIdxData *core.Storage
}

// patternData returns the block pattern's row pointers and column
// indices as storage, for device backends.
func (sp *Sparsity) patternData() (rowptr, colidx *core.Storage) {
	if sp.rowPtrData == nil {
		sp.rowPtrData = core.NewIndexStorage(fmt.Sprintf("row pointers of sparsity %q", sp.name), sp.pat.RowPtr)
		sp.colIdxData = core.NewIndexStorage(fmt.Sprintf("column indices of sparsity %q", sp.name), sp.pat.ColIdx)
	}
	return sp.rowPtrData, sp.colIdxData
}

// NewSparsity builds the pattern of matrices whose rows are the elements
// of rows (blocks of rowDim rows) and columns those of cols (blocks of
// colDim columns) from the element contributions of pairs: each pair's
// maps must go from one set, the row map into rows and the column map
// into cols.
func NewSparsity(rows *Set, rowDim int, cols *Set, colDim int, pairs []MapPair, name string) (*Sparsity, error) {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("op2: sparsity %q: %s", name, fmt.Sprintf(format, a...))
	}
	if rows == nil || cols == nil {
		return nil, fail("the row and column sets must not be nil")
	}
	if rowDim < 1 || colDim < 1 || rowDim > MaxDim || colDim > MaxDim {
		return nil, fail("block dims %d×%d; each must be from 1 to %d", rowDim, colDim, MaxDim)
	}
	if len(pairs) == 0 {
		return nil, fail("no map pairs: a pattern needs at least one (row map, column map) pair")
	}
	if w, err := mpiWorld(); err != nil {
		return nil, err
	} else if w != nil && w.Size() > 1 && !rt.proc.Partitioned() {
		return nil, fail("in a distributed run (%d MPI ranks) a sparsity is declared after Partition, on each rank's part of the mesh", w.Size())
	}
	sp := &Sparsity{name: name, rows: rows, cols: cols, rdim: rowDim, cdim: colDim, pairs: append([]MapPair(nil), pairs...)}
	qs := make([]sparsity.Pair, len(pairs))
	for k, p := range pairs {
		switch {
		case p.Row == nil || p.Col == nil:
			return nil, fail("map pair %d: the maps must not be nil", k)
		case p.Row.c.From != p.Col.c.From:
			return nil, fail("map pair %d: row map %q goes from set %q but column map %q from set %q; a pair's maps go from the same set",
				k, p.Row.c.Name, p.Row.c.From.Name, p.Col.c.Name, p.Col.c.From.Name)
		case p.Row.c.To != &rows.c:
			return nil, fail("map pair %d: row map %q goes to set %q, not to the rows' set %q", k, p.Row.c.Name, p.Row.c.To.Name, rows.c.Name)
		case p.Col.c.To != &cols.c:
			return nil, fail("map pair %d: column map %q goes to set %q, not to the columns' set %q", k, p.Col.c.Name, p.Col.c.To.Name, cols.c.Name)
		}
		for j := 0; j < k; j++ {
			if pairs[j] == p {
				return nil, fail("map pair %d repeats pair %d (row map %q, column map %q)", k, j, p.Row.c.Name, p.Col.c.Name)
			}
		}
		// The loops run over the exec halo too (owner compute): their
		// contributions to halo rows are dropped, as the owners make
		// them.
		qs[k] = sparsity.Pair{Rows: p.Row.c.Table, Cols: p.Col.c.Table, RowArity: p.Row.c.Arity, ColArity: p.Col.c.Arity,
			N: p.Row.c.From.Exec, DropRows: true}
	}
	square := rows == cols && rowDim == colDim
	pat, offsets, err := sparsity.BuildOffsets(rows.c.Owned, cols.c.Total, qs, square)
	if err != nil {
		return nil, fail("%v", err)
	}
	// The scalar compressed-row form (Values, CSR, PETSc) indexes rows,
	// columns and nonzeros with int32 (checked without overflowing).
	fits := func(n, d int) bool { return int64(n) <= (math.MaxInt32-1)/int64(d) }
	switch {
	case !fits(pat.NNZ(), rowDim) || !fits(pat.NNZ()*rowDim, colDim):
		return nil, fail("%d blocks of %d×%d values are more than the %d scalar nonzeros a matrix may have (the compressed-row form indexes them with int32)", pat.NNZ(), rowDim, colDim, math.MaxInt32-1)
	case !fits(pat.NRows, rowDim) || !fits(pat.NCols, colDim):
		return nil, fail("%d×%d block rows and columns of %d×%d are more than the %d scalar rows and columns a matrix may have", pat.NRows, pat.NCols, rowDim, colDim, math.MaxInt32-1)
	case int64(pat.NNZ())*int64(rowDim)*int64(colDim) > MaxDataBytes/8:
		return nil, fail("%d blocks of %d×%d values exceed op2.MaxDataBytes for the values of a float64 matrix", pat.NNZ(), rowDim, colDim)
	}
	sp.pat = pat
	for _, off := range offsets {
		if len(off) > 0 {
			core.KeepPinned(sp, &off[0])
		}
		sp.offsets = append(sp.offsets, off)
		sp.offsetData = append(sp.offsetData, core.NewIndexStorage(fmt.Sprintf("block offsets of sparsity %q, map pair %d", name, len(sp.offsetData)), off))
	}
	// The pattern and the offsets hold the sets' numbering.
	rows.c.Looped, cols.c.Looped = true, true
	for _, p := range pairs {
		p.Row.c.From.Looped = true
	}
	return sp, nil
}

// Name is the sparsity's name.
func (sp *Sparsity) Name() string { return sp.name }

// Shape is the number of scalar rows and columns: the rows' set size
// times the row block dim, and the columns' likewise (in a distributed
// run, this rank's owned rows, and its local columns, halo included).
func (sp *Sparsity) Shape() (rows, cols int) { return sp.pat.NRows * sp.rdim, sp.pat.NCols * sp.cdim }

// NNZ is the number of scalar nonzeros: the blocks the maps couple, each
// rowDim×colDim values.
func (sp *Sparsity) NNZ() int { return sp.pat.NNZ() * sp.rdim * sp.cdim }

// CSR returns the pattern in scalar compressed row form (a copy): the
// columns of scalar row r are colidx[rowptr[r]:rowptr[r+1]], increasing.
// Scalar row i*rowDim+a is component a of row element i, and likewise
// for columns.
func (sp *Sparsity) CSR() (rowptr, colidx []int32) {
	rowptr, colidx, err := sp.pat.Scalar(sp.rdim, sp.cdim)
	if err != nil {
		panic(apiError(err)) // NewSparsity checked the sizes
	}
	return rowptr, colidx
}

// pair returns the index of (row, col) among the sparsity's pairs, or -1.
func (sp *Sparsity) pair(row, col *core.Map) int {
	for k, p := range sp.pairs {
		if &p.Row.c == row && &p.Col.c == col {
			return k
		}
	}
	return -1
}

func (sp *Sparsity) String() string {
	r, c := sp.Shape()
	return fmt.Sprintf("sparsity %q (%d×%d, %d nonzeros; rows set %q dim %d, columns set %q dim %d)", sp.name, r, c, sp.NNZ(), sp.rows.c.Name, sp.rdim, sp.cols.c.Name, sp.cdim)
}

// Mat is a sparse matrix of float64 or float32 values on a Sparsity's
// pattern (PyOP2's Mat), assembled by loops that pass it with Arg: each
// element's kernel fills a dense element matrix, which is added into (Inc)
// or stored into (Write) the matrix's blocks. Its values start at zero.
type Mat[T float32 | float64] struct {
	s    core.Storage // first field, as in Dat
	sp   *Sparsity
	data []T // block values: the blocks in the pattern's order, each rowDim×colDim row-major
}

// NewMat declares a matrix of zeros on sp's pattern.
func NewMat[T float32 | float64](sp *Sparsity, name string) (*Mat[T], error) {
	if sp == nil {
		return nil, fmt.Errorf("op2: mat %q: sparsity is nil", name)
	}
	A := &Mat[T]{sp: sp}
	n := sp.NNZ()
	A.data = pinned[T](A, n)
	A.s = core.Storage{Name: name, Type: scalarType[T](), Dim: 1, Len: n, ID: core.NewID(),
		Matrix: fmt.Sprintf("mat %q (%s) on %s", name, scalarType[T](), sp)}
	if n > 0 {
		A.s.Host = unsafe.Pointer(&A.data[0])
	}
	return A, nil
}

// Name is the matrix's name.
func (A *Mat[T]) Name() string { return A.s.Name }

// State says where the matrix's current values are (see DataState): a
// matrix assembled on a device backend stays there until the host reads
// it.
func (A *Mat[T]) State() DataState {
	lock(forStatus, "Mat.State")
	defer unlock()
	return A.s.State
}

// Sparsity is the matrix's pattern.
func (A *Mat[T]) Sparsity() *Sparsity { return A.sp }

func (A *Mat[T]) String() string { return A.s.Matrix }

// Arg passes the matrix to a loop through a (row map, column map) pair
// of its sparsity, with access Inc (the element matrices are added) or
// Write (stored: where two elements write one entry, which lands last
// depends on the backend). The kernel gets a T* to the element's dense
// matrix, zeroed before the call, of rowArity×rowDim rows and
// colArity×colDim columns, row-major; row i*rowDim+a is component a of
// the row map's entry i, and likewise for columns.
func (A *Mat[T]) Arg(acc Access, rowmap, colmap *Map) Arg {
	if A == nil { // refused by the loop, naming the argument
		return Arg{e: engine.Arg{Core: core.Arg{Map: mapCore(rowmap), Idx: -1, Access: acc, Kind: core.ArgMat}}}
	}
	c := core.Arg{Data: &A.s, Map: mapCore(rowmap), Idx: -1, Access: acc, Kind: core.ArgMat,
		Mat: &core.MatArg{Col: mapCore(colmap), RDim: A.sp.rdim, CDim: A.sp.cdim}}
	k := A.sp.pair(c.Map, c.Mat.Col)
	if k >= 0 {
		c.Mat.Offsets, c.Mat.OffsetData = A.sp.offsets[k], A.sp.offsetData[k]
	}
	return Arg{e: engine.Arg{Core: c, NoPair: k < 0}}
}

// Zero sets every value to zero, keeping the pattern: on the device when
// the matrix's values are current there.
func (A *Mat[T]) Zero() error {
	forced := lock(forData, "Mat.Zero")
	defer unlock()
	if forced != nil {
		return forced
	}
	return A.s.Zero()
}

// ZeroRows zeroes the rows of the given row elements (every component of
// each) and puts diag on their diagonal, as Dirichlet boundary conditions
// need; the pattern is kept. The matrix must be square (its sparsity's
// rows and columns the same set, with equal dims). Rows are local
// element indices (in a distributed run, of this rank's owned elements).
// Out-of-range elements are refused before anything changes.
func (A *Mat[T]) ZeroRows(rows []int, diag T) error {
	forced := lock(forData, "Mat.ZeroRows")
	defer unlock()
	if forced != nil {
		return forced
	}
	sp := A.sp
	if sp.rows != sp.cols || sp.rdim != sp.cdim {
		return fmt.Errorf("op2: %s: ZeroRows needs a square matrix (rows and columns on one set, equal dims)", A.s.Matrix)
	}
	for k, r := range rows {
		if r < 0 || r >= sp.pat.NRows {
			return fmt.Errorf("op2: %s: ZeroRows: row element %d (position %d) is outside set %q (%d owned elements)", A.s.Matrix, r, k, sp.rows.c.Name, sp.pat.NRows)
		}
	}
	return engine.ZeroRows(rt.proc.Process, A.engine(), rows, diag)
}

// block is the matrix's values on its pattern, for internal/matrix.
func (A *Mat[T]) block() matrix.Block[T] {
	return matrix.Block[T]{Pat: A.sp.pat, RDim: A.sp.rdim, CDim: A.sp.cdim, Data: A.data}
}

// engine is the matrix as the engine takes it.
func (A *Mat[T]) engine() engine.Mat[T] { return engine.Mat[T]{S: &A.s, Block: A.block()} }

// ZeroRowsColumns applies Dirichlet conditions symmetrically, as PETSc's
// MatZeroRowsColumns(A, rows, diag, x, b) does: the rows and the columns
// of the given row elements (every component of each) are zeroed and
// diag put on their diagonal, so the matrix stays symmetric; with x and b
// (Dats on the matrix's set with its dim, or both nil) the right-hand
// side is lifted first, b -= A[:, rows] x[rows] on the other rows, and
// b[rows] = diag × x[rows], x holding the prescribed values at rows. The
// solution of the new system then takes x's values at rows, and a
// program needs no elimination in its element kernels. The pattern is
// kept. Rows are local element indices (in a distributed run, of this
// rank's owned elements; a rank may pass none); every rank calls it
// (it exchanges which columns are Dirichlet and x's halo).
// Out-of-range elements and wrong Dats are refused before anything
// changes.
func (A *Mat[T]) ZeroRowsColumns(rows []int, diag T, x, b *Dat[T]) error {
	// Collective: a rank that refuses its rows says so to every rank
	// before any of them exchanges.
	if err := agreeArgs(fmt.Sprintf("Mat.ZeroRowsColumns of mat %q", A.s.Name), A.checkZeroRowsColumns(rows, x, b)); err != nil {
		return err
	}
	dirichlet, mark, err := A.dirichletColumns(rows, x)
	if err != nil {
		return err
	}
	forced := lock(forData, "Mat.ZeroRowsColumns")
	defer unlock()
	if forced != nil {
		return forced
	}
	var xe, be, me *engine.Vec[T]
	if x != nil {
		xe, be = &engine.Vec[T]{S: &x.s, V: &x.data}, &engine.Vec[T]{S: &b.s, V: &b.data}
	}
	if mark != nil {
		me = &engine.Vec[T]{S: &mark.s, V: &mark.data}
	}
	return engine.ZeroRowsColumns(rt.proc.Process, A.engine(), dirichlet, diag, me, xe, be)
}

// checkZeroRowsColumns checks ZeroRowsColumns' arguments.
func (A *Mat[T]) checkZeroRowsColumns(rows []int, x, b *Dat[T]) error {
	sp := A.sp
	switch {
	case sp.rows != sp.cols || sp.rdim != sp.cdim:
		return fmt.Errorf("op2: %s: ZeroRowsColumns needs a square matrix (rows and columns on one set, equal dims)", A.s.Matrix)
	case (x == nil) != (b == nil):
		return fmt.Errorf("op2: %s: ZeroRowsColumns: give both x and b (the lifting) or neither", A.s.Matrix)
	}
	for _, d := range []*Dat[T]{x, b} {
		if d != nil && (d.s.Set != &sp.rows.c || d.s.Dim != sp.rdim) {
			return fmt.Errorf("op2: %s: ZeroRowsColumns: %s must be on the matrix's set %q with dim %d", A.s.Matrix, d.s.Describe(), sp.rows.c.Name, sp.rdim)
		}
	}
	if x != nil && x == b {
		return fmt.Errorf("op2: %s: ZeroRowsColumns: x and b are the same %s", A.s.Matrix, x.s.Describe())
	}
	for k, r := range rows {
		if r < 0 || r >= sp.pat.NRows {
			return fmt.Errorf("op2: %s: ZeroRowsColumns: row element %d (position %d) is outside set %q (%d owned elements)", A.s.Matrix, r, k, sp.rows.c.Name, sp.pat.NRows)
		}
	}
	return nil
}

// dirichletColumns returns which local columns are Dirichlet: this
// rank's rows and, in a distributed run, the halo's, whose flags it
// returns in mark, exchanged from their owners (a Dat of flags
// exchanged as a loop reading it through a map exchanges it); x's halo
// likewise.
func (A *Mat[T]) dirichletColumns(rows []int, x *Dat[T]) (dirichlet []bool, mark *Dat[T], err error) {
	sp := A.sp
	dirichlet = make([]bool, sp.pat.NCols)
	for _, r := range rows {
		dirichlet[r] = true
	}
	if w, err := mpiWorld(); err != nil || w == nil || w.Size() == 1 {
		return dirichlet, nil, err
	}
	flags := make([]T, sp.cols.c.Owned)
	for _, r := range rows {
		flags[r] = 1
	}
	if mark, err = own(NewDat(sp.cols, 1, flags, "Dirichlet columns of "+A.s.Name)); err != nil {
		return nil, nil, err
	}
	if err := A.exchangeHalo(rt, mark); err != nil {
		return nil, nil, err
	}
	if x != nil {
		if err := A.exchangeHalo(rt, x); err != nil {
			return nil, nil, err
		}
	}
	return dirichlet, mark, nil
}

// Values returns the matrix in scalar compressed row form (copies): the
// entries of scalar row r are at columns colidx[rowptr[r]:rowptr[r+1]],
// increasing, with values vals[rowptr[r]:rowptr[r+1]]. Scalar row
// i*rowDim+a is component a of row element i, and likewise for columns.
func (A *Mat[T]) Values() (rowptr, colidx []int32, vals []T, err error) {
	forced := lock(forData, "Mat.Values")
	defer unlock()
	if forced != nil {
		return nil, nil, nil, forced
	}
	if err := rt.proc.HostRead("Values", &A.s); err != nil {
		return nil, nil, nil, err
	}
	if err := A.s.HostAccess(false); err != nil {
		return nil, nil, nil, err
	}
	rowptr, colidx = A.sp.CSR()
	return rowptr, colidx, sparsity.ScalarValues(A.sp.pat, A.sp.rdim, A.sp.cdim, A.data), nil
}

// Mult sets y = A x: x is a Dat on the sparsity's column set with dim
// colDim, y one on its row set with dim rowDim, a different Dat. Each
// scalar row's sum is made in the order of its columns, so the result
// does not depend on the thread count. It runs where the default
// runtime's loops run: on a device backend on the device (the matrix, x
// and y stay there), else on the host (compiled C), bringing x's values
// there first: on the runtime's OpenMP threads (Config.Threads) when its
// backend is openmp, each thread computing a contiguous piece of the
// rows, else on one thread.
func (A *Mat[T]) Mult(x, y *Dat[T]) error { return A.mult(rt, x, y, "Mat.Mult") }

// mult is Mult on runtime r's backend and threads.
func (A *Mat[T]) mult(r *Runtime, x, y *Dat[T], api string) error {
	sp := A.sp
	switch {
	case x == nil || y == nil:
		return fmt.Errorf("op2: %s: Mult: x and y must not be nil", A.s.Matrix)
	case x == y:
		return fmt.Errorf("op2: %s: Mult: x and y are the same %s; the product needs another Dat", A.s.Matrix, x.s.Describe())
	case x.s.Set != &sp.cols.c || x.s.Dim != sp.cdim:
		return fmt.Errorf("op2: %s: Mult: x is %s; it must be on the columns' set %q with dim %d", A.s.Matrix, x.s.Describe(), sp.cols.c.Name, sp.cdim)
	case y.s.Set != &sp.rows.c || y.s.Dim != sp.rdim:
		return fmt.Errorf("op2: %s: Mult: y is %s; it must be on the rows' set %q with dim %d", A.s.Matrix, y.s.Describe(), sp.rows.c.Name, sp.rdim)
	}
	if err := A.exchangeHalo(r, x); err != nil {
		return err
	}
	forced := lock(forCollective, api)
	defer unlock()
	if forced != nil {
		return forced
	}
	rowptr, colidx := sp.patternData()
	return engine.Mult(r.e, &engine.Product[T]{Name: A.s.Matrix, A: &A.s, X: &x.s, Y: &y.s, Values: &A.data, XV: &x.data, YV: &y.data,
		RowPtr: sp.pat.RowPtr, ColIdx: sp.pat.ColIdx, RowPtrData: rowptr, ColIdxData: colidx, Rows: sp.pat.NRows, RDim: sp.rdim, CDim: sp.cdim})
}

// exchangeHalo brings x's halo up to date in a distributed run, as a
// loop reading x through a map would: by such a loop on r, whose kernel
// does nothing, over the set of the sparsity's first map pair.
func (A *Mat[T]) exchangeHalo(r *Runtime, x *Dat[T]) error {
	if w, err := mpiWorld(); err != nil || w == nil || w.Size() == 1 {
		return err
	}
	col := A.sp.pairs[0].Col
	return r.ParLoop(rt.proc.matHalo, setOf(col.c.From), x.ArgMap(Read, col, 0))
}

// MaxDenseValues bounds the values Mat.Dense returns (a dense copy is for
// tests and small problems).
const MaxDenseValues = 1 << 24

// Dense returns the matrix as dense rows, scalar rows and columns in the
// declared numbering as Gather gives them, for tests and small problems:
// at most MaxDenseValues values. In a distributed run it is collective:
// rank 0 gets the whole matrix, the other ranks nil.
func (A *Mat[T]) Dense() ([][]T, error) {
	sp := A.sp
	r, c := sp.Shape()
	if w, err := mpiWorld(); err != nil {
		return nil, err
	} else if w != nil && w.Size() > 1 {
		r, c = sp.rows.GlobalSize()*sp.rdim, sp.cols.GlobalSize()*sp.cdim
	}
	if int64(r)*int64(c) > MaxDenseValues {
		return nil, fmt.Errorf("op2: %s: a dense copy would hold %d×%d values, more than op2.MaxDenseValues (%d)", A.s.Matrix, r, c, MaxDenseValues)
	}
	rowptr, colidx, vals, err := A.Gather()
	if err != nil || rowptr == nil {
		return nil, err
	}
	return matrix.Dense(r, c, rowptr, colidx, vals), nil
}

// Gather returns the whole matrix in scalar compressed row form, as
// Values does, with rows and columns in the declared numbering (that of
// the sets' declarations, also after Renumber, as Dat.Gather). In a
// distributed run it is collective: every rank sends rank 0 its rows,
// and rank 0 gets the matrix, the other ranks nils.
func (A *Mat[T]) Gather() (rowptr, colidx []int32, vals []T, err error) {
	w, err := mpiWorld()
	if err != nil {
		return nil, nil, nil, err
	}
	sp := A.sp
	distributed := w != nil && w.Size() > 1
	if !distributed && sp.rows.c.Declared == nil && sp.cols.c.Declared == nil {
		return A.Values() // the declared numbering is the local one
	}
	R, C := sp.rows.GlobalSize()*sp.rdim, sp.cols.GlobalSize()*sp.cdim
	// Every rank checks the global size alike, before the exchange.
	if R >= math.MaxInt32 || C >= math.MaxInt32 {
		return nil, nil, nil, fmt.Errorf("op2: %s: Gather: %d×%d scalar rows and columns exceed the int32 indices of the gathered form", A.s.Matrix, R, C)
	}
	msg, err := func() ([]byte, error) {
		err := lock(forCollective, "Mat.Gather")
		defer unlock()
		if err != nil {
			return nil, err
		}
		return engine.DeclaredEntries(rt.proc.Process, A.engine(), &sp.rows.c, &sp.cols.c)
	}()
	var c matrix.Comm
	if distributed {
		// Collective: every rank learns of a rank that cannot send its
		// rows, or is at another collective call, before any exchanges.
		if aerr := mpiFatal(dist.AgreeStep(w, fmt.Sprintf("Mat.Gather of mat %q", A.s.Name), err)); aerr != nil {
			if err != nil {
				return nil, nil, nil, err // this rank's own error, as without MPI
			}
			return nil, nil, nil, fmt.Errorf("op2: %w", aerr)
		}
		c = w
	}
	if err != nil {
		return nil, nil, nil, err
	}
	return matrix.Gather[T](c, R, msg)
}

// MaxElementMatrixBytes bounds the element matrix of a matrix argument
// (rows × columns × value size): the generated code keeps it on the stack.
const MaxElementMatrixBytes = 1 << 16

// MaxDeviceElementMatrixBytes bounds the element matrices of a loop on
// the device backends (opencl, cuda), where every work item keeps them
// in private memory (registers on a GPU): 1024 float64 values, a P3
// tetrahedron's 20×20 with room to spare. A loop is refused when one
// matrix argument exceeds it; the device generator also bounds all its
// matrix arguments together, and a work group's worth of them (see
// device.MaxGroupElementMatrixBytes), saying which work-group size fits.
const MaxDeviceElementMatrixBytes = core.MaxDeviceElementMatrixBytes

// Nbytes is the size in bytes of the matrix's values on this process
// (PyOP2's Mat.nbytes): its blocks' values, not the pattern's indices.
func (A *Mat[T]) Nbytes() int { return A.s.Bytes() }
