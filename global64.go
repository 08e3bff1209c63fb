package op2

import (
	"fmt"
	"math"
	"slices"

	"github.com/goop2/op2/internal/dist"
)

// NewMap64 declares a map like NewMap, from 64-bit values: the form a mesh
// needs whose sets have 2³¹ elements or more over all ranks (OP2's
// op_decl_map_long). Under MPI before Partition, values are this rank's
// block's rows in the global numbering, and may exceed int32: Partition
// checks them against the target set's global size and gives the map its
// local table, 32-bit like every map's (local indices stay 32-bit: a
// rank's part of a set is at most 2³¹-1 elements), so loops through it
// cost what loops through any map cost. Without MPI, on one rank, or
// after Partition, values index the target set as NewMap's do. An entry
// outside the target set is an error naming the map, the entry and its
// value.
//
// Until Partition, a map holding numbers beyond int32 keeps its 64-bit
// rows aside (Values returns nothing) and cannot be permuted or composed
// (NewPermutedMap, NewComposedMap); one whose values all fit int32 is
// declared as NewMap declares it.
func NewMap64(from, to *Set, arity int, values []int64, name string) (*Map, error) {
	if from == nil || to == nil {
		return nil, fmt.Errorf("op2: map %q: source and target sets must not be nil", name)
	}
	distributing, err := distributing()
	if err != nil {
		return nil, err
	}
	limit := int64(to.c.Total)
	if distributing {
		limit = math.MaxInt64 // global indices: Partition checks them
	}
	wide := false
	for i, v := range values {
		if v < 0 || v >= limit {
			return nil, fmt.Errorf("op2: map %q from %q to %q: entry %d (element %d, column %d) is %d, outside the target set [0,%d)%s",
				name, from.c.Name, to.c.Name, i, i/max(arity, 1), i%max(arity, 1), v, limit, fromOneHint(values, v, limit))
		}
		wide = wide || v > math.MaxInt32
	}
	if !wide {
		narrow := make([]int32, len(values))
		for i, v := range values {
			narrow[i] = int32(v)
		}
		return NewMap(from, to, arity, narrow, name)
	}
	// Only a distributed declaration gets here: its rows stay 64-bit
	// until Partition makes the local table.
	m, err := NewMap(from, to, arity, make([]int32, len(values)), name)
	if err != nil {
		return nil, err
	}
	lock(forNoData, "NewMap64")
	defer unlock()
	m.table64 = slices.Clone(values)
	m.c.Table = adoptPinned(m, []int32(nil), &m.pin)
	return m, nil
}

// Table64 is the block's 64-bit rows of a map NewMap64 declared with
// numbers beyond int32, nil for any other map (engine.MeshMap64).
func (m meshMap) Table64() []int64 { return m.m.table64 }

// refuse64 is the error of APIs that need a map's 32-bit table before
// Partition, given a map that NewMap64 declared with numbers beyond int32.
func refuse64(api string, m *Map) error {
	if m != nil && m.table64 != nil {
		return fmt.Errorf("op2: %s: map %q holds global numbers beyond int32 (NewMap64) until Partition; declare it after Partition or from 32-bit values", api, m.c.Name)
	}
	return nil
}

// DeclaredNumbers64 returns, for each owned element, its number in the
// numbering the set was declared with, as DeclaredNumbers does, in 64
// bits: the form for sets whose global numbers may exceed int32.
func (s *Set) DeclaredNumbers64() []int64 {
	lock(forNoData, "Set.DeclaredNumbers64")
	defer unlock()
	if d := dist.DeclaredNumbers(&s.c); d != nil {
		return slices.Clone(d[:s.c.Owned])
	}
	out := make([]int64, s.c.Owned)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}

// Gather64 is Gather in 64 bits: the map's table over all ranks in the
// declared global numbering, on rank 0 (nil on the other ranks), for maps
// whose target set's global numbers may exceed int32. Collective.
func (m *Map) Gather64() ([]int64, error) {
	lock(forNoData, "Map.Gather64")
	defer unlock()
	if !rt.proc.Gathered(m.c.From) {
		t := dist.DeclaredTable(&m.c)
		out := make([]int64, len(t))
		for i, v := range t {
			out[i] = int64(v)
		}
		return out, nil
	}
	_, _, table, err := rt.proc.GatherMap(&m.c, "Gather64", "", false)
	return table, err
}

// GatherBlock64 is GatherBlock in 64 bits: the rows of this rank's block
// of the map's source elements in the declared global numbering, for maps
// whose target set's global numbers may exceed int32. Collective.
func (m *Map) GatherBlock64() (start int, table []int64, err error) {
	if !rt.proc.Gathered(m.c.From) {
		t, err := m.Gather64()
		return 0, t, err
	}
	lock(forNoData, "Map.GatherBlock64")
	defer unlock()
	start, _, table, err = rt.proc.GatherMap(&m.c, "GatherBlock64", "", true)
	return start, table, err
}
