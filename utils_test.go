package op2_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// TestDatUtilities: Zero, CopyTo, DataWO and Range give the same values on
// every backend, whichever copy is current when they are called.
func TestDatUtilities(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		const n = 300
		set := must(op2.NewSet(n, "s"))
		x := must(op2.NewDat(set, 2, iota32[float64](2*n), "x"))
		y := must(op2.NewDat[float64](set, 2, nil, "y"))
		z := must(op2.NewDat(set, 2, iota32[float64](2*n), "z"))
		twice := op2.NewKernel("void twice(double *x) { x[0] *= 2; x[1] *= 2; }", "twice")
		check(t, op2.ParLoop(twice, set, x.Arg(op2.RW)))

		// Range: the values of a few elements, from wherever they are.
		got := must(x.Range(10, 3))
		if want := []float64{40, 42, 44, 46, 48, 50}; !slices.Equal(got, want) {
			t.Errorf("Range(10, 3) = %v, want %v", got, want)
		}
		if got := must(x.Range(n, 0)); len(got) != 0 {
			t.Errorf("empty range at the end = %v", got)
		}
		if got := must(y.Range(5, 1)); !slices.Equal(got, []float64{0, 0}) {
			t.Errorf("Range of a dat declared without values = %v, want zeros", got)
		}

		// CopyTo, then a loop on the copy: the source is unchanged.
		check(t, x.CopyTo(y))
		check(t, op2.ParLoop(twice, set, y.Arg(op2.RW)))
		for i, v := range y.DataRO() {
			if v != float64(4*i) {
				t.Fatalf("copy after a loop: y[%d] = %v, want %v", i, v, 4*i)
			}
		}
		for i, v := range x.DataRO() {
			if v != float64(2*i) {
				t.Fatalf("source after copying: x[%d] = %v, want %v", i, v, 2*i)
			}
		}
		check(t, x.CopyTo(x))

		// Zero, after a loop and after host access; a loop then sees zeros.
		check(t, op2.ParLoop(twice, set, z.Arg(op2.RW)))
		check(t, z.Zero())
		inc := op2.NewKernel("void inc(double *x) { x[0] += 1; x[1] += 2; }", "inc")
		check(t, op2.ParLoop(inc, set, z.Arg(op2.RW)))
		for e := 0; e < n; e++ {
			if v := z.DataRO()[2*e : 2*e+2]; v[0] != 1 || v[1] != 2 {
				t.Fatalf("zeroed then incremented: z[%d] = %v, want [1 2]", e, v)
			}
		}
		z.Data()
		check(t, z.Zero())
		if slices.ContainsFunc(z.DataRO(), func(v float64) bool { return v != 0 }) {
			t.Errorf("Zero after host access left non-zero values")
		}

		// DataWO: the values written reach the next loop.
		check(t, op2.ParLoop(twice, set, y.Arg(op2.RW)))
		w := y.DataWO()
		for i := range w {
			w[i] = float64(-i)
		}
		check(t, op2.ParLoop(twice, set, y.Arg(op2.RW)))
		for i, v := range y.DataRO() {
			if v != float64(-2*i) {
				t.Fatalf("written with DataWO, then doubled: y[%d] = %v, want %v", i, v, -2*i)
			}
		}
	})
}

// TestGlobalValue: Value and SetValue of a dim-1 Global around a reduction,
// on every backend.
func TestGlobalValue(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		set := must(op2.NewSet(100, "s"))
		x := must(op2.NewDat(set, 1, iota32[int32](100), "x"))
		sum := must(op2.NewGlobal[int32](1, nil, "sum"))
		add := op2.NewKernel("void add(const int *x, int *s) { *s += *x; }", "add")
		sum.SetValue(7)
		if v := sum.Value(); v != 7 {
			t.Fatalf("Value after SetValue(7) = %v", v)
		}
		check(t, op2.ParLoop(add, set, x.Arg(op2.Read), sum.Arg(op2.Inc)))
		if v := sum.Value(); v != 7+4950 {
			t.Errorf("Value after a reduction = %v, want %v", v, 7+4950)
		}
		sum.SetValue(-1)
		check(t, op2.ParLoop(add, set, x.Arg(op2.Read), sum.Arg(op2.Inc)))
		if v := sum.Value(); v != -1+4950 {
			t.Errorf("Value after SetValue and a reduction = %v, want %v", v, -1+4950)
		}
	})
}

// TestDatUtilityErrors: misuse is refused with messages naming the objects.
func TestDatUtilityErrors(t *testing.T) {
	s := must(op2.NewSet(10, "s"))
	other := must(op2.NewSet(10, "other"))
	a := must(op2.NewDat[float64](s, 2, nil, "a"))
	b := must(op2.NewDat[float64](other, 2, nil, "b"))
	c := must(op2.NewDat[float64](s, 3, nil, "c"))
	wantErr := func(what string, err error, parts ...string) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", what)
			return
		}
		for _, p := range parts {
			if !strings.Contains(err.Error(), p) {
				t.Errorf("%s: error %q does not mention %q", what, err, p)
			}
		}
	}
	wantErr("copy to another set", a.CopyTo(b), `dat "a"`, `dat "b"`, `set "other"`, "different sets")
	wantErr("copy to another dim", a.CopyTo(c), `dat "a"`, `dat "c"`, "dims differ (2 and 3)")
	wantErr("copy to nil", a.CopyTo(nil), `dat "a"`, "nil")
	for _, r := range [][2]int{{-1, 1}, {0, 11}, {10, 1}, {5, -1}, {11, 0}} {
		_, err := a.Range(r[0], r[1])
		wantErr("Range", err, `dat "a"`, "outside the 10 owned elements")
	}

	g := must(op2.NewGlobal(2, []float64{1, 2}, "pair"))
	for name, f := range map[string]func(){"Value": func() { g.Value() }, "SetValue": func() { g.SetValue(1) }} {
		func() {
			defer func() {
				r := recover()
				msg, _ := r.(string)
				if !strings.Contains(msg, `global "pair"`) || !strings.Contains(msg, "needs dim 1") {
					t.Errorf("%s on a dim-2 global: panic %v, want one naming the global and dim 1", name, r)
				}
			}()
			f()
		}()
	}
	if !slices.Equal(g.DataRO(), []float64{1, 2}) {
		t.Errorf("refused SetValue changed the global: %v", g.DataRO())
	}
}

// TestDeviceDatUtilityStates: on a device backend Zero and CopyTo work on
// the device, DataWO downloads nothing and Range downloads only the range.
func TestDeviceDatUtilityStates(t *testing.T) {
	requireDevice(t)
	const n = 1000
	set := must(op2.NewSet(n, "s"))
	rw := op2.NewKernel("void rw(double *x) { *x += 1; }", "rw")
	onDevice := func(name string) *op2.Dat[float64] {
		x := must(op2.NewDat(set, 1, iota32[float64](n), name))
		check(t, op2.ParLoop(rw, set, x.Arg(op2.RW)))
		if x.State() != op2.Device {
			t.Fatalf("setup: %v, want DEVICE", x.State())
		}
		return x
	}
	counted := func(name string, f func(), wantUp, wantDown, wantDownBytes uint64) {
		t.Helper()
		s0 := op2.ReadStats()
		f()
		s1 := op2.ReadStats()
		up, down, downB := s1.Uploads-s0.Uploads, s1.Downloads-s0.Downloads, s1.DownloadBytes-s0.DownloadBytes
		if up != wantUp || down != wantDown || downB != wantDownBytes {
			t.Errorf("%s: %d uploads, %d downloads of %d bytes; want %d, %d of %d", name, up, down, downB, wantUp, wantDown, wantDownBytes)
		}
	}

	x := onDevice("x")
	counted("Zero on DEVICE", func() { check(t, x.Zero()) }, 0, 0, 0)
	if x.State() != op2.Device {
		t.Errorf("after Zero: %v, want DEVICE", x.State())
	}
	x.DataRO() // BOTH
	counted("Zero on BOTH", func() { check(t, x.Zero()) }, 0, 0, 0)
	if x.State() != op2.Device {
		t.Errorf("after Zero of BOTH: %v, want DEVICE", x.State())
	}
	if slices.ContainsFunc(x.DataRO(), func(v float64) bool { return v != 0 }) {
		t.Errorf("zeroed on the device, values not all zero")
	}
	h := must(op2.NewDat(set, 1, iota32[float64](n), "h"))
	counted("Zero on the host", func() { check(t, h.Zero()) }, 0, 0, 0)
	if h.State() != op2.DeviceUnallocated {
		t.Errorf("host-only dat after Zero: %v, want DEVICE_UNALLOCATED", h.State())
	}

	// CopyTo: device to a dat never on the device, and to one there.
	src := onDevice("src")
	fresh := must(op2.NewDat[float64](set, 1, nil, "fresh"))
	counted("CopyTo a new dat", func() { check(t, src.CopyTo(fresh)) }, 0, 0, 0)
	if fresh.State() != op2.Device || src.State() != op2.Device {
		t.Errorf("after CopyTo on the device: dst %v, src %v; want DEVICE, DEVICE", fresh.State(), src.State())
	}
	there := onDevice("there")
	there.DataRO() // BOTH
	counted("CopyTo a dat on the device", func() { check(t, src.CopyTo(there)) }, 0, 0, 0)
	if there.State() != op2.Device {
		t.Errorf("after CopyTo: %v, want DEVICE", there.State())
	}
	for _, d := range []*op2.Dat[float64]{fresh, there} {
		for i, v := range d.DataRO() {
			if v != float64(i+1) {
				t.Fatalf("%s[%d] = %v, want %v", d.Name(), i, v, i+1)
			}
		}
	}
	hostSrc := must(op2.NewDat(set, 1, iota32[float64](n), "hostsrc"))
	dst := onDevice("dst")
	counted("CopyTo from the host", func() { check(t, hostSrc.CopyTo(dst)) }, 0, 0, 0)
	if dst.State() != op2.Host {
		t.Errorf("copied on the host into a dat on the device: %v, want HOST", dst.State())
	}

	// DataWO: nothing downloaded; the next loop uploads what was written.
	w := onDevice("w")
	counted("DataWO", func() {
		v := w.DataWO()
		for i := range v {
			v[i] = 5
		}
	}, 0, 0, 0)
	if w.State() != op2.Host {
		t.Errorf("after DataWO: %v, want HOST", w.State())
	}
	counted("loop after DataWO", func() { check(t, op2.ParLoop(rw, set, w.Arg(op2.RW))) }, 1, 0, 0)
	if got := must(w.Range(0, 2)); !slices.Equal(got, []float64{6, 6}) {
		t.Errorf("after DataWO and a loop: %v, want [6 6]", got)
	}

	// Range: only the range is downloaded, and the state stays.
	r := onDevice("r")
	var got []float64
	counted("Range on DEVICE", func() { got = must(r.Range(100, 4)) }, 0, 1, 4*8)
	if !slices.Equal(got, []float64{101, 102, 103, 104}) {
		t.Errorf("Range(100, 4) = %v", got)
	}
	if r.State() != op2.Device {
		t.Errorf("after Range: %v, want DEVICE", r.State())
	}
	r.DataRO()
	counted("Range on BOTH", func() { got = must(r.Range(0, 1)) }, 0, 0, 0)
}

// TestDatClone: a clone has the dat's set, dim and values, is a Dat of
// its own (changing one leaves the other), and is made on the device
// when the values are there (no copy to the host); Nbytes counts the
// values of Dats, Globals and Mats.
func TestDatClone(t *testing.T) {
	for _, backend := range allBackends {
		t.Run(backend, func(t *testing.T) {
			check(t, op2.Use(backend))
			defer op2.Use("sequential")
			set := must(op2.NewSet(100, "s"))
			d := must(op2.NewDat(set, 3, seq(300, func(i int) float64 { return float64(i) + 0.5 }), "d"))
			inc := op2.NewKernel("void inc(double *x) { x[0] += 1; x[1] += 2; x[2] += 3; }", "inc")
			check(t, op2.ParLoop(inc, set, d.Arg(op2.RW)))
			down := op2.ReadStats().Downloads
			c := must(d.Clone("c"))
			if backend == "opencl" || backend == "cuda" {
				if c.State() != op2.Device || op2.ReadStats().Downloads != down {
					t.Errorf("clone on %s: state %v, %d copies to the host; want DEVICE, none", backend, c.State(), op2.ReadStats().Downloads-down)
				}
			}
			if c.Name() != "c" || c.Dim() != 3 || c.Set() != set || c.Nbytes() != 300*8 || d.Nbytes() != 300*8 {
				t.Fatalf("clone %q dim %d on %v, %d bytes", c.Name(), c.Dim(), c.Set(), c.Nbytes())
			}
			check(t, op2.ParLoop(inc, set, c.Arg(op2.RW)))
			for i, v := range d.DataRO() {
				want := float64(i) + 0.5 + float64(i%3+1)
				if v != want || c.DataRO()[i] != want+float64(i%3+1) {
					t.Fatalf("d[%d] = %v, clone %v; want %v and %v", i, v, c.DataRO()[i], want, want+float64(i%3+1))
				}
			}
		})
	}
	g := must(op2.NewGlobal[float32](5, nil, "g"))
	if g.Nbytes() != 20 {
		t.Errorf("global of 5 float32: %d bytes", g.Nbytes())
	}
	cells := must(op2.NewSet(2, "cells"))
	nodes := must(op2.NewSet(3, "nodes"))
	pcell := must(op2.NewMap(cells, nodes, 2, []int32{0, 1, 1, 2}, "pcell"))
	A := must(op2.NewMat[float32](must(op2.NewSparsity(nodes, 2, nodes, 2, []op2.MapPair{{Row: pcell, Col: pcell}}, "sp")), "A"))
	if A.Nbytes() != 7*4*4 { // 7 blocks of 2×2 float32
		t.Errorf("matrix of 7 blocks of 2×2 float32: %d bytes", A.Nbytes())
	}
}
