package engine

import (
	"fmt"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
)

// MeshMap64 is a MeshMap declared with 64-bit global numbers (op2.NewMap64)
// under MPI before Partition: its block's table is Table64, not the core
// map's (which Partition then fills with local indices).
type MeshMap64 interface {
	MeshMap
	// Table64 is the block's table in the global numbering; nil when
	// the map holds its table in Map().Table.
	Table64() []int64
}

// blockTable64 is m's 64-bit block table, or nil.
func blockTable64(mm MeshMap) []int64 {
	if m, ok := mm.(MeshMap64); ok {
		return m.Table64()
	}
	return nil
}

// blockRows is the number of table entries of m's block.
func blockRows(m *core.Map) int { return min(len(m.Table), m.From.Owned*m.Arity) }

// beyond32 reports whether set s is numbered beyond int32 (a partitioned
// set whose global numbers exceed it).
func beyond32(s *core.Set) bool {
	h, ok := s.Halo.(*dist.SetHalo)
	return ok && !h.Fits32()
}

// indexBeyond32 is why index argument arg (resolved: a, its data nil)
// of loop b is refused when its set is numbered beyond int32 (kernels get
// index values as 32-bit ints), "" for any other argument.
func indexBeyond32(b *Binding, a *core.Arg, arg *Arg) string {
	var s *core.Set
	switch {
	case arg.Role == RoleIterIdx:
		s = b.Set
	case arg.Role == RoleMapIdx && a.Map != nil:
		s = a.Map.To
	}
	if s == nil || !beyond32(s) {
		return ""
	}
	h := s.Halo.(*dist.SetHalo)
	return fmt.Sprintf("index argument: set %q is numbered beyond int32 (global numbers %d to %d), and index arguments are 32-bit", s.Name, h.Base, h.Base+int64(h.GlobalSize)-1)
}
