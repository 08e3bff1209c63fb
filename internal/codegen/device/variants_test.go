package device

import (
	"slices"
	"testing"

	"github.com/goop2/op2/internal/core"
)

// TestVariants: the configured way first; both schemes only for loops the
// atomics scheme applies to; sizes the device does not allow left out;
// every name read back by ParseVariant.
func TestVariants(t *testing.T) {
	tl := newTestLoop()
	res := tl.dat("res", 1, tl.nodes)
	x := tl.dat("x", 1, tl.nodes)
	q := tl.dat("q", 1, tl.edges)
	src := "void k(double *a, double *b) { *b += *a; }"
	inc := loop(t, src, "k", tl.edges, nil,
		core.Arg{Data: q, Access: core.Read, Kind: core.ArgDirect},
		core.Arg{Data: res, Map: tl.m, Idx: 1, Access: core.Inc, Kind: core.ArgIndirect})
	rw := loop(t, src, "k", tl.edges, nil,
		core.Arg{Data: q, Access: core.Read, Kind: core.ArgDirect},
		core.Arg{Data: x, Map: tl.m, Idx: 0, Access: core.RW, Kind: core.ArgIndirect})
	direct := loop(t, src, "k", tl.edges, nil,
		core.Arg{Data: q, Access: core.Read, Kind: core.ArgDirect},
		core.Arg{Data: tl.dat("w", 1, tl.edges), Access: core.Write, Kind: core.ArgDirect})
	for _, tc := range []struct {
		name         string
		d            *Dialect
		l            *core.Loop
		maxWorkGroup int
		opts         Options
		want         []string
	}{
		{"increments", OpenCL, inc, 0, Options{}, []string{"staged wg64", "staged wg128", "staged wg256", "atomics wg64", "atomics wg128", "atomics wg256"}},
		{"increments, atomics configured", OpenCL, inc, 0, Options{Scheme: Atomics, WorkGroupSize: 128},
			[]string{"atomics wg128", "atomics wg64", "atomics wg256", "staged wg128", "staged wg64", "staged wg256"}},
		{"increments, device of 128", OpenCL, inc, 128, Options{}, []string{"staged wg64", "staged wg128", "atomics wg64", "atomics wg128"}},
		{"RW through a map: staged only", OpenCL, rw, 0, Options{WorkGroupSize: 32}, []string{"wg32", "wg64", "wg128", "wg256"}},
		{"direct", OpenCL, direct, 0, Options{}, []string{"wg64", "wg128", "wg256"}},
		{"increments on cuda, warp configured", CUDA, inc, 64, Options{Scheme: Warp},
			[]string{"warp wg64", "atomics wg64", "staged wg64"}},
		{"increments on opencl, warp configured (atomics there)", OpenCL, inc, 64, Options{Scheme: Warp},
			[]string{"atomics wg64", "staged wg64"}},
	} {
		got := Variants(tc.d, tc.l, 48<<10, tc.maxWorkGroup, tc.opts)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		for _, v := range got {
			if _, _, err := ParseVariant(v); err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
		}
	}
}

func TestParseVariant(t *testing.T) {
	for _, tc := range []struct {
		name   string
		scheme string
		size   int
		ok     bool
	}{
		{"staged wg64", "staged", 64, true},
		{"atomics wg256", "atomics", 256, true},
		{"wg1024", "", 1024, true},
		{"wg48", "", 0, false},
		{"wg0", "", 0, false},
		{"fast wg64", "", 0, false},
		{"staged", "", 0, false},
		{"", "", 0, false},
		{"staged wg64 extra", "", 0, false},
	} {
		s, n, err := ParseVariant(tc.name)
		if (err == nil) != tc.ok || s != tc.scheme || n != tc.size {
			t.Errorf("%q: %q %d %v, want %q %d ok=%v", tc.name, s, n, err, tc.scheme, tc.size, tc.ok)
		}
	}
}
