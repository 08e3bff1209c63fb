package op2_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
)

// gridBlock declares rank's block of an nx × ny grid of quadrilateral
// cells (cells→nodes map of arity 4, node coordinates, 4 values per
// cell): the rows of cells [ny*rank/ranks, ny*(rank+1)/ranks) and the
// rows of nodes [(ny+1)*rank/ranks, (ny+1)*(rank+1)/ranks), maps in the
// global numbering. It returns the bytes the whole mesh's declarations
// take.
func gridBlock(t *testing.T, nx, ny, rank, ranks int) (*op2.Dat[float64], int64) {
	c0, c1 := ny*rank/ranks, ny*(rank+1)/ranks
	n0, n1 := (ny+1)*rank/ranks, (ny+1)*(rank+1)/ranks
	cells := must(op2.NewSet((c1-c0)*nx, "cells"))
	nodes := must(op2.NewSet((n1-n0)*(nx+1), "nodes"))
	pcell := make([]int32, 0, 4*(c1-c0)*nx)
	for j := c0; j < c1; j++ {
		for i := 0; i < nx; i++ {
			n := int32(j*(nx+1) + i)
			pcell = append(pcell, n, n+1, n+int32(nx)+2, n+int32(nx)+1)
		}
	}
	must(op2.NewMap(cells, nodes, 4, pcell, "pcell"))
	xy := make([]float64, 0, 2*(n1-n0)*(nx+1))
	for j := n0; j < n1; j++ {
		for i := 0; i <= nx; i++ {
			xy = append(xy, float64(i), float64(j))
		}
	}
	x := must(op2.NewDat(nodes, 2, xy, "x"))
	must(op2.NewDat(cells, 4, make([]float64, 4*(c1-c0)*nx), "q"))
	whole := int64(nx*ny)*(16+32) + int64((nx+1)*(ny+1))*16
	return x, whole
}

// TestPartitionMemoryPerRank partitions a mesh of 3 M elements declared in
// blocks on 2 and on 4 ranks and checks that what each rank allocates
// while partitioning follows its part, not the whole mesh: the largest
// rank's allocations on 4 ranks are at most 0.7 of those on 2 (half, as
// parts halve, with room for the halos; a rank that gathered the mesh, or
// built anything of the whole mesh's size, would allocate as much on 4
// ranks as on 2).
func TestPartitionMemoryPerRank(t *testing.T) {
	if !mpitest.InRanks() {
		if testing.Short() {
			t.Skip("2 and 4 ranks on a mesh of 3 M elements: not in -short")
		}
		largest := map[int]int64{}
		var whole int64
		for _, np := range []int{2, 4} {
			out, err := mpitest.Output(t, np, 4*time.Minute)
			if err != nil {
				t.Fatalf("%d ranks: %v:\n%s", np, err, out)
			}
			for _, l := range strings.Split(string(out), "\n") {
				var rank, ranks int
				var alloc, w int64
				if _, err := fmt.Sscanf(strings.TrimSpace(l), "partition memory: rank %d of %d allocated %d bytes of a mesh of %d bytes", &rank, &ranks, &alloc, &w); err == nil {
					largest[np] = max(largest[np], alloc)
					whole = w
					t.Log(strings.TrimSpace(l))
				}
			}
		}
		if largest[2] == 0 || largest[4] == 0 {
			t.Fatalf("no allocation figures from the ranks: %v", largest)
		}
		if float64(largest[4]) > 0.7*float64(largest[2]) {
			t.Errorf("the largest rank allocated %d bytes on 4 ranks, %d on 2: not shrinking with the part", largest[4], largest[2])
		}
		t.Logf("largest rank: %.0f MB on 2 ranks, %.0f MB on 4, for a mesh declared in %.0f MB", float64(largest[2])/1e6, float64(largest[4])/1e6, float64(whole)/1e6)
		return
	}
	const nx, ny = 1500, 1000
	x, whole := gridBlock(t, nx, ny, op2.Rank(), op2.Ranks())
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := op2.Partition(op2.RCBPartitioner(x))
	check(t, err)
	runtime.ReadMemStats(&after)
	fmt.Printf("partition memory: rank %d of %d allocated %d bytes of a mesh of %d bytes\n", op2.Rank(), op2.Ranks(), after.TotalAlloc-before.TotalAlloc, whole)
	check(t, op2.Finalize())
}
