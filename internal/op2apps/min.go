package op2apps

import (
	"math"

	"github.com/goop2/op2"
)

// minKernelSrc is OP2-Common's apps/c/min kernel, C++ as OP2 declares it
// (std::min; <algorithm> included, which the original's headers bring).
const minKernelSrc = `
#include <algorithm>
void min_kernel(const int *d, int *min) {
    *min = std::min(*d, *min);
}
`

// minKernelCSrc is the same kernel in C, for the opencl backend, which
// runs no C++ kernels.
const minKernelCSrc = `
void min_kernel(const int *d, int *min) {
    *min = MIN(*d, *min);
}
`

// MinSize is the size of min's set s1 (OP2's size).
const MinSize = 20

// MinResult is what OP2's min prints: the data ("i: %d, v: %d") and the
// minimum a Global of access OP_MIN reduced ("min: %d (expected: %d)").
type MinResult struct {
	V        []int32
	Min      int32
	Expected int32
}

// RunMin runs OP2's min_direct (indirect false: a loop over s1 reading d1)
// or min_indirect (a loop over s2, half s1's size, reading d1 through a
// map to s1's even elements). c selects the C spelling of the kernel (for
// opencl) over OP2's C++. Under MPI rank 0 declares the data, the others
// nothing, and the mesh is partitioned with the partitioner p makes for
// s1 (by blocks where p is nil).
func RunMin(indirect, c bool, p PartitionFunc) (*MinResult, error) {
	r := &MinResult{Expected: math.MaxInt32}
	n := 0
	if op2.Rank() == 0 {
		n = MinSize
	}
	data := make([]int32, n)
	for i := range data {
		v := int32(math.Pow(float64(i-MinSize/2), 2)) + 5
		data[i] = v
		r.V = append(r.V, v)
		r.Expected = min(v, r.Expected)
	}
	s1, err := op2.NewSet(n, "s1")
	if err != nil {
		return nil, err
	}
	s2, err := op2.NewSet(n/2, "s2")
	if err != nil {
		return nil, err
	}
	d1, err := op2.NewDat(s1, 1, data, "d1")
	if err != nil {
		return nil, err
	}
	mapData := make([]int32, n/2)
	for i := range mapData {
		mapData[i] = int32(2 * i)
	}
	m1, err := op2.NewMap(s2, s1, 1, mapData, "m1")
	if err != nil {
		return nil, err
	}
	if err := partition(s1, nil, p); err != nil {
		return nil, err
	}
	g, err := op2.NewGlobal(1, []int32{math.MaxInt32}, "min")
	if err != nil {
		return nil, err
	}
	k := op2.NewKernel(minKernelSrc, "min_kernel").CXX()
	if c {
		k = op2.NewKernel(minKernelCSrc, "min_kernel")
	}
	if indirect {
		err = op2.ParLoop(k, s2, d1.ArgMap(op2.Read, m1, 0), g.Arg(op2.Min))
	} else {
		err = op2.ParLoop(k, s1, d1.Arg(op2.Read), g.Arg(op2.Min))
	}
	if err != nil {
		return nil, err
	}
	if r.Min, err = g.ValueErr(); err != nil {
		return nil, err
	}
	return r, nil
}
