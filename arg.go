package op2

import (
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/engine"
)

// ArgIdx passes the index of the loop element (OP2's op_arg_idx(-1,
// OP_ID)): the kernel gets a const int * to the element's number in the
// iteration set. Under MPI it is the element's global number, in the
// numbering the set was declared with (the same on every rank and for
// every partitioning); after Renumber it is the element's number in
// the declared numbering too; otherwise it is the local index, 0 to
// Size()-1.
//
// The index is kept as an int32 Dat of the set, made the first time a
// loop asks for it, so the kernel parameter must be int * (const allowed)
// and the argument costs what a READ Dat costs. Each call of the kernel
// gets its own copy of the value: a kernel that writes through the
// parameter changes neither the other elements' indices nor what later
// loops see (in check mode such a write is reported and undone).
func ArgIdx() Arg {
	return Arg{e: engine.Arg{Core: core.Arg{Access: core.Read, Kind: core.ArgDirect, Index: true}, Role: engine.RoleIterIdx}}
}

// ArgIdx passes the value of column idx of the map (OP2's op_arg_idx(idx,
// map)): the kernel gets a const int * to the index, in the map's target
// set, of the element's idx-th entry. Under MPI it is the target's global
// number in the declared numbering, as the map was declared, and so it
// is after Renumber; otherwise it is the local index. The map must go from the loop's set, and idx
// must be a column of it. As with ArgIdx, each call of the kernel gets its
// own copy of the value, so no kernel can change the map's values as
// later loops see them.
func (m *Map) ArgIdx(idx int) Arg {
	return Arg{e: engine.Arg{Core: core.Arg{Map: mapCore(m), Idx: idx, Access: core.Read, Kind: core.ArgIndirect, Index: true}, Role: engine.RoleMapIdx}}
}

// Opt makes a an optional argument (OP2's op_opt_arg_dat and
// op_opt_arg_gbl): with on true it is a itself; with on false it is
// disabled, and the kernel gets a null pointer for it, which it must not
// dereference (kernels usually test a flag of their own, passed as a
// Const or a Global, before using the argument). A disabled argument is
// checked like an enabled one (its kernel parameter type, map and set),
// but the loop moves, stages, colours and reduces nothing for it, and it
// conflicts with no other argument.
//
// A loop with an optional argument disabled and the same loop with it
// enabled are two shapes, so each gets its own generated program (both
// are cached as usual); switching between them costs no recompilation
// after the first time each runs.
func Opt(on bool, a Arg) Arg {
	a.e.Off, a.e.Opt = !on, true
	return a
}

// Arg is one argument of a parallel loop. Make one with Dat.Arg, Dat.ArgMap,
// Dat.ArgVec, Global.Arg, ArgIdx or Map.ArgIdx, and make it optional with
// Opt.
type Arg struct {
	// e is the whole argument, as the engine binds it: an Arg has the
	// layout of an engine.Arg, so that a loop's arguments are handed to
	// the engine without copying (engineArgs).
	e engine.Arg
}

// MaxReductionDim is the largest dim of a Global used for a reduction
// (Inc, Min, Max): every thread or work item keeps a private copy.
const MaxReductionDim = 1024

// MaxMinMaxValues is the largest size in bytes, per loop element, of a
// Dat argument with access Min or Max through a map (dim values, times the
// map's arity for ArgVec): the kernel gets a private accumulator of that
// size on every backend.
const MaxMinMaxValues = 256
