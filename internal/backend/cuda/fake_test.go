package cuda_test

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/cuda"
	"github.com/goop2/op2/internal/cuda/cudatest"
	"github.com/goop2/op2/internal/nvrtc"
	"github.com/goop2/op2/internal/testreq"
)

// TestBackendOnFakeDriver runs loops on the cuda backend, with launches
// batched into CUDA graphs (OP2_CUDA_GRAPHS=1), over the stand-in driver
// of package cudatest. NVRTC compiles the loops for real; the
// stand-in's kernels do nothing, so the values are not checked: this
// checks the backend's path around the kernels (uploads, map tables,
// reductions kept on the device and read, the batches and their graphs,
// a Global's new values written by kernel launches) end to end without a
// GPU.
func TestBackendOnFakeDriver(t *testing.T) {
	if cudatest.Child() {
		backendOnFakeDriver(t)
		return
	}
	if _, err := nvrtc.Load(); err != nil {
		testreq.Check(t, "nvrtc", err, nvrtc.ErrUnavailable)
	}
	log := cudatest.Run(t, "TestBackendOnFakeDriver", "OP2_CUDA_GRAPHS=1", "OP2_CACHE_DIR="+filepath.Join(t.TempDir(), "cache"))
	// Ten batches of 12 launches (the first ones split by the first
	// calls' uploads): c's value set before each pair of loops goes as a
	// kernel launch (poke), so that the batches of 1, 2, 3, 1, then 2, 3,
	// 1, 2, then 3, 1, 2, 3 repeat; each seen once goes one by one, the
	// others as graphs.
	if n := strings.Count(log, "graph launch 12"); n < 4 {
		t.Errorf("%d graphs of 12 kernels launched, want at least 4 (40 repeats of the same two loops, read every fourth time):\n%s", n, log)
	}
	for _, v := range []float64{1, 2, 3} {
		if want := fmt.Sprintf("poke 8 %d\n", math.Float64bits(v)); strings.Count(log, want) < 10 {
			t.Errorf("c = %v was not written by the poke kernel at least 10 times (%q)", v, want)
		}
	}
	if n := strings.Count(log, "htod 8\n"); n > 1 {
		t.Errorf("%d copies of 8 bytes to the device, want at most 1 (c's first value)", n)
	}
	if n := strings.Count(log, "noop "); n < 80 {
		t.Errorf("%d kernels ran, want at least 80", n)
	}
	// The staged scheme (plans on the device, a launch per colour) and
	// the warp scheme take the same path to the device.
	for _, scheme := range []string{"staged", "warp"} {
		log := cudatest.Run(t, "TestBackendOnFakeDriver", "OP2_CUDA_GRAPHS=1", "OP2_DEVICE_SCHEME="+scheme, "OP2_CACHE_DIR="+filepath.Join(t.TempDir(), "cache"))
		if !strings.Contains(log, "graph launch ") || strings.Count(log, "htod 8\n") > 1 {
			t.Errorf("%s: no graph launched, or c copied more than once:\n%s", scheme, log)
		}
	}
}

func backendOnFakeDriver(t *testing.T) {
	// Batches as a host keeping up makes them: on a loaded machine a
	// batch waiting over a millisecond would go early, and another
	// shape of batch would be new (a graph made, allocations).
	defer cuda.SetBatchDelay(cuda.SetBatchDelay(time.Hour))
	r, err := op2.NewRuntime(op2.Config{Backend: "cuda"})
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := op2.NewSet(100, "nodes")
	if err != nil {
		t.Fatal(err)
	}
	edges, err := op2.NewSet(99, "edges")
	if err != nil {
		t.Fatal(err)
	}
	table := make([]int32, 0, 2*99)
	for e := range int32(99) {
		table = append(table, e, e+1)
	}
	m, err := op2.NewMap(edges, nodes, 2, table, "m")
	if err != nil {
		t.Fatal(err)
	}
	x, err := op2.NewDat[float64](nodes, 2, nil, "x")
	if err != nil {
		t.Fatal(err)
	}
	w, err := op2.NewDat[float64](edges, 1, nil, "w")
	if err != nil {
		t.Fatal(err)
	}
	g, err := op2.NewGlobal[float64](1, nil, "g")
	if err != nil {
		t.Fatal(err)
	}
	c, err := op2.NewGlobal[float64](1, nil, "c")
	if err != nil {
		t.Fatal(err)
	}
	scale := op2.NewKernel("void scale(double *x, double *g, const double *c) { x[0] *= c[0]; *g += x[1]; }", "scale")
	spread := op2.NewKernel("void spread(const double *w, double *a, double *b) { a[0] += w[0]; b[1] += w[0]; }", "spread")
	for i := range 40 {
		c.SetValue(float64(1 + i%3))
		if err := r.ParLoop(scale, nodes, x.Arg(op2.RW), g.Arg(op2.Inc), c.Arg(op2.Read)); err != nil {
			t.Fatal(err)
		}
		if err := r.ParLoop(spread, edges, w.Arg(op2.Read), x.ArgMap(op2.Inc, m, 0), x.ArgMap(op2.Inc, m, 1)); err != nil {
			t.Fatal(err)
		}
		if i%4 == 3 {
			if _, err := g.ValueErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Once the batches repeat, the loops allocate nothing: batched,
	// poked, replayed as graphs.
	var err1 error
	allocs := testing.AllocsPerRun(10, func() {
		for i := range 3 {
			c.SetValue(float64(1 + i))
			err1 = errors.Join(err1, r.ParLoop(scale, nodes, x.Arg(op2.RW), g.Arg(op2.Inc), c.Arg(op2.Read)),
				r.ParLoop(spread, edges, w.Arg(op2.Read), x.ArgMap(op2.Inc, m, 0), x.ArgMap(op2.Inc, m, 1)))
		}
		_, err := g.ValueErr()
		err1 = errors.Join(err1, err)
	})
	if err1 != nil {
		t.Fatal(err1)
	}
	if allocs != 0 {
		t.Errorf("repeated loops on cuda with batched launches: %v allocations a round, want 0", allocs)
	}
	if _, err := x.DataErr(); err != nil {
		t.Fatal(err)
	}
}
