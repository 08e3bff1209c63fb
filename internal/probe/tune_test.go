package probe_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// tuneCfg is one configuration the auto-tuner probes run on.
type tuneCfg struct {
	name string
	cfg  op2.Config
}

var tuneCfgs = []tuneCfg{
	{"sequential", op2.Config{Backend: "sequential"}},
	{"openmp", op2.Config{Backend: "openmp", Threads: 2}},
	{"openmp-colour-block64", op2.Config{Backend: "openmp", Threads: 2, OpenMPScheme: "colour", BlockSize: 64}},
	{"opencl", op2.Config{Backend: "opencl"}},
	{"opencl-atomics-wg32-soa", op2.Config{Backend: "opencl", DeviceScheme: "atomics", DeviceWorkGroupSize: 32, DeviceLayout: "soa"}},
	{"opencl-wg256", op2.Config{Backend: "opencl", DeviceWorkGroupSize: 256}},
}

// tuneMesh: nn nodes, ne edges, edge e joins two pseudo-random nodes.
func tuneMesh(ne, nn int) (nodes, edges *op2.Set, pedge *op2.Map, tab []int32) {
	nodes = must(op2.NewSet(nn, "nodes"))
	edges = must(op2.NewSet(ne, "edges"))
	tab = make([]int32, 2*ne)
	for i := range tab {
		tab[i] = int32((i*7919 + i/2*31) % nn)
	}
	pedge = must(op2.NewMap(edges, nodes, 2, tab, "pedge"))
	return
}

var (
	kTuneInc = op2.NewKernel(`
void tinc(const int *e, const int *n0, const double *w, const double *xy, int *ca, int *cb,
          double *fa, double *fb, int *s, int *mn, int *mx, double *ds) {
  *ca += 1; *cb += *e % 7;
  *fa += *w * xy[0]; *fb -= *w * xy[1];
  *s += *n0; if (*e < *mn) *mn = *e; if (*e > *mx) *mx = *e; *ds += *w;
}`, "tinc")
	kTuneMinMax = op2.NewKernel(`void tmm(const double *w, double *lo0, double *lo1, double *hi0, double *hi1) {
  *lo0 = *w; *lo1 = *w; *hi0 = -*w; *hi1 = -*w; }`, "tmm")
	kTuneOpt = op2.NewKernel(`void topt(const double *w, double *a, double *b, int *c) {
  if (a) { *a += *w; *b += 2 * *w; } *c += 1; }`, "topt")
	kTuneDirect = op2.NewKernel(`void tdir(const double *w, double *v, double *s) { *v = 2 * *v + *w; *s += *v; }`, "tdir")
)

// tuneRun runs a fixed programme of loops calls times on r over a fresh
// mesh (renumbered first when renumber is set) and returns every result in
// the declared numbering: integer results, and double ones.
func tuneRun(t *testing.T, r *op2.Runtime, calls int, order orderFunc) ([]int64, []float64) {
	t.Helper()
	const ne, nn = 600, 200
	nodes, edges, pedge, _ := tuneMesh(ne, nn)
	wv := make([]float64, ne)
	for i := range wv {
		wv[i] = float64(i%13) + 0.25
	}
	xyv := make([]float64, 2*nn)
	for i := range xyv {
		xyv[i] = math.Sin(float64(i)) * 3
	}
	w := must(op2.NewDat(edges, 1, wv, "w"))
	xy := must(op2.NewDat(nodes, 2, xyv, "xy"))
	ci := must(op2.NewDat[int32](nodes, 2, nil, "ci"))
	fd := must(op2.NewDat[float64](nodes, 2, nil, "fd"))
	lo := must(op2.NewDat(nodes, 1, slices.Repeat([]float64{1e9}, nn), "lo"))
	hi := must(op2.NewDat(nodes, 1, slices.Repeat([]float64{-1e9}, nn), "hi"))
	oa := must(op2.NewDat[float64](nodes, 1, nil, "oa"))
	v := must(op2.NewDat[float64](edges, 1, nil, "v"))
	// A second edge set of another size, looped with the same kernels.
	edges2 := must(op2.NewSet(ne/2, "edges2"))
	tab2 := make([]int32, ne)
	for i := range tab2 {
		tab2[i] = int32((i*31 + 5) % nn)
	}
	pedge2 := must(op2.NewMap(edges2, nodes, 2, tab2, "pedge2"))
	w2 := must(op2.NewDat(edges2, 1, wv[:ne/2], "w2"))
	if order != nil {
		if _, err := op2.Renumber(order(pedge, xy)); err != nil {
			t.Fatalf("renumber: %v", err)
		}
	}
	var sub *op2.Subset
	{
		// The subset is declared after Renumber, so its indices are in the new numbering
		// of the same declared elements.
		dn := edges.DeclaredNumbers()
		var idx []int32
		for k, d := range dn {
			if d%3 != 1 {
				idx = append(idx, int32(k))
			}
		}
		sub = must(op2.NewSubset(edges, idx))
	}
	s := must(op2.NewGlobal(1, []int32{0}, "s"))
	mn := must(op2.NewGlobal(1, []int32{math.MaxInt32}, "mn"))
	mx := must(op2.NewGlobal(1, []int32{math.MinInt32}, "mx"))
	ds := must(op2.NewGlobal(1, []float64{0}, "ds"))
	c := must(op2.NewGlobal(1, []int32{0}, "c"))
	ds2 := must(op2.NewGlobal(1, []float64{0}, "ds2"))
	inc := func(set op2.IterationSet, m *op2.Map, w *op2.Dat[float64]) {
		check(t, r.ParLoop(kTuneInc, set, op2.ArgIdx(), m.ArgIdx(0), w.Arg(op2.Read), xy.ArgMap(op2.Read, m, 1),
			ci.ArgMap(op2.Inc, m, 0), ci.ArgMap(op2.Inc, m, 1), fd.ArgMap(op2.Inc, m, 0), fd.ArgMap(op2.Inc, m, 1),
			s.Arg(op2.Inc), mn.Arg(op2.Min), mx.Arg(op2.Max), ds.Arg(op2.Inc)))
	}
	for i := 0; i < calls; i++ {
		inc(edges, pedge, w)
		inc(sub, pedge, w)
		inc(edges2, pedge2, w2)
		check(t, r.ParLoop(kTuneMinMax, edges, w.Arg(op2.Read), lo.ArgMap(op2.Min, pedge, 0), lo.ArgMap(op2.Min, pedge, 1),
			hi.ArgMap(op2.Max, pedge, 0), hi.ArgMap(op2.Max, pedge, 1)))
		on := i%4 != 0
		check(t, r.ParLoop(kTuneOpt, edges, w.Arg(op2.Read), op2.Opt(on, oa.ArgMap(op2.Inc, pedge, 0)), op2.Opt(on, oa.ArgMap(op2.Inc, pedge, 1)), c.Arg(op2.Inc)))
		check(t, v.Zero())
		check(t, r.ParLoop(kTuneDirect, edges, w.Arg(op2.Read), v.Arg(op2.RW), ds2.Arg(op2.Inc)))
	}
	var ints []int64
	for _, x := range must(ci.Gather()) {
		ints = append(ints, int64(x))
	}
	ints = append(ints, int64(s.Value()), int64(mn.Value()), int64(mx.Value()), int64(c.Value()))
	var dbl []float64
	for _, d := range []*op2.Dat[float64]{fd, lo, hi, oa, v} {
		dbl = append(dbl, must(d.Gather())...)
	}
	dbl = append(dbl, ds.Value(), ds2.Value())
	return ints, dbl
}

// closeTo reports the first index where got and want differ by more
// than rel relative (-1 if none).
func closeTo(got, want []float64, rel float64) int {
	if len(got) != len(want) {
		return 0
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); d > rel*math.Max(math.Abs(want[i]), 1e-300) && d != 0 {
			return i
		}
	}
	return -1
}

// resetTuning removes the saved choices so that the next tuned runtime
// measures again (compiled programs stay in the cache).
func resetTuning(t *testing.T) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(cacheDir, "tuning-v2.json")); err != nil {
		t.Fatal(err)
	}
}

// Tuned runs (subsets, Opt on and off, Global INC/MIN/MAX, MIN/MAX
// through maps, index args, one kernel on two sets of different sizes, a
// direct loop) give the untuned results on every backend and
// configuration: integers exactly, doubles within 1e-12 relative. After
// enough calls every loop is tuned, and the timing report names a choice.
func TestTuneProbeSameResults(t *testing.T) {
	// Enough calls for the longest tuning (8 variants with the configured
	// work-group size 32, then 4 block sizes, then the configured setting
	// and the fastest again: 42 calls) of the loop with its optional
	// arguments on (3 calls in 4), and for the loop with them off.
	calls := 60
	for _, tc := range tuneCfgs {
		if testing.Short() && tc.cfg.Backend == "opencl" && tc.name != "opencl-atomics-wg32-soa" {
			continue // each opencl configuration compiles every variant (a minute with a cold PoCL cache)
		}
		t.Run(tc.name, func(t *testing.T) {
			resetTuning(t)
			base := tc.cfg
			base.CacheDir = cacheDir
			plain := must(op2.NewRuntime(base))
			wantI, wantD := tuneRun(t, plain, calls, nil)
			var log bytes.Buffer
			tc := base
			tc.Tune, tc.Timing = true, true
			tc.Logger = slog.New(slog.NewTextHandler(&log, nil))
			tuned := must(op2.NewRuntime(tc))
			gotI, gotD := tuneRun(t, tuned, calls, nil)
			if !slices.Equal(gotI, wantI) {
				t.Errorf("tuned integer results differ from untuned")
			}
			if i := closeTo(gotD, wantD, 1e-12); i >= 0 {
				t.Errorf("tuned double results differ from untuned at %d: %v vs %v", i, gotD[i], wantD[i])
			}
			// Under lazy evaluation a loop runs alone only at the run's
			// first or last forcing (before the loop it fuses with is
			// issued, or after the last): too few calls to tune, and
			// never the shape that keeps running. Every other loop is
			// tuned, and the again runtime must not measure it.
			fused, tunedBefore := "", map[string]bool{}
			for _, lt := range tuned.Timings() {
				if strings.HasPrefix(lt.Kernel, "fused_") {
					fused += lt.Kernel + "_"
				}
			}
			for _, lt := range tuned.Timings() {
				if lt.Calls <= 2 && strings.Contains(fused, "_"+lt.Kernel+"_") {
					continue
				}
				if lt.Tuned == "" || strings.HasPrefix(lt.Tuned, "measuring") {
					t.Errorf("%s over %s after %d calls: tuned %q", lt.Kernel, lt.Set, lt.Calls, lt.Tuned)
				}
				tunedBefore[lt.Kernel+" "+lt.Set] = true
			}
			var tab bytes.Buffer
			check(t, tuned.WriteTimingTable(&tab))
			t.Logf("\n%s", tab.String())
			if base.Backend != "sequential" && !strings.Contains(log.String(), "op2: tuned") {
				t.Errorf("nothing tuned:\n%s", log.String())
			}
			// A third runtime starts from the saved choices: same results, nothing measured.
			log.Reset()
			again := must(op2.NewRuntime(tc))
			gotI, gotD = tuneRun(t, again, 2, nil)
			wantI2, wantD2 := tuneRun(t, plain, 2, nil)
			if !slices.Equal(gotI, wantI2) || closeTo(gotD, wantD2, 1e-12) >= 0 {
				t.Errorf("results with saved choices differ from untuned")
			}
			if strings.Contains(log.String(), "op2: tuned") {
				t.Errorf("a runtime on the same cache measured again:\n%s", log.String())
			}
			for _, lt := range again.Timings() {
				if tunedBefore[lt.Kernel+" "+lt.Set] && strings.HasPrefix(lt.Tuned, "measuring") {
					t.Errorf("%s over %s with saved choices: %q", lt.Kernel, lt.Set, lt.Tuned)
				}
			}
		})
	}
}

// A corrupted, wrongly typed or unwritable tuning file costs tuning
// again, never a failed loop; a choice with a nonsensical block size
// saved for the loop does not break it either.
func TestTuneProbeBadFile(t *testing.T) {
	for _, backend := range []string{"openmp", "opencl"} {
		t.Run(backend, func(t *testing.T) { testTuneBadFile(t, backend) })
	}
}

func testTuneBadFile(t *testing.T, backend string) {
	path := filepath.Join(cacheDir, "tuning-v2.json")
	cfg := op2.Config{Backend: backend, Threads: 2, CacheDir: cacheDir, Tune: true}
	wantI, wantD := tuneRun(t, must(op2.NewRuntime(op2.Config{Backend: backend, Threads: 2, CacheDir: cacheDir})), 36, nil)
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T)
	}{
		{"garbage", func(t *testing.T) { check(t, os.WriteFile(path, []byte("{not json"), 0o600)) }},
		{"wrong types", func(t *testing.T) { check(t, os.WriteFile(path, []byte(`{"a": 5, "b": [1]}`), 0o600)) }},
		{"empty", func(t *testing.T) { check(t, os.WriteFile(path, nil, 0o600)) }},
		{"a directory", func(t *testing.T) { check(t, os.Mkdir(path, 0o700)) }},
		{"bad block sizes", func(t *testing.T) {
			// Tune once, then spoil every saved block size.
			resetTuning(t)
			tuneRun(t, must(op2.NewRuntime(cfg)), 36, nil)
			var saved map[string]map[string]any
			b := must(os.ReadFile(path))
			check(t, json.Unmarshal(b, &saved))
			if len(saved) == 0 {
				t.Fatalf("nothing saved: %s", b)
			}
			for k, s := range saved {
				s["block_size"] = -7
				saved[k] = s
			}
			check(t, os.WriteFile(path, must(json.Marshal(saved)), 0o600))
		}},
		{"huge block sizes", func(t *testing.T) {
			b := must(os.ReadFile(path))
			var saved map[string]map[string]any
			check(t, json.Unmarshal(b, &saved))
			for k, s := range saved {
				s["block_size"] = 1 << 40
				saved[k] = s
			}
			check(t, os.WriteFile(path, must(json.Marshal(saved)), 0o600))
		}},
		{"unknown variants", func(t *testing.T) {
			b := must(os.ReadFile(path))
			var saved map[string]map[string]any
			check(t, json.Unmarshal(b, &saved))
			for k, s := range saved {
				s["variant"] = "sideways"
				s["block_size"] = 0
				saved[k] = s
			}
			check(t, os.WriteFile(path, must(json.Marshal(saved)), 0o600))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name != "huge block sizes" && tc.name != "unknown variants" {
				resetTuning(t)
			}
			tc.prepare(t)
			defer func() {
				if st, err := os.Stat(path); err == nil && st.IsDir() {
					os.RemoveAll(path)
				}
			}()
			r, err := op2.NewRuntime(cfg)
			if err != nil {
				t.Fatalf("NewRuntime with a bad tuning file: %v", err)
			}
			gotI, gotD := tuneRun(t, r, 36, nil)
			if !slices.Equal(gotI, wantI) || closeTo(gotD, wantD, 1e-12) >= 0 {
				t.Errorf("results differ from untuned")
			}
		})
	}
}

// Two runtimes with different configurations on one cache directory,
// tuning in turn: both keep their choices in the file, and each later
// runtime starts tuned. Each run is of one iteration, so that under lazy
// evaluation every shape (a loop alone, a fused loop) recurs in every
// run (see TestTuneProbeLazyShapes); 37 runs tune the longest.
func TestTuneProbeTwoRuntimesOneCache(t *testing.T) {
	resetTuning(t)
	cfgA := op2.Config{Backend: "openmp", Threads: 2, CacheDir: cacheDir, Tune: true}
	cfgB := op2.Config{Backend: "openmp", Threads: 2, OpenMPScheme: "colour", CacheDir: cacheDir, Tune: true}
	a, b := must(op2.NewRuntime(cfgA)), must(op2.NewRuntime(cfgB))
	for range 37 {
		tuneRun(t, a, 1, nil)
		tuneRun(t, b, 1, nil)
	}
	for _, cfg := range []op2.Config{cfgA, cfgB} {
		var log bytes.Buffer
		cfg.Logger = slog.New(slog.NewTextHandler(&log, nil))
		cfg.Timing = true
		r := must(op2.NewRuntime(cfg))
		tuneRun(t, r, 1, nil)
		if strings.Contains(log.String(), "op2: tuned") {
			t.Errorf("scheme %q: choices lost, tuned again", cfg.OpenMPScheme)
		}
		for _, lt := range r.Timings() {
			if strings.HasPrefix(lt.Tuned, "measuring") {
				t.Errorf("scheme %q: %s over %s is measured again", cfg.OpenMPScheme, lt.Kernel, lt.Set)
			}
		}
	}
}

// Timing switched on while loops are being tuned: the report then shows
// the measurement and, once done, the choice.
func TestTuneProbeTimingMidway(t *testing.T) {
	resetTuning(t)
	r := must(op2.NewRuntime(op2.Config{Backend: "opencl", CacheDir: cacheDir, Tune: true}))
	nodes, edges, pedge, _ := tuneMesh(300, 100)
	a := must(op2.NewDat[int32](nodes, 1, nil, "a"))
	k := op2.NewKernel(`void tmid(int *a, int *b) { *a += 1; *b += 1; }`, "tmid")
	loop := func() { check(t, r.ParLoop(k, edges, a.ArgMap(op2.Inc, pedge, 0), a.ArgMap(op2.Inc, pedge, 1))) }
	for range 5 {
		loop()
	}
	r.EnableTiming(true)
	loop()
	if ts := r.Timings(); len(ts) != 1 || !strings.HasPrefix(ts[0].Tuned, "measuring") {
		t.Errorf("timing switched on while tuning: %+v", ts)
	}
	for range 46 {
		loop()
	}
	ts := r.Timings()
	if len(ts) != 1 || ts[0].Calls != 47 || ts[0].Tuned == "" || strings.HasPrefix(ts[0].Tuned, "measuring") {
		t.Errorf("after tuning: %+v", ts)
	}
	var csvb, js bytes.Buffer
	check(t, r.WriteTimingCSV(&csvb))
	check(t, r.WriteTimingJSON(&js))
	if !strings.Contains(csvb.String(), "tuned") || !strings.Contains(js.String(), `"tuned"`) {
		t.Errorf("CSV/JSON lack the tuned column:\n%s\n%s", csvb.String(), js.String())
	}
	want := make([]int32, 100)
	for _, x := range pedge.Values() {
		want[x] += 52
	}
	if got := a.Data(); !slices.Equal(got, want) {
		t.Errorf("results: %v, want %v", got[:8], want[:8])
	}
}

// Tune after Renumber (RCM, RCB, RCB of the edges' centres): the results,
// in the declared numbering, are the plain run's.
func TestTuneProbeRenumber(t *testing.T) {
	for _, backend := range []string{"sequential", "openmp", "opencl"} {
		t.Run(backend, func(t *testing.T) {
			resetTuning(t)
			plain := must(op2.NewRuntime(op2.Config{Backend: backend, CacheDir: cacheDir, Threads: 2}))
			wantI, wantD := tuneRun(t, plain, 3, nil)
			tuned := must(op2.NewRuntime(op2.Config{Backend: backend, CacheDir: cacheDir, Threads: 2, Tune: true}))
			for _, name := range []string{"rcm", "rcb", "rcb-centre"} {
				t.Run(name, func(t *testing.T) {
					gotI, gotD := tuneRun(t, tuned, 3, orderings[name])
					if !slices.Equal(gotI, wantI) {
						t.Errorf("integer results differ after renumbering")
					}
					if i := closeTo(gotD, wantD, 1e-12); i >= 0 {
						t.Errorf("double results differ after renumbering at %d: %v vs %v", i, gotD[i], wantD[i])
					}
				})
			}
		})
	}
}

// orderFunc makes an ordering for tuneRun's mesh.
type orderFunc func(pedge *op2.Map, xy *op2.Dat[float64]) op2.Ordering

var orderings = map[string]orderFunc{
	"rcm":        func(pedge *op2.Map, xy *op2.Dat[float64]) op2.Ordering { return op2.RCMOrdering(pedge) },
	"rcb":        func(pedge *op2.Map, xy *op2.Dat[float64]) op2.Ordering { return op2.RCBOrdering(xy) },
	"rcb-centre": func(pedge *op2.Map, xy *op2.Dat[float64]) op2.Ordering { return op2.RCBCentreOrdering(xy, pedge) },
}

// A choice tuned with a configured BlockSize (which leaves the block
// sizes untried) must not stand for a configuration without one: the
// choices are keyed by the configuration.
func TestTuneProbeBlockSizeConfigKeyed(t *testing.T) {
	resetTuning(t)
	nodes, edges, pedge, _ := tuneMesh(2000, 600)
	a := must(op2.NewDat[int32](nodes, 1, nil, "a"))
	k := op2.NewKernel(`void tbs(int *a, int *b) { *a += 1; *b += 1; }`, "tbs")
	run := func(cfg op2.Config, calls int) string {
		var log bytes.Buffer
		cfg.Backend, cfg.Threads, cfg.CacheDir, cfg.Tune, cfg.Timing = "openmp", 2, cacheDir, true, true
		cfg.Logger = slog.New(slog.NewTextHandler(&log, nil))
		r := must(op2.NewRuntime(cfg))
		for range calls {
			check(t, r.ParLoop(k, edges, a.ArgMap(op2.Inc, pedge, 0), a.ArgMap(op2.Inc, pedge, 1)))
		}
		if ts := r.Timings(); len(ts) == 1 {
			t.Logf("block size %d: tuned %q", cfg.BlockSize, ts[0].Tuned)
			if cfg.BlockSize > 0 && !strings.Contains(ts[0].Tuned, fmt.Sprintf("block %d", cfg.BlockSize)) {
				t.Errorf("configured block size %d, timing report says %q", cfg.BlockSize, ts[0].Tuned)
			}
		}
		return log.String()
	}
	// The variants: 2 schemes × (scalar, 4 and 8 SIMD lanes), 3 calls
	// each; then, without a configured block size, 4 block sizes; then
	// the configured setting and the fastest again.
	if log := run(op2.Config{BlockSize: 64}, 26); !strings.Contains(log, "op2: tuned") {
		t.Fatalf("not tuned with BlockSize 64:\n%s", log)
	}
	if log := run(op2.Config{}, 41); !strings.Contains(log, "op2: tuned") || !strings.Contains(log, "block 1024") {
		t.Errorf("without a configured block size the block sizes were not tuned (the BlockSize 64 run's choice was taken):\n%s", log)
	}
}

// A loop over subsets of a new size at every call: each size is its own
// loop for the tuner; results stay right.
func TestTuneProbeSubsetSizesVary(t *testing.T) {
	resetTuning(t)
	r := must(op2.NewRuntime(op2.Config{Backend: "openmp", Threads: 2, CacheDir: cacheDir, Tune: true, Timing: true}))
	nodes, edges, pedge, tab := tuneMesh(700, 200)
	a := must(op2.NewDat[int32](nodes, 1, nil, "a"))
	k := op2.NewKernel(`void tsv(int *a, int *b) { *a += 1; *b += 1; }`, "tsv")
	want := make([]int32, 200)
	for i := range 20 {
		var idx []int32
		for e := 0; e < 700; e += 1 + i%5 {
			idx = append(idx, int32(e))
		}
		idx = idx[:len(idx)-i]
		for _, e := range idx {
			want[tab[2*e]]++
			want[tab[2*e+1]]++
		}
		sub := must(op2.NewSubset(edges, idx))
		check(t, r.ParLoop(k, sub, a.ArgMap(op2.Inc, pedge, 0), a.ArgMap(op2.Inc, pedge, 1)))
	}
	if got := a.Data(); !slices.Equal(got, want) {
		t.Errorf("results differ")
	}
	t.Logf("%+v", r.Timings())
}

// DeviceWorkGroupSize: powers of two from 32 to 1024, else refused (as
// Config and as OP2_DEVICE_WORKGROUP); within that, loops run right.
func TestProbeWorkGroupSizes(t *testing.T) {
	for _, n := range []int{-64, 1, 16, 48, 100, 2048, 1 << 20} {
		if _, err := op2.NewRuntime(op2.Config{Backend: "opencl", CacheDir: cacheDir, DeviceWorkGroupSize: n}); err == nil {
			t.Errorf("DeviceWorkGroupSize %d accepted", n)
		}
	}
	for _, v := range []string{"abc", "48", "2048", "-32", " 64x"} {
		t.Run("env "+v, func(t *testing.T) {
			t.Setenv("OP2_DEVICE_WORKGROUP", v)
			if _, err := op2.NewRuntime(op2.Config{Backend: "opencl", CacheDir: cacheDir}); err == nil {
				t.Errorf("OP2_DEVICE_WORKGROUP=%q accepted", v)
			}
		})
	}
	plain := must(op2.NewRuntime(op2.Config{Backend: "sequential", CacheDir: cacheDir}))
	wantI, wantD := tuneRun(t, plain, 2, nil)
	sizes := []int{32, 512, 1024}
	if testing.Short() {
		sizes = []int{1024} // 32 runs in TestTuneProbeSameResults
	}
	for _, n := range sizes {
		for _, scheme := range []string{"staged", "atomics"} {
			t.Run(fmt.Sprintf("wg%d-%s", n, scheme), func(t *testing.T) {
				needOpenCL(t)
				r, err := op2.NewRuntime(op2.Config{Backend: "opencl", CacheDir: cacheDir, DeviceWorkGroupSize: n, DeviceScheme: scheme, DeviceLayout: "soa"})
				if err != nil {
					t.Skipf("device refuses: %v", err)
				}
				gotI, gotD := tuneRun(t, r, 2, nil)
				if !slices.Equal(gotI, wantI) || closeTo(gotD, wantD, 1e-12) >= 0 {
					t.Errorf("results differ from sequential")
				}
			})
		}
	}
}
