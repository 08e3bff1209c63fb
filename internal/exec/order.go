package exec

import (
	"encoding/binary"

	"github.com/goop2/op2/internal/core"
)

// KeepsOrder reports whether program fp, running the fused loop fused,
// combines the terms of every order-sensitive result of the loops fused
// into it (core.Loop.OrderSensitive: floating-point Global reductions,
// changes through maps) in the order each has alone, run by its program
// in progs: the order sets the last bits, so fusion changes no result
// only then. It takes plans that order the elements alike (or none for
// both: each element in turn, or an even split among threads or work
// groups) and, on an OrderKeeper, the backend's word. Plans are built as
// the loops would run (kept for them); the answer is kept per backend,
// fused loop shape, set and maps, so a repeated question costs a lookup.
// With ranksAlike (the loops of a chain on several MPI ranks, which must
// fuse alike on every rank) plans are not compared, being each rank's
// own: loops whose programs need them are taken not to keep their order.
func (x *Executor) KeepsOrder(b *Opened, fused *core.Loop, fp Program, group []*core.Loop, progs []Program, ranksAlike bool) (bool, error) {
	sensitive := false
	for _, l := range group {
		sensitive = sensitive || l.OrderSensitive()
	}
	if !sensitive {
		return true, nil
	}
	k := binary.LittleEndian.AppendUint64(x.orderKey[:0], b.ID)
	k = binary.LittleEndian.AppendUint64(k, uint64(x.BlockSize))
	if ranksAlike {
		k = append(k, 1)
	}
	k = binary.LittleEndian.AppendUint64(k, fused.Set.ID)
	for i := range fused.Args {
		if m := fused.Args[i].Map; m != nil {
			k = binary.LittleEndian.AppendUint64(k, m.ID)
		}
	}
	k = core.AppendKey(k, fused)
	x.orderKey = k
	if kept, ok := x.order[string(k)]; ok {
		return kept, nil
	}
	kept, err := x.keepsOrder(b, fused, fp, group, progs, ranksAlike)
	if err != nil {
		return false, err
	}
	if x.order == nil || len(x.order) >= MaxPrograms {
		// Answers for sets and maps since dropped are never asked again:
		// start afresh rather than keep them all.
		x.order = map[string]bool{}
	}
	x.order[string(x.orderKey)] = kept
	return kept, nil
}

// OrderAnswers is the number of KeepsOrder's answers kept (at most
// MaxPrograms).
func (x *Executor) OrderAnswers() int { return len(x.order) }

// keepsOrder is KeepsOrder without the kept answers.
func (x *Executor) keepsOrder(b *Opened, fused *core.Loop, fp Program, group []*core.Loop, progs []Program, ranksAlike bool) (bool, error) {
	fneeds := fp.PlanNeeds()
	var fplan *Plan
	keeper, _ := b.Backend.(OrderKeeper)
	for j, l := range group {
		if !l.OrderSensitive() {
			continue
		}
		needs := progs[j].PlanNeeds()
		if (needs == nil) != (fneeds == nil) || needs != nil && ranksAlike {
			return false, nil
		}
		if needs != nil {
			var c call
			if fplan == nil {
				var err error
				if fplan, err = x.plan(b, fused, fneeds, &c); err != nil {
					return false, err
				}
			}
			pl, err := x.plan(b, l, needs, &c)
			if err != nil {
				return false, err
			}
			if !pl.SameOrder(fplan.Plan) {
				return false, nil
			}
		}
		if keeper != nil && !keeper.KeepsOrder(fused, fp, l, progs[j]) {
			return false, nil
		}
	}
	return true, nil
}
