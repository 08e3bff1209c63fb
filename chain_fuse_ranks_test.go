package op2_test

import (
	"os"
	"slices"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
)

// TestChainFusesAlikeOnRanks: a Chain of two loops incrementing through
// maps (order-sensitive) on backends whose programs need a plan runs on
// ranks whose parts differ in shape (rank 1 owns one edge): whether they
// fused was decided from each rank's own plans, so one rank fused them
// and the other did not, and the chain failed on both ("the ranks are at
// different loops"). On several ranks such loops are not fused.
func TestChainFusesAlikeOnRanks(t *testing.T) {
	if !mpitest.InRanks() {
		for _, b := range []string{"openmp", "opencl"} {
			t.Run(b, func(t *testing.T) {
				needBackend(t, b)
				if out, err := mpitest.Output(t, 2, 2*time.Minute, "OP2_MPI_TIMEOUT=30s", "FR_BACKEND="+b, "OMP_NUM_THREADS=2"); err != nil {
					t.Errorf("%v\n%s", err, out)
				}
			})
		}
		return
	}
	check(t, op2.Use(os.Getenv("FR_BACKEND")))
	const nn, ne = 4000, 4000
	var nNodes, nEdges int
	var tab, owner []int32
	var w []float64
	if op2.Rank() == 0 { // rank 0 declares the mesh; rank 1 owns the last edge
		nNodes, nEdges = nn, ne
		for e := range ne {
			tab = append(tab, int32(e/2), int32(((e+1)/2)%nn))
			owner = append(owner, int32(e/(ne-1)))
			w = append(w, float64(e%7)+0.25)
		}
	}
	nodes := must(op2.NewSet(nNodes, "nodes"))
	edges := must(op2.NewSet(nEdges, "edges"))
	e2n := must(op2.NewMap(edges, nodes, 2, tab, "e2n"))
	own := must(op2.NewDat(edges, 1, owner, "owner"))
	a := must(op2.NewDat[float64](nodes, 1, nil, "a"))
	b := must(op2.NewDat[float64](nodes, 1, nil, "b"))
	wd := must(op2.NewDat(edges, 1, w, "w"))
	must(op2.Partition(op2.OwnerPartitioner(own)))
	k1 := op2.NewKernel("void fr_inc1(const double *w, double *a) { *a += *w; }", "fr_inc1")
	k2 := op2.NewKernel("void fr_inc2(const double *w, double *b) { *b += 2 * *w; }", "fr_inc2")
	check(t, op2.Chain(func() error {
		if err := op2.ParLoop(k1, edges, wd.Arg(op2.Read), a.ArgMap(op2.Inc, e2n, 0)); err != nil {
			return err
		}
		return op2.ParLoop(k2, edges, wd.Arg(op2.Read), b.ArgMap(op2.Inc, e2n, 1))
	}))
	ga, gb := must(a.Gather()), must(b.Gather())
	if op2.Rank() == 0 {
		wa, wb := make([]float64, nn), make([]float64, nn)
		for e := range ne {
			wa[e/2] += float64(e%7) + 0.25
			wb[((e+1)/2)%nn] += 2 * (float64(e%7) + 0.25)
		}
		if !slices.Equal(ga, wa) || !slices.Equal(gb, wb) {
			t.Errorf("the chain's results differ from the loops' in Go")
		}
	}
	check(t, op2.Finalize())
}
