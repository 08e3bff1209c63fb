package engine

import (
	"fmt"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
)

// MaxElementMatrixBytes bounds the element matrix of a matrix argument
// (see op2.MaxElementMatrixBytes).
const MaxElementMatrixBytes = 1 << 16

// MaxDeviceElementMatrixBytes bounds the element matrices of a loop on
// the device backends (see op2.MaxDeviceElementMatrixBytes).
const MaxDeviceElementMatrixBytes = core.MaxDeviceElementMatrixBytes

// matKind is a matrix passed through a (row map, column map) pair of its
// sparsity (core.ArgMat).
type matKind struct{}

func (matKind) check(b *Binding, a *core.Arg, arg *Arg) string {
	switch a.Access {
	case core.Inc, core.Write:
	default:
		return fmt.Sprintf("%s: access %s is not allowed for a matrix (use INC or WRITE)", a.Data.Describe(), a.Access)
	}
	set := b.Set
	row, col := a.Map, a.Mat.Col
	switch {
	case row == nil || col == nil:
		return fmt.Sprintf("%s: the row and column maps must not be nil", a.Data.Describe())
	case row.From != set || col.From != set:
		return fmt.Sprintf("%s: row map %q goes from set %q and column map %q from set %q; both must go from the loop's set %q",
			a.Data.Describe(), row.Name, row.From.Name, col.Name, col.From.Name, set.Name)
	case a.Mat.Offsets == nil && arg.NoPair:
		return fmt.Sprintf("%s: the pair (row map %q, column map %q) is not one of the sparsity's map pairs", a.Data.Describe(), row.Name, col.Name)
	}
	r, c := a.MatShape()
	switch bytes := r * c * a.Data.Type.Size(); {
	case bytes > MaxElementMatrixBytes:
		return fmt.Sprintf("%s: the element matrix would be %d×%d values, more than op2.MaxElementMatrixBytes (%d bytes; the kernel gets it on the stack)", a.Data.Describe(), r, c, MaxElementMatrixBytes)
	case bytes > MaxDeviceElementMatrixBytes && exec.IsDevice(b.Backend):
		return fmt.Sprintf("%s: the element matrix would be %d×%d values, more than the %s backend takes (op2.MaxDeviceElementMatrixBytes = %d bytes: each work item keeps one privately); assemble it on a host backend",
			a.Data.Describe(), r, c, b.Backend, MaxDeviceElementMatrixBytes)
	}
	return ""
}

// conflict: both pass one matrix, which only increments may share.
func (matKind) conflict(a, b *core.Arg) string {
	if a.Access == core.Inc && b.Access == core.Inc {
		return ""
	}
	return "a matrix may be passed more than once in a loop only with INC (which of two WRITEs of one entry lands last depends on the backend)"
}
