package engine

import (
	"strings"
	"testing"

	"github.com/goop2/op2/internal/core"
)

// TestConflictRules checks the pairwise rule of each argument kind
// (conflictKind) on two arguments passing the same data: "" when they
// may appear in one loop, else a phrase of the reason.
func TestConflictRules(t *testing.T) {
	set := &core.Set{Name: "cells"}
	nodes := &core.Set{Name: "nodes"}
	m1 := &core.Map{Name: "m1", From: set, To: nodes, Arity: 2}
	m2 := &core.Map{Name: "m2", From: set, To: nodes, Arity: 2}
	dat := func(acc core.Access, kind core.ArgKind, m *core.Map, idx int) core.Arg {
		return core.Arg{Access: acc, Kind: kind, Map: m, Idx: idx}
	}
	direct := func(acc core.Access) core.Arg { return dat(acc, core.ArgDirect, nil, 0) }
	col := func(acc core.Access, m *core.Map, idx int) core.Arg { return dat(acc, core.ArgIndirect, m, idx) }
	vec := func(acc core.Access, m *core.Map) core.Arg { return dat(acc, core.ArgVector, m, -1) }
	global := func(acc core.Access) core.Arg { return core.Arg{Access: acc, Kind: core.ArgGlobal} }
	mat := func(acc core.Access) core.Arg { return core.Arg{Access: acc, Kind: core.ArgMat} }
	view := func(a core.Arg, comp int) core.Arg { a.View, a.Comp = true, comp; return a }
	for _, c := range []struct {
		name string
		a, b core.Arg
		why  string // "" allowed, else a phrase of the reason
	}{
		{"reads", direct(core.Read), col(core.Read, m1, 0), ""},
		{"read and write", direct(core.Read), direct(core.Write), "read a Dat through one argument and modify it"},
		{"direct and map increments", direct(core.Inc), col(core.Inc, m1, 0), "modified directly may not also be accessed through a map"},
		{"map increments", col(core.Inc, m1, 0), vec(core.Inc, m2), ""},
		{"direct increments", direct(core.Inc), direct(core.Inc), ""},
		{"min with max", col(core.Min, m1, 0), col(core.Max, m1, 1), "may not be mixed"},
		{"direct writes", direct(core.Write), direct(core.RW), "must be passed only once"},
		{"same column writes", col(core.Write, m1, 1), col(core.RW, m1, 1), ""},
		{"two columns", col(core.Write, m1, 0), col(core.Write, m1, 1), "not through both column 0 and column 1"},
		{"column and whole map", col(core.RW, m1, 0), vec(core.RW, m1), "all columns"},
		{"two maps", vec(core.Write, m1), vec(core.Write, m2), `not also through map "m2"`},
		{"global read and reduction", global(core.Read), global(core.Inc), ""},
		{"global reductions", global(core.Min), global(core.Min), ""},
		{"global mixed reductions", global(core.Inc), global(core.Max), "only one kind of reduction"},
		{"matrix increments", mat(core.Inc), mat(core.Inc), ""},
		{"matrix writes", mat(core.Write), mat(core.Inc), "only with INC"},
		{"views of two components", view(direct(core.Write), 0), view(direct(core.Write), 1), ""},
		{"views of one component", view(direct(core.Write), 0), view(direct(core.Write), 0), "must be passed only once"},
		{"view and whole dat read", view(direct(core.Read), 0), direct(core.Read), ""},
		{"view and whole dat written", view(direct(core.Read), 0), direct(core.Inc), "a view of one component of a Dat and the whole Dat"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := conflictKind(&c.a, &c.b)
			if c.why == "" && got != "" || c.why != "" && !strings.Contains(got, c.why) {
				t.Errorf("conflict = %q, want %q", got, c.why)
			}
		})
	}
}
