package engine

import (
	"fmt"

	"github.com/goop2/op2/internal/core"
)

// What extrusion adds to an argument: in a loop over an extruded set,
// data on an extruded set is passed directly (the element's layer) or
// through an extruded map (ExtMap), and ArgLayer passes the layer.

// checkExtruded checks argument a (resolved) of b's loop for what
// extrusion adds, and returns the problem ("" if none).
func checkExtruded(b *Binding, a *core.Arg, arg *Arg) string {
	x, set, xm := b.Extruded, b.Set, arg.XMap
	switch {
	case arg.Role == RoleLayer && x == nil:
		return fmt.Sprintf("layer argument (ArgLayer) in a loop over set %q, which is not extruded; loop over an ExtrudedSet", set.Name)
	case a.Kind == core.ArgMat && x != nil:
		return fmt.Sprintf("%s: matrices are not supported in loops over extruded sets", a.Describe())
	case a.Kind == core.ArgGlobal || a.Kind == core.ArgMat:
		return ""
	case a.Kind == core.ArgDirect && x == nil:
		if a.Data.Extruded != nil {
			return fmt.Sprintf("%s is passed directly but lives on extruded set %q, not on the loop's set %q; loop over the extruded set", a.Data.Describe(), a.Data.Extruded.Name, set.Name)
		}
	case a.Kind == core.ArgDirect:
		if a.Data.Extruded == nil && a.Data.Set == set && a.Access != core.Read {
			return fmt.Sprintf("%s lives on the base set of the loop's extruded set %q: every layer of a column sees its values, so it may only be read (READ), not %s", a.Data.Describe(), x.Name, a.Access)
		}
		if a.Data.Extruded != nil && a.Data.Extruded != x {
			return fmt.Sprintf("%s is passed directly but lives on extruded set %q, not on the loop's set %q", a.Data.Describe(), a.Data.Extruded.Name, x.Name)
		}
	case x == nil && xm != nil:
		return fmt.Sprintf("%s: extruded map %q in a loop over set %q, which is not extruded; loop over extruded set %q", a.Data.Describe(), xm.Name, set.Name, xm.From.Name)
	case x == nil:
		if a.Data.Extruded != nil {
			return fmt.Sprintf("%s lives on extruded set %q: pass it through an extruded map (Dat.ArgExtMap, Dat.ArgExtVec) in a loop over an extruded set", a.Data.Describe(), a.Data.Extruded.Name)
		}
	case xm == nil:
		if a.Map == nil {
			return "" // Bind reports the missing map
		}
		return fmt.Sprintf("%s: map %q is not an extruded map; in a loop over extruded set %q pass data through an ExtrudedMap (Dat.ArgExtMap, Dat.ArgExtVec)", describeData(a, arg.Role), a.Map.Name, x.Name)
	case xm.From != x:
		return fmt.Sprintf("%s: extruded map %q goes from extruded set %q, not from the loop's set %q", a.Data.Describe(), xm.Name, xm.From.Name, x.Name)
	case xm.To == nil && a.Data.Extruded != nil:
		return fmt.Sprintf("%s: extruded map %q goes to the plain set %q, but the dat lives on extruded set %q", a.Data.Describe(), xm.Name, xm.Base.To.Name, a.Data.Extruded.Name)
	case xm.To != nil && a.Data.Extruded != xm.To:
		return fmt.Sprintf("%s: extruded map %q goes to extruded set %q, but the dat does not live on it", a.Data.Describe(), xm.Name, xm.To.Name)
	}
	return ""
}

// extrudedArg fills in what a loop over an extruded set (b.Extruded; nil:
// a plain loop) adds to resolved argument a: the layer data of
// ArgLayer, which layers the argument reaches, and, with variable
// layers, RW for WRITE (see there).
func (p *Process) extrudedArg(b *Binding, a *core.Arg, arg *Arg) {
	x := b.Extruded
	if x == nil {
		return
	}
	if arg.Role == RoleLayer {
		a.Data = p.api.LayerData(x)
	}
	switch {
	case a.Data == nil || a.Data.Extruded == nil:
	case a.Kind == core.ArgDirect:
		a.Ext = core.DirectExt
		if x.Ranges != nil && a.Access == core.Write {
			// Layers outside the columns' ranges keep their values:
			// the data is not wholly overwritten, so it moves as for
			// RW (device copies, halos).
			a.Access = core.RW
		}
	case arg.XMap != nil && (a.Kind == core.ArgIndirect || a.Kind == core.ArgVector):
		a.Ext = &arg.XMap.Ext
	}
}
