package op2_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
)

// emptyDataConfigs is every backend in every layout and scheme that
// places data differently: the device layouts (aos, soa) in both device
// schemes, and the openmp schemes; the device backends' atomics variants
// in check mode.
func emptyDataConfigs() []op2.Config {
	configs := []op2.Config{
		{Backend: "sequential"},
		{Backend: "openmp", Threads: 2, OpenMPScheme: "colour"},
		{Backend: "openmp", Threads: 2, OpenMPScheme: "owner"},
	}
	for _, b := range allBackends {
		if b != "opencl" && b != "cuda" {
			continue
		}
		for _, layout := range []string{"aos", "soa"} {
			for _, scheme := range []string{"staged", "atomics"} {
				// Check mode reads the device copies of READ
				// arguments back after each loop.
				configs = append(configs, op2.Config{Backend: b, DeviceLayout: layout, DeviceScheme: scheme, Check: scheme == "atomics"})
			}
		}
	}
	return configs
}

// TestEmptyData: Dats of dim > 1 on empty sets go through every data path
// (upload, a direct and an indirect loop, a reduction, Data, Range,
// CopyTo, Zero, Clone) and an empty matrix multiplies dim-2 vectors, on
// every backend, layout and scheme (and in check mode), with no error and the non-empty data
// beside them intact.
func TestEmptyData(t *testing.T) {
	defer func() { check(t, op2.Configure(op2.Config{Backend: "sequential"})) }()
	for _, cfg := range emptyDataConfigs() {
		t.Run(fmt.Sprintf("%s-%s%s-%s", cfg.Backend, cfg.OpenMPScheme, cfg.DeviceScheme, cfg.DeviceLayout), func(t *testing.T) {
			r := must(op2.NewRuntime(cfg))
			empty := must(op2.NewSet(0, "empty"))
			nodes := must(op2.NewSet(4, "nodes"))
			m := must(op2.NewMap(empty, nodes, 2, nil, "m"))
			m0 := must(op2.NewMap(empty, empty, 2, nil, "m0"))
			x := must(op2.NewDat[float64](empty, 3, nil, "x"))
			e := must(op2.NewDat[float64](empty, 2, []float64{}, "e"))
			y := must(op2.NewDat(nodes, 3, iota32[float64](12), "y"))
			z := must(op2.NewDat[float64](empty, 3, nil, "z"))
			sum := must(op2.NewGlobal[float64](2, []float64{5, 6}, "sum"))

			direct := op2.NewKernel("void empty_direct(double *x, const double *e, double *s) { x[0] = e[1]; x[2] += 1; s[1] += x[1]; }", "empty_direct")
			check(t, r.ParLoop(direct, empty, x.Arg(op2.RW), e.Arg(op2.Read), sum.Arg(op2.Inc)))
			indirect := op2.NewKernel(`void empty_indirect(const double *x, double *a, double *b, double *c, double *d) {
	for (int k = 0; k < 3; k++) { a[k] += x[k]; b[k] += x[k]; c[k] += 1; d[k] += x[k]; } }`, "empty_indirect")
			check(t, r.ParLoop(indirect, empty, x.Arg(op2.Read), y.ArgMap(op2.Inc, m, 0), y.ArgMap(op2.Inc, m, 1),
				z.ArgMap(op2.Inc, m0, 0), z.ArgMap(op2.Inc, m0, 1)))
			if got := x.Data(); len(got) != 0 {
				t.Errorf("x.Data() = %v, want empty", got)
			}
			if got := must(x.Range(0, 0)); len(got) != 0 {
				t.Errorf("x.Range(0, 0) = %v, want empty", got)
			}
			x2 := must(x.Clone("x2"))
			check(t, x.CopyTo(x2))
			check(t, x2.Zero())
			if len(x2.Data()) != 0 || len(e.DataRO()) != 0 {
				t.Errorf("clones of empty Dats are not empty")
			}
			if got := y.Data(); !slices.Equal(got, iota32[float64](12)) {
				t.Errorf("y = %v, changed by loops over an empty set", got)
			}
			if got := sum.Data(); !slices.Equal(got, []float64{5, 6}) {
				t.Errorf("sum = %v, want [5 6]", got)
			}

			// A matrix with no rows: y = A x is empty, for dim-2 vectors.
			sp := must(op2.NewSparsity(empty, 2, empty, 2, []op2.MapPair{{Row: m0, Col: m0}}, "sp"))
			A := must(op2.NewMat[float64](sp, "A"))
			ax := must(op2.NewDat[float64](empty, 2, nil, "ax"))
			ay := must(op2.NewDat[float64](empty, 2, nil, "ay"))
			elem := op2.NewKernel("void empty_elem(double *A) { for (int i = 0; i < 16; i++) A[i] = 1; }", "empty_elem")
			check(t, r.ParLoop(elem, empty, A.Arg(op2.Inc, m0, m0)))
			check(t, A.Mult(ax, ay))
			if got := ay.Data(); len(got) != 0 {
				t.Errorf("A x = %v, want empty", got)
			}
		})
	}
}

// TestEmptyRankEveryLayout: on 3 ranks with an owner partition that gives
// rank 2 nothing, every backend, layout and scheme runs an indirect loop
// of dim-3 increments, a direct loop and reductions, and the gathered
// results equal the values computed here (small integers, exact in any
// order).
func TestEmptyRankEveryLayout(t *testing.T) {
	if !mpitest.InRanks() {
		mpiRun(t, 3, 3*time.Minute)
		return
	}
	defer func() { check(t, op2.Configure(op2.Config{Backend: "sequential"})) }()
	const nx, ny = 6, 5
	g := declareGrid(t, nx, ny, op2.Rank(), op2.Ranks())
	// Rows of nodes below the middle to rank 0, the rest to rank 1.
	xy := g.x.DataRO()
	own := make([]int32, g.nodes.Size())
	for i := range own {
		if xy[2*i+1] >= (ny+1)/2 {
			own[i] = 1
		}
	}
	owners := must(op2.NewDat(g.nodes, 1, own, "owners"))
	must(op2.Partition(op2.OwnerPartitioner(owners)))
	if op2.Rank() == 2 && (g.nodes.Size() != 0 || g.cells.Size() != 0) {
		t.Fatalf("rank 2 owns %d nodes and %d cells, want none", g.nodes.Size(), g.cells.Size())
	}

	// Expected: cell c adds 3c+k to component k of each of its nodes.
	want := make([]float64, 3*(nx+1)*(ny+1))
	var wantSum float64
	for c := range nx * ny {
		i, j := c%nx, c/nx
		n := j*(nx+1) + i
		for _, v := range []int{n, n + 1, n + nx + 2, n + nx + 1} {
			for k := range 3 {
				want[3*v+k] += float64(3*c + k)
			}
		}
		wantSum += 4 * float64(3*c)
	}
	for v := range want {
		want[v] = 2*want[v] + 1
	}
	inc := op2.NewKernel(`void er_inc(const int *c, double *a, double *b, double *e, double *d, double *s) {
	for (int k = 0; k < 3; k++) { a[k] += 3 * c[0] + k; b[k] += 3 * c[0] + k; e[k] += 3 * c[0] + k; d[k] += 3 * c[0] + k; }
	s[0] += 4 * 3 * c[0]; }`, "er_inc")
	scale := op2.NewKernel("void er_scale(double *x, double *m) { for (int k = 0; k < 3; k++) { x[k] = 2 * x[k] + 1; if (x[k] > m[k]) m[k] = x[k]; } }", "er_scale")
	for _, cfg := range emptyDataConfigs() {
		name := fmt.Sprintf("%s-%s%s-%s", cfg.Backend, cfg.OpenMPScheme, cfg.DeviceScheme, cfg.DeviceLayout)
		check(t, op2.Configure(cfg))
		a := must(op2.NewDat[float64](g.nodes, 3, nil, "a"))
		sum := must(op2.NewGlobal[float64](1, nil, "sum"))
		big := must(op2.NewGlobal[float64](3, nil, "big"))
		check(t, op2.ParLoop(inc, g.cells, op2.ArgIdx(), a.ArgMap(op2.Inc, g.pcell, 0), a.ArgMap(op2.Inc, g.pcell, 1),
			a.ArgMap(op2.Inc, g.pcell, 2), a.ArgMap(op2.Inc, g.pcell, 3), sum.Arg(op2.Inc)))
		check(t, op2.ParLoop(scale, g.nodes, a.Arg(op2.RW), big.Arg(op2.Max)))
		got := must(a.Gather())
		if s := sum.Value(); s != wantSum {
			t.Errorf("rank %d, %s: sum = %v, want %v", op2.Rank(), name, s, wantSum)
		}
		if m := big.Data(); m[2] != slices.Max(want) {
			t.Errorf("rank %d, %s: max = %v, want %v in the last", op2.Rank(), name, m, slices.Max(want))
		}
		if op2.Rank() == 0 && !slices.Equal(got, want) {
			t.Errorf("%s: gathered\n%v\nwant\n%v", name, got, want)
		}
	}
	check(t, op2.Finalize())
}
