package op2apps

import (
	"github.com/goop2/op2"
	"github.com/goop2/op2/mesh"
)

// The kernels of OP2-Common's apps/c/reduction (res_calc.h, update.h):
// res_calc writes 0 into an OP_INC argument through a map, which adds
// nothing, and counts its edges into an int Global.
const (
	reductionResCalcSrc = `
inline void res_calc(double *data, int *count) {
  data[0] = 0.0;
  (*count)++;
}
`
	reductionUpdateSrc = `
inline void update(double *data, int *count) {
  data[0] = 0.0;
  (*count)++;
}
`
)

// ReductionResult is what OP2's reduction prints: the edges counted by the
// indirect loop (count1, "number of edges:: %d should be: %d") and the
// cells counted by the direct loop (count2), with the sets' sizes.
type ReductionResult struct {
	Count1, Edges int
	Count2, Cells int
}

// RunReduction runs OP2's reduction application on the Airfoil mesh m (the
// file OP2's reads, new_grid.dat): an int reduction in a loop over the
// edges incrementing cells through pecell, and one in a direct loop over
// the cells. Under MPI rank 0 passes the mesh and the others nil, and the
// mesh is partitioned with the partitioner p makes for the cells (by
// blocks where p is nil).
func RunReduction(m *mesh.Mesh, p PartitionFunc) (*ReductionResult, error) {
	if m == nil {
		m = &mesh.Mesh{}
	}
	edges, err := op2.NewSet(m.NEdge, "edges")
	if err != nil {
		return nil, err
	}
	cells, err := op2.NewSet(m.NCell, "cells")
	if err != nil {
		return nil, err
	}
	pecell, err := op2.NewMap(edges, cells, 2, m.Ecell, "pecell")
	if err != nil {
		return nil, err
	}
	pRes, err := op2.NewDat[float64](cells, 4, nil, "p_res")
	if err != nil {
		return nil, err
	}
	if err := partition(cells, nil, p); err != nil {
		return nil, err
	}
	count, err := op2.NewGlobal[int32](1, nil, "count")
	if err != nil {
		return nil, err
	}
	r := &ReductionResult{Edges: edges.GlobalSize(), Cells: cells.GlobalSize()}
	if err := op2.ParLoop(op2.NewKernel(reductionResCalcSrc, "res_calc"), edges,
		pRes.ArgMap(op2.Inc, pecell, 0), count.Arg(op2.Inc)); err != nil {
		return nil, err
	}
	c, err := count.ValueErr()
	if err != nil {
		return nil, err
	}
	r.Count1 = int(c)
	count.SetValue(0)
	if err := op2.ParLoop(op2.NewKernel(reductionUpdateSrc, "update"), cells,
		pRes.Arg(op2.RW), count.Arg(op2.Inc)); err != nil {
		return nil, err
	}
	if c, err = count.ValueErr(); err != nil {
		return nil, err
	}
	r.Count2 = int(c)
	return r, nil
}

// PartitionFunc makes the partitioner an application partitions its mesh
// with under MPI, given the set OP2's application partitions and, where the
// application has them, that set's coordinates (else nil). It is called
// on every rank after the mesh is declared.
type PartitionFunc func(set *op2.Set, coords *op2.Dat[float64]) (op2.Partitioner, error)

// partition partitions the declared mesh under MPI with the partitioner p
// makes (by blocks when p is nil); it does nothing on one rank.
func partition(s *op2.Set, coords *op2.Dat[float64], p PartitionFunc) error {
	if op2.Ranks() < 2 {
		return nil
	}
	part := op2.BlockPartitioner()
	if p != nil {
		var err error
		if part, err = p(s, coords); err != nil {
			return err
		}
	}
	_, err := op2.Partition(part)
	return err
}

// RCB partitions by recursive coordinate bisection of the coordinates
// (op2.RCBPartitioner), by blocks where there are none.
func RCB(_ *op2.Set, coords *op2.Dat[float64]) (op2.Partitioner, error) {
	if coords == nil {
		return op2.BlockPartitioner(), nil
	}
	return op2.RCBPartitioner(coords), nil
}

// RandomOwner returns a PartitionFunc making an OwnerPartitioner that
// gives each element of the set a rank drawn by a fixed pseudo-random
// sequence from seed, as OP2's op_partition("RANDOM", ...) does. Each rank
// draws the owners of its own block.
func RandomOwner(seed uint64) PartitionFunc {
	return func(s *op2.Set, _ *op2.Dat[float64]) (op2.Partitioner, error) {
		owner := make([]int32, s.Size())
		x := seed ^ uint64(op2.Rank()+1)*0x9e3779b97f4a7c15
		for i := range owner {
			// splitmix64
			x += 0x9e3779b97f4a7c15
			z := x
			z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
			z = (z ^ z>>27) * 0x94d049bb133111eb
			z ^= z >> 31
			owner[i] = int32(z % uint64(op2.Ranks()))
		}
		d, err := op2.NewDat(s, 1, owner, "owner")
		if err != nil {
			return op2.Partitioner{}, err
		}
		return op2.OwnerPartitioner(d), nil
	}
}
