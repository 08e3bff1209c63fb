package dist

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/goop2/op2/internal/core"
)

// DeclaredNumbers is the declared (global) number of each local element
// of s, or nil when that is the element's own number.
func DeclaredNumbers(s *core.Set) []int64 {
	if h, ok := s.Halo.(*SetHalo); ok {
		return h.Global
	}
	if s.Declared == nil {
		return nil
	}
	return widen(make([]int64, 0, len(s.Declared)), s.Declared)
}

// DeclaredRows is DeclaredNumbers less the set's first global number
// (SetHalo.Base): each local element's row in arrays of the whole set;
// nil when that is the element's own number.
func DeclaredRows(s *core.Set) []int64 {
	h, ok := s.Halo.(*SetHalo)
	if !ok || h.Base == 0 {
		return DeclaredNumbers(s)
	}
	return h.Rows(len(h.Global))
}

// Narrow returns the global numbers g as int32, or an error naming what
// they number and the first that does not fit.
func Narrow(what string, g []int64) ([]int32, error) {
	if g == nil {
		return nil, nil
	}
	out := make([]int32, len(g))
	for i, v := range g {
		if v < 0 || v > math.MaxInt32 {
			return nil, fmt.Errorf("%s: element %d has global number %d, beyond int32 (use the 64-bit form)", what, i, v)
		}
		out[i] = int32(v)
	}
	return out, nil
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
func globalRows(m *core.Map, to *SetHalo) []int64 {
	k, owned := m.Arity, m.From.Owned
	rows := make([]int64, owned*k)
	for i, t := range m.Table[:owned*k] {
		rows[i] = to.Global[t]
	}
	return rows
}

// Fits32 reports whether every global number of set s fits int32.
func (h *SetHalo) Fits32() bool { return h.Base+int64(h.GlobalSize) <= math.MaxInt32+1 }

// globalRows32 is globalRows in 32 bits, for a target set whose global
// numbers fit int32 (Fits32).
func globalRows32(m *core.Map, to *SetHalo) []int32 {
	k, owned := m.Arity, m.From.Owned
	rows := make([]int32, owned*k)
	for i, t := range m.Table[:owned*k] {
		rows[i] = int32(to.Global[t])
	}
	return rows
}

// GatherTable is GatherTable64 in 32 bits, for a target set whose global
// numbers fit int32 (SetHalo.Fits32). Collective.
func GatherTable(c Comm, m *core.Map, from, to *SetHalo) ([]int32, error) {
	var out []int32
	if c.Rank() == 0 {
		out = make([]int32, from.GlobalSize*m.Arity)
	}
	err := GatherRows(c, from.Global[:m.From.Owned], from.Base, int32Bytes(globalRows32(m, to)), 4*m.Arity, int32Bytes(out))
	return out, err
}

// BlockTable is BlockTable64 in 32 bits, for a target set whose global
// numbers fit int32 (SetHalo.Fits32). Collective.
func BlockTable(c Comm, m *core.Map, from, to *SetHalo) (start int, block []int32, err error) {
	start, b, err := ToBlocks(c, from.Global[:m.From.Owned], from.Base, int32Bytes(globalRows32(m, to)), 4*m.Arity, from.GlobalSize)
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

// GatherTable64 collects map m's table over the ranks of c in the global
// numbering (from and to are the halos of its source and target sets):
// rank 0 gets every row, the other ranks nil. Collective.
func GatherTable64(c Comm, m *core.Map, from, to *SetHalo) ([]int64, error) {
	var out []int64
	if c.Rank() == 0 {
		out = make([]int64, from.GlobalSize*m.Arity)
	}
	err := GatherRows(c, from.Global[:m.From.Owned], from.Base, int64Bytes(globalRows(m, to)), 8*m.Arity, int64Bytes(out))
	return out, err
}

// BlockTable64 collects the rows of this rank's block of map m's source
// elements (ToBlocks' even split) in the global numbering, as
// GatherTable64 gives them. Collective.
func BlockTable64(c Comm, m *core.Map, from, to *SetHalo) (start int, block []int64, err error) {
	start, b, err := ToBlocks(c, from.Global[:m.From.Owned], from.Base, int64Bytes(globalRows(m, to)), 8*m.Arity, from.GlobalSize)
	if err != nil {
		return 0, nil, err
	}
	block = make([]int64, len(b)/8)
	copy(int64Bytes(block), b)
	return start, block, nil
}

// int64Bytes is v's memory as bytes.
func int64Bytes(v []int64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 8*len(v))
}

// numberBase is BlockMesh.Base for the meshes op2.Partition distributes:
// 0, but in tests (SetNumberBaseForTest).
var numberBase int64

// NumberBase is the global number of every set's first element in the
// meshes op2.Partition distributes: 0, unless a test set another
// (SetNumberBaseForTest). Readers of files in the declared numbering
// (package hdf5) subtract it to find an element's row.
func NumberBase() int64 { return numberBase }

// SetNumberBaseForTest makes every set that op2.Partition distributes
// numbered from base instead of 0: the global numbers of a set of n
// elements are [base, base+n), in the blocks' maps (op2.NewMap64) and in
// Set.DeclaredNumbers64, and rows of whole-set arrays (Gather, files,
// checkpoints) are global numbers less base. Tests use it to carry a
// small mesh's global numbers beyond 2³¹ without the memory of a mesh
// that large. It returns the previous base.
func SetNumberBaseForTest(base int64) int64 {
	old := numberBase
	numberBase = base
	return old
}

// MapPrint returns this rank's part of a fingerprint of map m in the
// declared numbering: for each owned source element, a hash of its
// declared row (DeclaredRows) and its row's targets' declared rows, cut
// into three 21-bit parts, each summed over the rows (a Print). The sums
// over every rank are the same however the mesh is partitioned or
// renumbered, and differ, but for a chance of about 2⁻⁶³, for another
// table (Print.Sum). A rank's part changes only
// when Partition gives its source set another halo: it is kept in m
// until then.
func MapPrint(m *core.Map) Print {
	if m.Print.Valid && m.Print.For == m.From.Halo {
		return m.Print.Parts
	}
	from, to := declaredRows(m.From), declaredRows(m.To)
	var parts Print
	for i := range m.From.Owned {
		h := mix64(uint64(from.row(i)) ^ 0x9e3779b97f4a7c15)
		for _, t := range m.Table[i*m.Arity : (i+1)*m.Arity] {
			v := int64(t)
			if t >= 0 {
				v = to.row(int(t))
			}
			h = mix64(h ^ uint64(v))
		}
		parts.add(h)
	}
	m.Print = core.MapPrintCache{Parts: parts, For: m.From.Halo, Valid: true}
	return parts
}

// Print is a fingerprint of rows that does not depend on which rank holds
// which: each row's hash, cut into three 21-bit parts, each summed over
// the rows. The parts summed over every rank (mpi.Sum), which no count of
// rows can overflow, give the fingerprint (Sum); another set of rows gives
// another but for a chance of about 2⁻⁶³.
type Print [3]int64

// add adds a row's hash.
func (p *Print) add(h uint64) {
	p[0] += int64(h & (1<<21 - 1))
	p[1] += int64(h >> 21 & (1<<21 - 1))
	p[2] += int64(h >> 42 & (1<<21 - 1))
}

// AddRows adds the rows of values, elem bytes each (elem > 0), whose row
// numbers in the whole array are rows[i] less base, or first+i where rows
// is nil.
func (p *Print) AddRows(values []byte, elem int, rows []int64, base, first int64) {
	for i := range len(values) / elem {
		row := first + int64(i)
		if rows != nil {
			row = rows[i] - base
		}
		p.add(rowHash(row, values[i*elem:(i+1)*elem]))
	}
}

// Sum combines the parts, summed over the ranks, into one fingerprint.
func (p Print) Sum() uint64 {
	return mix64(uint64(p[0])) ^ mix64(uint64(p[1])+0x632be59bd9b4e019) ^ mix64(uint64(p[2])+0x85ebca6b)
}

// rowHash hashes row number row and its bytes b. Each 8-byte word goes
// through a bijective multiply and xor-shift, so a row that differs in
// one word always hashes otherwise; about a nanosecond a word.
func rowHash(row int64, b []byte) uint64 {
	h := mix64(uint64(row)^0x2545f4914f6cdd1d) ^ uint64(len(b))
	for len(b) >= 8 {
		h = (h ^ binary.LittleEndian.Uint64(b)) * 0x9fb21c651e98df25
		h ^= h >> 29
		b = b[8:]
	}
	if len(b) > 0 {
		var tail [8]byte
		copy(tail[:], b)
		h = (h ^ binary.LittleEndian.Uint64(tail[:])) * 0x9fb21c651e98df25
		h ^= h >> 29
	}
	return mix64(h)
}

// rows reads a set's declared rows (DeclaredRows) in place.
type rows struct {
	global   []int64 // under MPI: global numbers, less base
	base     int64
	declared []int32 // renumbered, without MPI
}

func declaredRows(s *core.Set) rows {
	if h, ok := s.Halo.(*SetHalo); ok {
		return rows{global: h.Global, base: h.Base}
	}
	return rows{declared: s.Declared}
}

// row is local element i's declared row.
func (r rows) row(i int) int64 {
	switch {
	case r.global != nil:
		return r.global[i] - r.base
	case r.declared != nil:
		return int64(r.declared[i])
	}
	return int64(i)
}

// mix64 is splitmix64's finaliser.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
