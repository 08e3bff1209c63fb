package op2

import (
	"fmt"

	"github.com/goop2/op2/internal/engine"
)

// MixedMapPair is one (row mixed map, column mixed map) pair of a
// MixedSparsity.
type MixedMapPair struct{ Row, Col *MixedMap }

// MixedSparsity is the pattern of block matrices on mixed sets (PyOP2's
// Sparsity of mixed data sets): a grid of Sparsities, block (i, j)
// coupling row block i with column block j. Block (i, j) is the plain
// Sparsity of rows.Block(i) (blocks of rowDims[i] rows) and
// cols.Block(j) (colDims[j] columns) built from the map pairs (row map
// block i, column map block j) of every mixed map pair.
type MixedSparsity struct {
	name       string
	rows, cols *MixedSet
	blocks     [][]*Sparsity
}

// NewMixedSparsity builds the block pattern of matrices whose rows are
// the blocks of rows and columns the blocks of cols, with rowDims[i] rows
// per element of row block i and colDims[j] columns per element of
// column block j, from pairs: each pair's mixed maps go from one set,
// the row map's block i into rows.Block(i) and the column map's block j
// into cols.Block(j). Under MPI it is declared after Partition, as
// NewSparsity is.
func NewMixedSparsity(rows *MixedSet, rowDims []int, cols *MixedSet, colDims []int, pairs []MixedMapPair, name string) (*MixedSparsity, error) {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("op2: mixed sparsity %q: %s", name, fmt.Sprintf(format, a...))
	}
	switch {
	case rows == nil || cols == nil:
		return nil, fail("the row and column mixed sets must not be nil")
	case len(rowDims) != len(rows.sets):
		return nil, fail("%d row dims for the %d blocks of mixed set %q", len(rowDims), len(rows.sets), rows.name)
	case len(colDims) != len(cols.sets):
		return nil, fail("%d column dims for the %d blocks of mixed set %q", len(colDims), len(cols.sets), cols.name)
	case len(pairs) == 0:
		return nil, fail("no map pairs: a pattern needs at least one (row map, column map) pair")
	}
	for k, p := range pairs {
		switch {
		case p.Row == nil || p.Col == nil:
			return nil, fail("map pair %d: the mixed maps must not be nil", k)
		case len(p.Row.maps) != len(rows.sets):
			return nil, fail("map pair %d: row mixed map %q has %d blocks but the rows' mixed set %q has %d", k, p.Row.name, len(p.Row.maps), rows.name, len(rows.sets))
		case len(p.Col.maps) != len(cols.sets):
			return nil, fail("map pair %d: column mixed map %q has %d blocks but the columns' mixed set %q has %d", k, p.Col.name, len(p.Col.maps), cols.name, len(cols.sets))
		}
	}
	sp := &MixedSparsity{name: name, rows: rows, cols: cols, blocks: make([][]*Sparsity, len(rows.sets))}
	for i := range rows.sets {
		sp.blocks[i] = make([]*Sparsity, len(cols.sets))
		for j := range cols.sets {
			mp := make([]MapPair, len(pairs))
			for k, p := range pairs {
				mp[k] = MapPair{Row: p.Row.maps[i], Col: p.Col.maps[j]}
			}
			b, err := NewSparsity(rows.sets[i], rowDims[i], cols.sets[j], colDims[j], mp, fmt.Sprintf("%s[%d,%d]", name, i, j))
			if err != nil {
				return nil, fmt.Errorf("op2: mixed sparsity %q: block (%d, %d): %w", name, i, j, unprefixed(err))
			}
			sp.blocks[i][j] = b
		}
	}
	return sp, nil
}

// Name is the mixed sparsity's name.
func (sp *MixedSparsity) Name() string { return sp.name }

// Blocks is the number of row blocks and of column blocks.
func (sp *MixedSparsity) Blocks() (rows, cols int) { return len(sp.rows.sets), len(sp.cols.sets) }

// Block returns block (i, j)'s Sparsity.
func (sp *MixedSparsity) Block(i, j int) *Sparsity { return sp.blocks[i][j] }

// MixedMat is a block matrix on a MixedSparsity (PyOP2's Mat on a mixed
// sparsity): a grid of Mats, block (i, j) on the sparsity's block (i, j),
// which a program may use on its own (Block). A loop assembles it through
// a pair of mixed maps (Arg).
type MixedMat[T float32 | float64] struct {
	name   string
	sp     *MixedSparsity
	blocks [][]*Mat[T]
	tmp    engine.Products[*Dat[T]] // Mult's products, per row block
}

// NewMixedMat declares a block matrix of zeros on sp; block (i, j) is
// named name[i,j].
func NewMixedMat[T float32 | float64](sp *MixedSparsity, name string) (*MixedMat[T], error) {
	if sp == nil {
		return nil, fmt.Errorf("op2: mixed mat %q: mixed sparsity is nil", name)
	}
	A := &MixedMat[T]{name: name, sp: sp, blocks: make([][]*Mat[T], len(sp.blocks))}
	for i, row := range sp.blocks {
		A.blocks[i] = make([]*Mat[T], len(row))
		for j, b := range row {
			m, err := NewMat[T](b, fmt.Sprintf("%s[%d,%d]", name, i, j))
			if err != nil {
				return nil, fmt.Errorf("op2: mixed mat %q: block (%d, %d): %w", name, i, j, unprefixed(err))
			}
			A.blocks[i][j] = m
		}
	}
	return A, nil
}

// Name is the mixed matrix's name.
func (A *MixedMat[T]) Name() string { return A.name }

// Sparsity is the matrix's mixed sparsity.
func (A *MixedMat[T]) Sparsity() *MixedSparsity { return A.sp }

// Block returns block (i, j)'s Mat.
func (A *MixedMat[T]) Block(i, j int) *Mat[T] { return A.blocks[i][j] }

// Arg passes the block matrix to a loop through a pair of mixed maps of
// its sparsity, with access Inc or Write: the kernel gets one T* per
// block, row block after row block ((0,0), (0,1), …, (1,0), …), block
// (i, j) the element matrix of Mat.Arg through (rowmap.Block(i),
// colmap.Block(j)): rowArity_i×rowDim_i rows by colArity_j×colDim_j
// columns, row-major, zeroed before the call. PyOP2 gives the kernel one
// element matrix for all blocks instead; its block (i, j) is the
// parameter here.
func (A *MixedMat[T]) Arg(acc Access, rowmap, colmap *MixedMap) Arg {
	if A == nil {
		return nilMixed("mat")
	}
	nr, nc := len(A.blocks), len(A.sp.cols.sets)
	m := &mixedArg{kind: "mat", name: A.name, cols: nc}
	a := Arg{e: engine.Arg{Mixed: m}}
	switch {
	case rowmap == nil || colmap == nil:
		m.bad = fmt.Sprintf("%s: the row and column mixed maps must not be nil", m.what())
		return a
	case len(rowmap.maps) != nr || len(colmap.maps) != nc:
		m.bad = fmt.Sprintf("%s has %d×%d blocks but mixed maps %q and %q have %d and %d",
			m.what(), nr, nc, rowmap.name, colmap.name, len(rowmap.maps), len(colmap.maps))
		return a
	}
	m.rowMap, m.colMap = &rowmap.name, &colmap.name
	m.blocks = make([]Arg, 0, nr*nc)
	for i := range nr {
		for j := range nc {
			m.blocks = append(m.blocks, A.blocks[i][j].Arg(acc, rowmap.maps[i], colmap.maps[j]))
		}
	}
	return a
}

// Zero zeroes every block (see Mat.Zero).
func (A *MixedMat[T]) Zero() error {
	for i, row := range A.blocks {
		for j, b := range row {
			if err := b.Zero(); err != nil {
				return fmt.Errorf("op2: mixed mat %q: block (%d, %d): %w", A.name, i, j, unprefixed(err))
			}
		}
	}
	return nil
}

// Mult sets y = A x block by block: y's block i = Σ_j A(i, j) x's block
// j, each product a Mat.Mult and the sum a loop on the default runtime.
// x's blocks must be the sparsity's column sets with its column dims, y's
// its row sets and row dims, and no block of y may be a block of x.
// Under MPI it is collective, as Mat.Mult is.
func (A *MixedMat[T]) Mult(x, y *MixedDat[T]) error {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("op2: mixed mat %q: Mult: %s", A.name, fmt.Sprintf(format, a...))
	}
	if x == nil || y == nil {
		return fail("x and y must not be nil")
	}
	if why := sameBlocks(x.set, A.sp.cols, "x's sets and the columns' mixed set"); why != "" {
		return fail("%s", why)
	}
	if why := sameBlocks(y.set, A.sp.rows, "y's sets and the rows' mixed set"); why != "" {
		return fail("%s", why)
	}
	for _, xb := range x.dats {
		for i, yb := range y.dats {
			if xb == yb {
				return fail("block %d of y, %s, is also a block of x; the product needs other Dats", i, yb.s.Describe())
			}
		}
	}
	for i, row := range A.blocks {
		for j, b := range row {
			if x.dats[j].s.Dim != b.sp.cdim || y.dats[i].s.Dim != b.sp.rdim {
				return fail("block (%d, %d) is %d×%d per element pair, but x's block %d has dim %d and y's block %d dim %d",
					i, j, b.sp.rdim, b.sp.cdim, j, x.dats[j].s.Dim, i, y.dats[i].s.Dim)
			}
		}
	}
	for i, row := range A.blocks {
		for j, b := range row {
			out := y.dats[i]
			if j > 0 {
				sp := A.blocks[i][0].sp
				t, err := A.tmp.Get(i, len(A.blocks), func() (*Dat[T], error) {
					return own(NewDat[T](sp.rows, sp.rdim, nil, fmt.Sprintf("%s product %d", A.name, i)))
				})
				if err != nil {
					return err
				}
				out = t
			}
			if err := b.Mult(x.dats[j], out); err != nil {
				return fmt.Errorf("op2: mixed mat %q: Mult: block (%d, %d): %w", A.name, i, j, unprefixed(err))
			}
			if j > 0 {
				add := rt.proc.addKernels.Get(scalarType[T](), out.s.Dim, func(src, name string) any { return NewKernel(src, name) })
				if err := ParLoop(add.(*Kernel), setOf(out.s.Set), y.dats[i].Arg(Inc), out.Arg(Read)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
