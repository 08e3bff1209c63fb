package device

import (
	"fmt"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/core"
)

// TestCheckWorkGroupSize: powers of two from 32 to 1024 and 0 (the
// default) are accepted; anything else is refused with the sizes allowed.
func TestCheckWorkGroupSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
		err  string // part of the error, "" if none
	}{
		{"", 0, ""},
		{"0", 0, ""},
		{"32", 32, ""},
		{" 64 ", 64, ""},
		{"128", 128, ""},
		{"1024", 1024, ""},
		{"16", 0, "work-group size 16 is not allowed"},
		{"48", 0, "work-group size 48 is not allowed"},
		{"96", 0, "work-group size 96 is not allowed"},
		{"2048", 0, "work-group size 2048 is not allowed"},
		{"-64", 0, "work-group size -64 is not allowed"},
		{"abc", 0, `work-group size "abc" is not a number`},
		{"64k", 0, `work-group size "64k" is not a number`},
	} {
		got, err := ParseWorkGroupSize(c.in)
		if c.err == "" {
			if err != nil || got != c.want {
				t.Errorf("ParseWorkGroupSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
			}
			if err := CheckWorkGroupSize(got); err != nil {
				t.Errorf("CheckWorkGroupSize(%d): %v", got, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "32, 64, 128, 256, 512, 1024") {
			t.Errorf("ParseWorkGroupSize(%q) = %d, %v; want an error with %q and the sizes allowed", c.in, got, err, c.err)
		}
	}
}

// TestCheckWorkGroupLimit: a size above the device's limit is refused,
// naming the size, the limit, the device and the largest power of two
// that fits; an unknown limit passes.
func TestCheckWorkGroupLimit(t *testing.T) {
	for _, c := range []struct {
		n, limit int
		want     string // part of the error, "" if none
	}{
		{0, 0, ""}, {1024, 0, ""}, {256, 256, ""}, {0, 64, ""}, {128, 4096, ""},
		{512, 256, `size 512 is larger than the 256 work items per group OpenCL device "x" allows; use 256 or less`},
		{0, 48, `size 64 is larger than the 48 work items per group OpenCL device "x" allows; use 32 or less`},
		{1024, 1000, "use 512 or less"},
		{32, 16, "the device backends need at least 32"},
	} {
		err := CheckWorkGroupLimit(c.n, c.limit, `OpenCL device "x"`)
		if c.want == "" {
			if err != nil {
				t.Errorf("size %d, limit %d: %v", c.n, c.limit, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("size %d, limit %d: %v; want %q", c.n, c.limit, err, c.want)
		}
	}
}

// TestOptionsWith: a scheme or work-group size given in place of the
// configured one replaces it, "" and 0 keep it, and a bad scheme, a size
// that is not allowed or one above the device's limit is refused.
func TestOptionsWith(t *testing.T) {
	conf := Options{Scheme: Atomics, SoA: true, WorkGroupSize: 128}
	for _, c := range []struct {
		scheme    string
		size      int
		limit     int
		want      Options
		wantError string // part of the error, "" if none
	}{
		{"", 0, 256, conf, ""},
		{"staged", 0, 256, Options{Scheme: Staged, SoA: true, WorkGroupSize: 128}, ""},
		{"atomics", 64, 256, Options{Scheme: Atomics, SoA: true, WorkGroupSize: 64}, ""},
		{"", 1024, 0, Options{Scheme: Atomics, SoA: true, WorkGroupSize: 1024}, ""},
		{"colour", 0, 256, Options{}, `unknown device scheme "colour"`},
		{"", 48, 256, Options{}, "work-group size 48 is not allowed"},
		{"staged", 512, 256, Options{}, `size 512 is larger than the 256 work items per group OpenCL device "x" allows`},
	} {
		got, err := conf.With(c.scheme, c.size, c.limit, `OpenCL device "x"`)
		if c.wantError == "" {
			if err != nil || got != c.want {
				t.Errorf("With(%q, %d, %d) = %+v, %v; want %+v", c.scheme, c.size, c.limit, got, err, c.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.wantError) {
			t.Errorf("With(%q, %d, %d): %v; want an error with %q", c.scheme, c.size, c.limit, err, c.wantError)
		}
	}
}

// TestWorkGroupSizeInSource: the work-group size reaches every place of
// the generated code that depends on it (the kernel head, the reduction
// tree, the element and staging loops), in both dialects; the default and
// an explicit 64 give the same source; a bad size is refused.
func TestWorkGroupSizeInSource(t *testing.T) {
	for name, l := range shapes(t, shapeSrc, "k", nil) {
		for _, d := range []*Dialect{OpenCL, CUDA} {
			generate := func(wg int) (string, *Layout) {
				t.Helper()
				lay, err := AnalyseWith(d, l, 48<<10, Options{WorkGroupSize: wg})
				if err != nil && strings.Contains(err.Error(), "may keep privately") {
					return "", nil // a reduction of dim 1024 in 1024 items (TestPrivateArraysRefused)
				}
				if err != nil {
					t.Fatalf("%s, %s, size %d: %v", name, d.Name, wg, err)
				}
				src, err := Generate(l, lay)
				if err != nil {
					t.Fatal(err)
				}
				return src, lay
			}
			def, lay := generate(0)
			if lay.WorkGroupSize() != DefaultWorkGroupSize {
				t.Errorf("%s, %s: default layout has work-group size %d", name, d.Name, lay.WorkGroupSize())
			}
			if s, _ := generate(DefaultWorkGroupSize); s != def {
				t.Errorf("%s, %s: size 64 and the default give different sources", name, d.Name)
			}
			for _, wg := range []int{32, 128, 256, 1024} {
				src, lay := generate(wg)
				if lay == nil {
					continue
				}
				if lay.WorkGroupSize() != wg {
					t.Errorf("%s, %s, size %d: layout has %d", name, d.Name, wg, lay.WorkGroupSize())
				}
				head := fmt.Sprintf(d.KernelHead, wg) + " op2_stub("
				want := []string{head}
				if len(lay.Reductions) > 0 {
					want = append(want, fmt.Sprintf("op2_step = %d;", wg/2))
				}
				if lay.Indirect {
					want = append(want, fmt.Sprintf("op2_n += %d)", wg), fmt.Sprintf("%d * (1 + (op2_nelem - 1) / %d)", wg, wg))
					for ds := range lay.DSGlobal {
						if !lay.DSGlobal[ds] {
							want = append(want, fmt.Sprintf("op2_i += %d) op2_s%d[op2_i] =", wg, ds))
						}
					}
				}
				for _, w := range want {
					if !strings.Contains(src, w) {
						t.Errorf("%s, %s, size %d: the source lacks %q", name, d.Name, wg, w)
					}
				}
				for _, w := range []string{fmt.Sprintf(d.KernelHead, 64), "op2_step = 32;", "op2_n += 64)", "op2_i += 64)"} {
					if strings.Contains(src, w) {
						t.Errorf("%s, %s, size %d: the source has %q of the default size", name, d.Name, wg, w)
					}
				}
			}
		}
	}
	l := shapes(t, shapeSrc, "k", nil)["direct dim 2"]
	if _, err := AnalyseWith(OpenCL, l, 48<<10, Options{WorkGroupSize: 48}); err == nil || !strings.Contains(err.Error(), "48") {
		t.Errorf("size 48: %v", err)
	}
}

// TestWorkGroupSizeStaging: a larger work group leaves less local memory
// per work item, so an indirect dataset staged with the default size is
// kept in global memory when a work group's worth of its elements no
// longer fits; the reductions' scratch grows with the size.
func TestWorkGroupSizeStaging(t *testing.T) {
	tl := newTestLoop()
	x := tl.dat("x", 40, tl.nodes) // 320 bytes per element
	g := global("g", 1)
	l := loop(t, "void k(const double *x, double *g) { *g += x[0]; }", "k", tl.edges, nil,
		core.Arg{Data: x, Map: tl.m, Idx: 0, Access: core.Read, Kind: core.ArgIndirect},
		core.Arg{Data: g, Access: core.Inc, Kind: core.ArgGlobal})
	const localMem = 32 << 10
	for _, c := range []struct {
		wg     int
		global bool
	}{{32, false}, {64, false}, {128, true}, {1024, true}} {
		lay, err := AnalyseWith(OpenCL, l, localMem, Options{WorkGroupSize: c.wg})
		if err != nil {
			t.Fatal(err)
		}
		if lay.DSGlobal[0] != c.global {
			t.Errorf("size %d: dataset in global memory %v, want %v (budget %d bytes per item)", c.wg, lay.DSGlobal[0], c.global, StagingBudget(l, lay.Reductions, localMem, c.wg)/c.wg)
		}
		if got, want := StagingBudget(l, lay.Reductions, localMem, c.wg), localMem-8*c.wg-1024; got != want {
			t.Errorf("size %d: staging budget %d, want %d", c.wg, got, want)
		}
	}
}
