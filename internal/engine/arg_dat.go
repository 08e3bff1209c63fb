package engine

import (
	"fmt"

	"github.com/goop2/op2/internal/core"
)

// MaxMinMaxValues is the largest size in bytes, per loop element, of a
// Dat argument with access Min or Max through a map (see
// op2.MaxMinMaxValues).
const MaxMinMaxValues = 256

// datKind is a Dat passed directly (core.ArgDirect), through one map
// column (ArgIndirect) or through every column (ArgVector).
type datKind struct{}

func (datKind) check(b *Binding, a *core.Arg, arg *Arg) string {
	switch a.Access {
	case core.Read, core.Write, core.RW, core.Inc:
	case core.Min, core.Max:
		if a.Kind == core.ArgDirect {
			return fmt.Sprintf("%s: access %s applies to a Dat only through a map (ArgMap or ArgVec); an element's own values are its alone, so use RW", a.Data.Describe(), a.Access)
		}
	default:
		return fmt.Sprintf("%s: access %s is not allowed for a Dat (use READ, WRITE, RW or INC, or MIN or MAX through a map)", a.Data.Describe(), a.Access)
	}
	set := b.Set
	if a.Kind == core.ArgDirect {
		if a.Data.Set != set {
			return fmt.Sprintf("%s is passed directly but lives on set %q, not on the loop's set %q", a.Data.Describe(), a.Data.Set.Name, set.Name)
		}
		return ""
	}
	m := a.Map
	if m == nil {
		return fmt.Sprintf("%s: map is nil", describeData(a, arg.Role))
	}
	if m.From != set {
		return fmt.Sprintf("%s: map %q goes from set %q, not from the loop's set %q", describeData(a, arg.Role), m.Name, m.From.Name, set.Name)
	}
	if m.To != a.Data.Set {
		return fmt.Sprintf("%s: map %q goes to set %q, but the dat lives on set %q", describeData(a, arg.Role), m.Name, m.To.Name, a.Data.Set.Name)
	}
	if a.Kind == core.ArgIndirect && (a.Idx < 0 || a.Idx >= m.Arity) {
		name := fmt.Sprintf("map %q", m.Name)
		if arg.XMap != nil {
			name = fmt.Sprintf("extruded map %q", arg.XMap.Name) // the map the caller passed, not its base
		}
		return fmt.Sprintf("%s: index %d is out of range for %s of arity %d", describeData(a, arg.Role), a.Idx, name, m.Arity)
	}
	if a.Access == core.Min || a.Access == core.Max {
		n := a.Dim()
		if a.Kind == core.ArgVector {
			n *= m.Arity
		}
		if n > MaxMinMaxValues/a.Data.Type.Size() {
			return fmt.Sprintf("%s: a %s argument through a map may pass at most %d bytes per element (op2.MaxMinMaxValues; the kernel gets a private accumulator of dim × entries values), not %d values of %d bytes",
				a.Describe(), a.Access, MaxMinMaxValues, n, a.Data.Type.Size())
		}
	}
	return ""
}

// conflict says why two Dat arguments passing the same data may not
// appear in one loop, or returns "" when they may (see op2.ParLoop). The
// rule is pairwise: a set of arguments is allowed exactly when every pair
// of them is.
func (datKind) conflict(a, b *core.Arg) string {
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

// viewConflict says why two arguments passing the same Dat, at least one
// of them a view of one component (op2.DatView), may not appear in one
// loop, or returns "" when they may: views of different components never
// meet, views of one component follow the rules of one Dat, and a view
// with the whole Dat may only be read.
func viewConflict(a, b *core.Arg) string {
	switch {
	case a.View && b.View && a.Comp != b.Comp:
		return ""
	case a.View && b.View:
		return datKind{}.conflict(a, b)
	case !a.Access.Modifies() && !b.Access.Modifies():
		return ""
	}
	return "a view of one component of a Dat and the whole Dat may be passed to one loop only when neither is modified (pass views of each component instead of the whole Dat)"
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
