package op2

import (
	"fmt"
	"unsafe"
	"weak"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
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
	// Renumber finds it, without keeping it alive.
	rt.proc.RegisterSet(weak.Make(&s.c).Value)
	if rt.proc.DeclareBlocks() {
		rt.proc.AddBlockSet(&s.c)
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
func (s *Set) Size() int { return s.count(&s.c.Owned, "Set.Size") }

// CoreSize is the number of core elements: owned elements whose loops need
// no halo data.
func (s *Set) CoreSize() int { return s.count(&s.c.Core, "Set.CoreSize") }

// ExecSize is the number of owned plus exec-halo elements.
func (s *Set) ExecSize() int { return s.count(&s.c.Exec, "Set.ExecSize") }

// TotalSize is the number of elements including both halos.
func (s *Set) TotalSize() int { return s.count(&s.c.Total, "Set.TotalSize") }

// count reads n, one of the set's counts, under the lock, for the API
// call named api: Partition and Renumber change them.
func (s *Set) count(n *int, api string) int {
	lock(forNoData, api)
	defer unlock()
	return *n
}

func (s *Set) String() string { return fmt.Sprintf("set %q (%d elements)", s.c.Name, s.c.Owned) }

// GlobalSize is the number of elements of the set over all ranks (Size
// without MPI).
func (s *Set) GlobalSize() int {
	lock(forNoData, "Set.GlobalSize")
	defer unlock()
	if h, ok := s.c.Halo.(*dist.SetHalo); ok {
		return h.GlobalSize
	}
	return s.c.Owned
}

// DeclaredNumbers returns, for each owned element, its number in the
// numbering the set was declared with: the identity, unless Renumber
// reordered the set or Partition distributed it over MPI ranks (then the
// global number of each of this rank's elements). It panics, naming the
// set and the number, when a number exceeds int32: DeclaredNumbers64 is
// the form for sets numbered beyond 2³¹.
func (s *Set) DeclaredNumbers() []int32 {
	lock(forNoData, "Set.DeclaredNumbers")
	defer unlock()
	if d := dist.DeclaredNumbers(&s.c); d != nil {
		out, err := dist.Narrow(fmt.Sprintf("op2: Set.DeclaredNumbers of set %q", s.c.Name), d[:s.c.Owned])
		if err != nil {
			panic(err.Error())
		}
		return out
	}
	out := make([]int32, s.c.Owned)
	for i := range out {
		out[i] = int32(i)
	}
	return out
}
