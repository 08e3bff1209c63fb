package op2

import (
	"fmt"
	"math"
	"runtime"
	"unsafe"

	"github.com/goop2/op2/internal/core"
)

// Set is a collection of mesh elements (nodes, edges, cells) that loops run
// over and data lives on.
//
// A set's elements come in sections, ready for distributed runs: core
// elements, the other owned elements, the exec halo and the non-exec halo.
// Without MPI every element is a core element and all sections end at Size.
type Set struct {
	c core.Set
}

// NewSet declares a set of size elements.
func NewSet(size int, name string) (*Set, error) {
	if size < 0 {
		return nil, fmt.Errorf("op2: set %q: negative size %d", name, size)
	}
	if size > 1<<31-1 {
		return nil, fmt.Errorf("op2: set %q: size %d exceeds the int32 index range", name, size)
	}
	if err := declareDistributed(fmt.Sprintf("set %q", name)); err != nil {
		return nil, err
	}
	s := &Set{core.Set{Name: name, Core: size, Owned: size, Exec: size, Total: size, ID: core.NewID()}}
	core.Track(&s.c) // plans built for the set go when it does
	registerSet(s)
	if distributing, _ := distributing(); distributing {
		rt.dist.sets = append(rt.dist.sets, s)
	}
	return s, nil
}

func setOf(c *core.Set) *Set {
	// core.Set is the only field of Set, so the addresses coincide.
	return (*Set)(unsafe.Pointer(c))
}

// Name is the set's name.
func (s *Set) Name() string { return s.c.Name }

// Size is the number of owned elements.
func (s *Set) Size() int { return s.c.Owned }

// CoreSize is the number of core elements: owned elements whose loops need
// no halo data.
func (s *Set) CoreSize() int { return s.c.Core }

// ExecSize is the number of owned plus exec-halo elements.
func (s *Set) ExecSize() int { return s.c.Exec }

// TotalSize is the number of elements including both halos.
func (s *Set) TotalSize() int { return s.c.Total }

func (s *Set) String() string { return fmt.Sprintf("set %q (%d elements)", s.c.Name, s.c.Owned) }

// Map connects each element of one set to arity elements of another, e.g.
// each edge to its two nodes.
type Map struct {
	c   core.Map
	pin *runtime.Pinner // the table's pin (repinned)
}

// NewMap declares a map from one set to another with arity entries per
// element. values holds from.Size()×arity indices, element after element;
// it is copied, and every entry is checked against the target set. arity
// may be at most MaxDim and the table at most MaxDataBytes.
func NewMap(from, to *Set, arity int, values []int32, name string) (*Map, error) {
	if from == nil || to == nil {
		return nil, fmt.Errorf("op2: map %q: source and target sets must not be nil", name)
	}
	want, err := checkShape(fmt.Sprintf("map %q from %q to %q", name, from.c.Name, to.c.Name), "arity", from.c.Total, arity, 4)
	if err != nil {
		return nil, err
	}
	if len(values) != want {
		return nil, fmt.Errorf("op2: map %q from %q to %q: %d values given, want %d (%d elements × arity %d)",
			name, from.c.Name, to.c.Name, len(values), want, from.c.Total, arity)
	}
	if err := declareDistributed(fmt.Sprintf("map %q", name)); err != nil {
		return nil, err
	}
	limit := int32(to.c.Total)
	distributing, _ := distributing()
	if distributing {
		limit = math.MaxInt32 // global indices: Partition checks them
	}
	for i, v := range values {
		if v < 0 || v >= limit {
			return nil, fmt.Errorf("op2: map %q from %q to %q: entry %d (element %d, column %d) is %d, outside the target set [0,%d)",
				name, from.c.Name, to.c.Name, i, i/arity, i%arity, v, limit)
		}
	}
	m := &Map{}
	table := repinned[int32](m, len(values), &m.pin)
	copy(table, values)
	m.c = core.Map{Name: name, From: &from.c, To: &to.c, Arity: arity, Table: table, ID: core.NewID()}
	core.Track(&m.c) // plans built with the map go when it does
	registerMap(m)
	if distributing {
		rt.dist.maps = append(rt.dist.maps, m)
	}
	return m, nil
}

func mapCore(m *Map) *core.Map {
	if m == nil {
		return nil
	}
	return &m.c
}

// Name is the map's name.
func (m *Map) Name() string { return m.c.Name }

// Arity is the number of target elements per source element.
func (m *Map) Arity() int { return m.c.Arity }

// From is the source set.
func (m *Map) From() *Set { return setOf(m.c.From) }

// To is the target set.
func (m *Map) To() *Set { return setOf(m.c.To) }

// Values returns a copy of the table.
func (m *Map) Values() []int32 { return append([]int32(nil), m.c.Table...) }

// NewPermutedMap declares the map that gives, for each element, m's
// entries in the order perm says (PyOP2's PermutedMap): entry j of an
// element's row is m's entry perm[j], and perm is a permutation of 0 to
// m.Arity()-1. It goes between m's sets and may be used wherever m may:
// in loops and in sparsities. Before Partition (and without MPI) it is
// declared like any map and follows m through Partition and Renumber;
// after Partition it is made from each rank's part of m, whose halos it
// shares.
func NewPermutedMap(m *Map, perm []int, name string) (*Map, error) {
	if m == nil {
		return nil, fmt.Errorf("op2: permuted map %q: the map is nil", name)
	}
	ar := m.c.Arity
	seen := make([]bool, ar)
	if len(perm) != ar {
		return nil, fmt.Errorf("op2: permuted map %q of map %q: %d entries in the permutation, want the map's arity %d", name, m.c.Name, len(perm), ar)
	}
	for j, p := range perm {
		if p < 0 || p >= ar || seen[p] {
			return nil, fmt.Errorf("op2: permuted map %q of map %q: %v is not a permutation of 0 to %d (entry %d is %d)", name, m.c.Name, perm, ar-1, j, p)
		}
		seen[p] = true
	}
	mu.Lock()
	partitioned := rt.dist.partitioned()
	table := m.c.Table
	values := make([]int32, len(table))
	for e := 0; e < len(table)/ar; e++ {
		for j, p := range perm {
			values[e*ar+j] = table[e*ar+p]
		}
	}
	mu.Unlock()
	if partitioned {
		return derivedMap(setOf(m.c.From), setOf(m.c.To), ar, values, name), nil
	}
	return NewMap(setOf(m.c.From), setOf(m.c.To), ar, values, name)
}
