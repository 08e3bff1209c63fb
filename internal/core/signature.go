package core

import (
	"encoding/binary"
	"fmt"
)

// Signature is the one analysis of a loop's shape: everything generated
// code, execution plans and caches depend on, and nothing about which data,
// maps or set a particular call uses. It is computed once per distinct
// shape (see AppendKey) and shared by the program cache, the planner input
// and every code generator; no other code re-derives argument roles.
type Signature struct {
	Kernel *Kernel
	Args   []ArgSig
	// Base is, per argument, the first argument passing the same Dat or
	// Global (itself if none): generated code declares one data pointer per
	// base argument.
	Base []int
	// Ind is, per argument, its indirect dataset (OP2's "ind arg"): the
	// distinct (dat, map) pairs of the arguments that go through a map,
	// numbered in order of first use; -1 for direct arguments and Globals.
	// A view of one component of a Dat (Arg.View) is a dataset of its
	// own, apart from the whole Dat and from other components: staging
	// moves only its component.
	Ind []int
	// NInd is the number of indirect datasets.
	NInd int
	// DSArg is, per indirect dataset, its first argument.
	DSArg []int
	// Reductions are the Global arguments with access INC, MIN or MAX.
	Reductions []int
	// Consts are the constants the kernel refers to, sorted by name.
	Consts []*Const
	// Check is check mode (see Loop.Check).
	Check bool
	// Colour says some argument modifies data through a map, so
	// elements that share a target must not run at the same time.
	Colour bool
	// Key identifies the shape (AppendKey of the loop), for caches.
	Key string
}

// ArgSig is the shape of one argument.
type ArgSig struct {
	Kind   ArgKind
	Type   ScalarType
	Dim    int
	Access Access
	Arity  int // map arity; 0 for direct arguments and Globals
	Idx    int // map column of an ArgIndirect
	// Off: a disabled optional argument, for which generated code passes
	// the kernel a null pointer (a READ Global of one value otherwise).
	Off bool
	// Index: an index argument (see Arg.Index).
	Index bool
	// ColArity, RDim and CDim: a matrix argument's column map arity
	// and block dims (0 otherwise).
	ColArity, RDim, CDim int
	// View: the argument passes component Comp of its Dat (see
	// Arg.View); Dim is then 1 and Stride the Dat's dim. A component
	// is part of the shape, as a map column is: it is a constant offset
	// in the generated addressing.
	View   bool
	Comp   int
	Stride int
	// Facts are the argument's role and what the loop does with it
	// (see ArgFacts), for the code that must not test the kind.
	Facts ArgFacts
}

// IsReduction reports whether the argument is a Global reduced by the loop.
func (a *ArgSig) IsReduction() bool { return a.Kind == ArgGlobal && a.Access.IsReduction() }

// IsReduction reports whether the argument is a Global reduced by the loop.
func (a *Arg) IsReduction() bool { return a.Kind == ArgGlobal && a.Access.IsReduction() }

// OrderSensitive reports whether what the argument leaves may depend on
// the order in which the loop's elements combine into it: a
// floating-point Global the loop reduces (a sum's last bits; a minimum or
// maximum's signed zeros), or data the loop changes through a map (or a
// matrix), where elements sharing a target combine in turn, unless the
// change is an integer increment, minimum or maximum. A disabled optional
// argument leaves nothing.
func (a *Arg) OrderSensitive() bool {
	switch {
	case a.Off || !a.Access.Modifies():
		return false
	case a.IsReduction():
		return a.Data.Type.IsFloat()
	case a.IndirectModify():
		return a.Data.Type.IsFloat() || !a.Access.IsReduction()
	}
	return false
}

// OrderSensitive reports whether any of the loop's arguments is
// (Arg.OrderSensitive): fusion must then keep the order the loop has
// alone.
func (l *Loop) OrderSensitive() bool {
	for i := range l.Args {
		if l.Args[i].OrderSensitive() {
			return true
		}
	}
	return false
}

// AppendKey appends the key of l's shape to buf: the kernel's content,
// each argument's kind, type, dim, access, map arity and column, whether
// it is a disabled optional argument (so a loop with an optional argument
// on and the same loop with it off are two programs: the disabled one
// passes a null pointer and moves nothing), whether it is an index
// argument (which gets a private copy, unlike a READ int32 Dat), whether
// it is a view of one component and which (a constant offset in the
// generated addressing, as a map column is), which arguments pass the
// same data and the same map, the constants the kernel uses, check mode,
// and for a loop over an extruded set its layer count, the layers each
// extruded argument reaches and whether an argument is the hidden layer
// ranges. Loops with equal keys have equal signatures. It allocates
// nothing when buf has room.
func AppendKey(buf []byte, l *Loop) []byte {
	buf = append(buf, l.Kernel.Sum[:]...)
	for i := range l.Args {
		a := &l.Args[i]
		arity := 0
		if a.Map != nil {
			arity = a.Map.Arity
		}
		same, sameMap := i, i // the first arguments passing the same data, the same map
		for j := i - 1; j >= 0; j-- {
			if l.Args[j].Data == a.Data {
				same = j
			}
			if a.Map != nil && l.Args[j].Map == a.Map {
				sameMap = j
			}
		}
		flags := byte(0)
		if a.Off {
			flags |= 1
		}
		if a.Index {
			flags |= 2
		}
		if a.Hidden {
			flags |= 4
		}
		if a.View {
			flags |= 8
		}
		if a.Data.DeviceAoS {
			flags |= 16
		}
		buf = append(buf, byte(a.Kind), byte(a.Data.Type), byte(a.Access), flags)
		buf = binary.LittleEndian.AppendUint32(buf, uint32(same))
		buf = binary.LittleEndian.AppendUint32(buf, uint32(sameMap))
		buf = binary.LittleEndian.AppendUint32(buf, uint32(a.Data.Dim))
		buf = binary.LittleEndian.AppendUint32(buf, uint32(arity))
		buf = binary.LittleEndian.AppendUint32(buf, uint32(a.Idx))
		if a.View {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(a.Comp))
		}
		if a.Ext != nil {
			buf = append(buf, 'x')
			buf = binary.LittleEndian.AppendUint32(buf, uint32(a.Data.LayerDim()))
			for j := range a.Ext.Start {
				buf = binary.LittleEndian.AppendUint32(buf, uint32(a.Ext.Start[j]))
				buf = binary.LittleEndian.AppendUint32(buf, uint32(a.Ext.Offset[j]))
			}
		}
		if a.Kind == ArgMat {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(a.Mat.Col.Arity))
			buf = binary.LittleEndian.AppendUint32(buf, uint32(a.Mat.RDim))
			buf = binary.LittleEndian.AppendUint32(buf, uint32(a.Mat.CDim))
		}
	}
	buf = append(buf, 0xff)
	for _, c := range l.Consts {
		buf = binary.LittleEndian.AppendUint64(buf, c.ID)
	}
	if l.Check {
		buf = append(buf, 1)
	}
	if l.Extruded != nil {
		buf = append(buf, 'L')
		buf = binary.LittleEndian.AppendUint32(buf, uint32(l.Extruded.Layers))
	}
	return buf
}

// Analyse computes the signature of l's shape.
func Analyse(l *Loop) *Signature {
	n := len(l.Args)
	s := &Signature{Kernel: l.Kernel, Args: make([]ArgSig, n), Base: make([]int, n), Ind: make([]int, n),
		Consts: append([]*Const(nil), l.Consts...), Check: l.Check, Key: string(AppendKey(nil, l))}
	for i := range l.Args {
		a := &l.Args[i]
		as := ArgSig{Kind: a.Kind, Type: a.Data.Type, Dim: a.Dim(), Access: a.Access, Idx: a.Idx, Off: a.Off, Index: a.Index,
			View: a.View, Comp: a.Comp, Stride: a.Data.Dim, Facts: a.Facts()}
		if a.Map != nil {
			as.Arity = a.Map.Arity
		}
		if a.Kind == ArgMat {
			as.ColArity, as.RDim, as.CDim = a.Mat.Col.Arity, a.Mat.RDim, a.Mat.CDim
		}
		s.Args[i] = as
		s.Base[i] = i
		for j := 0; j < i; j++ {
			if l.Args[j].Data == a.Data {
				s.Base[i] = j
				break
			}
		}
		if as.IsReduction() {
			s.Reductions = append(s.Reductions, i)
		}
		if a.IndirectModify() {
			s.Colour = true
		}
		s.Ind[i] = -1
		if a.Map == nil {
			continue
		}
		for j := 0; j < i; j++ {
			if b := &l.Args[j]; b.Map == a.Map && b.Data == a.Data && b.View == a.View && b.Comp == a.Comp {
				s.Ind[i] = s.Ind[j]
				break
			}
		}
		if s.Ind[i] < 0 {
			s.Ind[i] = s.NInd
			s.DSArg = append(s.DSArg, i)
			s.NInd++
		}
	}
	return s
}

// String describes the signature briefly, for debugging.
func (s *Signature) String() string {
	return fmt.Sprintf("signature of kernel %q: %d arguments, %d indirect datasets, %d reductions", s.Kernel.Name, len(s.Args), s.NInd, len(s.Reductions))
}
