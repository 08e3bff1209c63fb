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
