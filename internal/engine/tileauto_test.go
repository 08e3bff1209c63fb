package engine

import (
	"testing"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
)

// TestChainFootprintEstimate: on a chain whose loops reach every item of
// the Dats they pass (as Airfoil's do), chainFootprint's estimates from
// the arguments equal the exact counts, exec.LoopBytes' and
// exec.ChainBytes', and its data is each Dat and map once.
func TestChainFootprintEstimate(t *testing.T) {
	const n = 100
	edges := &core.Set{Name: "edges", Core: n, Owned: n, Exec: n, Total: n, ID: core.NewID()}
	nodes := &core.Set{Name: "nodes", Core: n + 1, Owned: n + 1, Exec: n + 1, Total: n + 1, ID: core.NewID()}
	tab := make([]int32, 2*n)
	for e := range n {
		tab[2*e], tab[2*e+1] = int32(e), int32(e+1)
	}
	m := &core.Map{Name: "pedge", From: edges, To: nodes, Arity: 2, Table: tab, ID: core.NewID()}
	x := &core.Storage{Name: "x", Type: core.Float64, Dim: 2, Set: nodes, Len: 2 * (n + 1), ID: core.NewID()}
	y := &core.Storage{Name: "y", Type: core.Float64, Dim: 1, Set: edges, Len: n, ID: core.NewID()}
	g := &core.Storage{Name: "g", Type: core.Float64, Dim: 1, Len: 1, ID: core.NewID()}
	k := &core.Kernel{Name: "k"}
	loops := []*core.Loop{
		{Kernel: k, Set: edges, Args: []core.Arg{{Data: y, Access: core.Write, Kind: core.ArgDirect}}},
		{Kernel: k, Set: edges, Args: []core.Arg{
			{Data: y, Access: core.Read, Kind: core.ArgDirect},
			{Data: x, Map: m, Idx: 0, Access: core.Inc, Kind: core.ArgIndirect},
			{Data: x, Map: m, Idx: 1, Access: core.Inc, Kind: core.ArgIndirect}}},
		{Kernel: k, Set: nodes, Args: []core.Arg{{Data: x, Access: core.RW, Kind: core.ArgDirect}}},
		{Kernel: k, Set: edges, Args: []core.Arg{{Data: x, Map: m, Access: core.Read, Kind: core.ArgVector}}},
	}
	f := chainFootprint(loops)
	sum := 0.0
	for _, l := range loops {
		sum += exec.LoopBytes(l)
	}
	if f.Loops != sum || f.Chain != exec.ChainBytes(loops) {
		t.Errorf("estimated %v bytes one by one and %v tiled; exact %v and %v", f.Loops, f.Chain, sum, exec.ChainBytes(loops))
	}
	if want := float64(8*n + 16*(n+1) + 4*2*n); f.Data != want || f.Seed != n {
		t.Errorf("data %v bytes, seed %d elements; want %v and %d", f.Data, f.Seed, want, n)
	}
	// A Global passes no data of the chain's.
	withGlobal := append(loops, &core.Loop{Kernel: k, Set: edges, Args: []core.Arg{{Data: g, Access: core.Inc, Kind: core.ArgGlobal}}})
	if fg := chainFootprint(withGlobal); fg.Data != f.Data {
		t.Errorf("a Global added %v bytes of data", fg.Data-f.Data)
	}
}

// TestChainKeys: a chain's schedule key (chainKey) is the same whichever
// Global its loops read and whether they pass a view or the whole Dat (a
// chain passing a fresh Global each time keeps its schedule and automatic
// choice), and differs with a floating-point sum into a Global
// (inOrder); the byte counts' key (countsKey) differs in each of these.
func TestChainKeys(t *testing.T) {
	const n = 10
	cells := &core.Set{Name: "cells", Core: n, Owned: n, Exec: n, Total: n, ID: core.NewID()}
	q := &core.Storage{Name: "q", Type: core.Float64, Dim: 4, Set: cells, Len: 4 * n, ID: core.NewID()}
	global := func() *core.Storage {
		return &core.Storage{Name: "g", Type: core.Float64, Dim: 1, Len: 1, ID: core.NewID()}
	}
	k := &core.Kernel{Name: "k"}
	chain := func(g *core.Storage, gAccess core.Access, view bool) []*core.Loop {
		return []*core.Loop{
			{Kernel: k, Set: cells, Args: []core.Arg{{Data: q, Access: core.Write, Kind: core.ArgDirect}}},
			{Kernel: k, Set: cells, Args: []core.Arg{
				{Data: q, Access: core.Read, Kind: core.ArgDirect, View: view, Comp: 1},
				{Data: g, Access: gAccess, Kind: core.ArgGlobal}}},
		}
	}
	// The schedule's key (without data), or the byte counts' (with).
	key := func(loops []*core.Loop, data bool) string {
		if data {
			return string(countsKey(nil, loops, false))
		}
		return string(chainKey(nil, loops, 64, false, false))
	}
	base := chain(global(), core.Read, false)
	for _, c := range []struct {
		name     string
		loops    []*core.Loop
		schedule bool // the schedule key differs
	}{
		{"another Global", chain(global(), core.Read, false), false},
		{"a view", chain(base[1].Args[1].Data, core.Read, true), false},
		{"a sum into the Global", chain(base[1].Args[1].Data, core.Inc, false), true},
	} {
		if got := key(c.loops, false) != key(base, false); got != c.schedule {
			t.Errorf("%s: schedule key differs %v, want %v", c.name, got, c.schedule)
		}
		if key(c.loops, true) == key(base, true) {
			t.Errorf("%s: the byte counts' key is the same", c.name)
		}
	}
}
