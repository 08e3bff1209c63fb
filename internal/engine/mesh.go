package engine

import (
	"slices"
	"sync"
	"sync/atomic"

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
	dats    []kept[MeshData]
	subsets []func() MeshSubset
	globals []kept[*core.Storage]
	live    int // entries after the last pruning
	// dropped are the descriptions of the dats and Globals collected
	// and pruned since the last Dropped, in the order they were found
	// (at most about maxDropped, the latest), but those left out,
	// GoOP2's own and those already reported: each description once in
	// the process (pending holds those in dropped).
	dropped  []string
	pending  map[string]bool
	reported map[string]bool
}

// Keep is what checkpoints know of a declared dat or Global apart from
// it: a description (dat "q" on set "cells"), to say that it was not
// saved once the program no longer holds it, and whether checkpoints
// leave it out (op2's SetNoCheckpoint).
type Keep struct {
	What string
	Omit atomic.Bool
	// Own says the object is GoOP2's own (a solver's vectors): never
	// reported.
	Own atomic.Bool
}

// kept is a registered dat or Global: get returns it while it lives.
type kept[T comparable] struct {
	get  func() T
	keep *Keep
}

// maxDropped bounds the descriptions of collected objects kept between
// two checkpoints, and maxReported those found before.
const (
	maxDropped  = 4096
	maxReported = 1 << 16
)

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

// RegisterData records a declared dat, described by keep.
func (p *Process) RegisterData(get func() MeshData, keep *Keep) {
	p.register(func(d *declared) { d.dats = append(d.dats, kept[MeshData]{get, keep}) })
}

// RegisterSubset records a declared subset.
func (p *Process) RegisterSubset(get func() MeshSubset) {
	p.register(func(d *declared) { d.subsets = append(d.subsets, get) })
}

// RegisterGlobal records a declared global (op2.Checkpoint saves it),
// described by keep.
func (p *Process) RegisterGlobal(get func() *core.Storage, keep *Keep) {
	p.register(func(d *declared) { d.globals = append(d.globals, kept[*core.Storage]{get, keep}) })
}

// LiveData returns the declared dats still alive, in declaration order.
func (p *Process) LiveData() []MeshData {
	d := &p.declared
	d.Lock()
	defer d.Unlock()
	return liveKept(d.dats)
}

// LiveGlobals returns the declared globals still alive, in declaration
// order.
func (p *Process) LiveGlobals() []*core.Storage {
	d := &p.declared
	d.Lock()
	defer d.Unlock()
	return liveKept(d.globals)
}

// Dropped returns the descriptions of the dats and Globals the program
// declared and no longer holds (collected: call runtime.GC first), but
// those checkpoints leave out and those another live one that checkpoints
// save has (saved in its place), each description once in the process: a
// checkpoint cannot save them.
func (p *Process) Dropped() []string {
	d := &p.declared
	d.Lock()
	defer d.Unlock()
	d.dats = pruneKept(d, d.dats)
	d.globals = pruneKept(d, d.globals)
	if len(d.dropped) == 0 {
		return nil
	}
	live := map[string]bool{} // twins saved in the dropped ones' place
	for _, k := range d.dats {
		if k.keep != nil && !k.keep.Omit.Load() {
			live[k.keep.What] = true
		}
	}
	for _, k := range d.globals {
		if k.keep != nil && !k.keep.Omit.Load() {
			live[k.keep.What] = true
		}
	}
	var out []string
	for _, what := range d.dropped {
		if live[what] {
			continue // a twin is saved: it may be reported when it goes
		}
		if d.reported == nil || len(d.reported) == maxReported {
			d.reported = map[string]bool{} // a description may come again
		}
		d.reported[what] = true
		out = append(out, what)
	}
	d.dropped, d.pending = nil, nil
	return out
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
	d.dats = pruneKept(d, d.dats)
	d.subsets = prune(d.subsets)
	d.globals = pruneKept(d, d.globals)
	d.live = len(d.sets) + len(d.maps) + len(d.dats) + len(d.subsets) + len(d.globals)
}

// prune drops the entries whose object was collected.
func prune[T comparable](fs []func() T) []func() T {
	var zero T
	return slices.DeleteFunc(fs, func(f func() T) bool { return f() == zero })
}

// pruneKept drops the entries of ks whose object was collected, noting
// their descriptions in d.dropped.
func pruneKept[T comparable](d *declared, ks []kept[T]) []kept[T] {
	var zero T
	return slices.DeleteFunc(ks, func(k kept[T]) bool {
		if k.get() != zero {
			return false
		}
		if k := k.keep; k != nil && !k.Own.Load() && !k.Omit.Load() && !d.reported[k.What] && !d.pending[k.What] {
			if len(d.dropped) == maxDropped { // forget the older half
				for _, what := range d.dropped[:maxDropped/2] {
					delete(d.pending, what)
				}
				d.dropped = slices.Delete(d.dropped, 0, maxDropped/2)
			}
			if d.pending == nil {
				d.pending = map[string]bool{}
			}
			d.pending[k.What] = true
			d.dropped = append(d.dropped, k.What)
		}
		return true
	})
}

// liveKept returns the objects of ks still alive.
func liveKept[T comparable](ks []kept[T]) []T {
	var out []T
	var zero T
	for _, k := range ks {
		if v := k.get(); v != zero {
			out = append(out, v)
		}
	}
	return out
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
