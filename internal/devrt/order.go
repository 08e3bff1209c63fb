package devrt

import (
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
)

// KeepsOrder reports whether program fp, running the fused loop fused,
// combines the terms of l's order-sensitive results as program lp does
// running l alone (exec.OrderKeeper of the device backends), given plans
// that order the elements alike or none for both. A work group's size
// sets how its elements share its work items and the tree that sums a
// reduction's partial results, so both must have the same (a loop run
// without a plan in the atomics scheme runs its elements as a direct loop
// does). A dataset l changes through a map must be changed alike:
// atomically or by blocks, and staged in local memory (each block adding
// its sum of the terms) or changed in place (each term in turn).
func KeepsOrder(fused *core.Loop, fp exec.Program, l *core.Loop, lp exec.Program) bool {
	f, ok := fp.(*Program)
	p, ok2 := lp.(*Program)
	if !ok || !ok2 {
		return false
	}
	if f.lay.WorkGroupSize() != p.lay.WorkGroupSize() {
		return false
	}
	for i := range l.Args {
		a := &l.Args[i]
		if !a.IndirectModify() || !a.OrderSensitive() {
			continue
		}
		if f.lay.Atomic != p.lay.Atomic || f.lay.Warp != p.lay.Warp {
			return false
		}
		inPlace := p.unstaged(i)
		for k := range fused.Args {
			if fused.Args[k].Data == a.Data && f.unstaged(k) != inPlace {
				return false
			}
		}
	}
	return true
}

// unstaged reports whether the program changes argument i's dataset in
// place rather than staged in local memory.
func (p *Program) unstaged(i int) bool {
	return p.needs == nil || p.needs.Unstaged[i]
}
