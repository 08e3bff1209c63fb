package plan_test

import (
	"math/rand/v2"
	"testing"

	"github.com/goop2/op2/internal/plan"
)

// TestSameOrder: plans of loops over one set order the elements alike
// when their blocks, colours and thread colours agree, whatever else
// they stage; another block size or another conflict (an increment
// through a second map) orders them otherwise.
func TestSameOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n, targets := 4000, 1500
	mapA, mapB := make([]int32, 2*n), make([]int32, 2*n)
	for i := range mapA {
		mapA[i], mapB[i] = int32(rng.IntN(targets)), int32(rng.IntN(targets))
	}
	inc := func(m []int32, ind int) []plan.Arg {
		return []plan.Arg{
			{Ind: ind, Map: m, Arity: 2, Idx: 0, Modifies: true, ElemBytes: 8},
			{Ind: ind, Map: m, Arity: 2, Idx: 1, Modifies: true, ElemBytes: 8},
		}
	}
	input := func(bs int, args ...[]plan.Arg) plan.Input {
		in := plan.Input{Core: n, Owned: n, Exec: n, BlockSize: bs}
		for _, a := range args {
			in.Args = append(in.Args, a...)
			in.NInds++
			in.IndSetSize = append(in.IndSetSize, targets)
		}
		return in
	}
	read := []plan.Arg{{Ind: 1, Map: mapB, Arity: 2, Idx: 0, ElemBytes: 64}}
	base := input(256, inc(mapA, 0))
	for _, c := range []struct {
		name string
		in   plan.Input
		same bool
	}{
		{"the same input", input(256, inc(mapA, 0)), true},
		{"a read through another map staged too", input(256, inc(mapA, 0), read), true},
		{"another block size", input(128, inc(mapA, 0)), false},
		{"increments through a second map", input(256, inc(mapA, 0), inc(mapB, 1)), false},
	} {
		p, err := plan.Build(base)
		if err != nil {
			t.Fatal(err)
		}
		q, err := plan.Build(c.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.SameOrder(q); got != c.same || q.SameOrder(p) != got {
			t.Errorf("%s: SameOrder %v, want %v", c.name, got, c.same)
		}
	}
	var none *plan.Plan
	if p, _ := plan.Build(base); none.SameOrder(p) || !none.SameOrder(nil) {
		t.Errorf("a nil plan (no plan) orders alike only with no plan")
	}
}
