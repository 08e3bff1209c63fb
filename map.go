package op2

import (
	"cmp"
	"fmt"
	"math"
	"runtime"
	"slices"
	"weak"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/engine"
)

// Map connects each element of one set to arity elements of another, e.g.
// each edge to its two nodes.
type Map struct {
	c       core.Map
	pin     *runtime.Pinner // the table's pin (repinned)
	table64 []int64         // NewMap64's block rows beyond int32, until Partition
}

// fromOneHint is what an error on entry v of a map table says when the
// table looks numbered from 1 (v is the set's size and no entry is 0), as
// OP2's C programs' tables often are, or "".
func fromOneHint[T int32 | int64](values []T, v, limit T) string {
	if v != limit || slices.Contains(values, 0) {
		return ""
	}
	return ": the table looks numbered from 1, and a map's entries number the target set's elements from 0 (subtract 1; hdf5.File.SetMapBase(1) reads an OP2 file's maps so)"
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
		switch {
		case distributing && v < 0:
			// The rank's block, whose place among the ranks' Partition
			// finds: its own numbers, and no set size to name.
			return nil, fmt.Errorf("op2: map %q from %q to %q: entry %d of this rank's block (its element %d, column %d) is %d: entries are global numbers of the target set's elements, from 0",
				name, from.c.Name, to.c.Name, i, i/arity, i%arity, v)
		case v < 0 || v >= limit:
			return nil, fmt.Errorf("op2: map %q from %q to %q: entry %d (element %d, column %d) is %d, outside the target set [0,%d)%s",
				name, from.c.Name, to.c.Name, i, i/arity, i%arity, v, limit, fromOneHint(values, v, limit))
		}
	}
	m := &Map{}
	table := repinned[int32](m, len(values), &m.pin)
	copy(table, values)
	m.c = core.Map{Name: name, From: &from.c, To: &to.c, Arity: arity, Table: table, ID: core.NewID()}
	core.Track(&m.c) // plans built with the map go when it does
	// Renumber finds it, without keeping it alive.
	rt.proc.RegisterMap(weak.Make(&m.c).Value)
	if distributing {
		rt.proc.AddBlockMap(meshMap{m})
	} else {
		// Looked at by the first loop through it: a loader that
		// renumbers the mesh it declares (mesh/unstructured) has done
		// so by then, and the advice would not apply.
		m.c.LocalityUnchecked = true
	}
	return m, nil
}

// Locality returns how well m's numbering keeps consecutive elements
// together: the median, over consecutive elements of its source set (up
// to 4 096 pairs, evenly spaced), of the distance between their first
// targets, and whether that is poor locality, a median above 256 and
// above 1% of the target set: the rule of the warning logged by the first
// loop through a map. Loops through a map with poor locality run faster
// once the mesh is renumbered (Renumber).
func (m *Map) Locality() (medianGap int, poor bool) {
	gap := engine.MedianGap(m.c.Table, m.c.Arity, m.c.From.Total)
	return gap, engine.PoorLocality(gap, m.c.To.Total)
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

// Values returns a copy of the table (empty for a map NewMap64 declared
// with numbers beyond int32 under MPI, until Partition).
func (m *Map) Values() []int32 {
	lock(forNoData, "Map.Values") // Partition and Renumber change it
	defer unlock()
	return append([]int32(nil), m.c.Table...)
}

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
	if err := refuse64(fmt.Sprintf("permuted map %q", name), m); err != nil {
		return nil, err
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
	partitioned, values := func() (bool, []int32) {
		lock(forNoData, "NewPermutedMap")
		defer unlock()
		table := m.c.Table
		values := make([]int32, len(table))
		for e := 0; e < len(table)/ar; e++ {
			for j, p := range perm {
				values[e*ar+j] = table[e*ar+p]
			}
		}
		return rt.proc.Partitioned(), values
	}()
	if partitioned {
		return derivedMap(setOf(m.c.From), setOf(m.c.To), ar, values, name), nil
	}
	return NewMap(setOf(m.c.From), setOf(m.c.To), ar, values, name)
}

// NewComposedMap declares the composition of maps (PyOP2's ComposedMap),
// given in PyOP2's order, the order of function composition: the last map
// goes from the new map's source set, each map goes to the set the one
// before it comes from, and the first map goes to the new map's target
// set. For two maps, NewComposedMap(name, outer, inner), with inner from
// S1 to S2 of arity ki and outer from S2 to S3 of arity ko, gives the map
// from S1 to S3 of arity ki×ko whose entry i×ko+j of element e is outer's
// entry j of element inner[e][i]: each of inner's entries expands into
// outer's row for it, in inner's order. PyOP2 asks every map but the
// first to have arity 1, which makes the arity the first map's; GoOP2
// allows any arities, whose product may be at most MaxDim.
//
// The composition is evaluated once, here, into a plain table: the map
// may be used wherever a map declared with NewMap may, in loops, in
// sparsities, and it follows Partition and Renumber like any map. Under
// MPI it must be declared before Partition, by every rank (it is
// collective then: each rank fetches the rows of the outer maps that its
// block's entries name from the ranks that declared them), so that
// Partition builds the halos that loops through it need; after Partition
// it is refused. A nil map, fewer than two maps, or maps whose sets do not
// chain are errors naming the maps and the sets.
func NewComposedMap(name string, maps ...*Map) (*Map, error) {
	arity, table, err := composedTable(fmt.Sprintf("composed map %q", name), maps, "NewComposedMap")
	if err != nil {
		return nil, err
	}
	return NewMap(setOf(maps[len(maps)-1].c.From), setOf(maps[0].c.To), arity, table, name)
}

// composedTable checks NewComposedMap's maps and evaluates their
// composition: its arity and table.
func composedTable(what string, maps []*Map, api string) (int, []int32, error) {
	arity, err := checkComposed(what, maps)
	for _, m := range maps {
		err = cmp.Or(err, refuse64(what, m))
	}
	w, werr := mpiWorld()
	if werr != nil {
		return 0, nil, werr
	}
	lock(forNoData, api)
	defer unlock()
	distributing := w != nil && w.Size() > 1 && !rt.proc.Partitioned()
	switch {
	case distributing:
		// Collective: a rank that refuses the maps says so to every
		// rank before any rows move.
		if err := mpiFatal(dist.AgreeStep(w, what, err)); err != nil {
			return 0, nil, fmt.Errorf("op2: %w", err)
		}
	case err != nil:
		return 0, nil, err
	case rt.proc.Partitioned():
		return 0, nil, fmt.Errorf("op2: %s declared after Partition: compose maps before op2.Partition, which then builds the halos that loops through the composed map need", what)
	}
	cs := make([]*core.Map, len(maps))
	for i, m := range maps {
		cs[i] = &m.c
	}
	table, err := rt.proc.ComposeTables(cs, what, distributing)
	return arity, table, err
}

// checkComposed checks NewComposedMap's maps and returns the composed
// map's arity.
func checkComposed(what string, maps []*Map) (int, error) {
	if len(maps) < 2 {
		return 0, fmt.Errorf("op2: %s: %d maps given; a composition needs at least two", what, len(maps))
	}
	arity := 1
	for i, m := range maps {
		if m == nil {
			return 0, fmt.Errorf("op2: %s: map %d of %d is nil", what, i, len(maps))
		}
		if i > 0 && m.c.To != maps[i-1].c.From {
			return 0, fmt.Errorf("op2: %s: map %q goes to set %q, but map %q, which comes before it, goes from set %q (each map must go to the set the one before it comes from)",
				what, m.c.Name, m.c.To.Name, maps[i-1].c.Name, maps[i-1].c.From.Name)
		}
		if arity *= m.c.Arity; arity > MaxDim {
			return 0, fmt.Errorf("op2: %s: its arity, the product of the maps' arities %s, exceeds the largest allowed, %d (op2.MaxDim)", what, arities(maps[:i+1]), MaxDim)
		}
	}
	// The table's size, checked before it is made.
	from, to := maps[len(maps)-1].c.From, maps[0].c.To
	if _, err := checkShape(fmt.Sprintf("%s from %q to %q", what, from.Name, to.Name), "arity", from.Total, arity, 4); err != nil {
		return 0, err
	}
	return arity, nil
}

// arities lists the maps' arities for messages, as "2×1×3".
func arities(maps []*Map) string {
	s := ""
	for i, m := range maps {
		if i > 0 {
			s += "×"
		}
		s += fmt.Sprint(m.c.Arity)
	}
	return s
}

// GatherBlock collects the rows of this rank's block of the map's source
// elements in the declared global numbering (the elements [start,
// start+len(table)/Arity) of the split Dat.GatherBlock uses), holding
// global indices of the target set, as Gather gives them. It is
// collective: every rank must call it, and no rank holds more than its
// own rows and its block. Without MPI it returns 0 and what Gather
// returns.
func (m *Map) GatherBlock() (start int, table []int32, err error) {
	if !rt.proc.Gathered(m.c.From) {
		t, err := m.Gather()
		return 0, t, err
	}
	lock(forNoData, "Map.GatherBlock")
	defer unlock()
	start, table, _, err = rt.proc.GatherMap(&m.c, "GatherBlock", "GatherBlock64", true)
	return start, table, err
}

// Gather collects the map's table over all ranks in the declared global
// numbering: element e's arity entries at [e*arity, (e+1)*arity), holding
// global indices of the target set. Rank 0 gets them, the other ranks
// nil. It is collective: every rank must call it. Without MPI it returns
// a copy of the table (as Values does), except after Renumber: then rows
// and entries are in the declared numbering, as under MPI.
func (m *Map) Gather() ([]int32, error) {
	lock(forNoData, "Map.Gather")
	defer unlock()
	if !rt.proc.Gathered(m.c.From) {
		return dist.DeclaredTable(&m.c), nil
	}
	_, table, _, err := rt.proc.GatherMap(&m.c, "Gather", "Gather64", false)
	return table, err
}
