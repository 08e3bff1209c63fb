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
			return nil, fmt.Errorf("op2: map %q from %q to %q: entry %d (element %d, column %d) is %d, outside the target set [0,%d)",
				name, from.c.Name, to.c.Name, i, i/max(arity, 1), i%max(arity, 1), v, limit)
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
	return m.gather64("Gather64")
}

// gather64 is Gather64 under the lock; api names the caller for errors.
func (m *Map) gather64(api string) ([]int64, error) {
	from, ok := m.c.From.Halo.(*dist.SetHalo)
	w := rt.proc.Started()
	if !ok || w == nil {
		t := dist.DeclaredTable(&m.c)
		out := make([]int64, len(t))
		for i, v := range t {
			out[i] = int64(v)
		}
		return out, nil
	}
	to, ok := m.c.To.Halo.(*dist.SetHalo)
	if !ok {
		return nil, fmt.Errorf("op2: %s of map %q: its target set %q is not partitioned", api, m.c.Name, m.c.To.Name)
	}
	what := fmt.Sprintf("%s of map %q", api, m.c.Name)
	if err := mpiFatal(dist.AgreeStep(w, what, nil)); err != nil {
		return nil, fmt.Errorf("op2: %s: %w", what, err)
	}
	// Each rank sends rank 0 its owned rows, in global numbers.
	out, err := dist.GatherTable64(w, &m.c, from, to)
	if err != nil {
		return nil, mpiFatal(fmt.Errorf("op2: %s of map %q: %w", api, m.c.Name, err))
	}
	return out, nil
}

// GatherBlock64 is GatherBlock in 64 bits: the rows of this rank's block
// of the map's source elements in the declared global numbering, for maps
// whose target set's global numbers may exceed int32. Collective.
func (m *Map) GatherBlock64() (start int, table []int64, err error) {
	from, ok := m.c.From.Halo.(*dist.SetHalo)
	w := rt.proc.Started()
	if !ok || w == nil {
		t, err := m.Gather64()
		return 0, t, err
	}
	lock(forNoData, "Map.GatherBlock64")
	defer unlock()
	return m.gatherBlock64(w, from, "GatherBlock64")
}

// gatherBlock64 is GatherBlock64 under the lock, on a partitioned mesh.
func (m *Map) gatherBlock64(w dist.Comm, from *dist.SetHalo, api string) (int, []int64, error) {
	to, ok := m.c.To.Halo.(*dist.SetHalo)
	if !ok {
		return 0, nil, fmt.Errorf("op2: %s of map %q: its target set %q is not partitioned", api, m.c.Name, m.c.To.Name)
	}
	what := fmt.Sprintf("%s of map %q", api, m.c.Name)
	if err := mpiFatal(dist.AgreeStep(w, what, nil)); err != nil {
		return 0, nil, fmt.Errorf("op2: %s: %w", what, err)
	}
	start, table, err := dist.BlockTable64(w, &m.c, from, to)
	if err != nil {
		return 0, nil, mpiFatal(fmt.Errorf("op2: %s: %w", what, err))
	}
	return start, table, nil
}

// narrowTable is a gathered table in 32 bits, or an error naming the map,
// the entry and its value when one does not fit (the 64-bit form, api64,
// is what such a map needs).
func narrowTable(api, api64 string, m *Map, t []int64) ([]int32, error) {
	out := make([]int32, len(t))
	for i, v := range t {
		if v > math.MaxInt32 {
			return nil, fmt.Errorf("op2: %s of map %q: entry %d is %d, beyond int32 (the target set %q is numbered beyond 2³¹): use %s", api, m.c.Name, i, v, m.c.To.Name, api64)
		}
		out[i] = int32(v)
	}
	return out, nil
}
