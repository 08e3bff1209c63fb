package op2_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2"
)

// TestHungCompilerNamesTheLoop: a C compiler that never finishes is
// stopped at Config.CompileTimeout, and the loop fails with a
// *CompileError that names the loop and the limit and matches
// context.DeadlineExceeded, instead of hanging the program.
func TestHungCompilerNamesTheLoop(t *testing.T) {
	cache := os.Getenv("OP2_CACHE_DIR")
	defer func() { check(t, op2.Configure(op2.Config{CacheDir: cache, PlanCheck: true})) }()
	// The fake compiler is cc, except that a build of a library hangs
	// in a child process, as a driver waits for a hung cc1.
	cc := filepath.Join(t.TempDir(), "hung-cc")
	check(t, os.WriteFile(cc, []byte(`#!/bin/sh
for a; do [ "$a" = -shared ] && { echo "hung-cc: building"; sleep 600 & wait; exit 1; }; done
exec cc "$@"
`), 0o755))
	check(t, op2.Configure(op2.Config{Backend: "sequential", CC: cc, CompileTimeout: 500 * time.Millisecond, CacheDir: t.TempDir()}))
	set := must(op2.NewSet(4, "hung_set"))
	x := must(op2.NewDat[float64](set, 1, nil, "x"))
	start := time.Now()
	err := op2.ParLoop(op2.NewKernel("void hung_kernel(double *x) { *x = 1; }", "hung_kernel"), set, x.Arg(op2.Write))
	if d := time.Since(start); d > time.Minute {
		t.Errorf("the loop returned after %v with a limit of 500ms", d)
	}
	var ce *op2.CompileError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v, want a *CompileError", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error does not match context.DeadlineExceeded: %v", err)
	}
	msg := err.Error()
	t.Log(msg)
	for _, w := range []string{`loop "hung_kernel" over set "hung_set"`, "did not finish within 500ms", "Config.CompileTimeout", "hung-cc: building"} {
		if !strings.Contains(msg, w) {
			t.Errorf("error does not mention %q:\n%s", w, msg)
		}
	}
	wantPrefixOnce(t, err)
}

// TestExplicitFalseWinsOverEnvironment: OP2_LAZY=1 turns lazy mode on
// for a Config that leaves Lazy zero, but Config.Explicit("Lazy") makes
// the program's false win, on the default runtime and on a new one; a
// name that is not a setting is refused, naming it, and the previous
// configuration stays in use.
func TestExplicitFalseWinsOverEnvironment(t *testing.T) {
	cache := os.Getenv("OP2_CACHE_DIR")
	// Registered before Setenv, so it runs after the variable is restored.
	t.Cleanup(func() { check(t, op2.Configure(op2.Config{CacheDir: cache, PlanCheck: true})) })
	t.Setenv("OP2_LAZY", "1")
	set := must(op2.NewSet(4, "s"))
	x := must(op2.NewDat[float64](set, 1, nil, "x"))
	k := op2.NewKernel("void explicit_one(double *x) { *x = 1; }", "explicit_one")
	recorded := func(r *op2.Runtime) int {
		t.Helper()
		check(t, r.ParLoop(k, set, x.Arg(op2.Write)))
		n := op2.RecordedLoops()
		check(t, op2.Wait())
		return n
	}

	base := op2.Config{Backend: "sequential", CacheDir: cache}
	check(t, op2.Configure(base))
	if n := recorded(op2.Default()); n != 1 {
		t.Fatalf("OP2_LAZY=1 with Lazy left zero: %d loops recorded, want 1 (lazy mode)", n)
	}
	check(t, op2.Configure(base.Explicit("Lazy")))
	if n := recorded(op2.Default()); n != 0 {
		t.Errorf("Config{Lazy: false}.Explicit(\"Lazy\") under OP2_LAZY=1: %d loops recorded, want 0", n)
	}
	r := must(op2.NewRuntime(op2.Config{Backend: "sequential", CacheDir: cache, Lazy: false}.Explicit("Lazy")))
	if n := recorded(r); n != 0 {
		t.Errorf("NewRuntime with an explicit Lazy false under OP2_LAZY=1: %d loops recorded, want 0", n)
	}
	_ = base.Explicit("Lazy") // a copy: base itself names nothing
	check(t, op2.Configure(base))
	if n := recorded(op2.Default()); n != 1 {
		t.Errorf("Explicit changed the Config it was called on: %d loops recorded, want 1", n)
	}

	check(t, op2.Configure(base.Explicit("Lazy")))
	wantErr(t, op2.Configure(op2.Config{Backend: "openmp"}.Explicit("Lazzy")), `Config.Explicit("Lazzy")`, "no such setting")
	wantErr(t, op2.Configure(op2.Config{}.Explicit("DebugPlan")), `"DebugPlan"`)
	if b := op2.Backend(); b != "sequential" {
		t.Errorf("after a refused Configure the backend is %q", b)
	}
	if n := recorded(op2.Default()); n != 0 {
		t.Errorf("after a refused Configure %d loops were recorded: the configuration changed", n)
	}
}

// TestErrFormsReturnRecordedLoopFailure: each accessor that returns
// values but no error has an Err form that returns, instead of panicking
// with it, the failure of a recorded loop it runs first (here check mode
// finds a kernel writing to a READ argument only when the loop runs); the
// plain form panics with that same error.
func TestErrFormsReturnRecordedLoopFailure(t *testing.T) {
	r := must(op2.NewRuntime(op2.Config{Check: true, Lazy: true}))
	set := must(op2.NewSet(4, "cells"))
	x := must(op2.NewDat(set, 1, []float64{1, 2, 3, 4}, "x"))
	y := must(op2.NewDat[float64](set, 2, nil, "y"))
	g := must(op2.NewGlobal[float64](1, []float64{3}, "g"))
	ms := must(op2.NewMixedSet([]*op2.Set{set, set}, "ms"))
	md := must(op2.NewMixedDat[float64](ms, []int{1, 1}, nil, "md"))
	view := must(y.View(1))
	bad := op2.NewKernel("void errform_bad(const double *x, double *y) { y[0] = *x; ((double *)x)[0] = -1; }", "errform_bad")
	issue := func() { check(t, r.ParLoop(bad, set, x.Arg(op2.Read), y.Arg(op2.Write))) }
	wantChainError := func(what string, err error) {
		t.Helper()
		var ce *op2.ChainError
		if !errors.As(err, &ce) || ce.Kernel != "errform_bad" {
			t.Fatalf("%s: %v, want a *ChainError for errform_bad", what, err)
		}
		wantPrefixOnce(t, err)
		if n := op2.RecordedLoops(); n != 0 {
			t.Errorf("%s: %d loops still recorded", what, n)
		}
	}
	// ignore turns an Err form's results into its error.
	ignore := func(_ any, err error) error { return err }
	cases := []struct {
		name  string
		err   func() error
		plain func()
	}{
		{"Dat.Data", func() error { return ignore(x.DataErr()) }, func() { x.Data() }},
		{"Dat.DataRO", func() error { return ignore(x.DataROErr()) }, func() { x.DataRO() }},
		{"Dat.DataWO", func() error { return ignore(y.DataWOErr()) }, func() { y.DataWO() }},
		{"Global.Data", func() error { return ignore(g.DataErr()) }, func() { g.Data() }},
		{"Global.DataRO", func() error { return ignore(g.DataROErr()) }, func() { g.DataRO() }},
		{"Global.Value", func() error { return ignore(g.ValueErr()) }, func() { g.Value() }},
		{"DatView.DataRO", func() error { return ignore(view.DataROErr()) }, func() { view.DataRO() }},
		{"MixedDat.Data", func() error { return ignore(md.DataErr()) }, func() { md.Data() }},
		{"MixedDat.DataRO", func() error { return ignore(md.DataROErr()) }, func() { md.DataRO() }},
	}
	for _, c := range cases {
		issue()
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%sErr panicked: %v", c.name, p)
				}
			}()
			wantChainError(c.name+"Err", c.err())
		}()
		issue()
		func() {
			defer func() {
				p, ok := recover().(error)
				if !ok {
					t.Fatalf("%s did not panic with an error after a recorded loop failed: %v", c.name, p)
				}
				wantChainError(c.name+"'s panic", p)
			}()
			c.plain()
		}()
	}
	// After the failures, the Err forms give the values.
	if v, err := x.DataROErr(); err != nil || len(v) != 4 {
		t.Errorf("DataROErr with nothing failing: %v, %v", v, err)
	}
	if v, err := g.ValueErr(); err != nil || v != 3 {
		t.Errorf("ValueErr with nothing failing: %v, %v", v, err)
	}
}

// TestScalarErrFormsRefuseArrays: ValueErr and SetValueErr return an
// error for a Global whose dim is not 1, where Value and SetValue panic
// (a programming error).
func TestScalarErrFormsRefuseArrays(t *testing.T) {
	g := must(op2.NewGlobal[int32](2, nil, "pair"))
	if _, err := g.ValueErr(); err == nil || !strings.Contains(err.Error(), "Value needs dim 1") {
		t.Errorf("ValueErr on dim 2: %v", err)
	}
	if err := g.SetValueErr(1); err == nil || !strings.Contains(err.Error(), "SetValue needs dim 1") {
		t.Errorf("SetValueErr on dim 2: %v", err)
	}
	if got := g.DataRO(); got[0] != 0 || got[1] != 0 {
		t.Errorf("a refused SetValueErr changed the values: %v", got)
	}
	defer func() {
		if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "Value needs dim 1") {
			t.Errorf("Value on dim 2 panicked with %v", p)
		}
	}()
	g.Value()
}

// TestExtrudedSizeRunsNothing: the size of an extruded set with variable
// layers is read without running the recorded loops, so a recorded loop
// that fails does not make Size panic; the failure stays for the next
// call that runs them.
func TestExtrudedSizeRunsNothing(t *testing.T) {
	r := must(op2.NewRuntime(op2.Config{Check: true, Lazy: true}))
	base := must(op2.NewSet(3, "columns"))
	xs := must(op2.NewVariableExtrudedSet(base, 4, []int32{0, 4, 1, 3, 2, 2}, "layers"))
	x := must(op2.NewDat(base, 1, []float64{1, 2, 3}, "x"))
	y := must(op2.NewDat[float64](base, 1, nil, "y"))
	bad := op2.NewKernel("void sizes_bad(const double *x, double *y) { *y = *x; ((double *)x)[0] = -1; }", "sizes_bad")
	check(t, r.ParLoop(bad, base, x.Arg(op2.Read), y.Arg(op2.Write)))
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("Size panicked: %v", p)
			}
		}()
		if n := xs.Size(); n != 6 {
			t.Errorf("Size = %d, want 6", n)
		}
	}()
	if n := op2.RecordedLoops(); n != 1 {
		t.Errorf("Size ran the recorded loops: %d left, want 1", n)
	}
	var ce *op2.ChainError
	if err := op2.Wait(); !errors.As(err, &ce) {
		t.Errorf("Wait after Size: %v, want the recorded loop's *ChainError", err)
	}
}
