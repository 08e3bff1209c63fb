package op2_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// TestNewMap64 declares maps from 64-bit values in one process: values
// that index the target set make the map NewMap makes; others are refused
// by name, entry and value, as NewMap refuses them.
func TestNewMap64(t *testing.T) {
	nodes := must(op2.NewSet(4, "nodes"))
	edges := must(op2.NewSet(2, "edges"))
	for _, tc := range []struct {
		name   string
		from   *op2.Set
		values []int64
		want   string // error text, "" for none
	}{
		{"fits", edges, []int64{0, 1, 3, 2}, ""},
		{"negative", edges, []int64{0, -1, 3, 2}, `map "negative" from "edges" to "nodes": entry 1 (element 0, column 1) is -1, outside the target set [0,4)`},
		{"beyond the set", edges, []int64{0, 1, 4, 2}, `entry 2 (element 1, column 0) is 4, outside the target set [0,4)`},
		{"numbered from 1", edges, []int64{1, 2, 4, 3}, `is 4, outside the target set [0,4): the table looks numbered from 1`},
		{"beyond int32", edges, []int64{0, 1, 1 << 31, 2}, `entry 2 (element 1, column 0) is 2147483648, outside the target set [0,4)`},
		{"beyond 2^62", edges, []int64{1 << 62, 1, 0, 2}, `is 4611686018427387904, outside`},
		{"short", edges, []int64{0, 1, 2}, `3 values given, want 4`},
		{"nil source", nil, []int64{0}, `source and target sets must not be nil`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := op2.NewMap64(tc.from, nodes, 2, tc.values, tc.name)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "op2: ") {
					t.Fatalf("error %v, want one containing %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Values(); !slices.Equal(got, []int32{0, 1, 3, 2}) {
				t.Errorf("Values() = %v", got)
			}
			if got := must(m.Gather64()); !slices.Equal(got, tc.values) {
				t.Errorf("Gather64() = %v, want %v", got, tc.values)
			}
			if got := must(m.Gather()); !slices.Equal(got, []int32{0, 1, 3, 2}) {
				t.Errorf("Gather() = %v", got)
			}
			start, blk := must2(m.GatherBlock64())
			if start != 0 || !slices.Equal(blk, tc.values) {
				t.Errorf("GatherBlock64() = %d, %v", start, blk)
			}
		})
	}
	if got := edges.DeclaredNumbers64(); !slices.Equal(got, []int64{0, 1}) {
		t.Errorf("DeclaredNumbers64() = %v", got)
	}
}

func must2[A, B any](a A, b B, err error) (A, B) {
	if err != nil {
		panic(err)
	}
	return a, b
}

// TestInt64Spellings: a kernel may spell its 64-bit integers long long,
// long or int64_t (long on Linux), which are different types to the C
// compiler's aliasing rules: the generated code's long long accumulator,
// written through the kernel's int64_t pointer, came back 0 from the
// scalar code (GCC took the kernel's stores for no change to it). Int64
// Globals reduced and Dats incremented through a map come out the same
// for every spelling, every host backend and SIMD setting.
func TestInt64Spellings(t *testing.T) {
	defer func() { check(t, op2.Configure(op2.Config{})) }()
	const n = 203
	for _, typ := range []string{"long long", "long", "int64_t"} {
		for _, backend := range hostBackends {
			for _, simd := range []string{"off", "8"} {
				check(t, op2.Configure(op2.Config{Backend: backend, SIMD: simd}))
				s := must(op2.NewSet(n, "s"))
				nodes := must(op2.NewSet(n, "nodes"))
				table := make([]int32, 2*n)
				v := make([]int64, n)
				for i := range v {
					v[i] = int64(i)
					table[2*i], table[2*i+1] = int32(i), int32((i+1)%n)
				}
				m := must(op2.NewMap(s, nodes, 2, table, "ring"))
				a := must(op2.NewDat(s, 1, v, "a"))
				acc := must(op2.NewDat[int64](nodes, 1, nil, "acc"))
				sum := must(op2.NewGlobal[int64](1, nil, "sum"))
				hi := must(op2.NewGlobal[int64](1, []int64{-1}, "hi"))
				src := "#include <stdint.h>\nvoid k(const " + typ + " *a, " + typ + " *s, " + typ + " *hi, " + typ + " *p, " + typ + " *q) {\n" +
					"  *s += a[0]*a[0]; if (a[0] > *hi) *hi = a[0]; *p += a[0]; *q += 2*a[0];\n}"
				check(t, op2.ParLoop(op2.NewKernel(src, "k"), s, a.Arg(op2.Read), sum.Arg(op2.Inc), hi.Arg(op2.Max),
					acc.ArgMap(op2.Inc, m, 0), acc.ArgMap(op2.Inc, m, 1)))
				got := acc.DataRO()
				if sum.Value() != 2767905 || hi.Value() != n-1 || got[1] != 1+2*0 || got[0] != 0+2*(n-1) {
					t.Errorf("%s, %s, SIMD %s: sum %d (want 2767905), max %d (want %d), acc[0:2] %v (want [%d 1])",
						typ, backend, simd, sum.Value(), hi.Value(), n-1, got[:2], 2*(n-1))
				}
			}
		}
	}
}

// TestInt64FusedAndTiled: a loop without 64-bit data fused with one
// reducing an int64 Global through an int64_t parameter, untiled and
// tiled, sequential and openmp: the fused program has the int64 data
// too, and is built as TestInt64Spellings' loops are.
func TestInt64FusedAndTiled(t *testing.T) {
	const n = 203
	for _, cfg := range []op2.Config{
		{Backend: "sequential", Lazy: true, SIMD: "off", Fusion: "on"},
		{Backend: "sequential", Lazy: true, SIMD: "off", Fusion: "on", Tile: 8},
		{Backend: "openmp", Lazy: true, SIMD: "off", Fusion: "on", Tile: 8},
		{Backend: "sequential", Lazy: true, SIMD: "8", Fusion: "on"},
	} {
		r := must(op2.NewRuntime(cfg))
		s := must(op2.NewSet(n, "s"))
		nodes := must(op2.NewSet(n, "nodes"))
		table := make([]int32, 2*n)
		for i := range n {
			table[2*i], table[2*i+1] = int32(i), int32((i+1)%n)
		}
		m := must(op2.NewMap(s, nodes, 2, table, "ring"))
		a := must(op2.NewDat[float64](s, 1, nil, "a"))
		node := must(op2.NewDat[float64](nodes, 1, nil, "node"))
		sum := must(op2.NewGlobal[int64](1, nil, "sum"))
		k1 := op2.NewKernel("void i64_fill(double *a, double *p, double *q) { *a = 1; *p += 1; *q += 1; }", "i64_fill")
		k2 := op2.NewKernel("#include <stdint.h>\nvoid i64_sum(const double *a, int64_t *s) { *s += (int64_t)*a; }", "i64_sum")
		for range 3 {
			check(t, r.ParLoop(k1, s, a.Arg(op2.Write), node.ArgMap(op2.Inc, m, 0), node.ArgMap(op2.Inc, m, 1)))
			check(t, r.ParLoop(k2, s, a.Arg(op2.Read), sum.Arg(op2.Inc)))
			check(t, r.ParLoop(k1, s, a.Arg(op2.Write), node.ArgMap(op2.Inc, m, 0), node.ArgMap(op2.Inc, m, 1)))
			check(t, r.ParLoop(k2, s, a.Arg(op2.Read), sum.Arg(op2.Inc)))
			op2.WaitBuilds()
		}
		if got := sum.Value(); got != 6*n {
			t.Errorf("%s, SIMD %s, tile %d: sum %d, want %d", cfg.Backend, cfg.SIMD, cfg.Tile, got, 6*n)
		}
		check(t, r.Close())
	}
}

// TestMapNumberedFromOne: a table numbered from 1, as OP2's C programs'
// often are, is refused with a word on it; one that only runs past the
// set is not told so.
func TestMapNumberedFromOne(t *testing.T) {
	nodes := must(op2.NewSet(4, "nodes"))
	edges := must(op2.NewSet(2, "edges"))
	if _, err := op2.NewMap(edges, nodes, 2, []int32{1, 2, 4, 3}, "one"); err == nil || !strings.Contains(err.Error(), "looks numbered from 1") {
		t.Errorf("a table numbered from 1: %v", err)
	}
	if _, err := op2.NewMap(edges, nodes, 2, []int32{0, 2, 4, 3}, "past"); err == nil || strings.Contains(err.Error(), "numbered from 1") {
		t.Errorf("a table holding 0: %v", err)
	}
}
