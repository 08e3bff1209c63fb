package dist

import (
	"unsafe"

	"github.com/goop2/op2/internal/core"
)

// DeclaredNumbers is the declared (global) number of each local element
// of s, or nil when that is the element's own number.
func DeclaredNumbers(s *core.Set) []int32 {
	if h, ok := s.Halo.(*SetHalo); ok {
		return h.Global
	}
	return s.Declared
}

// ToDeclared returns the owned elements' values of a renumbered set's
// storage in the declared numbering.
func ToDeclared[T any](vals []T, dim int, decl []int32) []T {
	out := make([]T, len(decl)*dim)
	for i, g := range decl {
		copy(out[int(g)*dim:(int(g)+1)*dim], vals[i*dim:(i+1)*dim])
	}
	return out
}

// DeclaredTable returns map m's owned rows in the declared numbering
// of its sets, where no halo numbers them (without MPI): a copy of the
// table, with rows and entries moved back to the declared numbering
// after Renumber.
func DeclaredTable(m *core.Map) []int32 {
	tab := append([]int32(nil), m.Table[:m.From.Owned*m.Arity]...)
	if to := m.To.Declared; to != nil {
		for i, t := range tab {
			tab[i] = to[t]
		}
	}
	if from := m.From.Declared; from != nil {
		tab = ToDeclared(tab, m.Arity, from)
	}
	return tab
}

// globalRows returns map m's owned rows with their entries in the
// global numbering of the target set, whose halo is to.
func globalRows(m *core.Map, to *SetHalo) []int32 {
	k, owned := m.Arity, m.From.Owned
	rows := make([]int32, owned*k)
	for i, t := range m.Table[:owned*k] {
		rows[i] = to.Global[t]
	}
	return rows
}

// GatherTable collects map m's table over the ranks of c in the global
// numbering (from and to are the halos of its source and target sets):
// rank 0 gets every row, the other ranks nil. Collective.
func GatherTable(c Comm, m *core.Map, from, to *SetHalo) ([]int32, error) {
	var out []int32
	if c.Rank() == 0 {
		out = make([]int32, from.GlobalSize*m.Arity)
	}
	err := GatherRows(c, from.Global[:m.From.Owned], int32Bytes(globalRows(m, to)), 4*m.Arity, int32Bytes(out))
	return out, err
}

// BlockTable collects the rows of this rank's block of map m's source
// elements (ToBlocks' even split) in the global numbering, as
// GatherTable gives them. Collective.
func BlockTable(c Comm, m *core.Map, from, to *SetHalo) (start int, block []int32, err error) {
	start, b, err := ToBlocks(c, from.Global[:m.From.Owned], int32Bytes(globalRows(m, to)), 4*m.Arity, from.GlobalSize)
	if err != nil {
		return 0, nil, err
	}
	block = make([]int32, len(b)/4)
	copy(int32Bytes(block), b)
	return start, block, nil
}

// int32Bytes is v's memory as bytes.
func int32Bytes(v []int32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 4*len(v))
}
