package op2_test

import (
	"testing"

	"github.com/goop2/op2"
)

// requireDevice selects the opencl backend for the test, or skips it with
// the reason when no OpenCL runtime or device is present (needBackend).
func requireDevice(t *testing.T) {
	t.Helper()
	needBackend(t, "opencl")
	check(t, op2.Use("opencl"))
	t.Cleanup(func() { op2.Use("sequential") })
}

// TestDeviceDataStates drives every transition of seed 000's table (and the
// host accessors) and counts the copies each one makes.
func TestDeviceDataStates(t *testing.T) {
	requireDevice(t)
	const n = 1000
	set := must(op2.NewSet(n, "s"))
	sink := must(op2.NewDat[float64](set, 1, nil, "sink"))
	readK := op2.NewKernel("void rd(const double *x, double *y) { *y = *x; }", "rd")
	rwK := op2.NewKernel("void rw(double *x) { *x += 1; }", "rw")
	writeK := op2.NewKernel("void wr(double *x) { *x = 3; }", "wr")

	ones := func() []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = 1
		}
		return v
	}
	// Each setup returns a dat in the named state, with every value 1
	// (HOST_UNALLOCATED: 0).
	setups := map[op2.DataState]func() *op2.Dat[float64]{
		op2.DeviceUnallocated: func() *op2.Dat[float64] { return must(op2.NewDat(set, 1, ones(), "x")) },
		op2.HostUnallocated:   func() *op2.Dat[float64] { return must(op2.NewDat[float64](set, 1, nil, "x")) },
		op2.Device: func() *op2.Dat[float64] {
			x := must(op2.NewDat(set, 1, make([]float64, n), "x"))
			check(t, op2.ParLoop(rwK, set, x.Arg(op2.RW)))
			return x
		},
		op2.Host: func() *op2.Dat[float64] {
			x := must(op2.NewDat(set, 1, make([]float64, n), "x"))
			check(t, op2.ParLoop(rwK, set, x.Arg(op2.RW)))
			x.Data()
			return x
		},
		op2.Both: func() *op2.Dat[float64] {
			x := must(op2.NewDat(set, 1, make([]float64, n), "x"))
			check(t, op2.ParLoop(rwK, set, x.Arg(op2.RW)))
			x.DataRO()
			return x
		},
	}
	type action struct {
		name string
		run  func(x *op2.Dat[float64])
		// value of every element afterwards, given the value v before
		after func(v float64) float64
	}
	loopRead := action{"par_loop READ", func(x *op2.Dat[float64]) {
		check(t, op2.ParLoop(readK, set, x.Arg(op2.Read), sink.Arg(op2.Write)))
	}, func(v float64) float64 { return v }}
	loopRW := action{"par_loop RW", func(x *op2.Dat[float64]) { check(t, op2.ParLoop(rwK, set, x.Arg(op2.RW))) },
		func(v float64) float64 { return v + 1 }}
	loopWrite := action{"par_loop WRITE", func(x *op2.Dat[float64]) { check(t, op2.ParLoop(writeK, set, x.Arg(op2.Write))) },
		func(float64) float64 { return 3 }}
	hostRW := action{"Data()", func(x *op2.Dat[float64]) { x.Data() }, func(v float64) float64 { return v }}
	hostRO := action{"DataRO()", func(x *op2.Dat[float64]) { x.DataRO() }, func(v float64) float64 { return v }}

	cases := []struct {
		from     op2.DataState
		act      action
		to       op2.DataState
		up, down uint64
	}{
		// seed 000's table: par_loop read / written
		{op2.DeviceUnallocated, loopRead, op2.Both, 1, 0},
		{op2.DeviceUnallocated, loopRW, op2.Device, 1, 0},
		{op2.DeviceUnallocated, loopWrite, op2.Device, 0, 0},
		{op2.Device, loopRead, op2.Device, 0, 0},
		{op2.Device, loopRW, op2.Device, 0, 0},
		{op2.Device, loopWrite, op2.Device, 0, 0},
		{op2.Host, loopRead, op2.Both, 1, 0},
		{op2.Host, loopRW, op2.Device, 1, 0},
		{op2.Host, loopWrite, op2.Device, 0, 0},
		{op2.Both, loopRead, op2.Both, 0, 0},
		{op2.Both, loopRW, op2.Device, 0, 0},
		{op2.Both, loopWrite, op2.Device, 0, 0},
		// data declared without values: zeros made on the device
		{op2.HostUnallocated, loopRead, op2.Device, 0, 0},
		{op2.HostUnallocated, loopRW, op2.Device, 0, 0},
		{op2.HostUnallocated, loopWrite, op2.Device, 0, 0},
		// host access
		{op2.Device, hostRW, op2.Host, 0, 1},
		{op2.Device, hostRO, op2.Both, 0, 1},
		{op2.Both, hostRW, op2.Host, 0, 0},
		{op2.Both, hostRO, op2.Both, 0, 0},
		{op2.Host, hostRW, op2.Host, 0, 0},
		{op2.Host, hostRO, op2.Host, 0, 0},
		{op2.DeviceUnallocated, hostRW, op2.DeviceUnallocated, 0, 0},
		{op2.HostUnallocated, hostRO, op2.DeviceUnallocated, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.from.String()+" + "+c.act.name, func(t *testing.T) {
			x := setups[c.from]()
			if x.State() != c.from {
				t.Fatalf("setup gave %v, want %v", x.State(), c.from)
			}
			before := 1.0
			if c.from == op2.HostUnallocated {
				before = 0
			}
			s0 := op2.ReadStats()
			c.act.run(x)
			s1 := op2.ReadStats()
			if x.State() != c.to {
				t.Errorf("state %v, want %v", x.State(), c.to)
			}
			if up, down := s1.Uploads-s0.Uploads, s1.Downloads-s0.Downloads; up != c.up || down != c.down {
				t.Errorf("%d uploads and %d downloads, want %d and %d", up, down, c.up, c.down)
			}
			want := c.act.after(before)
			for i, v := range x.DataRO() {
				if v != want {
					t.Fatalf("value %d = %v, want %v", i, v, want)
				}
			}
		})
	}
}

// TestDeviceGlobalStates: a Global read by a loop is copied once and stays
// valid on both sides; a reduction is combined on the host, leaving HOST.
func TestDeviceGlobalStates(t *testing.T) {
	requireDevice(t)
	set := must(op2.NewSet(500, "s"))
	x := must(op2.NewDat[float64](set, 1, nil, "x"))
	g := must(op2.NewGlobal(1, []float64{2}, "g"))
	add := op2.NewKernel("void add(double *x, const double *g) { *x += *g; }", "add")
	s0 := op2.ReadStats()
	check(t, op2.ParLoop(add, set, x.Arg(op2.RW), g.Arg(op2.Read)))
	check(t, op2.ParLoop(add, set, x.Arg(op2.RW), g.Arg(op2.Read)))
	s1 := op2.ReadStats()
	if g.State() != op2.Both || s1.Uploads-s0.Uploads != 1 {
		t.Errorf("global read twice: state %v, %d uploads; want BOTH, 1", g.State(), s1.Uploads-s0.Uploads)
	}
	sum := must(op2.NewGlobal(1, []float64{0.5}, "sum"))
	red := op2.NewKernel("void red(const double *x, double *s) { *s += *x; }", "red")
	s2 := op2.ReadStats()
	check(t, op2.ParLoop(red, set, x.Arg(op2.Read), sum.Arg(op2.Inc)))
	if sum.State() != op2.Host {
		t.Errorf("after a reduction the global is %v, want HOST", sum.State())
	}
	if got := sum.DataRO()[0]; got != 0.5+4*500 {
		t.Errorf("sum = %v, want %v", got, 0.5+4*500)
	}
	// An increment's partial results start from zero: the Global's
	// value is never copied to the device for it, even when the host
	// changed it.
	sum.SetValue(1)
	check(t, op2.ParLoop(red, set, x.Arg(op2.Read), sum.Arg(op2.Inc)))
	if s3 := op2.ReadStats(); s3.Uploads != s2.Uploads {
		t.Errorf("two loops incrementing a Global copied %d values to the device, want none", s3.Uploads-s2.Uploads)
	}
	if got := sum.DataRO()[0]; got != 1+4*500 {
		t.Errorf("sum = %v, want %v", got, 1+4*500)
	}
	if x.State() != op2.Device {
		t.Errorf("dat modified on the device, then read, is %v, want DEVICE", x.State())
	}
}

// TestBackendSwitchMovesData: data left on the device by opencl is brought
// back when a host backend uses it.
func TestBackendSwitchMovesData(t *testing.T) {
	requireDevice(t)
	set := must(op2.NewSet(100, "s"))
	x := must(op2.NewDat(set, 1, iota32[float64](100), "x"))
	rw := op2.NewKernel("void rw(double *x) { *x *= 2; }", "rw")
	check(t, op2.ParLoop(rw, set, x.Arg(op2.RW)))
	check(t, op2.Use("sequential"))
	check(t, op2.ParLoop(rw, set, x.Arg(op2.RW)))
	if x.State() != op2.Host {
		t.Errorf("after a host loop the dat is %v, want HOST", x.State())
	}
	check(t, op2.Use("opencl"))
	check(t, op2.ParLoop(rw, set, x.Arg(op2.RW)))
	for i, v := range x.DataRO() {
		if v != float64(8*i) {
			t.Fatalf("x[%d] = %v, want %v", i, v, 8*i)
		}
	}
}
