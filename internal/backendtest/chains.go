package backendtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/goop2/op2"
)

// chainsRan holds the backends whose chain tests ran in this process.
var chainsRan = struct {
	sync.Mutex
	names map[string]bool
}{names: map[string]bool{}}

// firstChains reports whether the chain tests have not yet run on backend
// in this process. They run once per backend, not again in the runs of
// its other schemes, layouts and SIMD settings: recorded loops run
// through the executor as loops run at once, so those are the
// conformance suite's business (and CI's time is bounded). Which run
// that is depends on what -run selects (the whole package: the plain
// TestConformance; -run TestConformanceSIMD/tuned alone: the tuned one),
// so a chain test names in its Config every setting its checks depend
// on (testTiledChains: Tune off) rather than taking the environment's.
func firstChains(backend string) bool {
	chainsRan.Lock()
	defer chainsRan.Unlock()
	first := !chainsRan.names[backend]
	chainsRan.names[backend] = true
	return first
}

// chainOutcome is everything a sequence of runChainOps computes: the
// data, the reductions and every value the host read or set on the way.
type chainOutcome struct {
	x, acc, w   []float64
	sum, lo, hi float64
	cnt         []int32
	trace       []float64
}

// chainOps are the steps of a random sequence: loops with every kind of
// argument (direct RW, a whole map read, increments through a map, Global
// reads and reductions, a Const) and host accesses between them (reads,
// writes of a Global and a Const, Zero), which force recorded loops,
// and a Global's and a Const's reset, which order themselves after them;
// one loop runs over a subset.
var chainOps = []string{"scale", "scale-subset", "gather", "scatter", "pull", "reduce", "count", "set-global", "set-const", "peek", "zero", "reset-sum", "reset-const"}

// chainKernels are the kernels of chainOps, by name.
var chainKernels = map[string]string{
	"ch_scale":   "void ch_scale(double *x, const double *g) { x[0] = x[0] - g[0] + ch_c; x[1] = 1 - x[1]; }",
	"ch_gather":  "void ch_gather(double **x, double *w) { double s = 0; for (int k = 0; k < 3; k++) s += x[k][0] + x[k][1]; *w = s; }",
	"ch_scatter": "void ch_scatter(const double *w, double **acc) { for (int k = 0; k < 3; k++) { acc[k][0] += *w; acc[k][1] += k + 1; } }",
	"ch_pull":    "void ch_pull(double *x, const double *acc) { x[0] += acc[0] - acc[1]; }",
	"ch_reduce":  "void ch_reduce(const double *x, double *s, double *lo, double *hi) { *s += x[0]; if (x[1] < *lo) *lo = x[1]; if (x[0] > *hi) *hi = x[0]; }",
	"ch_count":   "void ch_count(int *a, int *b) { *a += 1; *b += 2; }",
}

// runChainOps runs the steps ops on m's mesh in the default runtime, all
// inside one Chain scope when chain is set, with fresh data. The values
// are integers (sums of them are exact in any order), so every backend
// and scheme gives the same bits in every mode.
func runChainOps(t *testing.T, m *randomMesh, ops []int, chain bool) chainOutcome {
	t.Helper()
	nodes := must(op2.NewSet(m.nNodes, "nodes"))
	edges := must(op2.NewSet(m.nEdges, "edges"))
	emap := must(op2.NewMap(edges, nodes, 3, m.emap, "emap"))
	var third []int32
	for i := int32(0); i < int32(m.nNodes); i += 3 {
		third = append(third, i)
	}
	sub := must(op2.NewSubset(nodes, third))
	xv := make([]float64, 2*m.nNodes)
	for i := range xv {
		xv[i] = float64(m.nodeI[i/2] + int32(i%2))
	}
	x := must(op2.NewDat(nodes, 2, xv, "x"))
	acc := must(op2.NewDat[float64](nodes, 2, nil, "acc"))
	w := must(op2.NewDat[float64](edges, 1, nil, "w"))
	cnt := must(op2.NewDat[int32](nodes, 1, nil, "cnt"))
	g := must(op2.NewGlobal(1, []float64{3}, "g"))
	sum := must(op2.NewGlobal(1, []float64{0}, "sum"))
	lo := must(op2.NewGlobal(1, []float64{math.Inf(1)}, "lo"))
	hi := must(op2.NewGlobal(1, []float64{-1e9}, "hi"))
	c := must(op2.NewConst(1, []float64{5}, "ch_c"))
	defer c.Remove()
	kernels := map[string]*op2.Kernel{}
	for name, src := range chainKernels {
		kernels[name] = op2.NewKernel(src, name)
	}
	kernel := func(name string) *op2.Kernel { return kernels[name] }
	var o chainOutcome
	steps := func() error {
		for _, op := range ops {
			var err error
			switch chainOps[op] {
			case "scale":
				err = op2.ParLoop(kernel("ch_scale"), nodes, x.Arg(op2.RW), g.Arg(op2.Read))
			case "scale-subset":
				err = op2.ParLoop(kernel("ch_scale"), sub, x.Arg(op2.RW), g.Arg(op2.Read))
			case "gather":
				err = op2.ParLoop(kernel("ch_gather"), edges, x.ArgVec(op2.Read, emap), w.Arg(op2.Write))
			case "scatter":
				err = op2.ParLoop(kernel("ch_scatter"), edges, w.Arg(op2.Read), acc.ArgVec(op2.Inc, emap))
			case "pull":
				err = op2.ParLoop(kernel("ch_pull"), nodes, x.Arg(op2.RW), acc.Arg(op2.Read))
			case "reduce":
				err = op2.ParLoop(kernel("ch_reduce"), nodes, x.Arg(op2.Read), sum.Arg(op2.Inc), lo.Arg(op2.Min), hi.Arg(op2.Max))
			case "count":
				err = op2.ParLoop(kernel("ch_count"), edges, cnt.ArgMap(op2.Inc, emap, 0), cnt.ArgMap(op2.Inc, emap, 2))
			case "set-global":
				g.SetValue(g.Value() + 2)
			case "set-const":
				err = c.Set(c.Value()[0] - 1)
			case "peek":
				var v []float64
				if v, err = x.Range(0, min(2, m.nNodes)); err == nil {
					o.trace = append(o.trace, v...)
					o.trace = append(o.trace, sum.Value())
				}
			case "zero":
				err = acc.Zero()
			case "reset-sum":
				sum.SetValue(float64(len(o.trace))) // ordered after the recorded loops that reduce it
			case "reset-const":
				err = c.Set(float64(len(o.trace)) + 5) // ordered after the recorded loops that use it

			}
			if err != nil {
				return fmt.Errorf("step %s: %w", chainOps[op], err)
			}
		}
		return nil
	}
	if chain {
		check(t, op2.Chain(steps))
	} else {
		check(t, steps())
	}
	o.x, o.acc, o.w, o.cnt = x.DataRO(), acc.DataRO(), w.DataRO(), cnt.DataRO()
	o.sum, o.lo, o.hi = sum.Value(), lo.Value(), hi.Value()
	return o
}

// sameOutcome fails the test, naming what, unless got and want are the
// same bits.
func sameOutcome(t *testing.T, what string, got, want chainOutcome) {
	t.Helper()
	for _, f := range []struct {
		name      string
		got, want []float64
	}{{"x", got.x, want.x}, {"acc", got.acc, want.acc}, {"w", got.w, want.w}, {"host reads", got.trace, want.trace},
		{"reductions", []float64{got.sum, got.lo, got.hi}, []float64{want.sum, want.lo, want.hi}}} {
		if !sameBits(f.got, f.want) {
			t.Fatalf("%s: %s differ from running each loop at once", what, f.name)
		}
	}
	for i := range want.cnt {
		if got.cnt[i] != want.cnt[i] {
			t.Fatalf("%s: cnt[%d] = %d, at once %d", what, i, got.cnt[i], want.cnt[i])
		}
	}
}

// sameBits reports whether a and b hold the same values, bit for bit.
func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// testRandomChains runs random sequences of loops and host accesses at
// once, inside a Chain scope (fusing every run of loops that fuses) and
// in lazy mode (Config.Lazy) on the backend, and checks that the three
// give the same bits.
func testRandomChains(t *testing.T, backend, cache string) {
	defer func() { check(t, op2.Configure(op2.Config{Backend: backend, CacheDir: cache, PlanCheck: true})) }()
	r := rand.New(rand.NewPCG(5, 6))
	m := newRandomMesh(r, 3000, 900, 3, false)
	sequences, length := 4, 14
	if testing.Short() {
		sequences = 2
	}
	for s := 0; s < sequences; s++ {
		ops := make([]int, length)
		for i := range ops {
			ops[i] = r.IntN(len(chainOps))
		}
		names := make([]string, len(ops))
		for i, op := range ops {
			names[i] = chainOps[op]
		}
		check(t, op2.Configure(op2.Config{Backend: backend, CacheDir: cache, PlanCheck: true}.Explicit("Lazy")))
		want := runChainOps(t, m, ops, false)
		for _, mode := range []string{"chain", "lazy"} {
			// The chain fuses every run of loops that can be fused
			// (Config.Fusion "on"); lazy mode fuses where it pays
			// (the default).
			fusion := map[string]string{"chain": "on", "lazy": ""}[mode]
			check(t, op2.Configure(op2.Config{Backend: backend, CacheDir: cache, PlanCheck: true, Lazy: mode == "lazy", Fusion: fusion}.Explicit("Lazy")))
			got := runChainOps(t, m, ops, mode == "chain")
			what := fmt.Sprintf("%s, %s, steps %v", backend, mode, names)
			sameOutcome(t, what, got, want)
		}
	}
}

// testLazyConformance runs the conformance suite again in lazy mode
// (Config.Lazy), fusing what fuses (Config.Fusion "on"): every loop is
// recorded and runs when a test reads its results, which must be those
// of running it at once.
func testLazyConformance(t *testing.T, backend, cache string) {
	check(t, op2.Configure(op2.Config{Backend: backend, CacheDir: cache, PlanCheck: true, Lazy: true, Fusion: "on"}))
	defer func() { check(t, op2.Configure(op2.Config{Backend: backend, CacheDir: cache, PlanCheck: true})) }()
	for _, c := range conformance {
		t.Run(c.name, c.test)
	}
}
