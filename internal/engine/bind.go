package engine

import (
	"fmt"
	"strings"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
)

// Binding is a loop as the API hands it to Bind: the kernel (parsed),
// the iteration set, the arguments and the constants the kernel uses.
type Binding struct {
	// Backend is the backend the loop is bound for (device limits).
	Backend string
	Kernel  *core.Kernel
	Info    *core.KernelInfo // Kernel's parameters and identifiers
	// Set is the iteration set, or the base set of Extruded, the
	// extruded set of a loop over one (else nil).
	Set      *core.Set
	Extruded *core.Extrusion
	// Consts are the constants the kernel refers to.
	Consts []*core.Const
}

// setName is the name of the loop's iteration set, for messages.
func (b *Binding) setName() string {
	if b.Extruded != nil {
		return b.Extruded.Name
	}
	return b.Set.Name
}

// Bind validates a loop's pieces, with arguments args, and fills l with
// them. Nothing is
// changed anywhere else (but the index and layer data, made once), so a
// rejected loop leaves every object as it was. Errors are *op2.LoopError.
func (p *Process) Bind(b *Binding, args []Arg, l *core.Loop) error {
	k, info := b.Kernel, b.Info
	fail := func(i int, format string, a ...any) error {
		return p.api.Loop(k.Name, b.setName(), i, fmt.Sprintf(format, a...))
	}
	if n := len(info.Params); n > 0 && info.Params[n-1].Variadic {
		return fail(-1, "kernel %q is variadic (its parameters end in ...): a kernel takes one named parameter per argument", k.Name)
	}
	if len(info.Params) != len(args) {
		return fail(-1, "kernel %q takes %s but the loop passes %s", k.Name,
			count(len(info.Params), "parameter"), count(len(args), "argument"))
	}
	// One pass resolves and checks each argument into l.Args; a
	// rejected loop leaves l with no arguments.
	l.Args = l.Args[:0]
	for i := range args {
		arg := &args[i]
		l.Args = append(l.Args, p.resolve(b, arg))
		if msg := p.checkArg(b, arg, &l.Args[i], &info.Params[i]); msg != "" {
			clear(l.Args)
			l.Args = l.Args[:0]
			return fail(i, "%s", msg)
		}
		if arg.Off {
			t := core.Int32 // index arguments
			if arg.Role == RoleData {
				t = arg.Core.Data.Type
			}
			l.Args[i] = core.OffArg(t)
		}
		l.Args[i].Optional = arg.Opt
	}
	err := p.checkConflicts(b, args)
	if err == nil {
		err = p.checkDeviceLimits(b, args)
	}
	if err != nil {
		clear(l.Args)
		l.Args = l.Args[:0]
		return err
	}
	l.Kernel = k
	l.Set = b.Set
	l.Extruded = b.Extruded
	if x := b.Extruded; x != nil && x.Ranges != nil {
		// Variable layers: the columns' ranges, for the generated code.
		l.Args = append(l.Args, core.Arg{Data: x.Ranges, Access: core.Read, Kind: core.ArgDirect, Hidden: true})
	}
	for _, c := range b.Consts {
		if c.Name == k.Name {
			return fail(-1, "const %q has the same name as kernel function %q; rename one of them", c.Name, k.Name)
		}
	}
	l.Consts = b.Consts
	return nil
}

// checkArg returns why argument arg, resolved as a, cannot be passed to
// kernel parameter pm of b's loop ("" when it can): what extrusion adds,
// the rules of its kind, and the parameter's type.
func (p *Process) checkArg(b *Binding, arg *Arg, a *core.Arg, pm *core.Param) string {
	if extrusionMatters(b, a, arg) {
		if msg := checkExtruded(b, a, arg); msg != "" {
			return msg
		}
	}
	if a.Data == nil {
		// (An index argument's data is nil on a set numbered beyond
		// int32: IndexData.)
		if msg := indexBeyond32(b, a, arg); msg != "" {
			return msg
		}
		if arg.Role == RoleMapIdx {
			return "map value argument: map is nil"
		}
		if arg.Role == RoleData && a.Kind != 0 {
			return fmt.Sprintf("the %s is nil (was the error of the call that made it checked?)", nilKind(a.Kind))
		}
	}
	msg := "empty argument; build arguments with Dat.Arg, Dat.ArgMap, Dat.ArgVec or Global.Arg"
	if a.Data != nil {
		switch a.Kind { // the kind's rules (arg.go)
		case core.ArgDirect, core.ArgIndirect, core.ArgVector:
			msg = datKind{}.check(b, a, arg)
		case core.ArgGlobal:
			msg = globalKind{}.check(b, a, arg)
		case core.ArgMat:
			msg = matKind{}.check(b, a, arg)
		}
	}
	if msg != "" {
		return msg
	}
	if paramFits(a, pm) {
		return "" // the common case, without a call
	}
	return paramProblem(b.Kernel, a, arg, pm)
}

// extrusionMatters reports whether checkExtruded has anything to check:
// the loop or the argument involves an extruded set.
func extrusionMatters(b *Binding, a *core.Arg, arg *Arg) bool {
	if a.Data == nil {
		return arg.Role == RoleLayer
	}
	return b.Extruded != nil || arg.XMap != nil || arg.Role == RoleLayer || a.Data.Extruded != nil
}

// paramFits reports whether a plain pointer parameter pm takes argument
// a as it is: paramProblem's rules, for the common case, so that it is
// called only on the way to an error (or for a reference).
func paramFits(a *core.Arg, pm *core.Param) bool {
	return pm.Problem == "" && !pm.Ref && pm.Depth == pointerDepth(a) && (pm.Untyped || pm.Type != 0 && pm.Type == a.Data.Type)
}

// pointerDepth is the pointer depth of the parameter that takes
// argument a: T** for a vector argument, else T*.
func pointerDepth(a *core.Arg) int {
	if a.Kind == core.ArgVector {
		return 2
	}
	return 1
}

// resolve returns the core argument that arg stands for in b's loop:
// index arguments get their set's index data, layer arguments the
// layers', and arguments of a loop over an extruded set what extrusion
// adds (extrudedArg).
func (p *Process) resolve(b *Binding, arg *Arg) core.Arg {
	c := arg.Core
	switch arg.Role {
	case RoleIterIdx:
		c.Data = p.api.IndexData(b.Set)
	case RoleMapIdx:
		if c.Map != nil {
			c.Data = p.api.IndexData(c.Map.To)
		}
	}
	if b.Extruded != nil {
		p.extrudedArg(b, &c, arg)
	}
	return c
}

// paramProblem says why argument a (resolved) cannot be passed to kernel
// parameter pm ("" when it can): its type and its pointer depth.
func paramProblem(k *core.Kernel, a *core.Arg, arg *Arg, pm *core.Param) string {
	if pm.Problem != "" {
		return fmt.Sprintf("%s: kernel parameter %q: %s", a.Describe(), pm.Text, pm.Problem)
	}
	want := pointerDepth(a)
	if pm.Ref {
		if msg := refProblem(k, a, arg); msg != "" {
			return fmt.Sprintf("%s: kernel parameter %q %s", a.Describe(), pm.Text, msg)
		}
		want = 0
	}
	if !pm.Untyped && (pm.Type == 0 || pm.Type != a.Data.Type) {
		// Only built on the way to an error: a repeated loop
		// allocates nothing.
		expect := a.Data.Type.CName() + " " + strings.Repeat("*", want)
		if pm.Type == 0 {
			return fmt.Sprintf("%s: kernel parameter %q has type %s, which GoOP2 does not support; the data is %s, so the parameter must be %s (C %s)",
				a.Describe(), pm.Text, pm.CType, a.Data.Type, expect, a.Data.Type.CName())
		}
		return fmt.Sprintf("%s: kernel parameter %q has element type %s (C %s) but the data is %s, so the parameter must be %s (C %s)",
			a.Describe(), pm.Text, pm.Type, pm.CType, a.Data.Type, expect, a.Data.Type.CName())
	}
	if pm.Depth != want {
		shape := "a pointer (T* or T[], or the untyped void *)"
		if want == 2 {
			shape = "a pointer to pointers (T** or T*[], or the untyped void **)"
		}
		return fmt.Sprintf("%s: kernel parameter %q should be %s", a.Describe(), pm.Text, shape)
	}
	return ""
}

// refProblem says why argument a cannot be passed to a reference
// parameter ("" when it can): a reference is C++ and reaches one value.
func refProblem(k *core.Kernel, a *core.Arg, arg *Arg) string {
	switch {
	case !k.CXX:
		return "is a C++ reference, and the kernel is C; declare it C++ with Kernel.CXX(), or make the parameter a pointer"
	case arg.Opt:
		return "is a reference, which cannot be null, but the argument is optional (Opt): make the parameter a pointer"
	case a.Kind == core.ArgVector || a.Kind == core.ArgMat:
		return "is a reference to one value, but the argument passes several (one per map entry): make the parameter a pointer to pointers (T **)"
	case a.Dim() != 1:
		return fmt.Sprintf("is a reference to one value, but the argument passes %d per element: make the parameter a pointer (T *)", a.Dim())
	}
	return ""
}

// checkConflicts refuses a loop that passes one Dat or Global in several
// arguments in a combination whose result would depend on the backend
// (see op2.ParLoop for the rule; each kind's conflict). It returns the
// first conflicting pair found, as a *op2.LoopError about the later
// argument that names the earlier one too.
func (p *Process) checkConflicts(b *Binding, args []Arg) error {
	for j := 1; j < len(args); j++ {
		bj := &args[j]
		if bj.Off {
			continue // a disabled argument touches nothing
		}
		y := &bj.Core
		for i := 0; i < j; i++ {
			ai := &args[i]
			x := &ai.Core
			if ai.Off || x.Data != y.Data {
				continue
			}
			why := conflictKind(x, y)
			if why == "" && x.Access.Modifies() && !combining(x.Access) && !extOf(ai).Same(extOf(bj)) {
				// One base map, its columns as the rule wants; but the
				// extruded maps reach other layers.
				why = fmt.Sprintf("a Dat written through a map (WRITE or RW) may be passed again only through the same map and the same column, not through two extruded maps over map %q that reach other layers", x.Map.Name)
			}
			if why != "" {
				return p.api.Loop(b.Kernel.Name, b.Set.Name, j, fmt.Sprintf(
					"%s conflicts with argument %s (%s): %s", y.Describe(), label(ai, i), x.Describe(), why))
			}
		}
	}
	return nil
}

// extOf is the layers an argument through an extruded map reaches; nil
// for any other.
func extOf(a *Arg) *core.ArgExt {
	if a.XMap == nil {
		return nil
	}
	return &a.XMap.Ext
}

// checkDeviceLimits refuses a loop that the backend's generated code
// cannot hold: on device backends, vector arguments passing more than
// MaxDeviceVectorArity map entries in all.
func (p *Process) checkDeviceLimits(b *Binding, args []Arg) error {
	total := 0
	for i := 0; i < len(args); i++ {
		if a := &args[i]; a.Core.Kind == core.ArgVector && !a.Off {
			total += a.Core.Map.Arity
		}
	}
	if total <= MaxDeviceVectorArity || !exec.IsDevice(b.Backend) {
		return nil
	}
	return p.api.Loop(b.Kernel.Name, b.Set.Name, -1, fmt.Sprintf(
		"the vector (ArgVec) arguments pass %d map entries per element in all, more than the %s backend takes (op2.MaxDeviceVectorArity = %d): each work item keeps private arrays of one pointer per entry",
		total, b.Backend, MaxDeviceVectorArity))
}

// count is n and the noun, made plural unless n is 1: "1 argument",
// "2 arguments".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// nilKind names what an argument of kind k passes, for a nil one.
func nilKind(k core.ArgKind) string {
	switch k {
	case core.ArgGlobal:
		return "Global"
	case core.ArgMat:
		return "Mat"
	}
	return "Dat"
}
