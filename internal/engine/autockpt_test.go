package engine

import (
	"encoding/binary"
	"testing"

	"github.com/goop2/op2/internal/core"
)

// TestParseReductionLog reads the log autoAfter writes (index, length,
// values per loop) and refuses one cut short.
func TestParseReductionLog(t *testing.T) {
	entry := func(b []byte, idx uint64, v ...byte) []byte {
		b = binary.LittleEndian.AppendUint64(b, idx)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
		return append(b, v...)
	}
	log := entry(entry(nil, 3, 1, 2), 9)
	got, err := parseReductionLog(log)
	if err != nil || len(got) != 2 || string(got[3]) != "\x01\x02" || len(got[9]) != 0 {
		t.Fatalf("parseReductionLog = %v, %v", got, err)
	}
	for _, bad := range [][]byte{log[:5], log[:13], entry(nil, 1, 1, 2, 3)[:14]} {
		if _, err := parseReductionLog(bad); err == nil || err.Error() != "the log of reductions is cut short" {
			t.Errorf("parseReductionLog(%v) = %v, want cut short", bad, err)
		}
	}
}

// TestFoldLoop: the sum a restart compares tells apart loops that differ
// in their kernel's name, their set or any argument's kind, access, data,
// map, map index, presence or view component, and the order of loops,
// names holding any byte; a kernel's body, a set's size and the numbering
// of a run (IDs) do not count.
func TestFoldLoop(t *testing.T) {
	cells, nodes := &core.Set{Name: "cells", Owned: 10, ID: 1}, &core.Set{Name: "nodes", Owned: 12, ID: 2}
	q := &core.Storage{Name: "q", Set: cells, ID: 3}
	x := &core.Storage{Name: "x", Set: nodes, ID: 4}
	g := &core.Storage{Name: "g", ID: 5}
	m := &core.Map{Name: "pcell", From: cells, To: nodes, ID: 6}
	base := func() *core.Loop {
		return &core.Loop{Kernel: &core.Kernel{Name: "step", Source: "a", ID: 7}, Set: cells, Args: []core.Arg{
			{Data: x, Map: m, Idx: 1, Access: core.Read, Kind: core.ArgIndirect},
			{Data: q, Access: core.RW, Kind: core.ArgDirect},
			{Data: g, Access: core.Inc, Kind: core.ArgGlobal},
		}}
	}
	sum := func(ls ...*core.Loop) uint64 {
		s := loopSumStart
		for _, l := range ls {
			s = foldLoop(s, l)
		}
		return s
	}
	changed := map[string]func(l *core.Loop){
		"kernel name":  func(l *core.Loop) { l.Kernel.Name = "step2" },
		"set":          func(l *core.Loop) { l.Set = nodes },
		"access":       func(l *core.Loop) { l.Args[1].Access = core.Write },
		"map index":    func(l *core.Loop) { l.Args[0].Idx = 2 },
		"map":          func(l *core.Loop) { l.Args[0].Map = &core.Map{Name: "pedge"} },
		"dat":          func(l *core.Loop) { l.Args[1].Data = &core.Storage{Name: "qold", Set: cells} },
		"kind":         func(l *core.Loop) { l.Args[0].Kind = core.ArgVector },
		"off":          func(l *core.Loop) { l.Args[2].Off = true },
		"arg order":    func(l *core.Loop) { l.Args[0], l.Args[1] = l.Args[1], l.Args[0] },
		"one arg less": func(l *core.Loop) { l.Args = l.Args[:2] },
		"view":         func(l *core.Loop) { l.Args[1].View = true },
		"component":    func(l *core.Loop) { l.Args[1].View, l.Args[1].Comp = true, 1 },
		"name boundary": func(l *core.Loop) {
			l.Kernel.Name, l.Set = "stepc", &core.Set{Name: "ells"}
		},
	}
	same := map[string]func(l *core.Loop){
		"kernel body": func(l *core.Loop) { l.Kernel.Source, l.Kernel.ID = "b", 8 },
		"set size":    func(l *core.Loop) { l.Set = &core.Set{Name: "cells", Owned: 99, ID: 9} },
		"IDs":         func(l *core.Loop) { l.Args[1].Data = &core.Storage{Name: "q", Set: cells, ID: 10} },
	}
	want := sum(base())
	seen := map[uint64]string{want: "the loop"}
	for what, change := range changed {
		l := base()
		change(l)
		got := sum(l)
		if other, dup := seen[got]; dup {
			t.Errorf("a loop with another %s has the sum of %s", what, other)
		}
		seen[got] = what
	}
	for what, change := range same {
		l := base()
		change(l)
		if sum(l) != want {
			t.Errorf("a loop with another %s has another sum", what)
		}
	}
	a, b := base(), base()
	b.Kernel.Name = "other"
	if sum(a, b) == sum(b, a) {
		t.Error("two loops in either order have one sum")
	}
	// Names holding any byte stay apart: "d\xff" then "m", "d" then "\xffm".
	a, b = base(), base()
	a.Args[0].Data, a.Args[0].Map = &core.Storage{Name: "d\xff", Set: nodes}, &core.Map{Name: "m"}
	b.Args[0].Data, b.Args[0].Map = &core.Storage{Name: "d", Set: nodes}, &core.Map{Name: "\xffm"}
	if sum(a) == sum(b) {
		t.Error("a byte 0xff moved from one name to the next leaves the sum as it was")
	}
}
