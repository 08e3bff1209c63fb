package op2_test

import (
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
)

// Calls from one goroutine while another's call changes what they read:
// each is under the lock (scripts/test-all runs them with -race).

// TestKernelCXXWhileParsing: Kernel.CXX while another goroutine's loop
// reads the kernel for the first time (which rewrites its source with
// its macros expanded).
func TestKernelCXXWhileParsing(t *testing.T) {
	set := must(op2.NewSet(10, "kcx_s"))
	x := must(op2.NewDat[float64](set, 1, nil, "kcx_x"))
	for range 5 {
		k := op2.NewKernel("#define BODY(x) (x) += 1\nvoid kcx(double *x) { BODY(*x); }", "kcx")
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); check(t, op2.ParLoop(k, set, x.Arg(op2.RW))) }()
		go func() { defer wg.Done(); _ = k.CXX() }()
		wg.Wait()
	}
}

// readMeshWhile calls the accessors of nodes, edges and m on another
// goroutine while change runs.
func readMeshWhile(nodes, edges *op2.Set, m *op2.Map, change func()) {
	repeatWhile(func() bool {
		_, _, _ = nodes.Size(), edges.TotalSize(), nodes.GlobalSize()
		_, _ = m.Values(), nodes.DeclaredNumbers()
		return true
	}, change)
}

// TestMeshAccessorsWhileRenumber: set sizes, map values and declared
// numbers read while Renumber reorders the mesh.
func TestMeshAccessorsWhileRenumber(t *testing.T) {
	for range 3 {
		edges, nodes, pedge := scatteredEdges(40000, 30000, 7, 3)
		readMeshWhile(nodes, edges, pedge, func() {
			if _, err := op2.Renumber(op2.RCMOrdering(pedge)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestMeshAccessorsWhilePartition: on 2 ranks, the same while Partition
// distributes the mesh: a non-collective call on a second goroutine
// during a collective one.
func TestMeshAccessorsWhilePartition(t *testing.T) {
	if !mpitest.InRanks() {
		mpiRun(t, 2, 2*time.Minute, "OP2_MPI_TIMEOUT=60s")
		return
	}
	const n = 20000
	rank, ranks := op2.Rank(), op2.Ranks()
	lo, hi := n*rank/ranks, n*(rank+1)/ranks
	nodes := must(op2.NewSet(hi-lo, "map_nodes"))
	edges := must(op2.NewSet(hi-lo, "map_edges"))
	tab := make([]int32, 0, 2*(hi-lo))
	for e := lo; e < hi; e++ {
		tab = append(tab, int32(e), int32((e*7919+1)%n))
	}
	ring := must(op2.NewMap(edges, nodes, 2, tab, "map_ring"))
	x := must(op2.NewDat(nodes, 1, make([]float64, hi-lo), "map_x"))
	readMeshWhile(nodes, edges, ring, func() { must(op2.Partition(op2.RCBPartitioner(x))) })
	check(t, op2.Finalize())
}

// TestNewDatWhileCheckpoint: a Dat declared with values while another
// goroutine's Checkpoint saves every Dat: it is seen once set up.
func TestNewDatWhileCheckpoint(t *testing.T) {
	needHDF5(t)
	path := filepath.Join(t.TempDir(), "nd.ckpt")
	set := must(op2.NewSet(1000, "nd_s"))
	vals := make([]float64, 1000)
	var keep []*op2.Dat[float64]
	made := 0
	// At most 2000: Dats made faster than their cleanups run (each unpins
	// its values) would fill the memory.
	repeatWhile(func() bool {
		if keep = append(keep, must(op2.NewDat(set, 1, vals, "nd"))); len(keep) > 20 {
			keep = keep[:0]
		}
		made++
		return made < 2000
	}, func() {
		for range 20 {
			check(t, op2.Checkpoint(path, nil))
		}
	})
	runtime.KeepAlive(keep)
}
