package core

import "testing"

// TestArgFacts checks each argument's facts against the rules they stand
// for, for every kind and access, and that the signature holds the same.
func TestArgFacts(t *testing.T) {
	f := newSigFixture()
	type shape struct {
		kind ArgKind
		acc  Access
		view bool
	}
	var shapes []shape
	for k := ArgDirect; k <= ArgMat; k++ {
		for acc := Read; acc <= Max; acc++ {
			shapes = append(shapes, shape{k, acc, false}, shape{k, acc, true})
		}
	}
	for _, s := range shapes {
		a := Arg{Data: f.x, Access: s.acc, Kind: s.kind, View: s.view}
		switch s.kind {
		case ArgDirect:
			a.Data = f.w
		case ArgIndirect, ArgVector:
			a.Map = f.m
		case ArgGlobal:
			a.Data, a.View = f.g, false
		case ArgMat:
			a.Map, a.View = f.m, false
			a.Mat = &MatArg{Col: f.m, RDim: 1, CDim: 1}
		}
		got := a.Facts()
		mapped := s.kind == ArgIndirect || s.kind == ArgVector
		reads := s.acc == Read || s.acc == RW
		want := map[ArgFacts]bool{
			FactDirect:      s.kind == ArgDirect,
			FactMapped:      mapped,
			FactAllColumns:  s.kind == ArgVector,
			FactGlobal:      s.kind == ArgGlobal,
			FactMat:         s.kind == ArgMat,
			FactReduced:     a.IsReduction(),
			FactMapModify:   a.IndirectModify(),
			FactDirtiesHalo: s.kind != ArgGlobal && s.acc.Modifies(),
			FactWholeWrite:  s.kind == ArgDirect && s.acc == Write && !a.View,
			FactMapRead:     (mapped || s.kind == ArgMat) && reads,
			FactOwnRead:     s.kind == ArgDirect && reads,
		}
		for fact, w := range want {
			if got.Any(fact) != w {
				t.Errorf("%s (kind %d): fact %#x is %v, want %v", a.Describe(), s.kind, fact, got.Any(fact), w)
			}
		}
		l := &Loop{Kernel: &Kernel{Name: "k"}, Set: f.edges, Args: []Arg{a}}
		if sig := Analyse(l); sig.Args[0].Facts != got {
			t.Errorf("%s: the signature's facts %#x, the argument's %#x", a.Describe(), sig.Args[0].Facts, got)
		}
	}
	if off := OffArg(Float64); off.Facts() != FactGlobal {
		t.Errorf("a disabled optional argument's facts are %#x, want FactGlobal alone", off.Facts())
	}
	if FactMapped.Role() != FactMapped || (FactMapped|FactAllColumns|FactMapRead).Role() != FactMapped|FactAllColumns {
		t.Error("Role keeps other facts or drops role facts")
	}
}
