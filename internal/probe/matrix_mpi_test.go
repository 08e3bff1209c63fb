package probe_test

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
)

// probeMatResult is what probeMatScenario computes, on rank 0.
type probeMatResult struct {
	K, KZ      [][]float64 // square dim 2 float64, and after ZeroRows
	R          [][]float32 // rectangular: rows nodes dim 1, columns edges dim 3
	T          [][]float32 // its transpose pattern: rows edges dim 3, columns nodes
	Y, Z       []float64   // K x, gathered; T-side product
	X          []float64   // CG solution of S x = S x*, gathered
	XStar      []float64
	RowsOnRank int
}

// probeMatScenario: random triangles over nodes, an edge set reached
// from the cells, owners from a random Dat (rank ranks-1 left empty when
// there are 3 ranks), matrices assembled with element values that depend
// on the cells' declared numbers (passed in a Dat), ZeroRows of declared
// rows, products.
func probeMatScenario(t *testing.T, ranks int, partition bool) probeMatResult {
	byCells := os.Getenv("OP2_PROBE_OWNERS") == "cells"
	const nn, nc, ne = 60, 90, 40
	rng := rand.New(rand.NewPCG(77, 88))
	tab := make([]int32, 0, nc*3)
	for range nc {
		for _, v := range rng.Perm(nn)[:3] {
			tab = append(tab, int32(v))
		}
	}
	etab := make([]int32, 0, nc*2)
	for range nc {
		for _, v := range rng.Perm(ne)[:2] {
			etab = append(etab, int32(v))
		}
	}
	owners := make([]int32, nn)
	for i := range owners {
		owners[i] = int32(rng.IntN(max(1, ranks-1)))
		if ranks == 2 {
			owners[i] = int32(rng.IntN(2))
		}
	}
	cellOwners := make([]int32, nc)
	for i := range cellOwners {
		cellOwners[i] = int32(rng.IntN(ranks))
		if cellOwners[i] == int32(ranks-1) && rng.IntN(10) != 0 {
			cellOwners[i] = 0 // the last rank owns few cells
		}
	}
	gids := iota32[float64](nc)
	xs := make([]float64, nn*2)
	for i := range xs {
		xs[i] = float64(rng.IntN(7)) - 3
	}
	ws := make([]float32, ne*3)
	for i := range ws {
		ws[i] = float32(rng.IntN(5)) - 2
	}
	n := func(total int) int {
		if op2.Rank() == 0 {
			return total
		}
		return 0
	}
	nodes := must(op2.NewSet(n(nn), "nodes"))
	cells := must(op2.NewSet(n(nc), "cells"))
	edges := must(op2.NewSet(n(ne), "edges"))
	pcell := must(op2.NewMap(cells, nodes, 3, tab[:3*n(nc)], "pcell"))
	cedge := must(op2.NewMap(cells, edges, 2, etab[:2*n(nc)], "cedge"))
	ident := must(op2.NewMap(nodes, nodes, 1, iota32[int32](n(nn)), "ident"))
	own := must(op2.NewDat(nodes, 1, owners[:n(nn)], "owner"))
	xstar := must(op2.NewDat(nodes, 1, iota32[float64](n(nn)), "x*"))
	sb := must(op2.NewDat[float64](nodes, 1, nil, "sb"))
	sx := must(op2.NewDat[float64](nodes, 1, nil, "sx"))
	gid := must(op2.NewDat(cells, 1, gids[:n(nc)], "gid"))
	x := must(op2.NewDat(nodes, 2, xs[:2*n(nn)], "x"))
	w := must(op2.NewDat(edges, 3, ws[:3*n(ne)], "w"))
	y := must(op2.NewDat[float64](nodes, 2, nil, "y"))
	z := must(op2.NewDat[float32](edges, 3, nil, "z"))
	cown := must(op2.NewDat(cells, 1, cellOwners[:n(nc)], "cell owner"))
	if partition {
		if byCells {
			must(op2.Partition(op2.OwnerPartitioner(cown)))
		} else {
			must(op2.Partition(op2.OwnerPartitioner(own)))
		}
	}
	spK := must(op2.NewSparsity(nodes, 2, nodes, 2, []op2.MapPair{{Row: pcell, Col: pcell}}, "spK"))
	spR := must(op2.NewSparsity(nodes, 1, edges, 3, []op2.MapPair{{Row: pcell, Col: cedge}}, "spR"))
	spT := must(op2.NewSparsity(edges, 3, nodes, 1, []op2.MapPair{{Row: cedge, Col: pcell}}, "spT"))
	K := must(op2.NewMat[float64](spK, "K"))
	R := must(op2.NewMat[float32](spR, "R"))
	T := must(op2.NewMat[float32](spT, "T"))
	kK := op2.NewKernel(`void kK(const double *g, double *A) {
  for (int i = 0; i < 36; i++) A[i] = ((int)g[0] % 5 + 1) * (i + 1) * 0.25;
}`, "kK")
	kR := op2.NewKernel(`void kR(const double *g, float *A) {
  for (int i = 0; i < 18; i++) A[i] = (float)((int)g[0] % 3 + 1) * (float)(i + 1) * 0.5f;
}`, "kR")
	check(t, op2.ParLoop(kK, cells, gid.Arg(op2.Read), K.Arg(op2.Inc, pcell, pcell)))
	check(t, op2.ParLoop(kR, cells, gid.Arg(op2.Read), R.Arg(op2.Inc, pcell, cedge)))
	check(t, op2.ParLoop(kR, cells, gid.Arg(op2.Read), T.Arg(op2.Inc, cedge, pcell)))
	var out probeMatResult
	out.RowsOnRank, _ = spK.Shape()
	out.K = must(K.Dense())
	out.R = must(R.Dense())
	out.T = must(T.Dense())
	check(t, K.Mult(x, y))
	out.Y = must(y.Gather())
	check(t, R.Mult(w, must(op2.NewDat[float32](nodes, 1, nil, "rw"))))
	// z = T (first component of x as float32)
	xf := must(op2.NewDat[float32](nodes, 1, nil, "xf"))
	d := xf.Data()
	xd := x.DataRO()
	for i := range d {
		d[i] = float32(xd[2*i])
	}
	check(t, T.Mult(xf, z))
	for _, v := range must(z.Gather()) {
		out.Z = append(out.Z, float64(v))
	}
	// ZeroRows of nodes with declared number % 7 == 0.
	var rows []int
	for i, g := range nodes.DeclaredNumbers() {
		if g%7 == 0 {
			rows = append(rows, i)
		}
	}
	check(t, K.ZeroRows(rows, 3))
	out.KZ = must(K.Dense())
	// CG on S = graph Laplacian of the cells + I.
	spS := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pcell, Col: pcell}, {Row: ident, Col: ident}}, "spS"))
	S := must(op2.NewMat[float64](spS, "S"))
	check(t, op2.ParLoop(op2.NewKernel(`void lap(double *A) { for (int i = 0; i < 9; i++) A[i] = (i % 4 == 0) ? 2 : -1; }`, "lap"), cells, S.Arg(op2.Inc, pcell, pcell)))
	check(t, op2.ParLoop(op2.NewKernel(`void eye(double *A) { A[0] = 1; }`, "eye"), nodes, S.Arg(op2.Inc, ident, ident)))
	check(t, S.Mult(xstar, sb))
	info, err := must(op2.NewSolver(op2.SolverOptions{RTol: 1e-13})).Solve(S, sx, sb)
	check(t, err)
	if !info.Converged {
		t.Fatalf("rank %d: CG %+v", op2.Rank(), info)
	}
	out.X, out.XStar = must(sx.Gather()), must(xstar.Gather())
	return out
}

// TestProbeMatRanks: the scenario on 2 and 3 ranks (owners by nodes, one
// rank of three empty, or by cells), sequential, openmp, opencl staged
// and atomics, against one process: sixteen mpirun jobs, of which a run
// takes four by rotation (one per backend, each rank count and owner
// kind twice, the empty rank among them), and one in -short mode.
func TestProbeMatRanks(t *testing.T) {
	if mpitest.InRanks() {
		var want probeMatResult
		b, err := os.ReadFile(os.Getenv("OP2_PROBE_EXPECT"))
		check(t, err)
		check(t, json.Unmarshal(b, &want))
		if b := os.Getenv("OP2_PROBE_BACKEND"); b != "" {
			check(t, op2.Use(b))
			defer op2.Use("sequential")
		}
		got := probeMatScenario(t, op2.Ranks(), true)
		t.Logf("rank %d holds %d rows of K", op2.Rank(), got.RowsOnRank)
		if op2.Rank() == 0 {
			cmp := func(what string, g, w [][]float64) {
				for i := range w {
					if !slices.Equal(g[i], w[i]) {
						t.Errorf("%s row %d on %d ranks: %v, one process %v", what, i, op2.Ranks(), g[i], w[i])
						return
					}
				}
			}
			cmp("K", got.K, want.K)
			cmp("K after ZeroRows", got.KZ, want.KZ)
			cmp("R", toF64(got.R), toF64(want.R))
			cmp("T", toF64(got.T), toF64(want.T))
			if !slices.Equal(got.Y, want.Y) {
				t.Errorf("K x on %d ranks: %v, one process %v", op2.Ranks(), got.Y, want.Y)
			}
			if !slices.Equal(got.Z, want.Z) {
				t.Errorf("T x on %d ranks: %v, one process %v", op2.Ranks(), got.Z, want.Z)
			}
			for i := range want.XStar {
				if d := got.X[i] - want.XStar[i]; d > 1e-8 || d < -1e-8 {
					t.Errorf("CG on %d ranks: x[%d] = %v, want %v", op2.Ranks(), i, got.X[i], want.XStar[i])
					break
				}
			}
		}
		check(t, op2.Finalize())
		return
	}
	// In -short mode one of the sixteen jobs: 3 ranks, sequential, the
	// last rank empty (its loops compiled by this process already; on
	// opencl each rank compiles its kernels, 10 s with a cold PoCL cache).
	type job struct {
		ranks  int
		owners string
	}
	// Each backend takes one of these (in -short mode, the first
	// backend the first), from a place that moves by one a run.
	jobs := []job{{2, "nodes"}, {2, "cells"}, {3, "nodes"}, {3, "cells"}}
	rot := rotation{}
	if !testing.Short() {
		rot = probeRotation(t)
	}
	wants := map[int]string{}
	for i, backend := range []string{"", "openmp", "opencl", "opencl+atomics"} {
		b, scheme, _ := strings.Cut(backend, "+")
		if b == "opencl" && !haveOpenCL() || testing.Short() && i > 0 {
			continue
		}
		js := pick(rotation{n: rot.n + i, all: rot.all}, jobs, 1)
		if testing.Short() {
			js = jobs[2:3] // 3 ranks, the last one empty
		}
		for _, j := range js {
			path, ok := wants[j.ranks]
			if !ok {
				want := probeMatScenario(t, j.ranks, false)
				path = filepath.Join(t.TempDir(), "want.json")
				b, err := json.Marshal(want)
				check(t, err)
				check(t, os.WriteFile(path, b, 0o600))
				wants[j.ranks] = path
			}
			// Rehearsed in this process on the job's backend, each
			// loop running at once as on several ranks, the loops
			// compile once, in the cache the ranks share, where each
			// rank would compile them all at once.
			check(t, op2.Configure(op2.Config{Backend: b, DeviceScheme: scheme, CacheDir: cacheDir}.Explicit("Lazy")))
			probeMatScenario(t, j.ranks, false)
			check(t, op2.Configure(op2.Config{CacheDir: cacheDir}))
			t.Run(strconv.Itoa(j.ranks)+"/"+backend+"/"+j.owners, func(t *testing.T) {
				mpitest.Run(t, j.ranks, 3*time.Minute, "OP2_PROBE_EXPECT="+path, "OP2_PROBE_BACKEND="+b, "OP2_PROBE_OWNERS="+j.owners, "OP2_DEVICE_SCHEME="+scheme,
					probeCacheEnv+"="+cacheDir)
			})
		}
	}
}

// TestProbeSparsityBeforePartition: on 2 ranks, a sparsity declared
// before Partition is refused with an error on every rank (no hang, no
// crash); after Partition it works.
func TestProbeSparsityBeforePartition(t *testing.T) {
	if !mpitest.InRanks() {
		mpitest.Run(t, 2, 2*time.Minute)
		return
	}
	n := func(total int) int {
		if op2.Rank() == 0 {
			return total
		}
		return 0
	}
	cells := must(op2.NewSet(n(4), "cells"))
	nodes := must(op2.NewSet(n(5), "nodes"))
	tab := []int32{0, 1, 1, 2, 2, 3, 3, 4}
	pcell := must(op2.NewMap(cells, nodes, 2, tab[:2*n(4)], "pcell"))
	_, err := op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pcell, Col: pcell}}, "early")
	if err == nil || !strings.Contains(err.Error(), "after Partition") {
		t.Fatalf("rank %d: sparsity before Partition: %v", op2.Rank(), err)
	}
	must(op2.Partition(op2.BlockPartitioner()))
	sp := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pcell, Col: pcell}}, "late"))
	A := must(op2.NewMat[float64](sp, "A"))
	check(t, op2.ParLoop(op2.NewKernel(`void one(double *A) { for (int i = 0; i < 4; i++) A[i] = 1; }`, "one"), cells, A.Arg(op2.Inc, pcell, pcell)))
	d := must(A.Dense())
	if op2.Rank() == 0 && (d[1][1] != 2 || d[0][1] != 1 || d[4][4] != 1) {
		t.Fatalf("dense %v", d)
	}
	check(t, op2.Finalize())
}
