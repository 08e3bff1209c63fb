package probe_test

import (
	"slices"
	"testing"

	op2 "github.com/goop2/op2"
)

// Issue 37, item 1: empty Dats of dim > 1 on the device backends in the
// soa layout. These probes go beyond the fix's tests: extruded sets,
// views, subsets, mixed dats, Global reductions of dim 3, recorded chains
// (fusion, tiling) and copies between runtimes of different backends.

// emptyConfigs are the configurations the empty-set probes run:
// the host backends, and opencl in both layouts and schemes.
func emptyConfigs(t *testing.T) []op2.Config {
	cfgs := []op2.Config{{Backend: "sequential"}, {Backend: "openmp", Threads: 2, OpenMPScheme: "owner"}}
	if haveOpenCL() {
		cfgs = append(cfgs,
			op2.Config{Backend: "opencl", DeviceLayout: "soa", DeviceScheme: "staged"},
			op2.Config{Backend: "opencl", DeviceLayout: "soa", DeviceScheme: "atomics", Check: true},
			op2.Config{Backend: "opencl", DeviceLayout: "aos", DeviceScheme: "staged"})
	}
	return cfgs
}

func eachEmpty(t *testing.T, f func(t *testing.T, r *op2.Runtime)) {
	for _, cfg := range emptyConfigs(t) {
		cfg.CacheDir = cacheDir
		t.Run(cfgName(cfg), func(t *testing.T) { f(t, must(op2.NewRuntime(cfg))) })
	}
}

// TestEmptyExtruded: an extruded set over an empty base set, with
// dim-3 extruded dats read and incremented through an extruded map, a
// dim-3 Global incremented and a dim-3 Min and Max: nothing changes.
func TestEmptyExtruded(t *testing.T) {
	eachEmpty(t, func(t *testing.T, r *op2.Runtime) {
		cells := must(op2.NewSet(0, "cells"))
		nodes := must(op2.NewSet(0, "nodes"))
		cn := must(op2.NewMap(cells, nodes, 2, nil, "cn"))
		prisms := must(op2.NewExtrudedSet(cells, 3, "prisms"))
		columns := must(op2.NewExtrudedSet(nodes, 4, "columns"))
		pc := must(op2.NewExtrudedMap(prisms, columns, cn, nil, []int{1, 1}, "pc"))
		v := must(op2.NewExtrudedDat[float64](prisms, 3, nil, "v"))
		w := must(op2.NewExtrudedDat[float64](columns, 3, nil, "w"))
		g := must(op2.NewGlobal(3, []float64{1, 2, 3}, "g"))
		lo := must(op2.NewGlobal(3, []float64{7, 8, 9}, "lo"))
		hi := must(op2.NewGlobal(3, []float64{-7, -8, -9}, "hi"))
		k := op2.NewKernel(`void p37ext(const int *l, const double *v, double *a, double *b, double *g, double *lo, double *hi) {
  for (int i = 0; i < 3; i++) { a[i] += v[i] + *l; b[i] += 1; g[i] += v[i]; if (v[i] < lo[i]) lo[i] = v[i]; if (v[i] > hi[i]) hi[i] = v[i]; } }`, "p37ext")
		check(t, r.ParLoop(k, prisms, op2.ArgLayer(), v.Arg(op2.Read), w.ArgExtMap(op2.Inc, pc, 0), w.ArgExtMap(op2.Inc, pc, 1),
			g.Arg(op2.Inc), lo.Arg(op2.Min), hi.Arg(op2.Max)))
		if len(v.DataRO()) != 0 || len(w.DataRO()) != 0 {
			t.Errorf("empty extruded dats not empty: %v %v", v.DataRO(), w.DataRO())
		}
		if !slices.Equal(g.Data(), []float64{1, 2, 3}) || !slices.Equal(lo.Data(), []float64{7, 8, 9}) || !slices.Equal(hi.Data(), []float64{-7, -8, -9}) {
			t.Errorf("globals changed: %v %v %v", g.Data(), lo.Data(), hi.Data())
		}
	})
}

// TestEmptyViewsSubsetsMixed: views of a dim-3 Dat on an empty
// set, a loop over an empty subset of a non-empty set with dim-3 dats
// (in soa), and a mixed dat with an empty block.
func TestEmptyViewsSubsetsMixed(t *testing.T) {
	eachEmpty(t, func(t *testing.T, r *op2.Runtime) {
		empty := must(op2.NewSet(0, "empty"))
		x := must(op2.NewDat[float64](empty, 3, nil, "x"))
		view := must(x.View(2))
		g := must(op2.NewGlobal(3, []float64{1, 1, 1}, "g"))
		kv := op2.NewKernel("void p37view(double *c, double *g) { *c = 4; g[2] += *c; }", "p37view")
		check(t, r.ParLoop(kv, empty, view.Arg(op2.Write), g.Arg(op2.Inc)))
		if len(view.DataRO()) != 0 {
			t.Errorf("view of an empty dat: %v", view.DataRO())
		}

		// An empty subset of 5 nodes: nothing changes.
		nodes := must(op2.NewSet(5, "nodes"))
		y := must(op2.NewDat(nodes, 3, iota32[float64](15), "y"))
		sub := must(op2.NewSubset(nodes, []int32{}))
		ks := op2.NewKernel("void p37sub(double *y, double *g) { for (int i = 0; i < 3; i++) { y[i] = -1; g[i] += 1; } }", "p37sub")
		check(t, r.ParLoop(ks, sub, y.Arg(op2.RW), g.Arg(op2.Inc)))
		if !slices.Equal(y.DataRO(), iota32[float64](15)) || !slices.Equal(g.Data(), []float64{1, 1, 1}) {
			t.Errorf("loop over an empty subset changed y = %v, g = %v", y.DataRO(), g.Data())
		}
		// A view of y over a subset of 2 elements writes component 1.
		sub2 := must(op2.NewSubset(nodes, []int32{1, 3}))
		yv := must(y.View(1))
		kw := op2.NewKernel("void p37vw(double *c) { *c = -5; }", "p37vw")
		check(t, r.ParLoop(kw, sub2, yv.Arg(op2.Write)))
		want := iota32[float64](15)
		want[3*1+1], want[3*3+1] = -5, -5
		if got := y.DataRO(); !slices.Equal(got, want) {
			t.Errorf("view through a subset: y = %v, want %v", got, want)
		}

		// A mixed set whose first block is empty.
		cells := must(op2.NewSet(2, "cells"))
		space := must(op2.NewMixedSet([]*op2.Set{empty, cells}, "space"))
		md := must(op2.NewMixedDat(space, []int{3, 2}, []float64{1, 2, 3, 4}, "md"))
		sum := must(op2.NewGlobal[float64](1, nil, "sum"))
		km := op2.NewKernel("void p37mix(double *v, double *s) { v[0] *= 2; s[0] += v[0]; }", "p37mix")
		check(t, r.ParLoop(km, space, md.Arg(op2.RW), sum.Arg(op2.Inc)))
		got := md.DataRO()
		if len(got[0]) != 0 || !slices.Equal(got[1], []float64{2, 2, 6, 4}) || sum.Value() != 8 {
			t.Errorf("mixed dat with an empty block: %v, sum %v; want [[] [2 2 6 4]], sum 8", got, sum.Value())
		}
	})
}

// TestEmptyChains: a recorded chain (Lazy) of loops over an empty
// set with dim-3 dats, fused ("on") and tiled (Tile 4) on the host, and
// recorded on opencl in soa; then Zero and CopyTo between runtimes of two
// backends.
func TestEmptyChains(t *testing.T) {
	cfgs := []op2.Config{
		{Backend: "sequential", Lazy: true, Fusion: "on"},
		{Backend: "openmp", Threads: 2, Lazy: true, Fusion: "on", Tile: 4},
		{Backend: "sequential", Lazy: true, Fusion: "off", Tile: 4},
	}
	if haveOpenCL() {
		cfgs = append(cfgs, op2.Config{Backend: "opencl", DeviceLayout: "soa", Lazy: true, Fusion: "on"})
	}
	for _, cfg := range cfgs {
		cfg.CacheDir = cacheDir
		t.Run(cfgName(cfg)+"-tile"+string(rune('0'+cfg.Tile)), func(t *testing.T) {
			r := must(op2.NewRuntime(cfg))
			empty := must(op2.NewSet(0, "empty"))
			nodes := must(op2.NewSet(3, "nodes"))
			m := must(op2.NewMap(empty, nodes, 2, nil, "m"))
			a := must(op2.NewDat[float64](empty, 3, nil, "a"))
			b := must(op2.NewDat[float64](empty, 3, nil, "b"))
			n := must(op2.NewDat(nodes, 3, iota32[float64](9), "n"))
			g := must(op2.NewGlobal(3, []float64{1, 2, 3}, "g"))
			k1 := op2.NewKernel("void p37c1(double *a) { for (int i = 0; i < 3; i++) a[i] = i; }", "p37c1")
			k2 := op2.NewKernel("void p37c2(const double *a, double *b, double *g) { for (int i = 0; i < 3; i++) { b[i] = 2 * a[i]; g[i] += b[i]; } }", "p37c2")
			k3 := op2.NewKernel("void p37c3(const double *b, double *n0, double *n1) { for (int i = 0; i < 3; i++) { n0[i] += b[i]; n1[i] += 1; } }", "p37c3")
			check(t, r.ParLoop(k1, empty, a.Arg(op2.Write)))
			check(t, r.ParLoop(k2, empty, a.Arg(op2.Read), b.Arg(op2.Write), g.Arg(op2.Inc)))
			check(t, r.ParLoop(k3, empty, b.Arg(op2.Read), n.ArgMap(op2.Inc, m, 0), n.ArgMap(op2.Inc, m, 1)))
			check(t, r.Wait())
			if !slices.Equal(g.Data(), []float64{1, 2, 3}) || !slices.Equal(n.DataRO(), iota32[float64](9)) {
				t.Errorf("chain over an empty set changed g = %v, n = %v", g.Data(), n.DataRO())
			}
			// Copies between runtimes: the empty dats of this one
			// onto dats used by a sequential runtime.
			seq := must(op2.NewRuntime(op2.Config{Backend: "sequential", CacheDir: cacheDir}))
			c := must(op2.NewDat[float64](empty, 3, nil, "c"))
			check(t, seq.ParLoop(k1, empty, c.Arg(op2.Write)))
			check(t, b.CopyTo(c))
			check(t, c.CopyTo(a))
			check(t, a.Zero())
			check(t, r.ParLoop(k2, empty, c.Arg(op2.Read), b.Arg(op2.Write), g.Arg(op2.Inc)))
			check(t, r.Wait())
			if len(a.DataRO())+len(b.DataRO())+len(c.DataRO()) != 0 {
				t.Errorf("empty dats not empty")
			}
		})
	}
}
