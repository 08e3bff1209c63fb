package probe_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
)

// tpMPIRun is one job of TestTileProbeMPI: the mesh (its seed and
// nodes), the partition and the configurations (indices into
// tpMPIConfigs) its ranks run the sequences in, each run of loops
// between host accesses in one op2.Chain.
type tpMPIRun struct {
	ranks int
	nodes int
	// strip (owners by position), empty (the last rank owns no node),
	// lopsided (rank 0 owns most), random (owners), rcb, block, ptscotch
	partitioner string
	configs     []int
}

var tpMPIConfigs = []tpConfig{
	{name: "sequential tile 64", backend: "sequential", tile: 64},
	{name: "openmp 2 threads tile 300 simd 4 fusion", backend: "openmp", threads: 2, tile: 300, simd: "4", fusion: "on"},
	{name: "sequential tile 1 simd 8", backend: "sequential", tile: 1, simd: "8"},
	{name: "openmp 3 threads tile 20 fusion", backend: "openmp", threads: 3, tile: 20, fusion: "on"},
	{name: "sequential tile 100000", backend: "sequential", tile: 100000},
	{name: "sequential no tiles", backend: "sequential"},
}

const tpMPIMeshSeed = 11

// tpMPISequences are the random sequences the jobs run: one per run, by
// rotation (the first job to run a configuration compiles each loop of
// the sequence for it on every rank: most of the test's time).
var tpMPISequences = []uint64{21, 22}

// TestTileProbeMPI runs random sequences like TestTileProbeRandom's on 2
// and 3 ranks, each run of loops between host accesses in a Chain, in
// sparse tiles: every Global at every sync point (on every rank) and
// every Dat at the end (gathered) has the bits of one process running
// each loop at once.
func TestTileProbeMPI(t *testing.T) {
	if mpitest.InRanks() {
		tpRanks(t)
		return
	}
	runs := []tpMPIRun{{2, 2000, "strip", []int{0, 1}}}
	if !testing.Short() {
		runs = append(runs, tpMPIRun{3, 3000, "strip", []int{2, 4}}, tpMPIRun{2, 2000, "random", []int{0, 3}},
			tpMPIRun{3, 2000, "rcb", []int{1, 5}},
			tpMPIRun{3, 2000, "empty", []int{0, 1}}, tpMPIRun{3, 2400, "lopsided", []int{3, 2}}, tpMPIRun{2, 3000, "ptscotch", []int{3, 2}})
	}
	seqs := tpMPISequences[:1]
	if !testing.Short() {
		seqs = pick(probeRotation(t), tpMPISequences, 1)
	}
	var ss []string
	for _, s := range seqs {
		ss = append(ss, strconv.FormatUint(s, 10))
	}
	rehearsed := map[int]bool{}
	for _, r := range runs {
		m := tpRandomMesh(tpMPIMeshSeed, r.nodes)
		w := tpDeclare(t, m, true)
		w.tpFinish(t)
		eager := must(op2.NewRuntime(tpConfig{backend: "sequential"}.config(false)))
		w.tpk = must(op2.NewConstIn(eager, 1, []float64{1}, "tpk"))
		w.par = eager.ParLoop
		var want []tpResult
		for _, seed := range seqs {
			want = append(want, w.tpRun(t, seed, tpSequence(m, seed, 20), nil))
		}
		w.tpk.Remove()
		// Each configuration's first job is rehearsed here, in one
		// process, each run of loops between host accesses in a Chain:
		// it compiles the loops once, in the cache the ranks share
		// (probeCacheEnv), where each rank would compile them all at
		// once.
		for _, ci := range r.configs {
			if rehearsed[ci] {
				continue
			}
			rehearsed[ci] = true
			c := tpMPIConfigs[ci]
			rt := must(op2.NewRuntime(c.config(false)))
			w.tpk = must(op2.NewConstIn(rt, 1, []float64{1}, "tpk"))
			w.par = rt.ParLoop
			for s, seed := range seqs {
				got := w.tpRun(t, seed, tpSequence(m, seed, 20), rt.Chain)
				tpCompare(t, fmt.Sprintf("one process, sequence %d, %s", seed, c.name), got, want[s])
			}
			w.tpk.Remove()
		}
		path := filepath.Join(t.TempDir(), "want.json")
		check(t, os.WriteFile(path, must(json.Marshal(want)), 0o600))
		var cs []string
		for _, c := range r.configs {
			cs = append(cs, strconv.Itoa(c))
		}
		t.Run(fmt.Sprintf("%d-ranks-%d-nodes-%s", r.ranks, r.nodes, r.partitioner), func(t *testing.T) {
			mpitest.Run(t, r.ranks, 4*time.Minute, "TP_WANT="+path, "TP_NODES="+strconv.Itoa(r.nodes), "TP_PARTITIONER="+r.partitioner,
				"TP_CONFIGS="+strings.Join(cs, ","), "TP_SEQUENCES="+strings.Join(ss, ","), probeCacheEnv+"="+cacheDir, "OP2_MPI_TIMEOUT=120s")
		})
	}
}

// tpRanks is TestTileProbeMPI's part on the ranks.
func tpRanks(t *testing.T) {
	var want []tpResult
	check(t, json.Unmarshal(must(os.ReadFile(os.Getenv("TP_WANT"))), &want))
	var seqs []uint64
	for _, s := range strings.Split(os.Getenv("TP_SEQUENCES"), ",") {
		seqs = append(seqs, must(strconv.ParseUint(s, 10, 64)))
	}
	if len(seqs) != len(want) {
		t.Fatalf("TP_SEQUENCES names %d sequences, TP_WANT holds %d results", len(seqs), len(want))
	}
	n, _ := strconv.Atoi(os.Getenv("TP_NODES"))
	m := tpRandomMesh(tpMPIMeshSeed, n)
	rank, ranks := op2.Rank(), op2.Ranks()
	w := tpDeclare(t, m, rank == 0)
	var p op2.Partitioner
	switch part := os.Getenv("TP_PARTITIONER"); part {
	case "strip", "random", "empty", "lopsided":
		var owners []int32
		if rank == 0 {
			rng := rand.New(rand.NewPCG(3, uint64(ranks)))
			for v := range n {
				switch part {
				case "strip":
					owners = append(owners, int32(m.pos[v]*ranks/n))
				case "empty": // the last rank owns no node
					owners = append(owners, int32(m.pos[v]*(ranks-1)/n))
				case "lopsided": // rank 0 owns most nodes, in one piece
					owners = append(owners, int32(max(0, (m.pos[v]*8/n-5)*ranks/3)))
				default:
					owners = append(owners, int32(rng.IntN(ranks)))
				}
			}
		}
		p = op2.OwnerPartitioner(must(op2.NewDat(w.sets["nodes"], 1, owners, "owners")))
	case "rcb":
		var xy []float64
		if rank == 0 {
			xy = m.xy
		}
		p = op2.RCBPartitioner(must(op2.NewDat(w.sets["nodes"], 2, xy, "xy")))
	case "ptscotch":
		p = op2.PTScotchPartitioner(w.maps[0])
	default:
		p = op2.BlockPartitioner()
	}
	must(op2.Partition(p))
	w.tpFinish(t)
	w.gathe = true
	w.par = op2.ParLoop
	w.tpk = must(op2.NewConst(1, []float64{1}, "tpk"))
	defer op2.Configure(op2.Config{CacheDir: cacheDir})
	// A chain whose scope, after its loops, calls an accessor a rank
	// may call alone (refused on several ranks: the loops stay recorded)
	// and issues a loop refused when it is checked.
	bad := op2.NewKernel("void tp_bad(double *x) { x[0] = 1; }", "tp_bad")
	refusing := func(body func() error) error {
		return op2.Chain(func() error {
			err := body()
			var ce *op2.ChainAccessError
			if e := w.f["nodes.a"].Sync(); ranks > 1 && !errors.As(e, &ce) {
				t.Errorf("rank %d: Sync inside a tiled chain: %v, want a *ChainAccessError", rank, e)
			}
			if e := op2.ParLoop(bad, w.sets["cells"], w.f["cells.v"].Arg(op2.Write), w.f["cells.a"].Arg(op2.Write)); e == nil {
				t.Errorf("rank %d: a loop whose kernel does not match its arguments was accepted", rank)
			}
			return err
		})
	}
	for i, cs := range strings.Split(os.Getenv("TP_CONFIGS"), ",") {
		ci, _ := strconv.Atoi(cs)
		c := tpMPIConfigs[ci]
		check(t, op2.Configure(c.config(false)))
		op2.ResetTimings()
		tiled := 0
		chain := op2.Chain
		w.readInChain = i == 1
		if i == 0 {
			chain = refusing
		}
		for s, seed := range seqs {
			got := w.tpRun(t, seed, tpSequence(m, seed, 20), chain)
			what := fmt.Sprintf("rank %d of %d, sequence %d, %s", rank, ranks, seed, c.name)
			if rank != 0 {
				got.Dats, want[s].Dats = nil, nil
			}
			tpCompare(t, what, got, want[s])
			for _, lt := range op2.Timings() {
				if lt.Tuned == "tiled" {
					tiled++
				}
			}
			if !tpCheckTimings(t, what, op2.Timings(), c.tile > 0) && c.tile > 0 {
				t.Errorf("%s: no loop ran in tiles", what)
			}
		}
		t.Logf("rank %d of %d, %s: %d loops last ran in tiles; set sizes (core/owned) nodes %d/%d edges %d/%d cells %d/%d", rank, ranks, c.name, tiled,
			w.sets["nodes"].CoreSize(), w.sets["nodes"].Size(), w.sets["edges"].CoreSize(), w.sets["edges"].Size(), w.sets["cells"].CoreSize(), w.sets["cells"].Size())
	}
	w.tpk.Remove()
	check(t, op2.Finalize())
}
