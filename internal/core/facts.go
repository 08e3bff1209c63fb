package core

// ArgFacts is what the run time needs to know about one argument besides
// its data and maps: its role, and what the loop does with it. They
// follow from the argument's kind, access and marks, and are derived
// here only: the signature holds them for a loop's shape (ArgSig.Facts,
// computed once by Analyse), and Arg.Facts gives them for a bound
// argument. Outside this package, package engine and the code
// generators, code asks these facts instead of testing the kind.
type ArgFacts uint16

// The facts. Of the roles (FactDirect, FactMapped, FactGlobal and
// FactMat) exactly one is set; FactAllColumns goes with FactMapped.
const (
	// FactDirect: a Dat on the loop's set, passed directly (ArgDirect).
	FactDirect ArgFacts = 1 << iota
	// FactMapped: a Dat through a map, one column of it (ArgIndirect)
	// or every column (ArgVector, with FactAllColumns).
	FactMapped
	// FactAllColumns: a Dat through every column of its map (ArgVector).
	FactAllColumns
	// FactGlobal: a Global, or a disabled optional argument (which
	// stands as a READ Global, see Arg.Off).
	FactGlobal
	// FactMat: a matrix through a row and a column map (ArgMat).
	FactMat
	// FactReduced: a Global the loop reduces (INC, MIN or MAX).
	FactReduced
	// FactMapModify: changes data through a map (a mapped Dat or a
	// matrix), so elements that share a target must not run at the
	// same time (Arg.IndirectModify).
	FactMapModify
	// FactDirtiesHalo: changes a Dat or a matrix (not a Global), so
	// its halo is out of date after the loop.
	FactDirtiesHalo
	// FactWholeWrite: a direct WRITE of a whole Dat (not a view of one
	// component), which replaces every value of its elements and reads
	// none.
	FactWholeWrite
	// FactMapRead: reads data through a map (READ or RW, enabled), so
	// a Dat's halo is read.
	FactMapRead
	// FactOwnRead: reads a Dat directly (READ or RW, enabled), so its
	// halo is read when the loop also computes the exec halo.
	FactOwnRead
)

// roleFacts are the facts that say an argument's role.
const roleFacts = FactDirect | FactMapped | FactAllColumns | FactGlobal | FactMat

// Any reports whether f has any of the facts g.
func (f ArgFacts) Any(g ArgFacts) bool { return f&g != 0 }

// Role is f's role facts alone (FactDirect, FactMapped with or without
// FactAllColumns, FactGlobal or FactMat): two arguments with equal roles
// reach their data the same way.
func (f ArgFacts) Role() ArgFacts { return f & roleFacts }

// factsOf derives the facts of an argument of kind k and access acc; off
// marks a disabled optional argument, view a view of one component.
func factsOf(k ArgKind, acc Access, off, view bool) ArgFacts {
	var f ArgFacts
	switch k {
	case ArgDirect:
		f = FactDirect
	case ArgIndirect:
		f = FactMapped
	case ArgVector:
		f = FactMapped | FactAllColumns
	case ArgGlobal:
		f = FactGlobal
		if acc.IsReduction() {
			f |= FactReduced
		}
		return f
	case ArgMat:
		f = FactMat
	}
	if acc.Modifies() {
		f |= FactDirtiesHalo
		if f.Any(FactMapped | FactMat) {
			f |= FactMapModify
		}
	}
	if k == ArgDirect && acc == Write && !view {
		f |= FactWholeWrite
	}
	if (acc == Read || acc == RW) && !off {
		if f.Any(FactMapped | FactMat) {
			f |= FactMapRead
		} else {
			f |= FactOwnRead
		}
	}
	return f
}

// Facts are the argument's facts (see ArgFacts), derived from its kind,
// access and marks; a loop's signature holds them too (ArgSig.Facts).
func (a *Arg) Facts() ArgFacts { return factsOf(a.Kind, a.Access, a.Off, a.View) }
