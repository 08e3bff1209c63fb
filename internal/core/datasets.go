package core

import "github.com/goop2/op2/internal/plan"

// Datasets numbers the loop's indirect datasets, OP2's "ind args": the
// distinct (dat, map) pairs of the arguments that go through a map. It
// stores each argument's dataset in inds (-1 for direct arguments and
// Globals) and returns how many there are. The numbering depends only on
// the loop's signature.
func Datasets(l *Loop, inds []int) int {
	n := 0
	for i := range l.Args {
		a := &l.Args[i]
		inds[i] = -1
		if a.Map == nil {
			continue
		}
		for j := 0; j < i; j++ {
			if b := &l.Args[j]; b.Map == a.Map && b.Data == a.Data {
				inds[i] = inds[j]
				break
			}
		}
		if inds[i] < 0 {
			inds[i] = n
			n++
		}
	}
	return n
}

// PlanInput describes the loop to the planner. inds and nind come from
// Datasets; modifies says which arguments constrain the colouring. Datasets
// of one dat (through different maps) form one conflict group, since they
// are one array.
func PlanInput(l *Loop, inds []int, nind int, modifies func(i int) bool, blockSize int) plan.Input {
	in := plan.Input{Core: l.Set.Core, Owned: l.Set.Owned, Exec: l.Set.Exec, NInds: nind,
		IndSetSize: make([]int, nind), Conflict: make([]int, nind), BlockSize: blockSize}
	if end := l.IterEnd(); end < in.Exec {
		in.Exec = end
		in.Owned = min(in.Owned, end)
		in.Core = min(in.Core, end)
	}
	for i := range l.Args {
		a := &l.Args[i]
		arg := plan.Arg{Ind: inds[i], ElemBytes: a.Data.Dim * a.Data.Type.Size()}
		if d := inds[i]; d >= 0 {
			arg.Map = a.Map.Table
			arg.Arity = a.Map.Arity
			arg.Idx = a.Idx
			arg.Modifies = modifies(i)
			in.IndSetSize[d] = a.Map.To.Total
			j := 0 // the first argument with the same dat through a map
			for l.Args[j].Data != a.Data || inds[j] < 0 {
				j++
			}
			in.Conflict[d] = inds[j]
		}
		in.Args = append(in.Args, arg)
	}
	return in
}
