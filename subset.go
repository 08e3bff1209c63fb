package op2

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/engine"
)

// Subset is some of the elements of a set (PyOP2's op2.Subset): a loop
// over a subset runs the kernel for those elements only. Everything else
// is as in a loop over the whole set: Dats passed directly (Dat.Arg) live
// on the parent set and the kernel gets the values of the parent element,
// maps are maps from the parent set and the kernel gets the targets of the
// parent element's row. Make one with NewSubset, from a set or from a
// subset (a subset of a subset, itself a subset of the underlying set),
// or with Union, Intersection and Difference from two subsets of one set.
//
// A loop over a subset runs, on every backend, as the loop over a set of
// the subset's elements in which each argument passed directly goes
// through a map holding the subset's indices and each map through a map
// holding the subset's rows of it: the kernel and the results are those of
// the loop over the parent set restricted to the subset, and an execution
// plan colours the subset's elements only. These derived maps are built
// once per subset and map.
//
// In a distributed run (more than one MPI rank) a subset is declared after
// Partition, by every rank (NewSubset is collective then), each naming
// its owned elements in its own numbering (the order of Dat.Data): the
// subset of the whole mesh is the union of the ranks' parts, as a Dat's
// values are. NewSubset then also learns from their owners which of the
// rank's exec halo elements are in the subset, so that a loop over it
// that modifies data through a map computes them (owner compute) as a
// loop over the set does; Size and Indices are the rank's owned part.
// Loops over subsets agree with one rank's. An MPI run on one rank
// behaves as a run without MPI.
type Subset struct {
	parent *Set
	// indices are the subset's elements in the rank's numbering, sorted:
	// owned ones first (the first owned of them), then, in a
	// distributed run, the exec halo elements in the subset.
	indices []int32
	owned   int
	iter    *Set // the subset's elements, 0..n-1, as the loops' iteration set
	ident   *Map // iter → parent: the subset's indices
	derived map[*core.Map]*Map
	// derivedOffsets are matrix arguments' block offsets for the
	// subset's elements, by the first offset of the parent's.
	derivedOffsets map[*int32]*core.Storage
}

// NewSubset declares the subset of set made of the elements indices.
// set is a *Set or a *Subset (PyOP2's Subset(superset, indices)).
//
// Of a *Set, every index must be an owned element of set. Of a *Subset
// (a subset of a subset), the indices are positions in it, in
// [0, parent.Size()): index i stands for the element parent.Indices()[i]
// of the underlying set, and the result is a Subset of that set (its Set
// is the underlying set, as PyOP2 flattens a subset's superset). Loops
// over it, its derived maps and Renumber then work as for any subset of
// the set. A position refers to the parent subset's indices at the time
// of the call (Renumber changes them).
//
// An index out of range is an error naming the index, its position in
// indices and the set or subset. The indices are copied, sorted and
// de-duplicated (a loop runs the kernel once per element of the subset,
// in increasing order on the sequential backend); none gives an empty
// subset, over which loops run nothing. Union, Intersection and
// Difference make subsets from two subsets of one set. In distributed
// runs (more than one MPI rank) it is collective, after Partition, and the
// indices are owned elements in the rank's numbering (see Subset).
func NewSubset(set IterationSet, indices []int32) (*Subset, error) {
	var parent *Set
	var super *Subset
	if ms, ok := set.(*MixedSet); ok && ms != nil {
		return nil, fmt.Errorf("op2: subset of mixed set %q: a subset is of a Set or a Subset; take one of a block's set (MixedSet.Block)", ms.name)
	}
	if x, ok := set.(*ExtrudedSet); ok && x != nil {
		return nil, fmt.Errorf("op2: subset of %v: subsets of extruded sets are not supported; skip elements in the kernel (ArgIdx gives the column, ArgLayer the layer)", x)
	}
	if set != nil {
		parent, super = set.iteration()
	}
	if parent == nil {
		return nil, fmt.Errorf("op2: subset: set is nil")
	}
	w, err := mpiWorld()
	if err != nil {
		return nil, err
	}
	distributed := w != nil && w.Size() > 1
	var idx []int32
	var bad error
	if super != nil {
		pos := super.indicesCopy()[:super.Size()]
		idx = make([]int32, len(indices))
		for i, v := range indices {
			if v < 0 || int(v) >= len(pos) {
				bad = fmt.Errorf("op2: subset of %v: index %d (position %d) is outside the subset's positions [0,%d)", super, v, i, len(pos))
				break
			}
			idx[i] = pos[v]
		}
	} else {
		n := parent.c.Owned
		for i, v := range indices {
			if v < 0 || int(v) >= n {
				bad = fmt.Errorf("op2: subset of set %q: index %d (position %d) is outside the set's elements [0,%d)", parent.c.Name, v, i, n)
				break
			}
		}
		idx = slices.Clone(indices)
	}
	if !distributed {
		if bad != nil {
			return nil, bad
		}
		return newSubset(parent, idx), nil
	}
	return newDistributedSubset(w, parent, idx, bad)
}

// newDistributedSubset is NewSubset's collective part in a distributed
// run: the ranks agree that their indices are good (bad is this rank's
// error, if any), then each learns which of its exec halo elements are in
// the subset from their owners.
func newDistributedSubset(w dist.World, parent *Set, owned []int32, bad error) (*Subset, error) {
	what := fmt.Sprintf("subset of set %q", parent.c.Name)
	lock(forNoData, "NewSubset")
	partitioned := rt.proc.Partitioned()
	unlock()
	if bad == nil && !partitioned {
		bad = fmt.Errorf("op2: %s: in a distributed run subsets are declared after op2.Partition, each rank naming its owned elements in its own numbering", what)
	}
	if err := mpiFatal(dist.AgreeStep(w, what, bad)); err != nil {
		return nil, fmt.Errorf("op2: %w", err)
	}
	lock(forNoData, "NewSubset")
	defer unlock()
	idx, err := engine.WithExecHalo(w, &parent.c, owned, "op2: "+what+": learning its exec halo elements")
	if err := mpiFatal(err); err != nil {
		return nil, err
	}
	return newSubset(parent, idx), nil
}

// newSubset makes the subset of set made of the checked elements idx (in
// a distributed run owned elements and exec halo elements), which it
// sorts and de-duplicates in place. The iteration set's sections follow
// the parent's: core, owned and exec halo elements of the subset.
func newSubset(set *Set, idx []int32) *Subset {
	slices.Sort(idx)
	idx = slices.Compact(idx)
	sub := &Subset{parent: set, derived: map[*core.Map]*Map{}}
	name := set.c.Name + "[subset]"
	below := func(n int) int {
		k, _ := slices.BinarySearch(idx, int32(n))
		return k
	}
	sub.owned = below(set.c.Owned)
	sub.iter = &Set{core.Set{Name: name, Core: below(set.c.Core), Owned: sub.owned, Exec: len(idx), Total: len(idx), ID: core.NewID(), SubsetOf: set.c.ID}}
	core.Track(&sub.iter.c) // plans built for the subset go when it does
	sub.ident = derivedMap(sub.iter, set, 1, idx, name)
	sub.indices = sub.ident.c.Table
	registerSubset(sub)
	return sub
}

// indicesCopy returns a copy of the subset's indices, read under the lock
// (Renumber changes them in place).
func (sub *Subset) indicesCopy() []int32 {
	lock(forNoData, "Subset.Indices")
	defer unlock()
	return slices.Clone(sub.indices)
}

// Union returns the subset of the elements in sub or in other (PyOP2's
// a | b). other is a subset of the same set, or the set itself (all its
// elements); otherwise the error names both.
func (sub *Subset) Union(other IterationSet) (*Subset, error) {
	// newSubset sorts and de-duplicates the two lists together.
	return sub.combine("union", other, func(a, b []int32) []int32 { return append(a, b...) })
}

// Intersection returns the subset of the elements in both sub and other
// (PyOP2's a & b), which may be empty. other is a subset of the same set,
// or the set itself; otherwise the error names both.
func (sub *Subset) Intersection(other IterationSet) (*Subset, error) {
	return sub.combine("intersection", other, engine.IntersectSorted)
}

// Difference returns the subset of the elements in sub and not in other
// (PyOP2's a - b), which may be empty. other is a subset of the same set,
// or the set itself; otherwise the error names both.
func (sub *Subset) Difference(other IterationSet) (*Subset, error) {
	return sub.combine("difference", other, engine.SubtractSorted)
}

// combine checks that sub and other are subsets of one set and returns
// the subset of op's elements, op being given both sorted index lists.
func (sub *Subset) combine(name string, other IterationSet, op func(a, b []int32) []int32) (*Subset, error) {
	if sub == nil || sub.parent == nil {
		return nil, fmt.Errorf("op2: %s of subsets: the subset is nil", name)
	}
	var set *Set
	var o *Subset
	if x, ok := other.(*ExtrudedSet); ok && x != nil {
		return nil, fmt.Errorf("op2: %s of %v and %v: subsets of extruded sets are not supported", name, sub, x)
	}
	if other != nil {
		set, o = other.iteration()
	}
	if ms, ok := other.(*MixedSet); ok && ms != nil {
		return nil, fmt.Errorf("op2: %s of %v and mixed set %q: they are not subsets of one set", name, sub, ms.name)
	}
	if set == nil {
		return nil, fmt.Errorf("op2: %s of %v and a nil set or subset", name, sub)
	}
	if set != sub.parent {
		return nil, fmt.Errorf("op2: %s of %v and %v: they are not subsets of one set", name, sub, other)
	}
	var b []int32
	if o != nil {
		b = o.indicesCopy()
	} else {
		// All the set's elements a loop over it runs: owned and, in a
		// distributed run, exec halo.
		b = make([]int32, set.c.Exec)
		for i := range b {
			b[i] = int32(i)
		}
	}
	return newSubset(set, op(sub.indicesCopy(), b)), nil
}

// derivedMap makes a map for a subset's loops, unchecked: its values come
// from the subset's indices and from a checked map.
func derivedMap(from, to *Set, arity int, values []int32, name string) *Map {
	m := &Map{}
	table := repinned[int32](m, len(values), &m.pin)
	copy(table, values)
	m.c = core.Map{Name: name, From: &from.c, To: &to.c, Arity: arity, Table: table, ID: core.NewID()}
	core.Track(&m.c) // plans built with the map go when it does
	return m
}

func (sub *Subset) iteration() (*Set, *Subset) {
	if sub == nil {
		return nil, nil
	}
	return sub.parent, sub
}

// Name names the subset in messages: the parent set's name followed by
// "[subset]".
func (sub *Subset) Name() string { return sub.iter.c.Name }

// Size is the number of elements in the subset: in a distributed run, of
// the rank's owned elements.
func (sub *Subset) Size() int { return sub.owned }

// Set is the parent set: for a subset of a subset, the underlying set.
func (sub *Subset) Set() *Set { return sub.parent }

// Indices returns a copy of the subset's elements, sorted, without
// duplicates: in a distributed run, its owned elements in the rank's
// numbering.
func (sub *Subset) Indices() []int32 { return slices.Clone(sub.indices[:sub.owned]) }

func (sub *Subset) String() string {
	return fmt.Sprintf("subset of set %q (%d of %d elements)", sub.parent.c.Name, sub.owned, sub.parent.c.Owned)
}

// rowsOf returns the map from the subset's elements holding the rows of
// m (a map from the parent set) for them, building it the first time.
func (sub *Subset) rowsOf(m *core.Map) *Map {
	if d, ok := sub.derived[m]; ok {
		return d
	}
	values := engine.SubsetRows(make([]int32, 0, len(sub.indices)*m.Arity), m.Table, sub.indices, m.Arity)
	d := derivedMap(sub.iter, setOf(m.To), m.Arity, values, m.Name+"[subset]")
	sub.derived[m] = d
	return d
}

// offsetRows returns the rows of a matrix argument's block offsets (n
// per element of the parent set) for the subset's elements, and their
// storage, building them the first time.
func (sub *Subset) offsetRows(off []int32, n int) ([]int32, *core.Storage) {
	if len(off) == 0 {
		return off, core.NewIndexStorage("block offsets (empty)", nil)
	}
	if d, ok := sub.derivedOffsets[&off[0]]; ok {
		return unsafe.Slice((*int32)(d.Host), d.Len), d
	}
	d := engine.SubsetRows(pinned[int32](sub, len(sub.indices)*n)[:0], off, sub.indices, n)
	if sub.derivedOffsets == nil {
		sub.derivedOffsets = map[*int32]*core.Storage{}
	}
	s := core.NewIndexStorage(fmt.Sprintf("block offsets of a subset of set %q", sub.parent.c.Name), d)
	sub.derivedOffsets[&off[0]] = s
	return d, s
}

// restrict turns l, bound for a loop over the parent set, into the loop
// over the subset's elements (engine.RestrictToSubset): direct arguments
// go through the subset's indices, map arguments through the subset's
// rows of their maps. Caller holds the lock.
func (sub *Subset) restrict(l *core.Loop) {
	engine.RestrictToSubset(l, &sub.iter.c, &sub.ident.c, subsetMaps{sub})
}

// subsetMaps is a subset's derived maps as the engine asks for them
// (engine.SubsetMaps).
type subsetMaps struct{ sub *Subset }

func (m subsetMaps) Rows(c *core.Map) *core.Map { return &m.sub.rowsOf(c).c }

func (m subsetMaps) OffsetRows(off []int32, n int) ([]int32, *core.Storage) {
	return m.sub.offsetRows(off, n)
}
