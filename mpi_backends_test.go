package op2_test

import (
	"slices"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
)

// TestMPIHaloAcrossBackends: on 2 ranks, a Dat changed by a loop on one
// backend (switched with op2.Use, or a second Runtime's) is read by the
// next loop on another, through a halo exchange: every pair of
// sequential, openmp and opencl gives the one-backend result. A host loop
// after a device loop read the old halo values: the rows received went
// to the device copy, current too once the host loop had downloaded it.
func TestMPIHaloAcrossBackends(t *testing.T) {
	if !mpitest.InRanks() {
		needBackend(t, "opencl")
		mpiRun(t, 2, 3*time.Minute, "OP2_MPI_TIMEOUT=60s")
		return
	}
	const n = 32
	rank, total := op2.Rank(), n*op2.Ranks()
	nodes := must(op2.NewSet(n, "nodes"))
	edges := must(op2.NewSet(n, "edges"))
	var tab []int32
	for i := rank * n; i < (rank+1)*n; i++ {
		tab = append(tab, int32(i), int32((i+3)%total))
	}
	emap := must(op2.NewMap(edges, nodes, 2, tab, "emap"))
	w0 := make([]float64, n)
	for i := range w0 {
		w0[i] = float64(rank*n + i)
	}
	backends := []string{"sequential", "openmp", "opencl"}
	type pair struct{ first, then string }
	var pairs []pair
	for _, a := range backends {
		for _, b := range backends {
			pairs = append(pairs, pair{a, b})
		}
	}
	ws := map[pair][2]*op2.Dat[float64]{}
	for _, p := range pairs {
		ws[p] = [2]*op2.Dat[float64]{must(op2.NewDat(edges, 1, w0, "w")), must(op2.NewDat[float64](nodes, 1, nil, "res"))}
	}
	others := map[pair][2]*op2.Dat[float64]{} // the same through a second Runtime
	for _, p := range pairs {
		others[p] = [2]*op2.Dat[float64]{must(op2.NewDat(edges, 1, w0, "w")), must(op2.NewDat[float64](nodes, 1, nil, "res"))}
	}
	must(op2.Partition(op2.BlockPartitioner()))
	bump := op2.NewKernel(`void bump(double *w) { *w += 1000; }`, "bump")
	spread := op2.NewKernel(`void spread(const double *w, double *r0, double *r1) { *r0 += *w; *r1 += *w; }`, "spread")
	runtimes := map[string]*op2.Runtime{}
	for _, b := range backends {
		runtimes[b] = must(op2.NewRuntime(op2.Config{Backend: b}))
	}
	for _, p := range pairs {
		w, res := ws[p][0], ws[p][1]
		check(t, op2.Use(p.first))
		check(t, op2.ParLoop(bump, edges, w.Arg(op2.RW)))
		check(t, op2.Use(p.then))
		check(t, op2.ParLoop(spread, edges, w.Arg(op2.Read), res.ArgMap(op2.Inc, emap, 0), res.ArgMap(op2.Inc, emap, 1)))
		w, res = others[p][0], others[p][1]
		check(t, runtimes[p.first].ParLoop(bump, edges, w.Arg(op2.RW)))
		check(t, runtimes[p.then].ParLoop(spread, edges, w.Arg(op2.Read), res.ArgMap(op2.Inc, emap, 0), res.ArgMap(op2.Inc, emap, 1)))
	}
	check(t, op2.Use("sequential"))
	want := must(ws[pair{"sequential", "sequential"}][1].Gather())
	for _, p := range pairs {
		for how, d := range map[string]*op2.Dat[float64]{"op2.Use": ws[p][1], "two runtimes": others[p][1]} {
			if got := must(d.Gather()); rank == 0 && !slices.Equal(got, want) {
				t.Errorf("%s, %s then %s: res differs from sequential's", how, p.first, p.then)
			}
		}
	}
	check(t, op2.Finalize())
}
