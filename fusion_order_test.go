package op2_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// TestDeviceFusionKeepsOrder: on a device backend, lazy mode fuses a
// loop whose results depend on the order of their terms (a sum into a
// float Global, increments through a map) only where the fused loop
// combines them as the loop alone does: both direct, or run by plans
// that order the elements alike. The results are then eager's bit for
// bit. A direct loop summing into a Global does not fuse with a loop
// that reads through a map in the staged scheme (the fused loop would run
// by blocks), but does in the atomics scheme (cuda's default), which runs
// such a loop without a plan; it fuses with another direct loop; a loop
// incrementing through a map fuses with a direct loop that adds nothing
// to its plan. The staged scheme elsewhere: atomic increments add up in
// another order from run to run.
func TestDeviceFusionKeepsOrder(t *testing.T) {
	defer op2.SetBuilds(op2.BuildAtOnce)()
	nn, ne := 3000, 9000
	nodes := must(op2.NewSet(nn, "nodes"))
	edges := must(op2.NewSet(ne, "edges"))
	rng := rand.New(rand.NewPCG(5, 5))
	tab := make([]int32, 2*ne)
	for i := range tab {
		tab[i] = int32(rng.IntN(nn))
	}
	e2n := must(op2.NewMap(edges, nodes, 2, tab, "e2n"))
	x0 := make([]float64, ne)
	for i := range x0 {
		x0[i] = rng.Float64()*2 - 0.7
	}
	sum := op2.NewKernel("void fo_sum(const double *x, double *g) { *g += x[0] / (1.5 + x[0] * x[0]); }", "fo_sum")
	scale := op2.NewKernel("void fo_scale(const double *x, double *y) { y[0] = x[0] * 0.75 + 0.125; }", "fo_scale")
	gather := op2.NewKernel("void fo_gather(const double *a, const double *b, double *y) { y[0] = a[0] * 0.5 + b[0] * 0.25; }", "fo_gather")
	spread := op2.NewKernel("void fo_spread(const double *x, double *a, double *b) { a[0] += x[0] * 0.3; b[0] += x[0] / (2.0 + x[0]); }", "fo_spread")
	type loops func(x, y, n *op2.Dat[float64], g *op2.Global[float64]) error
	directSumThenGather := func(r *op2.Runtime) loops {
		return func(x, y, n *op2.Dat[float64], g *op2.Global[float64]) error {
			if err := r.ParLoop(sum, edges, x.Arg(op2.Read), g.Arg(op2.Inc)); err != nil {
				return err
			}
			return r.ParLoop(gather, edges, n.ArgMap(op2.Read, e2n, 0), n.ArgMap(op2.Read, e2n, 1), y.Arg(op2.Write))
		}
	}
	cases := []struct {
		name   string
		scheme string // Config.DeviceScheme
		fused  bool
		run    func(r *op2.Runtime) loops
	}{
		{"a direct sum, then a read through a map", "staged", false, directSumThenGather},
		// Run without a plan, as a direct loop is.
		{"a direct sum, then a read through a map, atomics scheme", "atomics", true, directSumThenGather},
		{"a direct sum, then a direct loop", "staged", true, func(r *op2.Runtime) loops {
			return func(x, y, n *op2.Dat[float64], g *op2.Global[float64]) error {
				if err := r.ParLoop(sum, edges, x.Arg(op2.Read), g.Arg(op2.Inc)); err != nil {
					return err
				}
				return r.ParLoop(scale, edges, x.Arg(op2.Read), y.Arg(op2.Write))
			}
		}},
		{"increments through a map, then a direct loop", "staged", true, func(r *op2.Runtime) loops {
			return func(x, y, n *op2.Dat[float64], g *op2.Global[float64]) error {
				if err := r.ParLoop(spread, edges, x.Arg(op2.Read), n.ArgMap(op2.Inc, e2n, 0), n.ArgMap(op2.Inc, e2n, 1)); err != nil {
					return err
				}
				return r.ParLoop(scale, edges, x.Arg(op2.Read), y.Arg(op2.Write))
			}
		}},
	}
	for _, backend := range deviceBackends {
		t.Run(backend, func(t *testing.T) {
			needBackend(t, backend)
			for _, c := range cases {
				run := func(cfg op2.Config) ([]uint64, []string) {
					cfg.Backend, cfg.Timing, cfg.DeviceScheme = backend, true, c.scheme
					r := closeAtEnd(t, must(op2.NewRuntime(cfg)))
					x := must(op2.NewDat(edges, 1, slices.Clone(x0), "x"))
					y := must(op2.NewDat[float64](edges, 1, nil, "y"))
					n := must(op2.NewDat[float64](nodes, 1, nil, "n"))
					g := must(op2.NewGlobal[float64](1, nil, "g"))
					body := c.run(r)
					for range 3 {
						check(t, body(x, y, n, g))
					}
					bits := []uint64{math.Float64bits(g.Value())}
					for _, d := range []*op2.Dat[float64]{y, n} {
						for _, v := range d.DataRO() {
							bits = append(bits, math.Float64bits(v))
						}
					}
					var names []string
					for _, lt := range r.Timings() {
						names = append(names, lt.Kernel)
					}
					return bits, names
				}
				want, _ := run(op2.Config{}.Explicit("Lazy"))
				got, names := run(op2.Config{Lazy: true})
				fused := slices.ContainsFunc(names, func(k string) bool { return strings.HasPrefix(k, "fused_") })
				if fused != c.fused {
					t.Errorf("%s: fused %v, want %v (loops run: %v)", c.name, fused, c.fused, names)
				}
				for i := range got {
					if got[i] != want[i] {
						t.Errorf("%s (loops run: %v): value %d of the Global, y and n is %v, eager %v", c.name, names, i, math.Float64frombits(got[i]), math.Float64frombits(want[i]))
						break
					}
				}
			}
		})
	}
}
