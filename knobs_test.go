package op2_test

import (
	"os"
	"sync"
	"testing"

	"github.com/goop2/op2"
)

// runsOn checks that a loop runs and computes on the current backend.
func runsOn(t *testing.T) {
	t.Helper()
	set := must(op2.NewSet(600, "s"))
	x := must(op2.NewDat[int32](set, 1, nil, "x"))
	check(t, op2.ParLoop(op2.NewKernel("void knob_one(int *x) { *x = 7; }", "knob_one"), set, x.Arg(op2.Write)))
	if got := x.Data()[599]; got != 7 {
		t.Fatalf("x[599] = %d, want 7", got)
	}
}

// TestThreadCountBounded: a thread count above MaxThreads, from the
// configuration or OMP_NUM_THREADS, is refused with an error naming where it
// came from and the limit; the previous configuration stays in use.
func TestThreadCountBounded(t *testing.T) {
	cache := os.Getenv("OP2_CACHE_DIR")
	check(t, op2.Configure(op2.Config{Backend: "openmp", CacheDir: cache, PlanCheck: true}))
	defer func() { check(t, op2.Configure(op2.Config{CacheDir: cache, PlanCheck: true})) }()
	for _, n := range []int{op2.MaxThreads + 1, 100000, 1 << 40} {
		wantErr(t, op2.Configure(op2.Config{Backend: "openmp", Threads: n, CacheDir: cache}), "Config.Threads", "1024")
		if b := op2.Backend(); b != "openmp" {
			t.Fatalf("after a refused Configure the backend is %q, want openmp", b)
		}
		runsOn(t)
	}
	for _, v := range []string{"100000", "1025", "99999999999999999999"} {
		t.Run("OMP_NUM_THREADS="+v, func(t *testing.T) {
			t.Setenv("OMP_NUM_THREADS", v)
			wantErr(t, op2.Configure(op2.Config{Backend: "openmp", CacheDir: cache}), "OMP_NUM_THREADS")
			runsOn(t)
		})
	}
	t.Setenv("OMP_NUM_THREADS", "1024")
	check(t, op2.Configure(op2.Config{Backend: "openmp", CacheDir: cache, PlanCheck: true}))
	runsOn(t)
}

// TestFailedConfigureKeepsState: a Configure that fails (unknown backend,
// bad value) leaves the previous configuration and backend working, as a
// failed Use does.
func TestFailedConfigureKeepsState(t *testing.T) {
	cache := os.Getenv("OP2_CACHE_DIR")
	check(t, op2.Configure(op2.Config{Backend: "openmp", CacheDir: cache, PlanCheck: true}))
	defer func() { check(t, op2.Configure(op2.Config{CacheDir: cache, PlanCheck: true})) }()
	runsOn(t)
	bad := []op2.Config{
		{Backend: "no-such-backend"},
		{Backend: "sequential", Threads: -1},
		{Backend: "opencl", OpenCLDevice: "no-such-device-type"},
		{Backend: "opencl", OpenCLPlatform: "no-such-platform-anywhere"},
	}
	for _, c := range bad {
		if err := op2.Configure(c); err == nil {
			t.Fatalf("Configure(%+v) succeeded", c)
		}
		if b := op2.Backend(); b != "openmp" {
			t.Fatalf("after a failed Configure(%+v) the backend is %q, want openmp", c, b)
		}
		runsOn(t)
	}
	wantErr(t, op2.Use("no-such-backend"), "unknown backend")
	runsOn(t)
}

// TestConstSetValueRace: Set and Value may run at once (run with -race);
// Value never sees a half-written value.
func TestConstSetValueRace(t *testing.T) {
	c := must(op2.NewConst(4, []float64{0, 0, 0, 0}, "race_const"))
	defer c.Remove()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < 2000; i++ {
			v := float64(i)
			check(t, c.Set(v, v, v, v))
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < 2000; i++ {
			v := c.Value()
			if v[0] != v[1] || v[1] != v[2] || v[2] != v[3] {
				t.Errorf("torn value %v", v)
				return
			}
		}
	}()
	wg.Wait()
}
