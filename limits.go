package op2

import (
	"fmt"
	"math/bits"
)

// MaxDim is the largest dim of a Dat, Global or Const and the largest arity
// of a Map. Generated code counts an element's components and a map's
// columns with C int, so both must fit in 32 bits.
const MaxDim = 1<<31 - 1

// MaxDataBytes is the largest size in bytes of the values of one Dat,
// Global or Const, and of one Map's table (elements × dim × value size, or
// elements × arity × 4). It is above any machine's memory and keeps every
// byte offset well within the range of Go's allocator and of C's ptrdiff_t,
// which the generated code indexes with.
const MaxDataBytes = 1 << 47

// checkShape checks that n elements of dim components of elemBytes bytes
// each can be stored and indexed, and returns the number of values n×dim.
// what names the object for the error ("dat \"q\" on set \"cells\""), unit
// the component ("dim" or "arity").
func checkShape(what, unit string, n, dim, elemBytes int) (int, error) {
	if dim < 1 {
		return 0, fmt.Errorf("op2: %s: %s %d must be at least 1", what, unit, dim)
	}
	if dim > MaxDim {
		return 0, fmt.Errorf("op2: %s: %s %d exceeds the largest allowed, %d (op2.MaxDim)", what, unit, dim, MaxDim)
	}
	hi, values := bits.Mul64(uint64(n), uint64(dim))
	hi2, bytes := bits.Mul64(values, uint64(elemBytes))
	if hi != 0 || hi2 != 0 || bytes > MaxDataBytes {
		return 0, fmt.Errorf("op2: %s: %d elements × %s %d × %d bytes exceeds the largest allowed size of %d bytes (op2.MaxDataBytes)",
			what, n, unit, dim, elemBytes, uint64(MaxDataBytes))
	}
	return int(values), nil
}

// MaxDeviceVectorArity is the largest number of map entries that the vector
// arguments (Dat.ArgVec) of one loop may pass together on a device backend
// (opencl): the sum of their maps' arities. The generated device code gives
// every work item private arrays holding one pointer (and, for increments,
// one private accumulator) per entry of every vector argument; device
// compilers keep private arrays in registers or a small per-work-item
// stack, so larger loops would fail in the device compiler or at run time.
// Such loops are refused with a *LoopError before any code is generated.
// Host backends have no such limit.
const MaxDeviceVectorArity = 8192
