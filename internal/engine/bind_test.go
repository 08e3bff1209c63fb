package engine

import (
	"strings"
	"testing"

	"github.com/goop2/op2/internal/core"
)

// TestBind binds loops of a kernel taking (double *, double **): a
// loop that fits fills the core.Loop, and each kind of misuse is refused
// with a message naming it, leaving the loop without arguments.
func TestBind(t *testing.T) {
	cells := &core.Set{Name: "cells", Owned: 4, Total: 4}
	nodes := &core.Set{Name: "nodes", Owned: 5, Total: 5}
	other := &core.Set{Name: "other", Owned: 4, Total: 4}
	cellNodes := &core.Map{Name: "cn", From: cells, To: nodes, Arity: 2}
	q := &core.Storage{Name: "q", Type: core.Float64, Dim: 1, Set: cells}
	x := &core.Storage{Name: "x", Type: core.Float64, Dim: 1, Set: nodes}
	xi := &core.Storage{Name: "xi", Type: core.Int32, Dim: 1, Set: nodes}
	onOther := &core.Storage{Name: "o", Type: core.Float64, Dim: 1, Set: other}
	k := &core.Kernel{Name: "k"}
	info := &core.KernelInfo{Params: []core.Param{
		{Text: "double *q", Type: core.Float64, Depth: 1},
		{Text: "double **x", Type: core.Float64, Depth: 2},
	}}
	direct := func(s *core.Storage, acc core.Access) Arg {
		return Arg{Core: core.Arg{Data: s, Access: acc, Kind: core.ArgDirect}}
	}
	vec := func(s *core.Storage, acc core.Access, m *core.Map) Arg {
		return Arg{Core: core.Arg{Data: s, Map: m, Idx: -1, Access: acc, Kind: core.ArgVector}}
	}
	twoDirect := &core.KernelInfo{Params: []core.Param{
		{Text: "double *a", Type: core.Float64, Depth: 1},
		{Text: "double *b", Type: core.Float64, Depth: 1},
	}}
	p := NewProcess(testAPI{})
	for _, c := range []struct {
		name string
		args []Arg
		want string           // "" binds
		info *core.KernelInfo // nil: (double *, double **)
	}{
		{"fits", []Arg{direct(q, core.RW), vec(x, core.Inc, cellNodes)}, "", nil},
		{"too few", []Arg{direct(q, core.RW)}, "takes 2 parameters but the loop passes 1", nil},
		{"wrong set", []Arg{direct(onOther, core.RW), vec(x, core.Inc, cellNodes)}, `lives on set "other", not on the loop's set "cells"`, nil},
		{"wrong type", []Arg{direct(q, core.RW), vec(xi, core.Read, cellNodes)}, "has element type float64", nil},
		{"min directly", []Arg{direct(q, core.Min), vec(x, core.Inc, cellNodes)}, "applies to a Dat only through a map", nil},
		{"no map", []Arg{direct(q, core.RW), vec(x, core.Inc, nil)}, "map is nil", nil},
		{"empty", []Arg{{}, vec(x, core.Inc, cellNodes)}, "empty argument", nil},
		{"read and increment", []Arg{direct(q, core.Read), direct(q, core.Inc)}, "conflicts with argument 0", twoDirect},
		{"two increments", []Arg{direct(q, core.Inc), direct(q, core.Inc)}, "", twoDirect},
	} {
		t.Run(c.name, func(t *testing.T) {
			var l core.Loop
			in := info
			if c.info != nil {
				in = c.info
			}
			err := p.Bind(&Binding{Backend: "sequential", Kernel: k, Info: in, Set: cells}, c.args, &l)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("Bind: %v", err)
			case c.want == "":
				if l.Kernel != k || l.Set != cells || len(l.Args) != 2 || l.Args[1].Access != c.args[1].Core.Access {
					t.Errorf("bound loop %+v", l)
				}
			case err == nil || !strings.Contains(err.Error(), c.want):
				t.Errorf("Bind = %v, want an error with %q", err, c.want)
			case len(l.Args) != 0:
				t.Errorf("a refused loop kept %d arguments", len(l.Args))
			}
		})
	}
}

// TestExtrusionMattersGatesCheckExtruded: Bind skips checkExtruded when
// extrusionMatters says there is nothing to check, so for every shape of
// argument that skip must lose no error.
func TestExtrusionMattersGatesCheckExtruded(t *testing.T) {
	base := &core.Set{Name: "cells"}
	to := &core.Set{Name: "nodes"}
	x := &core.Extrusion{Name: "prisms", Base: base, Layers: 3}
	m := &core.Map{Name: "m", From: base, To: to, Arity: 1}
	xm := &ExtMap{Name: "xm", From: x, Base: m}
	for _, loopX := range []*core.Extrusion{nil, x} {
		for _, role := range []Role{RoleData, RoleLayer} {
			for _, kind := range []core.ArgKind{core.ArgDirect, core.ArgIndirect, core.ArgVector, core.ArgGlobal, core.ArgMat} {
				for _, xmap := range []*ExtMap{nil, xm} {
					for _, dataX := range []*core.Extrusion{nil, x} {
						s := &core.Storage{Name: "d", Type: core.Float64, Dim: 1, Set: base, Extruded: dataX}
						a := core.Arg{Data: s, Map: m, Kind: kind, Access: core.RW}
						arg := &Arg{Core: a, Role: role, XMap: xmap}
						b := &Binding{Set: base, Extruded: loopX}
						if !extrusionMatters(b, &a, arg) {
							if msg := checkExtruded(b, &a, arg); msg != "" {
								t.Errorf("loop extruded %v, role %d, kind %d, extruded map %v, data extruded %v: skipped, but checkExtruded says %q",
									loopX != nil, role, kind, xmap != nil, dataX != nil, msg)
							}
						}
					}
				}
			}
		}
	}
}
