package engine

import (
	"fmt"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/matrix"
)

// Mat is a matrix as op2's Mat holds it: its storage and its values on
// its block pattern.
type Mat[T float32 | float64] struct {
	S     *core.Storage
	Block matrix.Block[T]
}

// Vec is a Dat's storage and host values, read after its host access (a
// Dat's host values may be allocated by its first one).
type Vec[T float32 | float64] struct {
	S *core.Storage
	V *[]T
}

// ZeroRows zeroes the rows of the row elements rows and puts diag on
// their diagonal, on the host (op2's Mat.ZeroRows, its arguments
// checked). Caller holds the lock.
func ZeroRows[T float32 | float64](p *Process, a Mat[T], rows []int, diag T) error {
	if err := p.HostRead("ZeroRows", a.S); err != nil {
		return err
	}
	if err := a.S.HostAccess(true); err != nil {
		return err
	}
	a.Block.ZeroRows(rows, diag)
	return nil
}

// ZeroRowsColumns zeroes the rows and columns dirichlet marks and puts
// diag on their diagonal, on the host (op2's Mat.ZeroRowsColumns, its
// arguments checked): where mark is not nil, the flags of the halo's
// columns are its values, exchanged from their owners; with x and b
// (both, or neither) b is lifted first. Caller holds the lock.
func ZeroRowsColumns[T float32 | float64](p *Process, a Mat[T], dirichlet []bool, diag T, mark, x, b *Vec[T]) error {
	if mark != nil { // the halo's flags, from their owners
		if err := mark.S.HostAccess(false); err != nil {
			return err
		}
		for j := range dirichlet {
			dirichlet[j] = (*mark.V)[j] != 0
		}
	}
	in := []*core.Storage{a.S}
	if x != nil {
		in = append(in, x.S, b.S)
	}
	if err := p.HostRead("ZeroRowsColumns", in...); err != nil {
		return err
	}
	if err := a.S.HostAccess(true); err != nil {
		return err
	}
	var xv, bv []T
	if x != nil {
		if err := x.S.HostAccess(false); err != nil {
			return err
		}
		if err := b.S.HostAccess(true); err != nil {
			return err
		}
		dist.HostWrite(b.S)
		xv, bv = *x.V, *b.V
	}
	a.Block.ZeroRowsColumns(dirichlet, diag, xv, bv)
	return nil
}

// DeclaredEntries returns the rank's entries of the matrix a, whose rows
// and columns are the sets rows and cols, as records of a scalar row and
// a scalar column in the declared numbering (uint32 each) and the value
// (op2's Mat.Gather). Caller holds the lock.
func DeclaredEntries[T float32 | float64](p *Process, a Mat[T], rows, cols *core.Set) ([]byte, error) {
	if err := p.HostRead("Gather", a.S); err != nil {
		return nil, err
	}
	if err := a.S.HostAccess(false); err != nil {
		return nil, err
	}
	rg, err := dist.Narrow(fmt.Sprintf("Gather of matrix %q: set %q", a.S.Name, rows.Name), dist.DeclaredRows(rows))
	if err != nil {
		return nil, p.api.Internal(err)
	}
	cg, err := dist.Narrow(fmt.Sprintf("Gather of matrix %q: set %q", a.S.Name, cols.Name), dist.DeclaredRows(cols))
	if err != nil {
		return nil, p.api.Internal(err)
	}
	return a.Block.Entries(rg, cg), nil
}
