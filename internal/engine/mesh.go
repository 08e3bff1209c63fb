package engine

import (
	"slices"
	"sync"

	"github.com/goop2/op2/internal/core"
)

// The declared mesh, as Partition and Renumber change it: the API
// registers every set, map, dat and subset it makes (without keeping
// them alive), and, while the mesh is declared on several ranks and not
// yet partitioned, each rank's blocks of its sets, maps and dats.

// MeshData is a Dat as Partition and Renumber see it: its storage, and
// the API's typed memory behind it.
type MeshData interface {
	Storage() *core.Storage
	// Replace makes values (a fresh allocation, aligned for any scalar
	// type, the dat's to keep) the dat's values: its local elements
	// after Partition.
	Replace(values []byte)
	// Zeros makes the dat n zero values, allocated at first use.
	Zeros(n int)
	// Permute puts the values in a new order: element k gets the values
	// of element order[k].
	Permute(order []int32)
}

// MeshMap is a Map as Partition sees it.
type MeshMap interface {
	Map() *core.Map
	// Adopt makes table (allocated for it) the map's table; nil drops
	// the old one.
	Adopt(table []int32)
}

// MeshSubset is a Subset as Renumber sees it.
type MeshSubset interface {
	// Parent is the set the subset picks elements of.
	Parent() *core.Set
	// Renumber gives the subset's elements their new numbers:
	// element e becomes newNum[e].
	Renumber(newNum []int32)
}

// declared is every set, map, dat and subset the program declared, as
// functions returning nil once the object is collected.
type declared struct {
	sync.Mutex
	sets    []func() *core.Set
	maps    []func() *core.Map
	dats    []func() MeshData
	subsets []func() MeshSubset
	globals []func() *core.Storage
	live    int // entries after the last pruning
}

// blocks are the blocks of the mesh this rank declared before Partition,
// in declaration order.
type blocks struct {
	sets []*core.Set
	maps []MeshMap
	dats []MeshData
}

// RegisterSet records a declared set: get returns it while it lives.
func (p *Process) RegisterSet(get func() *core.Set) {
	p.register(func(d *declared) { d.sets = append(d.sets, get) })
}

// RegisterMap records a declared map.
func (p *Process) RegisterMap(get func() *core.Map) {
	p.register(func(d *declared) { d.maps = append(d.maps, get) })
}

// RegisterData records a declared dat.
func (p *Process) RegisterData(get func() MeshData) {
	p.register(func(d *declared) { d.dats = append(d.dats, get) })
}

// RegisterSubset records a declared subset.
func (p *Process) RegisterSubset(get func() MeshSubset) {
	p.register(func(d *declared) { d.subsets = append(d.subsets, get) })
}

// RegisterGlobal records a declared global (op2.Checkpoint saves it).
func (p *Process) RegisterGlobal(get func() *core.Storage) {
	p.register(func(d *declared) { d.globals = append(d.globals, get) })
}

// LiveData returns the declared dats still alive, in declaration order.
func (p *Process) LiveData() []MeshData {
	d := &p.declared
	d.Lock()
	defer d.Unlock()
	return live(d.dats)
}

// LiveGlobals returns the declared globals still alive, in declaration
// order.
func (p *Process) LiveGlobals() []*core.Storage {
	d := &p.declared
	d.Lock()
	defer d.Unlock()
	return live(d.globals)
}

// register adds one object to the registry, pruning collected entries
// when the lists have doubled since the last pruning.
func (p *Process) register(add func(*declared)) {
	d := &p.declared
	d.Lock()
	defer d.Unlock()
	add(d)
	n := len(d.sets) + len(d.maps) + len(d.dats) + len(d.subsets) + len(d.globals)
	if n < 2*max(d.live, 256) {
		return
	}
	d.sets = prune(d.sets)
	d.maps = prune(d.maps)
	d.dats = prune(d.dats)
	d.subsets = prune(d.subsets)
	d.globals = prune(d.globals)
	d.live = len(d.sets) + len(d.maps) + len(d.dats) + len(d.subsets) + len(d.globals)
}

// prune drops the entries whose object was collected.
func prune[T comparable](fs []func() T) []func() T {
	var zero T
	return slices.DeleteFunc(fs, func(f func() T) bool { return f() == zero })
}

// live returns the objects of fs still alive.
func live[T comparable](fs []func() T) []T {
	var out []T
	var zero T
	for _, f := range fs {
		if v := f(); v != zero {
			out = append(out, v)
		}
	}
	return out
}

// DeclareBlocks reports whether declarations are now this rank's blocks
// of a mesh still to be partitioned (several ranks, no Partition yet);
// the API then adds them with AddBlockSet, AddBlockMap and AddBlockData.
func (p *Process) DeclareBlocks() bool {
	d, _ := p.Distributing()
	return d
}

// AddBlockSet adds set s to this rank's blocks (see DeclareBlocks).
func (p *Process) AddBlockSet(s *core.Set) { p.blocks.sets = append(p.blocks.sets, s) }

// AddBlockMap adds a map to this rank's blocks.
func (p *Process) AddBlockMap(m MeshMap) { p.blocks.maps = append(p.blocks.maps, m) }

// AddBlockData adds a dat to this rank's blocks.
func (p *Process) AddBlockData(d MeshData) { p.blocks.dats = append(p.blocks.dats, d) }

// BlockMaps are the maps of this rank's blocks, in declaration order (the
// order of Partition's result's EdgeCuts); none once Partition has
// succeeded.
func (p *Process) BlockMaps() []*core.Map {
	out := make([]*core.Map, len(p.blocks.maps))
	for i, m := range p.blocks.maps {
		out[i] = m.Map()
	}
	return out
}
