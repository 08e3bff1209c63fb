package op2

import (
	"fmt"

	"github.com/goop2/op2/internal/core"
)

// checkConflicts refuses a loop that passes one Dat or Global in several
// arguments in a combination whose result would depend on the backend (see
// ParLoop for the rule). It returns the first conflicting pair found, as a
// LoopError about the later argument that names the earlier one too.
func checkConflicts(k *Kernel, set *Set, args []Arg) error {
	for j := 1; j < len(args); j++ {
		b := &args[j].a
		if args[j].off {
			continue // a disabled argument touches nothing
		}
		for i := 0; i < j; i++ {
			a := &args[i].a
			if args[i].off || a.Data != b.Data {
				continue
			}
			why := ""
			if a.View || b.View {
				why = viewConflict(a, b)
			} else {
				why = conflict(a, b)
			}
			if why != "" {
				return &LoopError{Kernel: k.c.Name, Set: set.c.Name, Arg: j, Msg: fmt.Sprintf(
					"%s conflicts with argument %s (%s): %s", b.Describe(), argLabel(args, i), a.Describe(), why)}
			}
		}
	}
	return nil
}

// conflict says why two arguments passing the same data may not appear in
// one loop, or returns "" when they may. The rule is pairwise: a set of
// arguments is allowed exactly when every pair of them is.
func conflict(a, b *core.Arg) string {
	if a.Kind == core.ArgMat {
		// Both pass one matrix.
		if a.Access == core.Inc && b.Access == core.Inc {
			return ""
		}
		return "a matrix may be passed more than once in a loop only with INC (which of two WRITEs of one entry lands last depends on the backend)"
	}
	if a.Kind == core.ArgGlobal {
		switch {
		case a.Access == core.Read || b.Access == core.Read:
			// A read sees the value from before the loop on every
			// backend: reductions combine after the loop.
			return ""
		case a.Access == b.Access:
			return ""
		}
		return "one Global may take part in only one kind of reduction per loop (INC, MIN or MAX)"
	}
	if !a.Access.Modifies() && !b.Access.Modifies() {
		return "" // reads never conflict
	}
	if a.Access == core.Read || b.Access == core.Read {
		return "a loop may not read a Dat through one argument and modify it through another (whether the read would see other elements' updates depends on the backend)"
	}
	aMap, bMap := a.Kind != core.ArgDirect, b.Kind != core.ArgDirect
	if aMap != bMap {
		return "a Dat modified directly may not also be accessed through a map in the same loop, nor a Dat modified through a map directly (direct accesses are not ordered against the map's, so the result would depend on the backend)"
	}
	if combining(a.Access) || combining(b.Access) {
		if a.Access == b.Access {
			// Increments commute, directly as through any maps; so do
			// minima, and maxima.
			return ""
		}
		return fmt.Sprintf("%s may not be mixed with %s of the same Dat in one loop (each of INC, MIN and MAX combines the elements' contributions its own way)", a.Access, b.Access)
	}
	// Both are WRITE or RW.
	if !aMap {
		return "a Dat written directly (WRITE or RW) must be passed only once"
	}
	const rule = "a Dat written through a map (WRITE or RW) may be passed again only through the same map and the same column, or as the same whole-map (ArgVec) argument"
	if a.Map != b.Map {
		return fmt.Sprintf("%s, not also through map %q", rule, b.Map.Name)
	}
	if a.Kind != b.Kind || (a.Kind == core.ArgIndirect && a.Idx != b.Idx) {
		// Different columns (or a column and the whole map) of
		// different elements may reach the same target; which write
		// lands last then depends on the order the backend runs the
		// elements in (element order, colour order, staged write-back).
		return fmt.Sprintf("%s, not through both %s and %s of map %q", rule, columnsOf(a), columnsOf(b), b.Map.Name)
	}
	return ""
}

// columnsOf names the map column(s) an argument through a map uses.
func columnsOf(a *core.Arg) string {
	if a.Kind == core.ArgVector {
		return "all columns"
	}
	return fmt.Sprintf("column %d", a.Idx)
}

// combining reports whether a Dat argument with access acc combines its
// contributions with the target's value (INC, MIN, MAX) rather than
// replacing it.
func combining(acc core.Access) bool { return acc == core.Inc || acc == core.Min || acc == core.Max }
