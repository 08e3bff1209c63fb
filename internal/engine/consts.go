package engine

import (
	"sort"
	"sync"
	"sync/atomic"

	"github.com/goop2/op2/internal/core"
)

// Consts holds a runtime's constants by name; kernels refer to them by
// name.
type Consts struct {
	mu     sync.Mutex
	byName map[string]*core.Const
	gen    atomic.Uint64 // bumped when a constant is declared or removed
}

// NewConsts returns an empty registry.
func NewConsts() *Consts { return &Consts{byName: map[string]*core.Const{}} }

// Declare adds c under its name, unless a constant has that name:
// then it reports false and adds nothing.
func (reg *Consts) Declare(c *core.Const) bool {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if _, dup := reg.byName[c.Name]; dup {
		return false
	}
	reg.byName[c.Name] = c
	reg.gen.Add(1)
	return true
}

// Remove withdraws c, if it is still the constant of its name.
func (reg *Consts) Remove(c *core.Const) {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if reg.byName[c.Name] == c {
		delete(reg.byName, c.Name)
		reg.gen.Add(1)
	}
}

// All returns the registry's constants, in no order: a runtime's
// checkpoints save them (Runtime.Consts).
func (reg *Consts) All() []*core.Const {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	out := make([]*core.Const, 0, len(reg.byName))
	for _, k := range reg.byName {
		out = append(out, k)
	}
	return out
}

// used lists, sorted by name, the constants whose names are in idents,
// with the registry's generation.
func (reg *Consts) used(idents map[string]bool) ([]*core.Const, uint64) {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	var used []*core.Const
	for name, c := range reg.byName {
		if idents[name] {
			used = append(used, c)
		}
	}
	sort.Slice(used, func(i, j int) bool { return used[i].Name < used[j].Name })
	return used, reg.gen.Load()
}

// UsedConsts is a kernel's constants: those of a registry whose names
// occur as identifiers in its source, kept until constants are declared
// or removed. The zero value has none computed.
type UsedConsts struct {
	reg    *Consts // the registry consts was computed from
	gen    uint64  // its generation then
	consts []*core.Const
}

// Of returns the constants of reg among idents (the kernel's
// identifiers), sorted by name, recomputed only when constants have
// been declared or removed since the last call.
func (u *UsedConsts) Of(reg *Consts, idents map[string]bool) []*core.Const {
	if reg != u.reg || reg.gen.Load() != u.gen || u.consts == nil {
		u.consts, u.gen = reg.used(idents)
		u.reg = reg
		if u.consts == nil {
			u.consts = []*core.Const{}
		}
	}
	return u.consts
}
