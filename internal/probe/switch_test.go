package probe_test

import (
	"slices"
	"testing"

	"github.com/goop2/op2"
)

func cfg(t *testing.T, backend, scheme string) {
	t.Helper()
	check(t, op2.Configure(op2.Config{Backend: backend, DeviceScheme: scheme, CacheDir: cacheDir, Threads: 2}))
}

// Utilities and loops across backend switches: device loop, then host loop, then utilities.
func TestUtilitiesAcrossBackendSwitch(t *testing.T) {
	defer cfg(t, "sequential", "")
	n := 50
	s := must(op2.NewSet(n, "s"))
	init := make([]float64, n)
	for i := range init {
		init[i] = float64(i)
	}
	x := must(op2.NewDat(s, 1, slices.Clone(init), "x"))
	y := must(op2.NewDat[float64](s, 1, nil, "y"))
	g := must(op2.NewGlobal(1, []float64{0}, "g"))
	sum := func(d *op2.Dat[float64]) float64 {
		g.SetValue(0)
		check(t, op2.ParLoop(kSum, s, d.Arg(op2.Read), g.Arg(op2.Inc)))
		return g.Value()
	}
	cfg(t, "opencl", "staged")
	check(t, op2.ParLoop(kScale, s, x.Arg(op2.RW))) // 2i+1 on device
	cfg(t, "sequential", "")
	if got, want := sum(x), float64(n*n); got != want {
		t.Errorf("host loop after device loop: %v, want %v", got, want)
	}
	check(t, op2.ParLoop(kScale, s, x.Arg(op2.RW))) // 4i+3 on host
	cfg(t, "opencl", "staged")
	if got, want := sum(x), float64(2*n*(n-1)+3*n); got != want {
		t.Errorf("device loop after host loop: %v, want %v", got, want)
	}
	check(t, op2.ParLoop(kScale, s, x.Arg(op2.RW))) // 8i+7 on device
	cfg(t, "sequential", "")
	check(t, x.Zero())
	cfg(t, "opencl", "staged")
	if got := sum(x); got != 0 {
		t.Errorf("device loop after host Zero: %v, want 0", got)
	}
	d := x.Data()
	for i := range d {
		d[i] = 1
	}
	check(t, op2.ParLoop(kScale, s, x.Arg(op2.RW))) // 3 on device
	cfg(t, "sequential", "")
	check(t, x.CopyTo(y))
	if got, want := sum(y), float64(3*n); got != want {
		t.Errorf("CopyTo of a device dat under sequential: %v, want %v", got, want)
	}
	r, err := x.Range(0, 2)
	if err != nil || !slices.Equal(r, []float64{3, 3}) {
		t.Errorf("Range: %v %v", r, err)
	}
}

// Reconfiguring opencl (staged -> atomics -> staged) with dats whose current values are on the device.
func TestDeviceDatsAcrossReconfigure(t *testing.T) {
	defer cfg(t, "sequential", "")
	nodes, edges, pedge := ring(t, 64)
	w := must(op2.NewDat(edges, 1, slices.Repeat([]float64{1}, 64), "w"))
	acc := must(op2.NewDat[float64](nodes, 1, nil, "acc"))
	k := op2.NewKernel(`void rinc(const double *w, double *a, double *b) { *a += *w; *b += *w; }`, "rinc")
	for i, sch := range []string{"staged", "atomics", "staged", "atomics"} {
		cfg(t, "opencl", sch)
		check(t, op2.ParLoop(k, edges, w.Arg(op2.Read), acc.ArgMap(op2.Inc, pedge, 0), acc.ArgMap(op2.Inc, pedge, 1)))
		check(t, op2.ParLoop(kScale, edges, w.Arg(op2.RW)))
		_ = i
	}
	// w: 1 -> 3 -> 7 -> 15 -> 31; acc += 2*w before each scale: 2*(1+3+7+15) = 52
	if got := acc.DataRO(); got[0] != 52 || got[63] != 52 {
		t.Errorf("acc %v, want 52 everywhere", got[:4])
	}
	if got := w.DataRO(); got[0] != 31 {
		t.Errorf("w %v, want 31", got[:4])
	}
}

// Two runtimes on opencl sharing a dat.
func TestDatSharedBetweenRuntimes(t *testing.T) {
	r1 := must(op2.NewRuntime(op2.Config{Backend: "opencl", CacheDir: cacheDir}))
	r2 := must(op2.NewRuntime(op2.Config{Backend: "opencl", DeviceScheme: "atomics", CacheDir: cacheDir}))
	r3 := must(op2.NewRuntime(op2.Config{Backend: "sequential", CacheDir: cacheDir}))
	s := must(op2.NewSet(10, "s"))
	x := must(op2.NewDat(s, 1, make([]float64, 10), "x"))
	check(t, r1.ParLoop(kScale, s, x.Arg(op2.RW))) // 1
	check(t, r2.ParLoop(kScale, s, x.Arg(op2.RW))) // 3
	check(t, r3.ParLoop(kScale, s, x.Arg(op2.RW))) // 7
	check(t, r1.ParLoop(kScale, s, x.Arg(op2.RW))) // 15
	check(t, x.Zero())
	check(t, r2.ParLoop(kScale, s, x.Arg(op2.RW))) // 1
	if got := x.DataRO(); got[0] != 1 || got[9] != 1 {
		t.Errorf("x = %v, want 1", got)
	}
}
