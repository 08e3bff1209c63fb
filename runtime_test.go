package op2_test

import (
	"os"
	"testing"

	"github.com/goop2/op2"
)

// TestRuntimesAreIndependent: runtimes made with NewRuntime have their own
// configuration, backends, programs and constants; the package-level
// functions are the default runtime's.
func TestRuntimesAreIndependent(t *testing.T) {
	cache := os.Getenv("OP2_CACHE_DIR")
	r1 := must(op2.NewRuntime(op2.Config{Backend: "sequential", CacheDir: cache, PlanCheck: true}))
	r2 := must(op2.NewRuntime(op2.Config{Backend: "openmp", CacheDir: cache, PlanCheck: true}))
	if r1.Backend() != "sequential" || r2.Backend() != "openmp" {
		t.Fatalf("backends %q and %q", r1.Backend(), r2.Backend())
	}
	if op2.Default().Backend() != op2.Backend() {
		t.Error("the package-level functions do not use the default runtime")
	}
	// One name, a constant in each runtime, with different values.
	scale1 := must(op2.NewConstIn(r1, 1, []float64{2}, "rt_scale"))
	defer scale1.Remove()
	scale2 := must(op2.NewConstIn(r2, 1, []float64{3}, "rt_scale"))
	defer scale2.Remove()
	if _, err := op2.NewConstIn(r1, 1, []float64{4}, "rt_scale"); err == nil {
		t.Error("a constant declared twice in one runtime")
	}
	set := must(op2.NewSet(1000, "cells"))
	x := must(op2.NewDat(set, 1, iota32[float64](1000), "x"))
	k := op2.NewKernel("void rt_scale_x(double *x) { *x *= rt_scale; }", "rt_scale_x")
	check(t, r1.ParLoop(k, set, x.Arg(op2.RW)))
	check(t, r2.ParLoop(k, set, x.Arg(op2.RW)))
	for i, v := range x.DataRO() {
		if v != float64(i)*6 {
			t.Fatalf("x[%d] = %v, want %v: each runtime's loop must see its own constant", i, v, float64(i)*6)
		}
	}
	if s1, s2 := r1.Stats(), r2.Stats(); s1.ProgramCache != 1 || s2.ProgramCache != 1 || s1.Generations != 1 || s2.Generations != 1 {
		t.Errorf("programs %d and %d, generations %d and %d: want one each", s1.ProgramCache, s2.ProgramCache, s1.Generations, s2.Generations)
	}
	// Reconfiguring one runtime leaves the other as it was.
	check(t, r2.Use("sequential"))
	if r1.Backend() != "sequential" || r2.Backend() != "sequential" {
		t.Error("Use changed the wrong runtime")
	}
	check(t, r1.Configure(op2.Config{Backend: "openmp", CacheDir: cache}))
	if r2.Backend() != "sequential" || r2.Stats().ProgramCache != 1 {
		t.Error("configuring one runtime changed another")
	}
	lp := must(r1.NewLoop(k, set, x.Arg(op2.RW)))
	if lp.Backend() != "openmp" {
		t.Errorf("a loop of r1 runs on %q", lp.Backend())
	}
	src := must(r2.Generate("sequential", k, set, x.Arg(op2.RW)))
	if src == "" {
		t.Error("no source")
	}
}
