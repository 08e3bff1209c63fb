package op2_test

import (
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// TestDeviceSchemeAtomics: with DeviceScheme "atomics" an increment loop
// through a map is generated with atomic additions and no colours, gives
// the sequential backend's result, and a loop that also writes through a
// map stays staged; an unknown scheme is refused.
func TestDeviceSchemeAtomics(t *testing.T) {
	needBackend(t, "opencl")
	defer func() { check(t, op2.Configure(op2.Config{Backend: "sequential"})) }()
	_, err := op2.NewRuntime(op2.Config{Backend: "opencl", DeviceScheme: "colourful"})
	wantErr(t, err, `unknown device scheme "colourful"`)

	edges, nodes, m := scatteredEdges(300, 100, 37, 3)
	w := must(op2.NewDat(edges, 1, iota32[float64](300), "w"))
	inc := op2.NewKernel("void spread(const double *w, double *a, double *b) { *a += *w; *b += 0.5 * *w; }", "spread")
	run := func(backend, scheme string) ([]float64, string) {
		check(t, op2.Configure(op2.Config{Backend: backend, DeviceScheme: scheme}))
		acc := must(op2.NewDat[float64](nodes, 1, nil, "acc"))
		lp := must(op2.NewLoop(inc, edges, w.Arg(op2.Read), acc.ArgMap(op2.Inc, m, 0), acc.ArgMap(op2.Inc, m, 1)))
		check(t, lp.Compute())
		return acc.Data(), must(lp.Generate())
	}
	want, _ := run("sequential", "")
	got, src := run("opencl", "atomics")
	if !strings.Contains(src, "op2_atomic_add_double(") || strings.Contains(src, "op2_thrcol[op2_e]") {
		t.Errorf("atomics: the source lacks atomic additions or has thread colours:\n%s", src)
	}
	for i := range want {
		if got[i] != want[i] { // sums of small integers: exact in any order
			t.Fatalf("node %d: %g with atomics, %g on sequential", i, got[i], want[i])
		}
	}
	_, src = run("opencl", "staged")
	if strings.Contains(src, "op2_atomic_add") {
		t.Errorf("staged: atomic additions in the source")
	}

	// A loop that writes through a map cannot use atomics: staged.
	check(t, op2.Configure(op2.Config{Backend: "opencl", DeviceScheme: "atomics"}))
	acc := must(op2.NewDat[float64](nodes, 1, nil, "acc2"))
	rw := must(op2.NewLoop(op2.NewKernel("void bump(double *a, double *b) { *a += 1; *b = 2; }", "bump"), edges,
		acc.ArgMap(op2.Inc, m, 0), must(op2.NewDat[float64](nodes, 1, nil, "other")).ArgMap(op2.Write, m, 1)))
	if src := must(rw.Generate()); strings.Contains(src, "op2_atomic_add") || !strings.Contains(src, "op2_thrcol[op2_e]") {
		t.Errorf("a loop writing through a map should stay staged:\n%s", src)
	}
}
