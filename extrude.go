package op2

import (
	"fmt"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/engine"
)

// ExtrudedSet is a set made by stacking Layers copies of each element of
// a base set in a column (PyOP2's ExtrudedSet): a 2-D mesh's triangles
// extruded into prisms, its nodes into the nodes of the prisms. Element
// (c, l) is layer l of column c, where c is an element of the base set.
//
// Each extruded set has the number of layers of its own elements. A
// mesh of n cell layers has nodes in n+1 layers, so its cells are
// NewExtrudedSet(baseCells, n, …) and its nodes NewExtrudedSet(baseNodes,
// n+1, …). (PyOP2 gives one ExtrudedSet the number of node layers L and
// runs cell loops over L-1 of them; here the cells' set simply has L-1
// layers.)
//
// A loop over an extruded set (ParLoop, NewLoop, Generate) runs the
// kernel for every layer of every column: the columns are distributed,
// planned and coloured like the elements of the base set, and the layers
// of one column run one after another, in increasing order, in one
// thread or work item. Dats on it (NewExtrudedDat) are passed directly
// (Dat.Arg: the element's values) or through an ExtrudedMap
// (Dat.ArgExtMap, Dat.ArgExtVec); ArgLayer passes the element's layer.
// Under MPI the columns follow the base set: partitioning, halos and
// Renumber of the base set move whole columns.
type ExtrudedSet struct {
	x     core.Extrusion // first field: extrudedOf converts back
	base  *Set
	layer *core.Storage // each element's layer, made by the first ArgLayer
	// layerOwner owns the memory of layer's current values
	// (engine.LayerData), as core.Set.IndexOwner does.
	layerOwner any
	ranges     *Dat[int32] // each column's layer range (variable layers), else nil
}

// NewExtrudedSet declares the extruded set of layers layers of each
// element of base.
func NewExtrudedSet(base *Set, layers int, name string) (*ExtrudedSet, error) {
	if base == nil {
		return nil, fmt.Errorf("op2: extruded set %q: base set is nil", name)
	}
	if layers < 1 || layers > MaxDim {
		return nil, fmt.Errorf("op2: extruded set %q of set %q: %d layers; want 1 to %d (op2.MaxDim)", name, base.c.Name, layers, MaxDim)
	}
	return &ExtrudedSet{x: core.Extrusion{Name: name, Base: &base.c, Layers: layers, ID: core.NewID()}, base: base}, nil
}

// NewVariableExtrudedSet declares an extruded set whose columns have
// layers of their own (PyOP2's variable layers): column c has the layers
// ranges[2c] to ranges[2c+1]-1, with 0 <= ranges[2c] <= ranges[2c+1] <=
// layers, and a loop over the set runs the kernel for those layers only,
// in increasing order. ranges holds two values per element of base
// (base.Size() of them, or base.TotalSize()), in the order base is
// declared in; under MPI each rank gives its block, and the ranges move
// with the columns in Partition and Renumber. Dats on the set hold all
// layers of every column (NewExtrudedDat), those outside a column's
// range untouched by loops; extruded maps are checked against the
// layers, not against the ranges.
func NewVariableExtrudedSet(base *Set, layers int, ranges []int32, name string) (*ExtrudedSet, error) {
	s, err := NewExtrudedSet(base, layers, name)
	if err != nil {
		return nil, err
	}
	b := &base.c
	if len(ranges) != 2*b.Owned && len(ranges) != 2*b.Total {
		return nil, fmt.Errorf("op2: extruded set %q of set %q: %d layer range values given, want %d (2 per element of the base set)", name, b.Name, len(ranges), 2*b.Owned)
	}
	for c := 0; c < len(ranges)/2; c++ {
		if lo, hi := ranges[2*c], ranges[2*c+1]; lo < 0 || lo > hi || int(hi) > layers {
			return nil, fmt.Errorf("op2: extruded set %q of set %q: column %d has layers [%d,%d), not a range within [0,%d)", name, b.Name, c, lo, hi, layers)
		}
	}
	d, err := own(NewDat(base, 2, ranges, name+" layer ranges"))
	if err != nil {
		return nil, err
	}
	s.ranges = d
	s.x.Ranges = &d.s
	return s, nil
}

// Variable reports whether the set's columns have layer ranges of their
// own (NewVariableExtrudedSet).
func (s *ExtrudedSet) Variable() bool { return s.ranges != nil }

func extrudedOf(x *core.Extrusion) *ExtrudedSet {
	// x is the first field of ExtrudedSet, so the addresses coincide.
	return (*ExtrudedSet)(unsafe.Pointer(x))
}

// Name is the extruded set's name.
func (s *ExtrudedSet) Name() string { return s.x.Name }

// Size is the number of owned elements: the base set's owned elements
// (columns) times the layers, or with variable layers the sum of the
// owned columns' layers.
func (s *ExtrudedSet) Size() int {
	if s.ranges == nil {
		return s.base.c.Owned * s.x.Layers
	}
	// Only Partition and Renumber change the ranges, on the host under
	// the lock; loops only read them, so the host copy is current and
	// Size neither copies nor runs the recorded loops (which could fail).
	lock(forNoData, "ExtrudedSet.Size")
	defer unlock()
	d := s.ranges
	n, r := 0, d.data[:d.s.Set.Owned*d.s.Dim]
	for c := 0; c+1 < len(r); c += 2 {
		n += int(r[c+1] - r[c])
	}
	return n
}

// Layers is the number of layers of each column.
func (s *ExtrudedSet) Layers() int { return s.x.Layers }

// Base is the base set: the columns.
func (s *ExtrudedSet) Base() *Set { return s.base }

func (s *ExtrudedSet) String() string {
	return fmt.Sprintf("extruded set %q (%d layers of set %q)", s.x.Name, s.x.Layers, s.base.c.Name)
}

// iteration gives the base set: loops check for extruded sets first
// (bindOver), and subsets refuse them.
func (s *ExtrudedSet) iteration() (*Set, *Subset) { return s.base, nil }

// layerData returns the int32 data holding each element's layer that
// ArgLayer passes, making it the first time and again when the base
// set's size changed (Partition). Caller holds the lock.
func (s *ExtrudedSet) layerData() *core.Storage {
	l, owner := engine.LayerData(&s.x, &s.base.c, s.layer)
	if owner != nil {
		s.layer, s.layerOwner = l, owner
	}
	return l
}

// ArgLayer passes the layer of the loop element in a loop over an
// ExtrudedSet (PyOP2's layer argument): the kernel gets a const int * to
// the layer, 0 to Layers()-1. As with ArgIdx, the kernel gets its own
// copy. In a loop over an extruded set, ArgIdx passes the element's
// column (its element of the base set).
func ArgLayer() Arg {
	return Arg{e: engine.Arg{Core: core.Arg{Access: core.Read, Kind: core.ArgDirect, Index: true}, Role: engine.RoleLayer}}
}

// NewExtrudedDat declares data on an extruded set with dim values per
// element. data supplies the initial values, column after column and in
// each column layer after layer (element (c, l) has the values at
// (c*Layers()+l)*dim), and is copied; nil means zeros. Data and DataRO
// give the values in the same order. Its LayerDim is dim; as a Dat its
// elements are the columns: Set is the base set and Dim the values of
// a whole column (Layers × dim), so that code handling any Dat of a set
// (HDF5, VTK output) handles it column by column.
func NewExtrudedDat[T Scalar](set *ExtrudedSet, dim int, data []T, name string) (*Dat[T], error) {
	if set == nil {
		return nil, fmt.Errorf("op2: dat %q: extruded set is nil", name)
	}
	if dim < 1 {
		return nil, fmt.Errorf("op2: dat %q on extruded set %q: dim %d must be at least 1", name, set.x.Name, dim)
	}
	b := &set.base.c
	if data != nil && len(data) != b.Owned*set.x.Layers*dim && len(data) != b.Total*set.x.Layers*dim {
		return nil, fmt.Errorf("op2: dat %q on extruded set %q: %d values given, want %d (%d columns × %d layers × dim %d)",
			name, set.x.Name, len(data), b.Owned*set.x.Layers*dim, b.Owned, set.x.Layers, dim)
	}
	if dim > MaxDim/set.x.Layers {
		return nil, fmt.Errorf("op2: dat %q on extruded set %q: %d layers × dim %d exceeds the largest values per column allowed, %d (op2.MaxDim)",
			name, set.x.Name, set.x.Layers, dim, MaxDim)
	}
	d, err := NewDat(set.base, set.x.Layers*dim, data, name)
	if err != nil {
		return nil, err
	}
	d.s.Extruded = &set.x
	return d, nil
}

// LayerDim is the number of values per element that a kernel sees: per
// layer for a dat on an extruded set (NewExtrudedDat), Dim otherwise.
func (d *Dat[T]) LayerDim() int { return d.s.LayerDim() }

// ExtrudedSet is the extruded set the dat lives on, nil for a dat on a
// plain set.
func (d *Dat[T]) ExtrudedSet() *ExtrudedSet {
	if d.s.Extruded == nil {
		return nil
	}
	return extrudedOf(d.s.Extruded)
}

// ExtrudedMap connects each element of an extruded set to arity elements
// of another extruded set, or of a plain set (PyOP2's map with offsets):
// it is a base map between the base sets and, per map entry i, a start
// layer and a layer offset. In layer l, entry i of column c is layer
// Start[i] + l*Offset[i] of column base[c][i].
//
// For prisms over triangles with nodes in one more layer than the cells,
// the map from cells to their six nodes has the base map [n0 n1 n2 n0 n1
// n2], start [0 0 0 1 1 1] and offset [1 1 1 1 1 1]. (PyOP2 writes the
// start layers into the map's values, numbering the nodes column by
// column: its value for entry i is base[c][i]*Layers + Start[i].)
// A map to a plain set (data that is the same in every layer, such as
// 2-D coordinates) has start and offset 0.
type ExtrudedMap struct {
	c        engine.ExtMap
	from, to *ExtrudedSet // to is nil for a map to a plain set
	base     *Map
}

// NewExtrudedMap declares the extruded map from extruded set from to
// extruded set to (nil: to the plain set base.To()) made of base, a map
// between their base sets, with start layers start and layer offsets
// offset, one per entry of base (nil: all 0; see ExtrudedMap). Every
// entry is checked: the layers it reaches, from the first layer of from
// to the last, must be layers of to (only layer 0 of a plain set).
func NewExtrudedMap(from, to *ExtrudedSet, base *Map, start, offset []int, name string) (*ExtrudedMap, error) {
	if from == nil || base == nil {
		return nil, fmt.Errorf("op2: extruded map %q: source extruded set and base map must not be nil", name)
	}
	if base.c.From != &from.base.c {
		return nil, fmt.Errorf("op2: extruded map %q: base map %q goes from set %q, not from the base set %q of extruded set %q",
			name, base.c.Name, base.c.From.Name, from.base.c.Name, from.x.Name)
	}
	toLayers, toName := 1, fmt.Sprintf("set %q", base.c.To.Name)
	if to != nil {
		if base.c.To != &to.base.c {
			return nil, fmt.Errorf("op2: extruded map %q: base map %q goes to set %q, not to the base set %q of extruded set %q",
				name, base.c.Name, base.c.To.Name, to.base.c.Name, to.x.Name)
		}
		toLayers, toName = to.x.Layers, fmt.Sprintf("extruded set %q", to.x.Name)
	}
	ar := base.c.Arity
	m := &ExtrudedMap{c: engine.ExtMap{Name: name, From: &from.x, Base: &base.c,
		Ext: core.ArgExt{Start: make([]int32, ar), Offset: make([]int32, ar)}}, from: from, to: to, base: base}
	if to != nil {
		m.c.To = &to.x
	}
	for _, p := range []struct {
		what string
		in   []int
		out  []int32
	}{{"start layers", start, m.c.Ext.Start}, {"layer offsets", offset, m.c.Ext.Offset}} {
		if p.in == nil {
			continue
		}
		if len(p.in) != ar {
			return nil, fmt.Errorf("op2: extruded map %q: %d %s given, want one per entry of base map %q (arity %d)", name, len(p.in), p.what, base.c.Name, ar)
		}
		for i, v := range p.in {
			if v < -MaxDim || v > MaxDim {
				return nil, fmt.Errorf("op2: extruded map %q: entry %d: %s %d is out of range", name, i, p.what, v)
			}
			p.out[i] = int32(v)
		}
	}
	last := from.x.Layers - 1
	for i := 0; i < ar; i++ {
		s, o := int(m.c.Ext.Start[i]), int(m.c.Ext.Offset[i])
		lo, hi := s, s+last*o
		if o < 0 {
			lo, hi = hi, lo
		}
		if lo < 0 || hi >= toLayers {
			return nil, fmt.Errorf("op2: extruded map %q from extruded set %q (%d layers) to %s: entry %d (start %d, offset %d) reaches layers %d to %d, outside the target's layers [0,%d)",
				name, from.x.Name, from.x.Layers, toName, i, s, o, s, s+last*o, toLayers)
		}
	}
	return m, nil
}

// Name is the map's name.
func (m *ExtrudedMap) Name() string { return m.c.Name }

// Arity is the number of target elements per source element.
func (m *ExtrudedMap) Arity() int { return m.base.c.Arity }

// From is the source extruded set.
func (m *ExtrudedMap) From() *ExtrudedSet { return m.from }

// To is the target extruded set, or nil for a map to a plain set
// (Base().To()).
func (m *ExtrudedMap) To() *ExtrudedSet { return m.to }

// Base is the map between the base sets.
func (m *ExtrudedMap) Base() *Map { return m.base }

// Start returns a copy of the entries' start layers.
func (m *ExtrudedMap) Start() []int { return ints(m.c.Ext.Start) }

// Offset returns a copy of the entries' layer offsets.
func (m *ExtrudedMap) Offset() []int { return ints(m.c.Ext.Offset) }

func ints(v []int32) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

// ArgExtMap passes the dat through entry idx of extruded map m in a loop
// over m's source set: the kernel gets a T* to the values of the element
// that entry reaches in the loop element's layer (see ExtrudedMap).
func (d *Dat[T]) ArgExtMap(acc Access, m *ExtrudedMap, idx int) Arg {
	a := Arg{e: engine.Arg{Core: core.Arg{Data: storageOf(d), Idx: idx, Access: acc, Kind: core.ArgIndirect}}}
	if m != nil {
		a.e.Core.Map, a.e.XMap = &m.base.c, &m.c
	}
	return a
}

// ArgExtVec passes the dat through every entry of extruded map m: the
// kernel gets a T** holding one pointer per entry.
func (d *Dat[T]) ArgExtVec(acc Access, m *ExtrudedMap) Arg {
	a := Arg{e: engine.Arg{Core: core.Arg{Data: storageOf(d), Idx: -1, Access: acc, Kind: core.ArgVector}}}
	if m != nil {
		a.e.Core.Map, a.e.XMap = &m.base.c, &m.c
	}
	return a
}
