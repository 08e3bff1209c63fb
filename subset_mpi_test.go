package op2_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
)

// subsetScenario runs loops over subsets of the scenario mesh's edges,
// chosen by each rank from its owned edges' values (a tag holding the
// declared edge number), partitioned with partitioner when in ranks:
// increments through maps over a union (exec halo elements in the subset
// must run), a direct write over an intersection, a vector increment
// over a difference and reductions over a subset of a subset. It
// returns, per backend, the gathered results and the reductions.
func subsetScenario(t *testing.T, partitioner string, backends []string) map[string][]float64 {
	r, ranks := op2.Rank(), op2.Ranks()
	xy, pedge, _, _, q0, w0 := scenarioMesh()
	nlo, nhi := block(mpiNodes, r, ranks, false)
	elo, ehi := block(mpiEdges, r, ranks, false)
	nodes := must(op2.NewSet(nhi-nlo, "nodes"))
	edges := must(op2.NewSet(ehi-elo, "edges"))
	mEdge := must(op2.NewMap(edges, nodes, 2, pedge[2*elo:2*ehi], "pedge"))
	dxy := must(op2.NewDat(nodes, 2, xy[2*nlo:2*nhi], "xy"))
	dq := must(op2.NewDat(nodes, 1, q0[nlo:nhi], "q"))
	dw := must(op2.NewDat(edges, 1, w0[elo:ehi], "w"))
	tags := make([]int32, 0, ehi-elo)
	for e := elo; e < ehi; e++ {
		tags = append(tags, int32(e))
	}
	tag := must(op2.NewDat(edges, 1, tags, "tag"))
	if partitioner != "" {
		p := map[string]op2.Partitioner{"rcb": op2.RCBPartitioner(dxy), "metis": op2.METISPartitioner(mEdge), "block": op2.BlockPartitioner()}[partitioner]
		must(op2.Partition(p))
	}
	pick := func(keep func(tag int32) bool) []int32 {
		var idx []int32
		for i, v := range tag.DataRO() {
			if keep(v) {
				idx = append(idx, int32(i))
			}
		}
		return idx
	}
	a := must(op2.NewSubset(edges, pick(func(v int32) bool { return v%3 == 0 })))
	b := must(op2.NewSubset(edges, pick(func(v int32) bool { return v%5 < 2 })))
	tv := tag.DataRO()
	var pos []int32 // positions in a of the edges whose tag is even
	for p, e := range a.Indices() {
		if tv[e]%2 == 0 {
			pos = append(pos, int32(p))
		}
	}
	c := must(op2.NewSubset(a, pos))
	union, inter, diff := must(a.Union(b)), must(a.Intersection(b)), must(a.Difference(b))
	flux := op2.NewKernel(`void sf(const double *q0, const double *q1, const double *w, double *r0, double *r1, double *s) {
	double f = *w * (*q0 - 0.5 * *q1); *r0 += f; *r1 -= 0.5 * f; *s += *w; }`, "sf")
	twice := op2.NewKernel("void st(const double *w, double *o) { *o = 2 * *w + 1; }", "st")
	vec := op2.NewKernel("void sv(const double *w, double **r) { r[0][0] += *w; r[1][0] += 0.25 * *w; }", "sv")
	most := op2.NewKernel("void sm(const int *t, int *mx, double *n) { if (*t > *mx) *mx = *t; *n += 1; }", "sm")
	out := map[string][]float64{}
	for _, backend := range backends {
		check(t, op2.Use(backend))
		res := must(op2.NewDat[float64](nodes, 1, nil, "res"))
		o := must(op2.NewDat[float64](edges, 1, nil, "o"))
		sum := must(op2.NewGlobal(1, []float64{0}, "sum"))
		mx := must(op2.NewGlobal(1, []int32{-1}, "mx"))
		cnt := must(op2.NewGlobal(1, []float64{0}, "cnt"))
		for it := 0; it < 2; it++ {
			check(t, op2.ParLoop(flux, union, dq.ArgMap(op2.Read, mEdge, 0), dq.ArgMap(op2.Read, mEdge, 1), dw.Arg(op2.Read),
				res.ArgMap(op2.Inc, mEdge, 0), res.ArgMap(op2.Inc, mEdge, 1), sum.Arg(op2.Inc)))
			check(t, op2.ParLoop(twice, inter, dw.Arg(op2.Read), o.Arg(op2.Write)))
			check(t, op2.ParLoop(vec, diff, o.Arg(op2.Read), res.ArgVec(op2.Inc, mEdge)))
			check(t, op2.ParLoop(most, c, tag.Arg(op2.Read), mx.Arg(op2.Max), cnt.Arg(op2.Inc)))
		}
		g := append(must(res.Gather()), must(o.Gather())...)
		out[backend] = append(g, sum.Value(), float64(mx.Value()), cnt.Value())
	}
	return out
}

// TestMPISubsets: subsets declared by each rank over its owned elements
// (NewSubset, Union, Intersection, Difference, a subset of a subset)
// give, in loops that increment through maps (the exec halo's elements
// of the subset run), write directly and reduce, the values of one rank
// on 2 ranks (and 3 without -short), on every backend (-short: the host
// backends).
func TestMPISubsets(t *testing.T) {
	if mpitest.InRanks() {
		var want []float64
		b, err := os.ReadFile(os.Getenv("OP2_MPI_EXPECT"))
		check(t, err)
		check(t, json.Unmarshal(b, &want))
		backends := allBackends
		if os.Getenv("OP2_MPI_SHORT") != "" {
			backends = hostBackends
		}
		got := subsetScenario(t, os.Getenv("OP2_MPI_PARTITIONER"), backends)
		for backend, g := range got {
			// The reductions, last: the same on every rank (the
			// gathered values are rank 0's only).
			n, m := len(g), len(want)
			if !slices.Equal(g[n-3:], want[m-3:]) {
				t.Errorf("rank %d %s on %d ranks: reductions %v, want %v", op2.Rank(), backend, op2.Ranks(), g[n-3:], want[m-3:])
			}
			if op2.Rank() == 0 && !slices.Equal(g, want) {
				t.Errorf("%s on %d ranks: gathered values differ from one rank's", backend, op2.Ranks())
			}
		}
		check(t, op2.Finalize())
		return
	}
	want := subsetScenario(t, "", []string{"sequential"})["sequential"]
	path := filepath.Join(t.TempDir(), "want.json")
	b, err := json.Marshal(want)
	check(t, err)
	check(t, os.WriteFile(path, b, 0o600))
	type run struct {
		ranks       int
		partitioner string
	}
	runs := []run{{2, "metis"}}
	short := "1"
	if !testing.Short() {
		short = ""
		runs = append(runs, run{3, "rcb"}, run{2, "block"})
	}
	for _, r := range runs {
		t.Run(fmt.Sprintf("%d-ranks-%s", r.ranks, r.partitioner), func(t *testing.T) {
			mpiRun(t, r.ranks, 3*time.Minute, "OP2_MPI_EXPECT="+path, "OP2_MPI_PARTITIONER="+r.partitioner, "OP2_MPI_SHORT="+short)
		})
	}
}
