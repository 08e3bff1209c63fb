package op2_test

import (
	"context"
	"errors"
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
