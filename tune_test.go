package op2_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

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
			plain := closeAtEnd(t, must(op2.NewRuntime(op2.Config{Backend: backend, CacheDir: cache})))
			const calls = 60 // more than any backend's variants and block sizes take
			want := run(plain, calls)

			var log bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&log, nil))
			tuned := closeAtEnd(t, must(op2.NewRuntime(op2.Config{Backend: backend, CacheDir: cache, Tune: true, Logger: logger, Threads: 2, Timing: true})))
			if got := run(tuned, calls); !slices.Equal(got, want) {
				t.Fatalf("tuned results differ from untuned")
			}
			if !strings.Contains(log.String(), "op2: tuned") {
				t.Errorf("no choice logged:\n%s", log.String())
			}
			if backend == "openmp" && (!strings.Contains(log.String(), "owner+scalar: ") || !strings.Contains(log.String(), "colour+scalar: ") ||
				!strings.Contains(log.String(), "owner+simd4: ") || !strings.Contains(log.String(), "colour+simd8: ")) {
				t.Errorf("the openmp schemes were not both tried, with and without SIMD lanes:\n%s", log.String())
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
			again := closeAtEnd(t, must(op2.NewRuntime(op2.Config{Backend: backend, CacheDir: cache, Tune: true, Logger: logger, Threads: 2})))
			if got := run(again, calls); !slices.Equal(got, want) {
				t.Fatalf("results with the saved choice differ from untuned")
			}
			if strings.Contains(log.String(), "op2: tuned") {
				t.Errorf("a runtime on the same cache tuned again:\n%s", log.String())
			}
		})
	}
}

// TestTuneFileNotChoices: with tuning on, a tuning file holding JSON null
// (which used to panic at the first choice saved), or a FIFO in its place
// (which used to block the runtime's creation for ever), is ignored with
// a warning naming it; the loop runs, is tuned, and its choice replaces
// the file.
func TestTuneFileNotChoices(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		prepare    func(path string) error
	}{
		{"null", "it holds null, not an object of choices", func(p string) error { return os.WriteFile(p, []byte("null"), 0o600) }},
		{"fifo", "is a named pipe (FIFO), not a regular file", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			path := filepath.Join(cache, "tuning-v2.json")
			check(t, tc.prepare(path))
			edges, nodes, m := scatteredEdges(3000, 1000, 7919, 2)
			k := op2.NewKernel("void tune_file(int *a, int *b) { *a += 1; *b += 2; }", "tune_file")
			var log bytes.Buffer
			made := make(chan *op2.Runtime, 1)
			go func() {
				made <- must(op2.NewRuntime(op2.Config{Backend: "openmp", CacheDir: cache, Tune: true, Threads: 2,
					Logger: slog.New(slog.NewTextHandler(&log, nil))}))
			}()
			var r *op2.Runtime
			select {
			case r = <-made:
			case <-time.After(20 * time.Second):
				t.Fatal("NewRuntime still blocks after 20s")
			}
			closeAtEnd(t, r)
			acc := must(op2.NewDat[int32](nodes, 1, nil, "acc"))
			for range 60 {
				check(t, r.ParLoop(k, edges, acc.ArgMap(op2.Inc, m, 0), acc.ArgMap(op2.Inc, m, 1)))
			}
			check(t, r.Wait()) // lazy: the loops run, and are tuned, when forced
			if !strings.Contains(log.String(), `level=WARN msg="op2: tuning file"`) || !strings.Contains(log.String(), path+" "+tc.want) &&
				!strings.Contains(log.String(), path+" ignored: "+tc.want) {
				t.Errorf("no warning naming %s and saying %q:\n%s", path, tc.want, log.String())
			}
			if !strings.Contains(log.String(), "op2: tuned") {
				t.Errorf("the loop was not tuned:\n%s", log.String())
			}
			var saved map[string]any
			if b, err := os.ReadFile(path); err != nil || json.Unmarshal(b, &saved) != nil || len(saved) == 0 {
				t.Errorf("the choice did not replace the file: %q, %v", b, err)
			}
		})
	}
}
