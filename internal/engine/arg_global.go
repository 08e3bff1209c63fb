package engine

import (
	"fmt"

	"github.com/goop2/op2/internal/core"
)

// MaxReductionDim is the largest dim of a Global used for a reduction
// (see op2.MaxReductionDim).
const MaxReductionDim = 1024

// globalKind is a Global (core.ArgGlobal).
type globalKind struct{}

func (globalKind) check(_ *Binding, a *core.Arg, _ *Arg) string {
	switch a.Access {
	case core.Read, core.Inc, core.Min, core.Max:
	default:
		return fmt.Sprintf("%s: access %s is not allowed for a Global (use READ, INC, MIN or MAX)", a.Data.Describe(), a.Access)
	}
	if a.Access != core.Read && a.Data.Dim > MaxReductionDim {
		return fmt.Sprintf("%s: a reduction Global may have at most %d values (each thread keeps a private copy)", a.Data.Describe(), MaxReductionDim)
	}
	return ""
}

// conflict: a read sees the value from before the loop on every backend
// (reductions combine after the loop), and one kind of reduction may be
// passed any number of times.
func (globalKind) conflict(a, b *core.Arg) string {
	switch {
	case a.Access == core.Read || b.Access == core.Read:
		return ""
	case a.Access == b.Access:
		return ""
	}
	return "one Global may take part in only one kind of reduction per loop (INC, MIN or MAX)"
}
