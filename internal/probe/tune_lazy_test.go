package probe_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// TestTuneProbeLazyShapes: with lazy evaluation (the default, with Tune
// too) the tuner measures the loops that run, each shape apart: a loop
// alone, the fused loop it makes with its neighbour where they fuse, a
// loop whose optional arguments are on or off. A runtime (openmp) runs
// tuneRun's programme one iteration at a time (forced at the same points
// each time, so that every shape recurs) until all are tuned; a second
// runtime on the same cache then measures nothing. (With six iterations
// per run, a loop issued after the previous iteration's last one fuses
// with it, and runs alone only once per run: too few calls to tune that
// shape, which a run of one iteration then measures again.)
func TestTuneProbeLazyShapes(t *testing.T) {
	resetTuning(t)
	// Fusion auto, the default: a runtime that tunes builds fused loops
	// when first wanted, not in the background, else the loops would run
	// apart at first, a shape of their own that would get too few calls
	// to tune.
	cfg := op2.Config{Backend: "openmp", Threads: 2, CacheDir: cacheDir, Tune: true, Timing: true}
	r := must(op2.NewRuntime(cfg))
	// The longest tuning: 6 variants (2 schemes, scalar and 2 SIMD
	// widths), then 4 block sizes, then the configured setting and the
	// fastest again, 3 calls each; then a call that runs the choice.
	for range 37 {
		tuneRun(t, r, 1, nil)
	}
	fused := false
	for _, lt := range r.Timings() {
		fused = fused || strings.HasPrefix(lt.Kernel, "fused_")
		if lt.Tuned == "" || strings.HasPrefix(lt.Tuned, "measuring") {
			t.Errorf("%s over %s after %d calls: tuned %q", lt.Kernel, lt.Set, lt.Calls, lt.Tuned)
		}
	}
	if !fused {
		t.Errorf("no fused loop ran: the probe no longer tunes fused loops")
	}
	var log bytes.Buffer
	cfg.Logger = slog.New(slog.NewTextHandler(&log, nil))
	again := must(op2.NewRuntime(cfg))
	tuneRun(t, again, 1, nil)
	if strings.Contains(log.String(), "op2: tuned") {
		t.Errorf("choices lost, tuned again:\n%s", log.String())
	}
	for _, lt := range again.Timings() {
		if strings.HasPrefix(lt.Tuned, "measuring") {
			t.Errorf("%s over %s is measured again", lt.Kernel, lt.Set)
		}
	}
}
