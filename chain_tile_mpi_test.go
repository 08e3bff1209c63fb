package op2_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
)

// The loops of TestTiledChainUnderMPI, on a ring of nodes and edges; the
// values stay small integers, so that any order of increments gives the
// same bits.
var (
	tmBump = op2.NewKernel(`void tm_bump(double *a, double *b) { *a = fmod(2 * *a + 1, 97.0); *b = fmod(*b + *a, 89.0); }`, "tm_bump")
	tmEdge = op2.NewKernel(`void tm_edge(const double **a, const double *b0, double *e, double **c, double *g) {
  *e = fmod(a[0][0] + 2 * a[1][0] + *b0, 83.0);
  c[0][0] += fmod(*e, 5.0);
  c[1][0] += 1;
  *g += *e;
}`, "tm_edge")
	tmNode = op2.NewKernel(`void tm_node(double *a, double *c, double *g, double *h) {
  *a = fmod(*a + *c, 97.0);
  *c = fmod(*c, 11.0);
  *g += *a;
  if (*c > *h) *h = *c;
}`, "tm_node")
	tmDiff = op2.NewKernel(`void tm_diff(const double *a0, const double *a1, double *f) { *f += *a0 - *a1; }`, "tm_diff")
)

// TestTiledChainUnderMPI runs, on 2 and 3 ranks, chains of loops that
// modify exported node values directly, read them through the ring's
// map, increment nodes through it (an exec halo, with a Global
// reduction) and reduce Globals, in sparse tiles (Config.Tile) on the
// host backends: every Dat and Global is the same as when the loops run
// at once, and the chains did run in tiles.
func TestTiledChainUnderMPI(t *testing.T) {
	if !mpitest.InRanks() {
		for _, ranks := range []int{2, 3} {
			t.Run(fmt.Sprintf("%d-ranks", ranks), func(t *testing.T) {
				mpiRun(t, ranks, 2*time.Minute, "OP2_MPI_TIMEOUT=60s")
			})
		}
		return
	}
	const n = 300
	nodes, ring := declareRing(t, n)
	edges := ring.From()
	rank := op2.Rank()
	type data struct {
		a, b, c *op2.Dat[float64]
		e, f    *op2.Dat[float64]
		g, h    *op2.Global[float64]
	}
	newData := func(tag string) *data {
		v := func(k int) []float64 {
			out := make([]float64, n)
			for i := range out {
				out[i] = float64(((rank*n + i) * k) % 13)
			}
			return out
		}
		return &data{
			a: must(op2.NewDat(nodes, 1, v(3), "a"+tag)), b: must(op2.NewDat(nodes, 1, v(5), "b"+tag)),
			c: must(op2.NewDat(nodes, 1, v(7), "c"+tag)),
			e: must(op2.NewDat[float64](edges, 1, nil, "e"+tag)), f: must(op2.NewDat[float64](edges, 1, nil, "f"+tag)),
			g: must(op2.NewGlobal(1, []float64{1}, "g"+tag)), h: must(op2.NewGlobal(1, []float64{0}, "h"+tag)),
		}
	}
	runs := []struct {
		name string
		cfg  op2.Config
	}{
		{"at once", op2.Config{Backend: "sequential"}},
		{"sequential, tile 1", op2.Config{Backend: "sequential", Tile: 1}},
		{"sequential, tile 16", op2.Config{Backend: "sequential", Tile: 16}},
		{"openmp 2 threads, tile 8", op2.Config{Backend: "openmp", Threads: 2, Tile: 8}},
	}
	ds := make([]*data, len(runs))
	for i := range runs {
		ds[i] = newData(fmt.Sprint(i))
	}
	must(op2.Partition(op2.BlockPartitioner()))
	defer op2.Configure(op2.Config{})
	var want [][]float64
	for i, run := range runs {
		check(t, op2.Configure(run.cfg))
		d := ds[i]
		tiled := op2.TiledDistributedRuns()
		for range 2 {
			check(t, op2.Chain(func() error {
				for range 3 {
					check(t, op2.ParLoop(tmBump, nodes, d.a.Arg(op2.RW), d.b.Arg(op2.RW)))
					check(t, op2.ParLoop(tmEdge, edges, d.a.ArgVec(op2.Read, ring), d.b.ArgMap(op2.Read, ring, 0), d.e.Arg(op2.Write),
						d.c.ArgVec(op2.Inc, ring), d.g.Arg(op2.Inc)))
					check(t, op2.ParLoop(tmNode, nodes, d.a.Arg(op2.RW), d.c.Arg(op2.RW), d.g.Arg(op2.Inc), d.h.Arg(op2.Max)))
					check(t, op2.ParLoop(tmDiff, edges, d.a.ArgMap(op2.Read, ring, 0), d.a.ArgMap(op2.Read, ring, 1), d.f.Arg(op2.RW)))
				}
				return nil
			}))
		}
		got := [][]float64{{d.g.Value()}, {d.h.Value()}}
		for _, x := range []*op2.Dat[float64]{d.a, d.b, d.c, d.e, d.f} {
			got = append(got, must(x.Gather()))
		}
		if i == 0 {
			want = got
			continue
		}
		if op2.TiledDistributedRuns() == tiled {
			t.Errorf("rank %d, %s: no chain ran in tiles", rank, run.name)
		}
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("rank %d, %s: results differ from the loops run at once:\n got %v\nwant %v", rank, run.name, got, want)
		}
	}
	check(t, op2.Finalize())
}
