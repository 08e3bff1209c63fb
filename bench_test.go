package op2_test

import (
	"testing"

	"github.com/goop2/op2"
)

// BenchmarkParLoopOverhead measures the host cost of one cached par_loop on
// a one-element set: validation, cache lookup, argument binding and the call
// into the compiled wrapper (on opencl: the kernel launch, and reading back
// the reduction's partial result).
func BenchmarkParLoopOverhead(b *testing.B) {
	for _, backend := range allBackends {
		b.Run(backend, func(b *testing.B) {
			check(b, op2.Use(backend))
			defer op2.Use("sequential")
			set := must(op2.NewSet(1, "one"))
			x := must(op2.NewDat[float64](set, 1, nil, "x"))
			g := must(op2.NewGlobal[float64](1, nil, "g"))
			k := op2.NewKernel("void k(double *x, double *g) { *x += 1; *g += *x; }", "k")
			check(b, op2.ParLoop(k, set, x.Arg(op2.RW), g.Arg(op2.Inc)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := op2.ParLoop(k, set, x.Arg(op2.RW), g.Arg(op2.Inc)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParLoopOverheadConsts is BenchmarkParLoopOverhead for a kernel
// that uses a few constants (a scalar and two arrays): every loop starts
// from their declared values, and a cached loop still allocates nothing.
func BenchmarkParLoopOverheadConsts(b *testing.B) {
	dt := must(op2.NewConst(1, []float64{0.5}, "bench_dt"))
	gam := must(op2.NewConst(3, []float64{1.4, 0.4, 2.5}, "bench_gam"))
	idx := must(op2.NewConst(4, []int32{0, 1, 2, 3}, "bench_idx"))
	defer dt.Remove()
	defer gam.Remove()
	defer idx.Remove()
	for _, backend := range allBackends {
		b.Run(backend, func(b *testing.B) {
			check(b, op2.Use(backend))
			defer op2.Use("sequential")
			set := must(op2.NewSet(1, "one"))
			x := must(op2.NewDat[float64](set, 1, nil, "x"))
			g := must(op2.NewGlobal[float64](1, nil, "g"))
			k := op2.NewKernel("void kc(double *x, double *g) { *x += bench_dt * bench_gam[bench_idx[1]]; *g += *x; }", "kc")
			check(b, op2.ParLoop(k, set, x.Arg(op2.RW), g.Arg(op2.Inc)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := op2.ParLoop(k, set, x.Arg(op2.RW), g.Arg(op2.Inc)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkExtrudedPrisms times loops over an extruded set of prisms (a
// 100 × 100 grid of squares cut into triangles, 64 layers: 1 280 000
// prisms), sequential, with the scalar code (SIMD off) and the defaults
// (a column's layers in lanes), ns per prism. Kernel "light": each
// prism's volume from its base triangle's coordinates and its bottom and
// top heights, written per prism, added to its six nodes through an
// extruded map and summed; "heavy": the same with the lengths of its
// slanted edges (three square roots and divisions) in the volume.
//
//	go test -run '^$' -bench ExtrudedPrisms -count 3 .
func BenchmarkExtrudedPrisms(b *testing.B) {
	const nx, nz = 100, 64
	const light = `void prism(const double **xy, const double *zb, const double *zt, double *vol, double **mass, double *total) {
  double a = 0.5 * fabs((xy[1][0] - xy[0][0]) * (xy[2][1] - xy[0][1]) - (xy[2][0] - xy[0][0]) * (xy[1][1] - xy[0][1]));
  double v = a * (zt[0] - zb[0]);
  vol[0] = v;
  for (int i = 0; i < 6; i++) mass[i][0] += v / 6;
  *total += v;
}`
	const heavy = `void prism(const double **xy, const double *zb, const double *zt, double *vol, double **mass, double *total) {
  double h = zt[0] - zb[0], q = 0, p = 0;
  for (int i = 0; i < 3; i++) {
    double dx = xy[(i + 1) % 3][0] - xy[i][0], dy = xy[(i + 1) % 3][1] - xy[i][1];
    double e = sqrt(dx * dx + dy * dy + h * h);
    p += e; q += h / e;
  }
  double a = 0.5 * fabs((xy[1][0] - xy[0][0]) * (xy[2][1] - xy[0][1]) - (xy[2][0] - xy[0][0]) * (xy[1][1] - xy[0][1]));
  double v = a * h * q / p;
  vol[0] = v;
  for (int i = 0; i < 6; i++) mass[i][0] += v / (1.0 + q);
  *total += v;
}`
	defer op2.Configure(op2.Config{})
	for _, kernel := range []struct{ name, src string }{{"light", light}, {"heavy", heavy}} {
		for _, simd := range []string{"off", "auto"} {
			b.Run(kernel.name+"/"+simd, func(b *testing.B) {
				check(b, op2.Configure(op2.Config{Backend: "sequential", SIMD: simd}))
				benchPrisms(b, nx, nz, op2.NewKernel(kernel.src, "prism"))
			})
		}
	}
}

// benchPrisms runs BenchmarkExtrudedPrisms's loop with kernel k on an
// nx × nx grid of squares, each cut into two triangles, extruded into nz
// layers.
func benchPrisms(b *testing.B, nx, nz int, k *op2.Kernel) {
	nn := (nx + 1) * (nx + 1)
	xy := make([]float64, 0, 2*nn)
	for j := 0; j <= nx; j++ {
		for i := 0; i <= nx; i++ {
			xy = append(xy, float64(i), float64(j)+0.01*float64(i%7))
		}
	}
	var tri, six []int32
	node := func(i, j int) int32 { return int32(j*(nx+1) + i) }
	for j := 0; j < nx; j++ {
		for i := 0; i < nx; i++ {
			for _, t := range [][3]int32{{node(i, j), node(i+1, j), node(i+1, j+1)}, {node(i, j), node(i+1, j+1), node(i, j+1)}} {
				tri = append(tri, t[:]...)
				six = append(six, t[0], t[1], t[2], t[0], t[1], t[2])
			}
		}
	}
	ntri := len(tri) / 3
	triangles := must(op2.NewSet(ntri, "triangles"))
	nodes2 := must(op2.NewSet(nn, "nodes2"))
	triMap := must(op2.NewMap(triangles, nodes2, 3, tri, "tri"))
	triSix := must(op2.NewMap(triangles, nodes2, 6, six, "trisix"))
	prisms := must(op2.NewExtrudedSet(triangles, nz, "prisms"))
	nodes := must(op2.NewExtrudedSet(nodes2, nz+1, "nodes"))
	pnodes := must(op2.NewExtrudedMap(prisms, nodes, triSix, []int{0, 0, 0, 1, 1, 1}, []int{1, 1, 1, 1, 1, 1}, "pnodes"))
	pxy := must(op2.NewExtrudedMap(prisms, nil, triMap, nil, nil, "pxy"))
	z := make([]float64, nn*(nz+1))
	for n := 0; n < nn; n++ {
		for k := 0; k <= nz; k++ {
			z[n*(nz+1)+k] = float64(k) * (1 + 0.001*float64(n%13))
		}
	}
	xyDat := must(op2.NewDat(nodes2, 2, xy, "xy"))
	zDat := must(op2.NewExtrudedDat(nodes, 1, z, "z"))
	vol := must(op2.NewExtrudedDat[float64](prisms, 1, nil, "vol"))
	mass := must(op2.NewExtrudedDat[float64](nodes, 1, nil, "mass"))
	total := must(op2.NewGlobal(1, []float64{0}, "total"))
	loop := func() error {
		return op2.ParLoop(k, prisms, xyDat.ArgExtVec(op2.Read, pxy), zDat.ArgExtMap(op2.Read, pnodes, 0), zDat.ArgExtMap(op2.Read, pnodes, 3),
			vol.Arg(op2.Write), mass.ArgExtVec(op2.Inc, pnodes), total.Arg(op2.Inc))
	}
	check(b, loop())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := loop(); err != nil {
			b.Fatal(err)
		}
		check(b, op2.Wait()) // lazy mode (the default) would only record it
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(ntri*nz), "ns/prism")
}

// BenchmarkRWThroughMap times a loop that reads and writes four values
// through a map (RW): each element turns its target's conserved
// variables into bounded primitive ones (four divisions and a square
// root),
// 1 000 000 elements, sequential, with the scalar code (SIMD off), the
// defaults and 8 lanes. Map "swap" reaches element i^1: one target per
// element, so no chunk of lanes has two elements on one target; map
// "pairs" reaches i/2, so every chunk has, and runs its elements with
// the scalar code after the test. ns per element.
//
//	go test -run '^$' -bench RWThroughMap -count 3 .
func BenchmarkRWThroughMap(b *testing.B) {
	const n = 1000000
	k := `void prim(double *q) {
  double r = q[0], u = q[1] / r, v = q[2] / r;
  double p = 0.4 * fabs(q[3] - 0.5 * r * (u * u + v * v));
  q[0] = 1.0 + 0.5 * sqrt(1.4 * p / r); q[1] = 0.5 * u; q[2] = 0.5 * v; q[3] = 1.0 + p / (1.0 + p);
}`
	defer op2.Configure(op2.Config{})
	for _, shape := range []string{"swap", "pairs"} {
		for _, simd := range []string{"off", "auto", "8"} {
			b.Run(shape+"/"+simd, func(b *testing.B) {
				check(b, op2.Configure(op2.Config{Backend: "sequential", SIMD: simd}))
				elems := must(op2.NewSet(n, "elems"))
				targets := must(op2.NewSet(n, "targets"))
				tab := make([]int32, n)
				for i := range tab {
					if shape == "swap" {
						tab[i] = int32(i ^ 1)
					} else {
						tab[i] = int32(i / 2)
					}
				}
				m := must(op2.NewMap(elems, targets, 1, tab, "m"))
				init := make([]float64, 4*n)
				for i := range init {
					init[i] = 1 + float64(i%7)/8
				}
				q := must(op2.NewDat(targets, 4, init, "q"))
				kernel := op2.NewKernel(k, "prim")
				check(b, op2.ParLoop(kernel, elems, q.ArgMap(op2.RW, m, 0)))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := op2.ParLoop(kernel, elems, q.ArgMap(op2.RW, m, 0)); err != nil {
						b.Fatal(err)
					}
					check(b, op2.Wait()) // lazy mode (the default) would only record it
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/elem")
			})
		}
	}
}

// BenchmarkMathLanes: a direct loop whose kernel calls exp, pow and cbrt
// besides divisions and a square root (a reaction rate and a state),
// with the scalar code (SIMD off) and under SIMD auto, where its lanes
// call the math functions through SIMD clones (hostc.mathClones) and run
// the rest on vectors.
func BenchmarkMathLanes(b *testing.B) {
	const n = 1000000
	k := `#include <math.h>
void rate(const double *q, const double *T, double *w) {
  double r = q[0], u = q[1] / r, v = q[2] / r;
  double p = 0.4 * fabs(q[3] - 0.5 * r * (u * u + v * v));
  double k = 1.5e6 * exp(-8000.0 / *T) * pow(*T / 300.0, 0.7);
  w[0] = k * r / (1.0 + sqrt(p));
  w[1] = cbrt(p / r);
}`
	defer op2.Configure(op2.Config{})
	for _, simd := range []string{"off", "auto"} {
		b.Run(simd, func(b *testing.B) {
			check(b, op2.Configure(op2.Config{Backend: "sequential", SIMD: simd}))
			elems := must(op2.NewSet(n, "elems"))
			q0, t0 := make([]float64, 4*n), make([]float64, n)
			for i := range n {
				q0[4*i], q0[4*i+1], q0[4*i+2], q0[4*i+3] = 1+float64(i%7)/8, 0.1, -0.2, 2.5+float64(i%5)/4
				t0[i] = 300 + float64(i%1000)
			}
			q := must(op2.NewDat(elems, 4, q0, "q"))
			T := must(op2.NewDat(elems, 1, t0, "T"))
			w := must(op2.NewDat[float64](elems, 2, nil, "w"))
			kernel := op2.NewKernel(k, "rate")
			check(b, op2.ParLoop(kernel, elems, q.Arg(op2.Read), T.Arg(op2.Read), w.Arg(op2.Write)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := op2.ParLoop(kernel, elems, q.Arg(op2.Read), T.Arg(op2.Read), w.Arg(op2.Write)); err != nil {
					b.Fatal(err)
				}
				check(b, op2.Wait()) // lazy mode (the default) would only record it
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/elem")
		})
	}
}
