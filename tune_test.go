package op2_test

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"
	"testing"

	op2 "github.com/goop2/op2"
)

// TestTuneSameResults: with Config.Tune, the first calls of a loop try
// the backend's variants and several block sizes and the fastest is kept;
// every call gives the untuned results (integer increments: exact in any
// order), the timing report shows the choice, a repeated loop then
// allocates nothing, and a runtime on the same cache directory starts with
// the saved choice (no measurement, nothing logged).
func TestTuneSameResults(t *testing.T) {
	for _, backend := range allBackends {
		if backend == "sequential" {
			continue // no plans for this loop there
		}
		t.Run(backend, func(t *testing.T) {
			cache := t.TempDir()
			edges, nodes, m := scatteredEdges(3000, 1000, 7919, 2)
			k := op2.NewKernel("void tune_inc(int *a, int *b, int *n) { *a += 1; *b += 2; *n += 1; }", "tune_inc")
			run := func(r *op2.Runtime, calls int) []int32 {
				acc := must(op2.NewDat[int32](nodes, 1, nil, "acc"))
				n := must(op2.NewGlobal(1, []int32{0}, "n"))
				for i := 0; i < calls; i++ {
					check(t, r.ParLoop(k, edges, acc.ArgMap(op2.Inc, m, 0), acc.ArgMap(op2.Inc, m, 1), n.Arg(op2.Inc)))
				}
				return append(acc.Data(), n.Data()...) // the increments, and the reduction
			}
			plain := must(op2.NewRuntime(op2.Config{Backend: backend, CacheDir: cache}))
			const calls = 60 // more than any backend's variants and block sizes take
			want := run(plain, calls)

			var log bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&log, nil))
			tuned := must(op2.NewRuntime(op2.Config{Backend: backend, CacheDir: cache, Tune: true, Logger: logger, Threads: 2, Timing: true}))
			if got := run(tuned, calls); !slices.Equal(got, want) {
				t.Fatalf("tuned results differ from untuned")
			}
			if !strings.Contains(log.String(), "op2: tuned") {
				t.Errorf("no choice logged:\n%s", log.String())
			}
			if backend == "openmp" && (!strings.Contains(log.String(), "owner: ") || !strings.Contains(log.String(), "colour: ")) {
				t.Errorf("the openmp schemes were not both tried:\n%s", log.String())
			}
			if ts := tuned.Timings(); len(ts) != 1 || ts[0].Tuned == "" || strings.HasPrefix(ts[0].Tuned, "measuring") {
				t.Errorf("timing report after tuning: %+v, want the choice in Tuned", ts)
			} else if !strings.Contains(log.String(), "chosen=\""+ts[0].Tuned+"\"") && !strings.Contains(log.String(), "chosen="+ts[0].Tuned+" ") {
				t.Errorf("the timing report's choice %q is not the logged one:\n%s", ts[0].Tuned, log.String())
			}
			acc := must(op2.NewDat[int32](nodes, 1, nil, "acc2"))
			cnt := must(op2.NewGlobal(1, []int32{0}, "n"))
			if n := testing.AllocsPerRun(20, func() {
				check(t, tuned.ParLoop(k, edges, acc.ArgMap(op2.Inc, m, 0), acc.ArgMap(op2.Inc, m, 1), cnt.Arg(op2.Inc)))
			}); n != 0 {
				t.Errorf("a tuned repeated loop allocates %v times", n)
			}

			log.Reset()
			again := must(op2.NewRuntime(op2.Config{Backend: backend, CacheDir: cache, Tune: true, Logger: logger, Threads: 2}))
			if got := run(again, calls); !slices.Equal(got, want) {
				t.Fatalf("results with the saved choice differ from untuned")
			}
			if strings.Contains(log.String(), "op2: tuned") {
				t.Errorf("a runtime on the same cache tuned again:\n%s", log.String())
			}
		})
	}
}
