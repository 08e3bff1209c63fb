package plan

import "github.com/goop2/op2/internal/core"

// ForLoop describes loop l to the planner, using its signature's numbering
// of indirect datasets (l.Sig). modifies says which arguments constrain the
// colouring. Datasets of one dat (through different maps) form one conflict
// group, since they are one array.
func ForLoop(l *core.Loop, modifies func(i int) bool, blockSize int) Input {
	sig := l.Sig
	in := Input{Core: l.Set.Core, Owned: l.Set.Owned, Exec: l.Set.Exec, NInds: sig.NInd,
		IndSetSize: make([]int, sig.NInd), Conflict: make([]int, sig.NInd), BlockSize: blockSize}
	if end := l.IterEnd(); end < in.Exec {
		in.Exec = end
		in.Owned = min(in.Owned, end)
		in.Core = min(in.Core, end)
	}
	for i := range l.Args {
		a := &l.Args[i]
		d := sig.Ind[i]
		arg := Arg{Ind: d, ElemBytes: a.ElemValues() * a.Data.Type.Size()}
		if d >= 0 {
			arg.Map = a.Map.Table
			arg.Arity = a.Map.Arity
			arg.Idx = a.Idx
			arg.Modifies = modifies(i)
			in.IndSetSize[d] = a.Map.To.Total
			j := 0 // the first argument with the same dat through a map
			for sig.Base[j] != sig.Base[i] || sig.Ind[j] < 0 {
				j++
			}
			in.Conflict[d] = sig.Ind[j]
		}
		in.Args = append(in.Args, arg)
	}
	return in
}
