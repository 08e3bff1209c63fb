package plan

import (
	"math/rand/v2"
	"testing"
)

// hugeArityInput is a loop over n elements whose map has the given arity
// (columns of one element are mostly distinct, some repeated): a dat read
// through every column, one incremented through every column (a vector
// argument) and the same dat incremented through two single columns, and
// a second dataset modified through only some columns of the same map.
func hugeArityInput(n, arity, targets int) Input {
	r := rand.New(rand.NewPCG(uint64(arity), 7))
	m := make([]int32, n*arity)
	for i := range m {
		m[i] = int32(r.IntN(targets))
	}
	return Input{
		Core: n, Owned: n, Exec: n,
		Args: []Arg{
			{Ind: 0, Map: m, Arity: arity, Idx: -1, ElemBytes: 8},
			{Ind: 1, Map: m, Arity: arity, Idx: -1, Modifies: true, ElemBytes: 8},
			{Ind: 1, Map: m, Arity: arity, Idx: 0, Modifies: true, ElemBytes: 8},
			{Ind: 1, Map: m, Arity: arity, Idx: arity - 1, Modifies: true, ElemBytes: 8},
			{Ind: 2, Map: m, Arity: arity, Idx: 3, ElemBytes: 16},
			{Ind: 2, Map: m, Arity: arity, Idx: arity / 2, Modifies: true, ElemBytes: 16},
			{Ind: -1, ElemBytes: 8},
		},
		NInds:      3,
		IndSetSize: []int{targets, targets, targets},
		BlockSize:  16,
	}
}

// TestHugeArity plans loops whose maps have thousands of columns. Building
// the plan must take time linear in the number of map entries (a builder
// comparing every column with every other would take seconds here: no
// timing is asserted, the size makes it obvious); the plan must pass Check.
func TestHugeArity(t *testing.T) {
	for _, arity := range []int{5000, 20000} {
		in := hugeArityInput(64, arity, 50000)
		p := mustBuild(t, in)
		if p.NColors < 2 {
			t.Errorf("arity %d: %d block colours; blocks sharing targets need more than one", arity, p.NColors)
		}
	}
}

// BenchmarkBuildHugeArity plans a loop over a map of arity 5000.
func BenchmarkBuildHugeArity(b *testing.B) {
	in := hugeArityInput(64, 5000, 50000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Build(in); err != nil {
			b.Fatal(err)
		}
	}
}
