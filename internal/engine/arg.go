package engine

import (
	"fmt"
	"strconv"

	"github.com/goop2/op2/internal/core"
)

// Arg is one argument of a loop as the API makes it (op2.Arg holds one):
// the core argument and what binding it needs besides. Bind checks it
// against the loop and turns it into the core.Arg the executor runs.
type Arg struct {
	// Core is the argument; for index and layer arguments (Role) its
	// Data is supplied when the loop is bound.
	Core core.Arg
	Role Role
	// Off marks a disabled optional argument, Opt an argument made
	// optional (op2.Opt), enabled or not.
	Off, Opt bool
	// XMap is the extruded map of an argument through one
	// (Dat.ArgExtMap, Dat.ArgExtVec), else nil.
	XMap *ExtMap
	// NoPair marks a matrix argument whose (row, column) maps are not a
	// pair of its matrix's sparsity.
	NoPair bool
	// Origin is where an argument of a loop's expanded list (mixed
	// arguments replaced by their blocks) came from.
	Origin Origin
	// Mixed is a mixed argument (op2.MixedDat, op2.MixedMat), which the
	// API replaces by its blocks' arguments before Bind; nil otherwise.
	Mixed Mixed
}

// Role says what supplies an argument's data: the caller, or binding
// (the iteration index, a map's value, the layer).
type Role uint8

// The roles of Arg.
const (
	RoleData    Role = iota // a Dat, Global or Mat the caller passed
	RoleIterIdx             // op2.ArgIdx: the loop element's index
	RoleMapIdx              // Map.ArgIdx: the target index of a map column
	RoleLayer               // op2.ArgLayer: the loop element's layer
)

// ExtMap is an extruded map as binding sees it (op2.ExtrudedMap): a base
// map between base sets, the extruded sets it goes from and to (To nil:
// a plain set) and the layer each entry reaches.
type ExtMap struct {
	Name     string
	From, To *core.Extrusion
	Base     *core.Map
	Ext      core.ArgExt
}

// Origin is where an argument of an expanded list came from: the
// position among the arguments the caller passed and, for a block of a
// mixed argument, the mixed argument and the block.
type Origin struct {
	Of    Mixed // the mixed argument a block's argument comes from, or nil
	Pos   int32
	Block int32
	Moved bool // an argument the caller passed, at another position now
}

// Mixed is a mixed argument (op2.MixedDat, op2.MixedMat) as messages
// name its blocks.
type Mixed interface {
	// BlockName names block b, as `block 1 of mixed dat "u"`.
	BlockName(b int) string
}

// label names arg, argument i of a loop's (expanded) argument list, in
// a message: its position among the arguments the caller passed, and the
// block of a mixed one.
func label(arg *Arg, i int) string {
	o := &arg.Origin
	switch {
	case o.Moved:
		return strconv.Itoa(int(o.Pos))
	case o.Of == nil:
		return strconv.Itoa(i)
	}
	return fmt.Sprintf("%d (%s)", o.Pos, o.Of.BlockName(int(o.Block)))
}

// describeData names the data of argument a for an error message: the
// Dat, or for an index argument what it stands for. Only called on the
// way to an error, so that a repeated loop allocates nothing.
func describeData(a *core.Arg, role Role) string {
	if role != RoleData {
		return a.Describe()
	}
	return a.Data.Describe()
}

// Each kind of argument (core.ArgKind) is one type here that holds the
// rules it adds to binding: check (its access, and its data, maps and
// pattern against the loop) and conflict (when two arguments of the kind
// passing the same data may not appear in one loop). bind.go checkArg and
// conflictKind dispatch on the kind; a new kind adds a type, its cases
// there, and the generators' cases. (A switch rather than an interface
// table: calls through an interface would move the loop's arguments to
// the heap, and a repeated loop allocates nothing.)

// conflictKind returns why a and b, two arguments passing the same data,
// may not appear in one loop ("" when they may).
func conflictKind(a, b *core.Arg) string {
	switch {
	case a.View || b.View:
		return viewConflict(a, b)
	case a.Kind == core.ArgMat:
		return matKind{}.conflict(a, b)
	case a.Kind == core.ArgGlobal:
		return globalKind{}.conflict(a, b)
	}
	return datKind{}.conflict(a, b)
}
