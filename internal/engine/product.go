package engine

import (
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/linalg"
)

// Product is a sparse matrix-vector product y = A x (op2's Mat.Mult):
// the matrix's values and blocked compressed-row pattern, and the Dats.
type Product[T float32 | float64] struct {
	Name    string // the matrix, for errors
	A, X, Y *core.Storage
	// A's values, x's and y's host values: read once on the host (a
	// Dat's host values may be allocated by its first host access).
	Values, XV, YV *[]T
	RowPtr         []int32 // the pattern, and its storages for the devices
	ColIdx         []int32
	RowPtrData     *core.Storage
	ColIdxData     *core.Storage
	Rows           int // block rows
	RDim, CDim     int
}

// Mult computes p on r's backend: on a device backend on the device (the
// matrix, x and y stay there), else on the host, bringing x's values
// there first: on r's OpenMP threads when its backend is openmp, each
// thread computing a contiguous piece of the rows, else on one thread.
// A product a restart skips (HostProduct) is not computed. Caller holds
// the lock; x's halo is up to date.
func Mult[T float32 | float64](r *Runtime, p *Product[T]) error {
	b, err := r.CurrentBackend()
	if err != nil {
		return err
	}
	if skip, err := r.Proc.HostProduct(p.Y, p.A, p.X); err != nil || skip {
		return err
	}
	if mv, ok := b.Backend.(exec.MatVecer); ok {
		err := mv.MatVec(&exec.MatVec{Name: p.Name, Values: p.A, RowPtr: p.RowPtrData, ColIdx: p.ColIdxData, X: p.X, Y: p.Y,
			Rows: p.Rows, RDim: p.RDim, CDim: p.CDim})
		if err != nil {
			return r.Proc.api.Internal(err)
		}
		dist.HostWrite(p.Y) // other ranks' halo copies of y are stale
		return nil
	}
	for _, s := range []*core.Storage{p.A, p.X} {
		if err := s.HostAccess(false); err != nil {
			return err
		}
	}
	if err := p.Y.HostAccess(true); err != nil {
		return err
	}
	dist.HostWrite(p.Y)
	threads := 1
	if r.Cfg.Backend == "openmp" {
		threads = linalg.Threads(r.Cfg.Threads, p.Rows, len(*p.Values))
	}
	return linalg.MulBlockThreads(threads, p.RowPtr, p.ColIdx, *p.Values, p.RDim, p.CDim, *p.XV, (*p.YV)[:p.Rows*p.RDim])
}
