package op2_test

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/exec"
)

// TestSameSourceKernelsShareProgram: declaring the same kernel again for
// every loop (a new Kernel object each time) uses one program, so the
// program cache does not grow.
func TestSameSourceKernelsShareProgram(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		set := must(op2.NewSet(10, "s"))
		x := must(op2.NewDat[int32](set, 1, nil, "x"))
		src := "void share_prog(int *x) { *x += 1; }"
		check(t, op2.ParLoop(op2.NewKernel(src, "share_prog"), set, x.Arg(op2.RW)))
		before := op2.ReadStats()
		for i := 0; i < 200; i++ {
			check(t, op2.ParLoop(op2.NewKernel(src, "share_prog"), set, x.Arg(op2.RW)))
		}
		after := op2.ReadStats()
		if after.ProgramCache != before.ProgramCache || after.Generations != before.Generations {
			t.Errorf("200 same-source kernels: program cache %d -> %d, generations %d -> %d; want no change",
				before.ProgramCache, after.ProgramCache, before.Generations, after.Generations)
		}
		if got := x.Data()[3]; got != 201 {
			t.Errorf("x[3] = %d, want 201", got)
		}
	})
}

// TestProgramCacheBounded: kernels with ever-different sources keep at most
// the cache's capacity of programs; a dropped program is built again when
// its loop runs again.
func TestProgramCacheBounded(t *testing.T) {
	defer op2.SetMaxPrograms(4)()
	set := must(op2.NewSet(10, "s"))
	x := must(op2.NewDat[int32](set, 1, nil, "x"))
	kernel := func(i int) *op2.Kernel {
		return op2.NewKernel(fmt.Sprintf("void bounded_prog(int *x) { *x += %d; }", i), "bounded_prog")
	}
	want := int32(0)
	for i := 1; i <= 10; i++ {
		check(t, op2.ParLoop(kernel(i), set, x.Arg(op2.RW)))
		want += int32(i)
		if n := op2.ReadStats().ProgramCache; n > 4 {
			t.Fatalf("after %d kernels the program cache holds %d programs, want at most 4", i, n)
		}
	}
	check(t, op2.ParLoop(kernel(1), set, x.Arg(op2.RW)))
	want++
	if got := x.Data()[0]; got != want {
		t.Errorf("x[0] = %d, want %d", got, want)
	}
}

// TestDroppedProgramsReleaseTheirCode: programs that leave the program
// cache unload their host library (and free their OpenCL program and
// kernel), so a process that runs ever new kernel sources keeps a bounded
// amount of code loaded; a dropped program's loop runs again correctly.
func TestDroppedProgramsReleaseTheirCode(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		defer op2.SetMaxPrograms(3)()
		set := must(op2.NewSet(100, "s"))
		x := must(op2.NewDat[int32](set, 1, nil, "x"))
		kernel := func(i int) *op2.Kernel {
			return op2.NewKernel(fmt.Sprintf("void released_prog(int *x) { *x += %d; }", i), "released_prog")
		}
		base := op2.ReadStats().Libraries
		want := int32(0)
		for round := 0; round < 2; round++ {
			for i := 1; i <= 12; i++ {
				check(t, op2.ParLoop(kernel(i), set, x.Arg(op2.RW)))
				want += int32(i)
				if n := op2.ReadStats().Libraries; n > base+3 {
					t.Fatalf("after %d kernels %d libraries are loaded, want at most %d", i, n, base+3)
				}
			}
		}
		for i, v := range x.DataRO() {
			if v != want {
				t.Fatalf("x[%d] = %d, want %d", i, v, want)
			}
		}
	})
}

// TestUnloadingKeepsRuntimes: when every program is dropped (Configure
// drops them all) their libraries are unloaded, but the OpenMP runtime they
// brought in stays, since its worker threads live on; the process goes on
// running loops. Run in a fresh process, where no other library holds the
// runtime.
func TestUnloadingKeepsRuntimes(t *testing.T) {
	out, err := runHelper(t, os.Getenv("OP2_CACHE_DIR"), "reconfigure-openmp")
	if err != nil || out != "ok" {
		t.Fatalf("helper process: %v\n%s", err, out)
	}
}

// reconfigureOpenMP is TestUnloadingKeepsRuntimes' helper process.
func reconfigureOpenMP() int {
	cache := os.Getenv("OP2_TEST_CACHE")
	set := must(op2.NewSet(1000, "s"))
	x := must(op2.NewDat[int32](set, 1, nil, "x"))
	k := op2.NewKernel("void unload_inc(int *x) { *x += 1; }", "unload_inc")
	const rounds = 20
	for i := 0; i < rounds; i++ {
		// Right after a loop, while the worker threads still spin in the
		// OpenMP runtime.
		if err := op2.Configure(op2.Config{CacheDir: cache, Backend: "openmp", Threads: 2}); err != nil {
			fmt.Println(err)
			return 1
		}
		if err := op2.ParLoop(k, set, x.Arg(op2.RW)); err != nil {
			fmt.Println(err)
			return 1
		}
		if n := op2.ReadStats().Libraries; n != 1 {
			fmt.Println("libraries loaded:", n)
			return 1
		}
	}
	if got := x.DataRO()[999]; got != rounds {
		fmt.Println("x =", got)
		return 1
	}
	fmt.Println("ok")
	return 0
}

// TestPlansFreedWithMeshes: plans (and their device copies) built for sets
// and maps that are dropped go away once those are garbage collected, so a
// program that creates and drops meshes keeps a bounded number of plans.
func TestPlansFreedWithMeshes(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		k := op2.NewKernel("void plans_inc(int *a, int *b) { *a += 1; *b += 1; }", "plans_inc")
		loop := func(n int) {
			edges := must(op2.NewSet(n, "edges"))
			nodes := must(op2.NewSet(n+1, "nodes"))
			v := make([]int32, 2*n)
			for i := 0; i < n; i++ {
				v[2*i], v[2*i+1] = int32(i), int32(i+1)
			}
			m := must(op2.NewMap(edges, nodes, 2, v, "pedge"))
			d := must(op2.NewDat[int32](nodes, 1, nil, "d"))
			check(t, op2.ParLoop(k, edges, d.ArgMap(op2.Inc, m, 0), d.ArgMap(op2.Inc, m, 1)))
			if got := d.Data()[1]; n > 1 && got != 2 {
				t.Fatalf("d[1] = %d, want 2", got)
			}
		}
		for i := 0; i < 300; i++ {
			loop(100 + i)
			if i%50 == 49 {
				runtime.GC()
			}
		}
		// Cleanups run in the background after a collection; the caches
		// drop what they find gone at their next insertion.
		plans := 0
		for try := 0; try < 100; try++ {
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
			loop(50)
			if plans = op2.ReadStats().Plans; plans <= 10 {
				return
			}
		}
		t.Errorf("after 300 dropped meshes %d plans are held, want at most 10", plans)
	})
}

// allocMesh is the ring of the allocation tests: 2000 edges, each
// joining two of 2000 nodes (map m), a node Dat d and an edge Dat w.
func allocMesh() (edges *op2.Set, m *op2.Map, d, w *op2.Dat[float64]) {
	const n = 2000
	edges = must(op2.NewSet(n, "edges"))
	nodes := must(op2.NewSet(n, "nodes"))
	v := make([]int32, 2*n)
	for i := 0; i < n; i++ {
		v[2*i], v[2*i+1] = int32(i), int32((i+1)%n)
	}
	m = must(op2.NewMap(edges, nodes, 2, v, "pedge"))
	d = must(op2.NewDat[float64](nodes, 1, nil, "d"))
	w = must(op2.NewDat[float64](edges, 1, nil, "w"))
	return edges, m, d, w
}

// TestRepeatedLoopAllocatesNothing: the checks and caches in front of a
// repeated loop (conflict rule, program cache, plan cache) allocate nothing;
// in lazy mode (the default) neither does recording it,
// once the queue of recorded loops has held as many once (its slots are
// made as it first grows, then reused). Check mode is named off, whatever
// OP2_CHECK says (it copies every READ argument per loop).
func TestRepeatedLoopAllocatesNothing(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		r := must(op2.NewRuntime(op2.Config{Backend: op2.Backend()}.Explicit("Check")))
		edges, m, d, w := allocMesh()
		k := op2.NewKernel("void alloc_inc(const double *w, double *a, double *b) { *a += *w; *b += *w; }", "alloc_inc")
		run := func() {
			check(t, r.ParLoop(k, edges, w.Arg(op2.Read), d.ArgMap(op2.Inc, m, 0), d.ArgMap(op2.Inc, m, 1)))
		}
		for i := 0; i < 25; i++ { // more than AllocsPerRun records
			run()
		}
		check(t, r.Wait())
		if a := testing.AllocsPerRun(20, run); a != 0 {
			t.Errorf("a repeated loop allocates %v times per call, want 0", a)
		}
	})
}

// TestDroppedMeshesWhileCollecting creates and drops meshes while the
// garbage collector runs. The wrappers' argument arrays (C memory) keep the
// addresses of plans and data that are gone by the next call; the collector
// must never see them as pointers.
func TestDroppedMeshesWhileCollecting(t *testing.T) {
	rounds := 6
	if testing.Short() {
		rounds = 2
	}
	onEachBackend(t, func(t *testing.T) {
		k := op2.NewKernel("void gcmesh_inc(double *a, double *b) { *a += 1; *b += 1; }", "gcmesh_inc")
		stop := make(chan struct{})
		collecting := make(chan struct{})
		go func() { // keep the collector marking while loops are bound
			defer close(collecting)
			for {
				select {
				case <-stop:
					return
				default:
					runtime.GC()
				}
			}
		}()
		defer func() { close(stop); <-collecting }()
		for r := 0; r < rounds; r++ {
			for i := 0; i < 60; i++ {
				n := 20000 + i
				nodes := must(op2.NewSet(n, "nodes"))
				edges := must(op2.NewSet(n-1, "edges"))
				v := make([]int32, 2*(n-1))
				for e := 0; e < n-1; e++ {
					v[2*e], v[2*e+1] = int32(e), int32(e+1)
				}
				m := must(op2.NewMap(edges, nodes, 2, v, "chain"))
				d := must(op2.NewDat[float64](nodes, 1, nil, "d"))
				check(t, op2.ParLoop(k, edges, d.ArgMap(op2.Inc, m, 0), d.ArgMap(op2.Inc, m, 1)))
				if got := d.DataRO()[1]; got != 2 {
					t.Fatalf("round %d mesh %d: d[1] = %g, want 2", r, i, got)
				}
				if i%20 == 0 {
					runtime.GC()
				}
			}
			runtime.GC()
			runtime.GC()
		}
	})
}

// TestParLoopKeepsNoData: a loop run at once keeps none of its data
// alive afterwards: the runtime reuses its loop, but a Dat the program
// drops after the loop is collected (and left out of checkpoints), even
// when the loop had more arguments than the loops after it.
func TestParLoopKeepsNoData(t *testing.T) {
	r := must(op2.NewRuntime(op2.Config{CacheDir: os.Getenv("OP2_CACHE_DIR")}.Explicit("Lazy")))
	defer r.Close()
	s := must(op2.NewSet(4, "keep_cells"))
	g := must(op2.NewGlobal(1, []float64{0}, "keep_sum"))
	sum := op2.NewKernel("void keep_sum(const double *a, double *g, const double *b) { *g += *a + *b; }", "keep_sum")
	dropped := func() weak.Pointer[op2.Dat[float64]] {
		a := must(op2.NewDat(s, 1, []float64{1, 2, 3, 4}, "keep_a"))
		b := must(op2.NewDat(s, 1, []float64{1, 1, 1, 1}, "keep_b"))
		check(t, r.ParLoop(sum, s, a.Arg(op2.Read), g.Arg(op2.Inc), b.Arg(op2.Read)))
		return weak.Make(b)
	}()
	c := must(op2.NewDat(s, 1, []float64{5, 5, 5, 5}, "keep_c"))
	check(t, r.ParLoop(op2.NewKernel("void keep_one(const double *c, double *g) { *g += *c; }", "keep_one"), s, c.Arg(op2.Read), g.Arg(op2.Inc)))
	runtime.GC()
	if dropped.Value() != nil {
		t.Error("a Dat the program dropped is still held by the loops that ran")
	}
	if v := g.Value(); v != 34 {
		t.Errorf("sum %v, want 34", v)
	}
}

// TestFusedOrderAnswersBounded: a program declaring mesh after mesh, each
// with a fused pair of loops whose result depends on the order of its
// terms (a Global sum), leaves the executor keeping at most MaxPrograms
// of fusion's order answers (one was kept per mesh for ever: 150 bytes a
// mesh, leak probe).
func TestFusedOrderAnswersBounded(t *testing.T) {
	r := must(op2.NewRuntime(op2.Config{Lazy: true, Fusion: "on"}))
	defer r.Close()
	set1 := op2.NewKernel("void ob_set(double *x) { *x = 1.0; }", "ob_set")
	sum := op2.NewKernel("void ob_sum(const double *x, double *s) { *s += *x; }", "ob_sum")
	for i := range exec.MaxPrograms + 100 {
		cells := must(op2.NewSet(10, "ob_cells"))
		x := must(op2.NewDat[float64](cells, 1, nil, "ob_x"))
		s := must(op2.NewGlobal[float64](1, nil, "ob_s"))
		check(t, r.ParLoop(set1, cells, x.Arg(op2.Write)))
		check(t, r.ParLoop(sum, cells, x.Arg(op2.Read), s.Arg(op2.Inc)))
		if v := must(s.ValueErr()); v != 10 {
			t.Fatalf("mesh %d: sum %v, want 10", i, v)
		}
	}
	if n := op2.OrderAnswers(r); n == 0 || n > exec.MaxPrograms {
		t.Errorf("%d order answers kept after %d meshes, want 1 to %d (none: the loops were not fused)", n, exec.MaxPrograms+100, exec.MaxPrograms)
	}
}
