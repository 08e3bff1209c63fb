package engine

import (
	"fmt"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
)

// generated is int32 values the engine makes for an argument (a set's
// index, an extruded set's layers), pinned for C code while it lives,
// with the storage that describes them.
type generated struct {
	s    core.Storage
	data []int32
}

// regenerate makes n values val(i) described by s (its Host and Len
// set here) and returns the storage that holds them and the owner of
// their memory, to keep reachable. When old is not nil, loops bound
// earlier (NewLoop) hold it: it gets the new values in place and is
// returned.
func regenerate(old *core.Storage, s core.Storage, n int, val func(i int) int32) (*core.Storage, any) {
	g := &generated{s: s}
	if n > 0 {
		g.data = make([]int32, n)
		core.KeepPinned(g, &g.data[0])
		g.s.Host = unsafe.Pointer(&g.data[0])
	} else {
		g.data = []int32{}
	}
	for i := range g.data {
		g.data[i] = val(i)
	}
	g.s.Len = n
	if old == nil {
		return &g.s, g
	}
	if old.Dev != nil {
		old.Dev.Free()
		old.Dev = nil
	}
	old.Host, old.Len, old.State = g.s.Host, g.s.Len, core.StateDeviceUnallocated
	return old, g
}

// FillIndex (re)makes set s's index storage (ArgIdx) for its current
// layout: each element's number in the declared numbering, halo
// elements included.
func FillIndex(s *core.Set) {
	decl := dist.DeclaredNumbers(s)
	s.Index, s.IndexOwner = regenerate(s.Index,
		core.Storage{Name: fmt.Sprintf("index of set %s", s.Name), Type: core.Int32, Dim: 1, Set: s, ID: core.NewID()},
		s.Total, func(i int) int32 {
			if decl != nil {
				// Not beyond int32: IndexData.
				return int32(decl[i])
			}
			return int32(i)
		})
}

// LayerData returns the storage holding each element's layer of the
// extruded set x on base set b (ArgLayer), old (the storage made
// before, nil for none) when it still fits b's size, else new values,
// in old itself when there is one; owner is what keeps the values'
// memory (nil when old is kept as it is). Caller holds the lock.
func LayerData(x *core.Extrusion, b *core.Set, old *core.Storage) (s *core.Storage, owner any) {
	layers := x.Layers
	if old != nil && old.Len == b.Total*layers {
		return old, nil
	}
	return regenerate(old,
		core.Storage{Name: fmt.Sprintf("layer of extruded set %s", x.Name), Type: core.Int32, Dim: layers, Set: b, ID: core.NewID(), Extruded: x},
		b.Total*layers, func(i int) int32 { return int32(i % layers) })
}

// IndexData returns set s's index storage (core.Set.Index), making it
// the first time and again when the set's layout changed; nil for a set
// numbered beyond int32, which has none (Bind says why: indexBeyond32).
func IndexData(s *core.Set) *core.Storage {
	if beyond32(s) {
		return nil
	}
	if s.Index == nil || s.Index.Len != s.Total {
		FillIndex(s)
	}
	return s.Index
}
