package backendtest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/exec"
)

// fusionKernels are loops that fuse in pairs (see testFusion): real-valued
// arithmetic with divisions and square roots, so that any change in the
// operations or their order would show in the bits.
var fusionKernels = map[string]string{
	// nodes: y written from x.
	"fu_prep": `void fu_prep(const double *x, double *y) {
  y[0] = sqrt(x[0] * x[0] + x[1] * x[1] + fu_c);
  y[1] = x[0] / (1.5 + y[0]);
}`,
	// nodes: x updated from y (written by fu_prep at the same node); an
	// integer count reduced, a Global read.
	"fu_relax": `void fu_relax(double *x, const double *y, const double *g, double *n) {
  x[0] = 0.75 * x[0] + y[1] / (1.0 + y[0] * y[0]) - g[0];
  x[1] = x[1] - 0.125 * y[0];
  *n += 1.0;
}`,
	// edges: w written from the nodes' x.
	"fu_flux": `void fu_flux(double **x, double *w) {
  double s = 0;
  for (int k = 0; k < 3; k++) s += x[k][0] * x[k][1];
  *w = s / 3.0 + fu_c;
}`,
	// edges: increments (whole numbers, so that their sum is exact in any
	// order) through the map, from w written by fu_flux on the same edge;
	// returns early for some edges (a return ends a fused kernel's body
	// only last).
	"fu_spread": `void fu_spread(const double *w, double **acc) {
  if (*w > 0.5) return;
  for (int k = 0; k < 3; k++) acc[k][0] += (*w > 0.0 ? 1.0 : -1.0) * (k + 1);
}`,
	// nodes: reads the increments.
	"fu_apply": `void fu_apply(const double *acc, double *x) {
  x[0] = x[0] + 0.01 * acc[0];
}`,
}

// fusionOutcome is what runFusionSteps computes.
type fusionOutcome struct {
	x, y, w, acc []float64
	n            float64
}

// runFusionSteps runs the loops of testFusion steps times on m, in one
// Chain when chain is set, and returns the results.
func runFusionSteps(t *testing.T, m *randomMesh, steps int, chain bool) fusionOutcome {
	t.Helper()
	nodes := must(op2.NewSet(m.nNodes, "nodes"))
	edges := must(op2.NewSet(m.nEdges, "edges"))
	emap := must(op2.NewMap(edges, nodes, 3, m.emap, "emap"))
	x := must(op2.NewDat(nodes, 2, slices.Clone(m.nodeF), "x"))
	y := must(op2.NewDat[float64](nodes, 2, nil, "y"))
	w := must(op2.NewDat[float64](edges, 1, nil, "w"))
	acc := must(op2.NewDat[float64](nodes, 1, nil, "acc"))
	g := must(op2.NewGlobal(1, []float64{0.001}, "g"))
	n := must(op2.NewGlobal(1, []float64{0}, "n"))
	c := must(op2.NewConst(1, []float64{0.25}, "fu_c"))
	defer c.Remove()
	k := map[string]*op2.Kernel{}
	for name, src := range fusionKernels {
		k[name] = op2.NewKernel(src, name)
	}
	run := func() error {
		for s := 0; s < steps; s++ {
			for _, err := range []error{
				op2.ParLoop(k["fu_prep"], nodes, x.Arg(op2.Read), y.Arg(op2.Write)),
				op2.ParLoop(k["fu_relax"], nodes, x.Arg(op2.RW), y.Arg(op2.Read), g.Arg(op2.Read), n.Arg(op2.Inc)),
				op2.ParLoop(k["fu_flux"], edges, x.ArgVec(op2.Read, emap), w.Arg(op2.Write)),
				op2.ParLoop(k["fu_spread"], edges, w.Arg(op2.Read), acc.ArgVec(op2.Inc, emap)),
				op2.ParLoop(k["fu_apply"], nodes, acc.Arg(op2.Read), x.Arg(op2.RW)),
			} {
				if err != nil {
					return err
				}
			}
		}
		return nil
	}
	if chain {
		check(t, op2.Chain(run))
	} else {
		check(t, run())
	}
	return fusionOutcome{x: x.DataRO(), y: y.DataRO(), w: w.DataRO(), acc: acc.DataRO(), n: n.Value()}
}

// testFusion runs a sequence of loops in which pairs fuse (a loop over
// nodes writing y then one reading it at the same node; a loop over edges
// writing w then one reading it and incrementing through a map; the last
// loop of a step, which modifies x, and the next step's first, which
// reads it) at once and in a Chain with
// Config.Fusion "on" (on the host backends also with 8 SIMD lanes, which
// the fused kernels get; on a device in both schemes: fu_spread's
// increments are whole numbers, exact in any order), and checks that the
// fused loops ran (the timing report) and that the results are the same
// bits.
func testFusion(t *testing.T, backend, cache string) {
	defer func() { check(t, op2.Configure(op2.Config{Backend: backend, CacheDir: cache, PlanCheck: true})) }()
	r := rand.New(rand.NewPCG(7, 8))
	m := newRandomMesh(r, 2000, 700, 3, true)
	// On the host backends the scalar code and 8 SIMD lanes, which the
	// fused kernels get; on a device both schemes.
	type setting struct{ simd, scheme string }
	settings := []setting{{"", ""}}
	switch {
	case backend == "sequential" || backend == "openmp":
		settings = append(settings, setting{"8", ""})
	case exec.IsDevice(backend):
		settings = []setting{{"", "staged"}, {"", "atomics"}}
	}
	for _, st := range settings {
		cfg := op2.Config{Backend: backend, CacheDir: cache, PlanCheck: true, SIMD: st.simd, DeviceScheme: st.scheme}
		cfg.Fusion = "off"
		check(t, op2.Configure(cfg))
		want := runFusionSteps(t, m, 3, false)
		cfg.Fusion, cfg.Timing = "on", true
		check(t, op2.Configure(cfg))
		op2.ResetTimings()
		got := runFusionSteps(t, m, 3, true)
		var fused []string
		for _, lt := range op2.Timings() {
			if strings.HasPrefix(lt.Kernel, "fused_") {
				fused = append(fused, fmt.Sprintf("%s×%d", lt.Kernel, lt.Calls))
			}
		}
		slices.Sort(fused)
		// fu_apply then fu_prep fuse, but not with fu_relax, which
		// modifies x as fu_apply does. In a device's staged scheme
		// fu_flux and fu_spread do not fuse: the fused loop stages x
		// too, so its blocks are smaller than fu_spread's, whose
		// increments through the map would then add up in other groups
		// (exec.Executor.KeepsOrder).
		wantFused := []string{"fused_fu_apply_fu_prep×2", "fused_fu_flux_fu_spread×3", "fused_fu_prep_fu_relax×1"}
		if st.scheme == "staged" {
			wantFused = slices.Delete(wantFused, 1, 2)
		}
		if !slices.Equal(fused, wantFused) {
			t.Errorf("%s %v: fused loops %v, want %v", backend, st, fused, wantFused)
		}
		for _, f := range []struct {
			name      string
			got, want []float64
		}{{"x", got.x, want.x}, {"y", got.y, want.y}, {"w", got.w, want.w}, {"acc", got.acc, want.acc}, {"n", []float64{got.n}, []float64{want.n}}} {
			if !sameBits(f.got, f.want) {
				t.Errorf("%s %v: %s of the fused loops differ from running each loop at once", backend, st, f.name)
			}
		}
	}
}
