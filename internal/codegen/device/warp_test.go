package device

import (
	"strings"
	"testing"

	"github.com/goop2/op2/internal/core"
)

// TestWarpScheme: in CUDA the Warp scheme sums a warp's increments per
// target before one atomic addition, for an argument through one map
// column and for a vector argument (per column), in both layouts; the
// direct argument and the OpenCL source are those of Atomics.
func TestWarpScheme(t *testing.T) {
	tl := newTestLoop()
	q := tl.dat("q", 2, tl.edges)
	res := tl.dat("res", 3, tl.nodes)
	vec := tl.dat("vec", 1, tl.nodes)
	src := "void k(const double *q, double *r, double **v) { r[0] += q[0]; r[2] += q[1]; v[0][0] += 1; v[1][0] -= 1; }"
	l := loop(t, src, "k", tl.edges, nil,
		core.Arg{Data: q, Access: core.Read, Kind: core.ArgDirect},
		core.Arg{Data: res, Map: tl.m, Idx: 1, Access: core.Inc, Kind: core.ArgIndirect},
		core.Arg{Data: vec, Map: tl.m, Idx: -1, Access: core.Inc, Kind: core.ArgVector})
	for _, soa := range []bool{false, true} {
		generate := func(d *Dialect, s Scheme) string {
			t.Helper()
			lay, err := AnalyseWith(d, l, 48<<10, Options{Scheme: s, SoA: soa})
			if err != nil {
				t.Fatal(err)
			}
			if !lay.Atomic || lay.Warp != (s == Warp && d.WarpMatch) {
				t.Fatalf("%s %v soa %v: Atomic %v, Warp %v", d.Name, s, soa, lay.Atomic, lay.Warp)
			}
			out, err := Generate(l, lay)
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		warp := generate(CUDA, Warp)
		if n := strings.Count(warp, "__match_any_sync("); n != 2 {
			t.Errorf("soa %v: %d __match_any_sync calls, want 2 (the indirect argument, the vector's column loop):\n%s", soa, n, warp)
		}
		if n := strings.Count(warp, "if (op2_lead) op2_atomic_add_double("); n != 2 {
			t.Errorf("soa %v: %d atomic additions by a lead thread, want 2:\n%s", soa, n, warp)
		}
		if strings.Count(warp, "op2_atomic_add_double(&") != 2 {
			t.Errorf("soa %v: an increment is added atomically without the warp's sum:\n%s", soa, warp)
		}
		if a, w := generate(OpenCL, Atomics), generate(OpenCL, Warp); a != w {
			t.Errorf("soa %v: OpenCL's Warp source is not its Atomics source", soa)
		}
	}
}
