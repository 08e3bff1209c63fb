package op2_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
)

// The MPI tests run a scenario of loops (every access mode, reductions,
// halos touching several neighbours, a set smaller than the number of
// ranks) once in this process on one rank, then on 2 and 3 MPI ranks with
// each partitioner and both ways of declaring a distributed mesh, and
// compare the gathered results with the one-rank run. The values are
// small dyadic numbers, so sums are exact in any order and the comparison
// is exact.

type scenarioResult struct {
	Res, Q   []float64
	Cnt      []int32
	Sum, Min []float64
	Max      []int32
	// Exchanges of a loop repeated with nothing stale (must be 0).
	Repeat int
	// res dumped in OP2's text format (rank 0's file), res read back
	// from its text and binary dumps, and a loop over the loaded values
	// through a map (halo included).
	ResText              []byte
	FromText, FromBinary []float64
	LoadedCnt            []int32
	// The cell map gathered in the declared numbering.
	Pcell []int32
	// A loop reading, through a map (halos included), a copy of q
	// (Dat.CopyTo), values set with Dat.DataWO and a zeroed dat
	// (Dat.Zero).
	Util []float64
	// Each cell's global index and the global index of its third node
	// (ArgIdx, Map.ArgIdx), and the nodes' minimum and maximum over
	// their edges (MIN and MAX through a map, exec halo included).
	Idx    []int32
	Lo, Hi []float64
	// A C++ kernel's increments through a map (references) and its
	// Global sum; host backends only (opencl refuses C++).
	CXX []float64
}

const (
	mpiNodes = 600
	mpiEdges = 1500
	mpiCells = 500
)

// scenarioMesh is the global mesh: node coordinates, maps and initial
// values, the same on every rank.
func scenarioMesh() (xy []float64, pedge, pcell, pbnd []int32, q, w []float64) {
	rng := rand.New(rand.NewPCG(7, 8))
	// Nodes on a 30×20 grid, numbered in a shuffled order, so that the
	// declared blocks are scattered and partitioners matter.
	perm := rng.Perm(mpiNodes)
	xy = make([]float64, 2*mpiNodes)
	for i := 0; i < mpiNodes; i++ {
		xy[2*perm[i]], xy[2*perm[i]+1] = float64(i%30), float64(i/30)
	}
	near := func(i int) int32 {
		x, y := i%30+rng.IntN(3)-1, i/30+rng.IntN(3)-1
		x, y = min(max(x, 0), 29), min(max(y, 0), 19)
		return int32(perm[y*30+x])
	}
	for e := 0; e < mpiEdges; e++ {
		i := rng.IntN(mpiNodes)
		pedge = append(pedge, int32(perm[i]), near(i))
	}
	for c := 0; c < mpiCells; c++ {
		i := rng.IntN(mpiNodes)
		pcell = append(pcell, int32(perm[i]), near(i), near(i), near(i))
	}
	pbnd = []int32{int32(perm[0]), int32(perm[mpiNodes-1])}
	for i := 0; i < mpiNodes; i++ {
		q = append(q, float64(i%7+1))
	}
	for e := 0; e < mpiEdges; e++ {
		w = append(w, float64(e%5)+0.5)
	}
	return
}

// block is rank r's part [lo,hi) of n elements when each rank declares a
// block; with rankZero only rank 0 declares elements.
func block(n, r, ranks int, rankZero bool) (int, int) {
	if rankZero {
		if r == 0 {
			return 0, n
		}
		return 0, 0
	}
	return n * r / ranks, n * (r + 1) / ranks
}

func runScenario(t *testing.T, partitioner string, rankZero bool, backends []string) map[string]scenarioResult {
	r, ranks := op2.Rank(), op2.Ranks()
	xy, pedge, pcell, pbnd, q0, w0 := scenarioMesh()
	part := func(name string, n, dim int) (int, int) {
		lo, hi := block(n, r, ranks, rankZero)
		return lo * dim, hi * dim
	}
	nlo, nhi := block(mpiNodes, r, ranks, rankZero)
	elo, ehi := block(mpiEdges, r, ranks, rankZero)
	clo, chi := block(mpiCells, r, ranks, rankZero)
	blo, bhi := block(2, r, ranks, rankZero)
	nodes := must(op2.NewSet(nhi-nlo, "nodes"))
	edges := must(op2.NewSet(ehi-elo, "edges"))
	cells := must(op2.NewSet(chi-clo, "cells"))
	bnd := must(op2.NewSet(bhi-blo, "bnd"))
	a, b := part("pedge", mpiEdges, 2)
	mEdge := must(op2.NewMap(edges, nodes, 2, pedge[a:b], "pedge"))
	a, b = part("pcell", mpiCells, 4)
	mCell := must(op2.NewMap(cells, nodes, 4, pcell[a:b], "pcell"))
	mBnd := must(op2.NewMap(bnd, nodes, 1, pbnd[blo:bhi], "pbnd"))
	dxy := must(op2.NewDat(nodes, 2, xy[2*nlo:2*nhi], "xy"))
	dq := must(op2.NewDat(nodes, 1, q0[nlo:nhi], "q"))
	dw := must(op2.NewDat(edges, 1, w0[elo:ehi], "w"))
	var p op2.Partitioner
	switch partitioner {
	case "block":
		p = op2.BlockPartitioner()
	case "rcb":
		p = op2.RCBPartitioner(dxy)
	case "metis":
		p = op2.METISPartitioner(mCell)
	case "ptscotch":
		p = op2.PTScotchPartitioner(mCell)
	case "auto":
		p = op2.AutoPartitioner(mCell, dxy)
	}
	if _, err := op2.Partition(p); err != nil {
		t.Fatal(err)
	}
	if got := nodes.GlobalSize(); got != mpiNodes {
		t.Fatalf("nodes.GlobalSize() = %d, want %d", got, mpiNodes)
	}
	flux := op2.NewKernel(`void flux(const double *q0, const double *q1, const double *w, double *r0, double *r1) {
	double f = *w * (*q0 - 0.5 * *q1);
	*r0 += f; *r1 -= 0.5 * f; }`, "flux")
	relax := op2.NewKernel("void relax(double *q, const double *r) { *q = 0.5 * *q + 0.25 * *r; }", "relax")
	count := op2.NewKernel(`void count(double **q, int *c) { double s = 0; for (int i = 0; i < 4; i++) s += *q[i]; *c = (int)(4 * s) % 101; }`, "count")
	stats := op2.NewKernel(`void stats(const double *q0, const double *w, double *r1, double *sum, double *mn) {
	*r1 += 0.25 * *w; *sum += *q0 * *w; if (*q0 < *mn) *mn = *q0; }`, "stats")
	bump := op2.NewKernel("void bump(double *r) { *r += 1; }", "bump")
	util := op2.NewKernel(`void util(const double *a0, const double *a1, const double *b0, const double *b1, const double *z1, double *r0, double *r1) {
	*r0 += floor(8 * *a1) + floor(8 * *b1) + *z1 + 1; *r1 += floor(8 * *a0) - floor(2 * *b0); }`, "util")
	top := op2.NewKernel("void top(const int *c, int *mx) { if (*c > *mx) *mx = *c; }", "top")
	ids := op2.NewKernel("void ids(const int *c, int *o, const int *n) { o[0] = *c; o[1] = *n; }", "ids")
	span := op2.NewKernel(`void span(const int *e, const double *w, double *lo0, double *lo1, double **hi) {
	*lo0 = *w - 0.25 * (*e % 7); *lo1 = *w * 0.5; hi[0][0] = *w + (*e % 5); hi[1][0] = -*w; }`, "span")
	cxxStats := op2.NewKernel(`namespace scen { template <typename T> inline T twice(const T &x) { return x + x; } }
inline void cxx_stats(const double &q0, const double &w, double &r1, double &tot) { r1 += scen::twice(double(w)) * q0; tot += w; }`, "cxx_stats").CXX()
	results := map[string]scenarioResult{}
	for _, backend := range backends {
		check(t, op2.Use(backend))
		res := must(op2.NewDat[float64](nodes, 1, nil, "res"))
		cnt := must(op2.NewDat[int32](cells, 1, nil, "cnt"))
		q := must(op2.NewDat(nodes, 1, dq.DataRO(), "q"+backend))
		sum := must(op2.NewGlobal(1, []float64{0}, "sum"))
		mn := must(op2.NewGlobal(1, []float64{1e9}, "mn"))
		mx := must(op2.NewGlobal(1, []int32{-1}, "mx"))
		var out scenarioResult
		for it := 0; it < 3; it++ {
			check(t, op2.ParLoop(flux, edges, q.ArgMap(op2.Read, mEdge, 0), q.ArgMap(op2.Read, mEdge, 1), dw.Arg(op2.Read),
				res.ArgMap(op2.Inc, mEdge, 0), res.ArgMap(op2.Inc, mEdge, 1)))
			check(t, op2.ParLoop(relax, nodes, q.Arg(op2.RW), res.Arg(op2.Read)))
			check(t, op2.ParLoop(count, cells, q.ArgVec(op2.Read, mCell), cnt.Arg(op2.Write)))
			before := op2.HaloExchanges()
			check(t, op2.ParLoop(count, cells, q.ArgVec(op2.Read, mCell), cnt.Arg(op2.Write)))
			out.Repeat += op2.HaloExchanges() - before
			check(t, op2.ParLoop(stats, edges, q.ArgMap(op2.Read, mEdge, 0), dw.Arg(op2.Read), res.ArgMap(op2.Inc, mEdge, 1),
				sum.Arg(op2.Inc), mn.Arg(op2.Min)))
			check(t, op2.ParLoop(bump, bnd, res.ArgMap(op2.Inc, mBnd, 0)))
			check(t, op2.ParLoop(top, cells, cnt.Arg(op2.Read), mx.Arg(op2.Max)))
			out.Sum = append(out.Sum, sum.Data()[0])
			out.Min = append(out.Min, mn.Data()[0])
			out.Max = append(out.Max, mx.Data()[0])
		}
		if got := must(q.Range(0, nodes.Size())); !slices.Equal(got, q.DataRO()) {
			t.Errorf("rank %d %s: Range over the owned nodes differs from DataRO", r, backend)
		}
		qc := must(op2.NewDat[float64](nodes, 1, nil, "qc"))
		check(t, q.CopyTo(qc))
		wo := must(op2.NewDat[float64](nodes, 1, nil, "wo"))
		wv := wo.DataWO()
		for i, v := range q.DataRO() {
			wv[i] = 3 * v
		}
		z := must(op2.NewDat(nodes, 1, dq.DataRO(), "z"))
		check(t, z.Zero())
		acc := must(op2.NewDat[float64](nodes, 1, nil, "acc"))
		check(t, op2.ParLoop(util, edges, qc.ArgMap(op2.Read, mEdge, 0), qc.ArgMap(op2.Read, mEdge, 1),
			wo.ArgMap(op2.Read, mEdge, 0), wo.ArgMap(op2.Read, mEdge, 1), z.ArgMap(op2.Read, mEdge, 1),
			acc.ArgMap(op2.Inc, mEdge, 0), acc.ArgMap(op2.Inc, mEdge, 1)))
		out.Util = must(acc.Gather())
		out.Res = must(res.Gather())
		out.Q = must(q.Gather())
		out.Cnt = must(cnt.Gather())
		dir := t.TempDir()
		txt, bin := filepath.Join(dir, "res.txt"), filepath.Join(dir, "res.bin")
		check(t, res.WriteText(txt))
		check(t, res.WriteBinary(bin))
		fromText := must(op2.NewDat[float64](nodes, 1, nil, "fromText"))
		fromBinary := must(op2.NewDat[float64](nodes, 1, nil, "fromBinary"))
		check(t, fromText.ReadText(txt))
		check(t, fromBinary.ReadBinary(bin))
		loaded := must(op2.NewDat[int32](cells, 1, nil, "loaded"))
		check(t, op2.ParLoop(count, cells, fromBinary.ArgVec(op2.Read, mCell), loaded.Arg(op2.Write)))
		if r == 0 {
			out.ResText = must(os.ReadFile(txt))
		}
		out.FromText = must(fromText.Gather())
		out.FromBinary = must(fromBinary.Gather())
		out.LoadedCnt = must(loaded.Gather())
		out.Pcell = must(mCell.Gather())
		idx := must(op2.NewDat[int32](cells, 2, nil, "idx"))
		check(t, op2.ParLoop(ids, cells, op2.ArgIdx(), idx.Arg(op2.Write), mCell.ArgIdx(2)))
		out.Idx = must(idx.Gather())
		lo := must(op2.NewDat(nodes, 1, dq.DataRO(), "lo"))
		hi := must(op2.NewDat(nodes, 1, dq.DataRO(), "hi"))
		check(t, op2.ParLoop(span, edges, op2.ArgIdx(), dw.Arg(op2.Read), lo.ArgMap(op2.Min, mEdge, 0), lo.ArgMap(op2.Min, mEdge, 1), hi.ArgVec(op2.Max, mEdge)))
		out.Lo, out.Hi = must(lo.Gather()), must(hi.Gather())
		if backend != "opencl" {
			cx := must(op2.NewDat[float64](nodes, 1, nil, "cx"))
			tot := must(op2.NewGlobal(1, []float64{0}, "tot"))
			check(t, op2.ParLoop(cxxStats, edges, q.ArgMap(op2.Read, mEdge, 0), dw.Arg(op2.Read), cx.ArgMap(op2.Inc, mEdge, 1), tot.Arg(op2.Inc)))
			out.CXX = append(must(cx.Gather()), tot.Value())
		}
		results[backend] = out
	}
	return results
}

func TestMPIAgreesWithOneRank(t *testing.T) {
	if mpitest.InRanks() {
		var want map[string]scenarioResult
		b, err := os.ReadFile(os.Getenv("OP2_MPI_EXPECT"))
		check(t, err)
		check(t, json.Unmarshal(b, &want))
		got := runScenario(t, os.Getenv("OP2_MPI_PARTITIONER"), os.Getenv("OP2_MPI_RANK_ZERO") != "", allBackends)
		for backend, g := range got {
			w := want["sequential"]
			if g.Repeat != 0 {
				t.Errorf("%s: a repeated loop with nothing stale exchanged %d halos", backend, g.Repeat)
			}
			// Reductions: the same bits on every rank.
			if !slices.Equal(g.Sum, w.Sum) || !slices.Equal(g.Min, w.Min) || !slices.Equal(g.Max, w.Max) {
				t.Errorf("rank %d %s: reductions sum %v min %v max %v, want %v %v %v", op2.Rank(), backend, g.Sum, g.Min, g.Max, w.Sum, w.Min, w.Max)
			}
			if op2.Rank() != 0 {
				continue
			}
			if !slices.Equal(g.Util, w.Util) {
				t.Errorf("%s on %d ranks: a loop over dats made with CopyTo, DataWO and Zero differs from one rank", backend, op2.Ranks())
			}
			if backend != "opencl" && !slices.Equal(g.CXX, w.CXX) {
				t.Errorf("%s on %d ranks: a C++ kernel's results differ from one rank", backend, op2.Ranks())
			}
			if !slices.Equal(g.Idx, w.Idx) || !slices.Equal(g.Lo, w.Lo) || !slices.Equal(g.Hi, w.Hi) {
				t.Errorf("%s on %d ranks: index arguments or MIN/MAX through maps differ from one rank", backend, op2.Ranks())
			}
			if !slices.Equal(g.Res, w.Res) || !slices.Equal(g.Q, w.Q) || !slices.Equal(g.Cnt, w.Cnt) {
				t.Errorf("%s on %d ranks: gathered results differ from one rank", backend, op2.Ranks())
			}
			if !slices.Equal(g.ResText, w.ResText) || !slices.Equal(g.FromText, w.FromText) ||
				!slices.Equal(g.FromBinary, w.Res) || !slices.Equal(g.LoadedCnt, w.LoadedCnt) || !slices.Equal(g.Pcell, w.Pcell) {
				t.Errorf("%s on %d ranks: dumps, dats read from them or the gathered map differ from one rank (text %v, from text %v, from binary %v, loop over loaded %v, map %v)", backend, op2.Ranks(),
					slices.Equal(g.ResText, w.ResText), slices.Equal(g.FromText, w.FromText), slices.Equal(g.FromBinary, w.Res), slices.Equal(g.LoadedCnt, w.LoadedCnt), slices.Equal(g.Pcell, w.Pcell))
			}
		}
		check(t, op2.Finalize())
		return
	}
	// One rank, in this process.
	want := runScenario(t, "block", true, []string{"sequential"})
	_, _, pcell, _, _, _ := scenarioMesh()
	for c, got := range want["sequential"].Idx {
		if w := []int32{int32(c / 2), pcell[4*(c/2)+2]}[c%2]; got != w {
			t.Fatalf("one rank: index argument %d = %d, want %d", c, got, w)
		}
	}
	path := filepath.Join(t.TempDir(), "want.json")
	b, err := json.Marshal(want)
	check(t, err)
	check(t, os.WriteFile(path, b, 0o600))
	type run struct {
		ranks       int
		partitioner string
		rankZero    bool
		tune        bool // each rank's auto-tuner changes settings from call to call
	}
	runs := []run{{2, "rcb", true, false}, {3, "metis", false, false}, {2, "metis", false, true}, {3, "ptscotch", false, false}}
	if !testing.Short() {
		// The full run adds block partitions, PT-Scotch's from rank
		// zero's declaration, the tuner on 3 ranks and 4 ranks.
		runs = append(runs, run{3, "block", true, false}, run{3, "rcb", true, true}, run{2, "ptscotch", true, false}, run{4, "auto", false, false})
	}
	for _, r := range runs {
		zero := ""
		if r.rankZero {
			zero = "1"
		}
		name := fmt.Sprintf("%d-ranks-%s-rank0decl%v", r.ranks, r.partitioner, r.rankZero)
		env := []string{"OP2_MPI_EXPECT=" + path, "OP2_MPI_PARTITIONER=" + r.partitioner, "OP2_MPI_RANK_ZERO=" + zero}
		if r.tune {
			name += "-tuned"
			env = append(env, "OP2_TUNE=1")
			if !testing.Short() {
				env = append(env, "OP2_CACHE_DIR="+t.TempDir()) // no saved choices: every setting measured
			}
		} else {
			// The ranks share this process's cache: the loops the
			// first job compiled, the later ones find.
			env = append(env, "OP2_TEST_CACHE_DIR="+os.Getenv("OP2_CACHE_DIR"))
		}
		t.Run(name, func(t *testing.T) {
			mpiRun(t, r.ranks, 3*time.Minute, env...)
		})
	}
}

// TestPartitionEdgeCuts: every partitioner reports, under its own name,
// the edge cut of each map's graph, which is the count of adjacent pairs
// its owners put on different ranks (recomputed here from the owners
// gathered in the declared numbering); METIS's own figure is named only
// for METIS, and equals the edge cut of its map's graph.
func TestPartitionEdgeCuts(t *testing.T) {
	if !mpitest.InRanks() {
		for _, p := range []string{"block", "rcb", "metis", "ptscotch"} {
			t.Run(p, func(t *testing.T) {
				mpiRun(t, 3, 2*time.Minute, "OP2_MPI_PARTITIONER="+p)
			})
		}
		return
	}
	partitioner := os.Getenv("OP2_MPI_PARTITIONER")
	xy, pedge, pcell, pbnd, _, _ := scenarioMesh()
	n := func(total int) int { // rank 0 declares everything
		if op2.Rank() == 0 {
			return total
		}
		return 0
	}
	part := func(v []int32) []int32 { return v[:n(len(v))] }
	nodes := must(op2.NewSet(n(mpiNodes), "nodes"))
	edges := must(op2.NewSet(n(mpiEdges), "edges"))
	cells := must(op2.NewSet(n(mpiCells), "cells"))
	bnd := must(op2.NewSet(n(2), "bnd"))
	must(op2.NewMap(edges, nodes, 2, part(pedge), "pedge"))
	mCell := must(op2.NewMap(cells, nodes, 4, part(pcell), "pcell"))
	must(op2.NewMap(bnd, nodes, 1, part(pbnd), "pbnd"))
	dxy := must(op2.NewDat(nodes, 2, xy[:2*n(mpiNodes)], "xy"))
	p := map[string]op2.Partitioner{"block": op2.BlockPartitioner(), "rcb": op2.RCBPartitioner(dxy), "metis": op2.METISPartitioner(mCell), "ptscotch": op2.PTScotchPartitioner(mCell)}[partitioner]
	info := must(op2.Partition(p))
	// Each node's owner, in the declared numbering.
	own := make([]int32, nodes.Size())
	for i := range own {
		own[i] = int32(op2.Rank())
	}
	owner := must(must(op2.NewDat(nodes, 1, own, "owner")).Gather())
	if op2.Rank() != 0 {
		check(t, op2.Finalize())
		return
	}
	// Nodes adjacent through a row of the map, each pair once.
	cut := func(table []int32, arity int) int {
		pairs := map[[2]int32]bool{}
		for r := 0; r < len(table)/arity; r++ {
			for _, a := range table[r*arity : (r+1)*arity] {
				for _, b := range table[r*arity : (r+1)*arity] {
					if a < b && owner[a] != owner[b] {
						pairs[[2]int32{a, b}] = true
					}
				}
			}
		}
		return len(pairs)
	}
	want := []op2.MapEdgeCut{{Map: "pedge", EdgeCut: cut(pedge, 2)}, {Map: "pcell", EdgeCut: cut(pcell, 4)}}
	if info.Partitioner != partitioner || !slices.Equal(info.EdgeCuts, want) {
		t.Errorf("partition info %+v, want partitioner %s and edge cuts %v", info, partitioner, want)
	}
	if want[0].EdgeCut == 0 || want[1].EdgeCut == 0 {
		t.Errorf("edge cuts %v: the mesh is not cut, the test shows nothing", want)
	}
	s := info.String()
	head := fmt.Sprintf("partition %s on 3 ranks: %d map entries cross ranks; edge cut per map graph: pedge %d, pcell %d", partitioner, info.Cut, want[0].EdgeCut, want[1].EdgeCut)
	if !strings.HasPrefix(s, head) {
		t.Errorf("summary %q, want it to start with %q", s, head)
	}
	if strings.Contains(s, "METIS") != (partitioner == "metis") {
		t.Errorf("summary %q: METIS named for partitioner %s", s, partitioner)
	}
	if partitioner == "metis" && info.MetisCut != want[1].EdgeCut {
		t.Errorf("METIS reported edge cut %d, the edge cut of pcell's graph is %d", info.MetisCut, want[1].EdgeCut)
	}
	check(t, op2.Finalize())
}

// TestPartitionInfoString: the summary names the partitioner, gives the
// edge cut of each map's graph (odd map names quoted) and names METIS's
// own figure only for METIS.
func TestPartitionInfoString(t *testing.T) {
	cuts := []op2.MapEdgeCut{{Map: "pedge", EdgeCut: 12}, {Map: "p\ncell", EdgeCut: 7}}
	for _, c := range []struct {
		info op2.PartitionInfo
		want string
	}{
		{op2.PartitionInfo{Partitioner: "rcb", Ranks: 4, Cut: 30, EdgeCuts: cuts},
			`partition rcb on 4 ranks: 30 map entries cross ranks; edge cut per map graph: pedge 12, "p\ncell" 7`},
		{op2.PartitionInfo{Partitioner: "block", Ranks: 2, Cut: 3, EdgeCuts: cuts[:1]},
			`partition block on 2 ranks: 3 map entries cross ranks; edge cut per map graph: pedge 12`},
		{op2.PartitionInfo{Partitioner: "metis", Ranks: 3, Cut: 30, EdgeCuts: cuts, MetisCut: 7},
			`partition metis on 3 ranks: 30 map entries cross ranks; edge cut per map graph: pedge 12, "p\ncell" 7 (METIS reported edge cut 7)`},
		{op2.PartitionInfo{Partitioner: "rcb", Ranks: 1},
			`partition rcb on 1 rank: 0 map entries cross ranks`},
	} {
		if got := c.info.String(); got != c.want {
			t.Errorf("String() = %q, want %q", got, c.want)
		}
	}
}
