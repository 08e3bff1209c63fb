package engine

import "github.com/goop2/op2/internal/core"

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
