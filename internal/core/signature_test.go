package core

import (
	"slices"
	"testing"
)

// sigFixture is a small mesh of core objects for signature tests.
type sigFixture struct {
	edges, nodes *Set
	m, m2        *Map
	x, y         *Storage // on nodes
	w            *Storage // on edges
	g            *Storage // a Global
}

func newSigFixture() *sigFixture {
	f := &sigFixture{}
	f.edges = &Set{Name: "edges", Core: 4, Owned: 4, Exec: 4, Total: 4, ID: NewID()}
	f.nodes = &Set{Name: "nodes", Core: 5, Owned: 5, Exec: 5, Total: 5, ID: NewID()}
	f.m = &Map{Name: "m", From: f.edges, To: f.nodes, Arity: 2, Table: make([]int32, 8), ID: NewID()}
	f.m2 = &Map{Name: "m2", From: f.edges, To: f.nodes, Arity: 2, Table: make([]int32, 8), ID: NewID()}
	f.x = &Storage{Name: "x", Type: Float64, Dim: 2, Set: f.nodes, Len: 10, ID: NewID()}
	f.y = &Storage{Name: "y", Type: Float64, Dim: 1, Set: f.nodes, Len: 5, ID: NewID()}
	f.w = &Storage{Name: "w", Type: Int32, Dim: 1, Set: f.edges, Len: 4, ID: NewID()}
	f.g = &Storage{Name: "g", Type: Float64, Dim: 1, Len: 1, ID: NewID()}
	return f
}

func (f *sigFixture) loop(args ...Arg) *Loop {
	return &Loop{Kernel: &Kernel{Name: "k", Sum: [16]byte{1}}, Set: f.edges, Args: args}
}

// TestAnalyse: the signature's numbering of base arguments, indirect
// datasets, their first arguments and reductions, for the argument
// combinations loops use.
func TestAnalyse(t *testing.T) {
	f := newSigFixture()
	cases := []struct {
		name       string
		args       []Arg
		base, ind  []int
		dsArg      []int
		reductions []int
		colour     bool
	}{
		{"direct only",
			[]Arg{{Data: f.w, Access: Read, Kind: ArgDirect}, {Data: f.g, Access: Inc, Kind: ArgGlobal}},
			[]int{0, 1}, []int{-1, -1}, nil, []int{1}, false},
		{"res_calc shape: one dat through two columns of one map",
			[]Arg{{Data: f.x, Map: f.m, Idx: 0, Access: Read, Kind: ArgIndirect}, {Data: f.x, Map: f.m, Idx: 1, Access: Read, Kind: ArgIndirect},
				{Data: f.y, Map: f.m, Idx: 0, Access: Inc, Kind: ArgIndirect}, {Data: f.y, Map: f.m, Idx: 1, Access: Inc, Kind: ArgIndirect}},
			[]int{0, 0, 2, 2}, []int{0, 0, 1, 1}, []int{0, 2}, nil, true},
		{"one dat through two maps: two datasets, one base",
			[]Arg{{Data: f.y, Map: f.m, Idx: 0, Access: Inc, Kind: ArgIndirect}, {Data: f.y, Map: f.m2, Idx: 1, Access: Inc, Kind: ArgIndirect},
				{Data: f.w, Access: Write, Kind: ArgDirect}},
			[]int{0, 0, 2}, []int{0, 1, -1}, []int{0, 1}, nil, true},
		{"vector and column of one map share a dataset; reads do not colour",
			[]Arg{{Data: f.x, Map: f.m, Idx: -1, Access: Read, Kind: ArgVector}, {Data: f.g, Access: Read, Kind: ArgGlobal},
				{Data: f.x, Map: f.m, Idx: 1, Access: Read, Kind: ArgIndirect}, {Data: f.g, Access: Max, Kind: ArgGlobal}},
			[]int{0, 1, 0, 1}, []int{0, -1, 0, -1}, []int{0}, []int{3}, false},
		{"views of two components through one map: two datasets, one base",
			[]Arg{{Data: f.x, Map: f.m, Idx: 0, Access: Read, Kind: ArgIndirect, View: true}, {Data: f.x, Map: f.m, Idx: 1, Access: Inc, Kind: ArgIndirect, View: true, Comp: 1},
				{Data: f.x, Map: f.m, Idx: -1, Access: Inc, Kind: ArgVector, View: true, Comp: 1}},
			[]int{0, 0, 0}, []int{0, 1, 1}, []int{0, 1}, nil, true},
		{"a view and its whole Dat: two datasets",
			[]Arg{{Data: f.x, Map: f.m, Idx: 0, Access: Read, Kind: ArgIndirect, View: true}, {Data: f.x, Map: f.m, Idx: 0, Access: Read, Kind: ArgIndirect}},
			[]int{0, 0}, []int{0, 1}, []int{0, 1}, nil, false},
	}
	for _, c := range cases {
		s := Analyse(f.loop(c.args...))
		if !slices.Equal(s.Base, c.base) || !slices.Equal(s.Ind, c.ind) || !slices.Equal(s.DSArg, c.dsArg) ||
			!slices.Equal(s.Reductions, c.reductions) || s.NInd != len(c.dsArg) || s.Colour != c.colour {
			t.Errorf("%s: base %v ind %v dsArg %v reductions %v nind %d colour %v; want base %v ind %v dsArg %v reductions %v colour %v",
				c.name, s.Base, s.Ind, s.DSArg, s.Reductions, s.NInd, s.Colour, c.base, c.ind, c.dsArg, c.reductions, c.colour)
		}
		for i, a := range c.args {
			as := s.Args[i]
			if as.Kind != a.Kind || as.Type != a.Data.Type || as.Dim != a.Dim() || as.Access != a.Access || as.Idx != a.Idx ||
				as.View != a.View || as.Comp != a.Comp || as.Stride != a.Data.Dim || a.View && as.Dim != 1 {
				t.Errorf("%s: argument %d: shape %+v does not describe %s", c.name, i, as, a.Describe())
			}
		}
	}
}

// TestSignatureKey: loops of one shape share a key whatever data, maps and
// sets they use; any change of shape changes it.
func TestSignatureKey(t *testing.T) {
	f := newSigFixture()
	base := []Arg{{Data: f.x, Map: f.m, Idx: 0, Access: Read, Kind: ArgIndirect}, {Data: f.y, Map: f.m, Idx: 1, Access: Inc, Kind: ArgIndirect}}
	key := Analyse(f.loop(base...)).Key

	other := newSigFixture() // other data, maps and sets of the same shapes
	same := []Arg{{Data: other.x, Map: other.m, Idx: 0, Access: Read, Kind: ArgIndirect}, {Data: other.y, Map: other.m, Idx: 1, Access: Inc, Kind: ArgIndirect}}
	if got := Analyse(other.loop(same...)).Key; got != key {
		t.Error("a loop of the same shape on other data has another key")
	}
	changes := map[string][]Arg{
		"access":    {{Data: f.x, Map: f.m, Idx: 0, Access: Read, Kind: ArgIndirect}, {Data: f.y, Map: f.m, Idx: 1, Access: RW, Kind: ArgIndirect}},
		"column":    {{Data: f.x, Map: f.m, Idx: 1, Access: Read, Kind: ArgIndirect}, {Data: f.y, Map: f.m, Idx: 1, Access: Inc, Kind: ArgIndirect}},
		"other map": {{Data: f.x, Map: f.m, Idx: 0, Access: Read, Kind: ArgIndirect}, {Data: f.y, Map: f.m2, Idx: 1, Access: Inc, Kind: ArgIndirect}},
		"same data": {{Data: f.y, Map: f.m, Idx: 0, Access: Inc, Kind: ArgIndirect}, {Data: f.y, Map: f.m, Idx: 1, Access: Inc, Kind: ArgIndirect}},
		"dim":       {{Data: f.y, Map: f.m, Idx: 0, Access: Read, Kind: ArgIndirect}, {Data: f.x, Map: f.m, Idx: 1, Access: Inc, Kind: ArgIndirect}},
		"view":      {{Data: f.x, Map: f.m, Idx: 0, Access: Read, Kind: ArgIndirect, View: true}, {Data: f.y, Map: f.m, Idx: 1, Access: Inc, Kind: ArgIndirect}},
	}
	// A view of another component is another shape.
	view := func(comp int) string {
		return Analyse(f.loop(Arg{Data: f.x, Map: f.m, Idx: 0, Access: Read, Kind: ArgIndirect, View: true, Comp: comp})).Key
	}
	if view(0) == view(1) {
		t.Error("changing a view's component keeps the key")
	}
	for name, args := range changes {
		if Analyse(f.loop(args...)).Key == key {
			t.Errorf("changing the %s keeps the key", name)
		}
	}
	l := f.loop(base...)
	l.Check = true
	if Analyse(l).Key == key {
		t.Error("check mode keeps the key")
	}
	buf := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(10, func() { buf = AppendKey(buf[:0], l) }); n != 0 {
		t.Errorf("AppendKey allocates %v times", n)
	}
}
