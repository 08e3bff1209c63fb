package op2_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/internal/ptscotch"
	"github.com/goop2/op2/internal/testreq"
)

// gridBlock declares rank's block of an nx × ny grid of quadrilateral
// cells (cells→nodes map of arity 4, node coordinates, 4 values per
// cell): the rows of cells [ny*rank/ranks, ny*(rank+1)/ranks) and the
// rows of nodes [(ny+1)*rank/ranks, (ny+1)*(rank+1)/ranks), maps in the
// global numbering. It returns the bytes the whole mesh's declarations
// take.
func gridBlock(t *testing.T, nx, ny, rank, ranks int) (*op2.Dat[float64], int64) {
	g := declareGrid(t, nx, ny, rank, ranks)
	return g.x, g.whole
}

// grid is a block of the grid gridBlock declares.
type grid struct {
	cells, nodes *op2.Set
	pcell        *op2.Map
	x            *op2.Dat[float64]
	firstCell    int // the global number of the block's first cell
	whole        int64
}

func declareGrid(t *testing.T, nx, ny, rank, ranks int) *grid {
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
	pc := must(op2.NewMap(cells, nodes, 4, pcell, "pcell"))
	xy := make([]float64, 0, 2*(n1-n0)*(nx+1))
	for j := n0; j < n1; j++ {
		for i := 0; i <= nx; i++ {
			xy = append(xy, float64(i), float64(j))
		}
	}
	x := must(op2.NewDat(nodes, 2, xy, "x"))
	must(op2.NewDat(cells, 4, make([]float64, 4*(c1-c0)*nx), "q"))
	whole := int64(nx*ny)*(16+32) + int64((nx+1)*(ny+1))*16
	return &grid{cells: cells, nodes: nodes, pcell: pc, x: x, firstCell: c0 * nx, whole: whole}
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

// TestPartitionZeroDats: a dat declared without values and untouched on
// every rank moves as nothing and stays zeros; one that a single rank
// wrote before Partition moves with its values; loops then use both.
func TestPartitionZeroDats(t *testing.T) {
	if !mpitest.InRanks() {
		mpiRun(t, 3, 2*time.Minute)
		return
	}
	const nx, ny = 12, 9
	g := declareGrid(t, nx, ny, op2.Rank(), op2.Ranks())
	z0 := must(op2.NewDat[float64](g.cells, 1, nil, "z0")) // untouched everywhere
	z1 := must(op2.NewDat[float64](g.cells, 2, nil, "z1")) // written by rank 1 only
	w := must(op2.NewDat[float64](g.cells, 1, nil, "w"))
	if op2.Rank() == 1 {
		v := z1.Data()
		for i := range v {
			v[i] = float64((g.firstCell+i/2)*10 + i%2)
		}
	}
	_, err := op2.Partition(op2.RCBPartitioner(g.x))
	check(t, err)
	if n := len(z0.Data()); n != g.cells.Size() {
		t.Fatalf("rank %d: z0 has %d values for %d owned cells", op2.Rank(), n, g.cells.Size())
	}
	sum := op2.NewKernel(`void sum(const double *a, const double *b, double *w) { *w = *a + b[0] + b[1]; }`, "sum")
	check(t, op2.ParLoop(sum, g.cells, z0.Arg(op2.Read), z1.Arg(op2.Read), w.Arg(op2.Write)))
	got0, err := z0.Gather()
	check(t, err)
	got1, err := z1.Gather()
	check(t, err)
	gotW, err := w.Gather()
	check(t, err)
	if op2.Rank() != 0 {
		check(t, op2.Finalize())
		return
	}
	// Rank 1's declared cells are rows [ny/3, 2ny/3) of the grid.
	lo, hi := ny*1/3*nx, ny*2/3*nx
	for c := 0; c < nx*ny; c++ {
		want1 := [2]float64{}
		if c >= lo && c < hi {
			want1 = [2]float64{float64(c * 10), float64(c*10 + 1)}
		}
		if got0[c] != 0 || got1[2*c] != want1[0] || got1[2*c+1] != want1[1] || gotW[c] != want1[0]+want1[1] {
			t.Fatalf("cell %d: z0 %v z1 %v w %v, want 0 %v %v", c, got0[c], got1[2*c:2*c+2], gotW[c], want1, want1[0]+want1[1])
		}
	}
	check(t, op2.Finalize())
}

// TestAutoPartitioner: AutoPartitioner chooses PT-Scotch when it loads
// on every rank, and RCB when it is missing on any rank (the ranks decide
// together, so they never choose differently).
func TestAutoPartitioner(t *testing.T) {
	if !mpitest.InRanks() {
		cases := []string{"rank1"}
		if !testing.Short() {
			cases = []string{"none", "rank1", "all"}
		}
		for _, missing := range cases {
			t.Run(missing, func(t *testing.T) {
				mpiRun(t, 3, 2*time.Minute, "OP2_TEST_PTSCOTCH_MISSING="+missing)
			})
		}
		return
	}
	missing := os.Getenv("OP2_TEST_PTSCOTCH_MISSING")
	if missing == "all" || missing == "rank1" && op2.Rank() == 1 {
		check(t, os.Setenv("OP2_PTSCOTCH_LIBRARY", "/nonexistent/libptscotch.so"))
	}
	g := declareGrid(t, 30, 20, op2.Rank(), op2.Ranks())
	info, err := op2.Partition(op2.AutoPartitioner(g.pcell, g.x))
	check(t, err)
	want := "rcb"
	if missing == "none" {
		want = "ptscotch"
		if err := ptscotch.Load(); err != nil {
			t.Logf("PT-Scotch does not load here (%v): AutoPartitioner falls back to RCB", err)
			want = "rcb"
		}
	}
	if info.Partitioner != want {
		t.Errorf("rank %d: AutoPartitioner chose %s, want %s", op2.Rank(), info.Partitioner, want)
	}
	check(t, op2.Finalize())
}

// TestPTScotchWidthsDiffer: ranks that load PT-Scotch builds of
// different SCOTCH_Num widths (Debian's 64-bit one on rank 1) get an
// error naming both, matching ErrPTScotchUnavailable, rather than MPI
// aborting the job inside PT-Scotch.
func TestPTScotchWidthsDiffer(t *testing.T) {
	const wide = "/usr/lib/x86_64-linux-gnu/scotch-int64/libptscotch-7.0.so"
	if !mpitest.InRanks() {
		_, err := os.Stat(wide)
		testreq.Check(t, "ptscotch (64-bit)", err, fs.ErrNotExist)
		testreq.Check(t, "ptscotch", ptscotch.Load(), ptscotch.ErrUnavailable)
		mpiRun(t, 2, 2*time.Minute)
		return
	}
	if op2.Rank() == 1 {
		check(t, os.Setenv("OP2_PTSCOTCH_LIBRARY", wide))
	}
	g := declareGrid(t, 8, 6, op2.Rank(), op2.Ranks())
	_, err := op2.Partition(op2.PTScotchPartitioner(g.pcell))
	if err == nil || !errors.Is(err, op2.ErrPTScotchUnavailable) || !strings.Contains(err.Error(), "different SCOTCH_Num widths") {
		t.Errorf("rank %d: %v; want an error on the widths matching ErrPTScotchUnavailable", op2.Rank(), err)
	}
	check(t, op2.Finalize())
}

// TestPartitionKeepsNoDat: Partition holds none of the rank's blocks
// afterwards, so that Dats the program drops (its coordinates, once
// partitioned by them, or a Dat dropped before Partition) are collected
// and left out of checkpoints, as in one process: a checkpoint written
// by one process then restores on any number of ranks.
func TestPartitionKeepsNoDat(t *testing.T) {
	if !mpitest.InRanks() {
		mpiRun(t, 2, 2*time.Minute)
		return
	}
	g := declareGrid(t, 6, 5, op2.Rank(), op2.Ranks())
	tmp := must(op2.NewDat[float64](g.cells, 1, nil, "tmp"))
	collected := map[string]weak.Pointer[op2.Dat[float64]]{"tmp": weak.Make(tmp), "x": weak.Make(g.x)}
	tmp = nil
	p := op2.RCBPartitioner(g.x)
	g.x = nil
	must(op2.Partition(p))
	p = op2.Partitioner{}
	runtime.GC()
	for name, w := range collected {
		if w.Value() != nil {
			t.Errorf("rank %d: dat %q, which the program dropped, is still held after Partition", op2.Rank(), name)
		}
	}
	runtime.KeepAlive(p)
	check(t, op2.Finalize())
}
