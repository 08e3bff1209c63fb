package op2_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/goop2/op2"
)

// slowBackgroundCC writes a compiler command that runs cc, first taking
// a second over each compile at the background's priority (nice
// jit.LowPriority) and leaving a file in marks for each; the compiles of
// loops run at once take no longer than cc's.
func slowBackgroundCC(t *testing.T, marks string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Fatalf("no C compiler: %v", err)
	}
	script := filepath.Join(t.TempDir(), "slow-cc")
	body := "#!/bin/sh\nif [ \"$(nice)\" = 19 ]; then : > \"" + marks + "/compile.$$\"; sleep 1; fi\nexec " + cc + " \"$@\"\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// names lists the files in dir, sorted.
func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestCloseEndsBuildsIntoItsCache: Close drops the fused loops a runtime
// queued to compile in the background and waits for the one compiling,
// so that nothing writes into its cache directory afterwards and the
// directory can be removed (as t.TempDir's are when a test ends); the
// runtime runs loops after it, queuing its builds again.
func TestCloseEndsBuildsIntoItsCache(t *testing.T) {
	defer op2.SetBuilds(op2.BuildInBackground)()
	op2.WaitBuilds() // other tests' builds
	marks := t.TempDir()
	dir := filepath.Join(t.TempDir(), "cache")
	r := must(op2.NewRuntime(op2.Config{Backend: "sequential", CC: slowBackgroundCC(t, marks), CacheDir: dir}))
	t.Cleanup(func() { r.Close() })
	// Kernels of its own: a fused loop another test of the process has
	// loaded would not build again.
	ks := []*op2.Kernel{
		op2.NewKernel("void ceb_a(double *x, const double *w) { x[0] = x[0] * 1.5 + w[0]; }", "ceb_a"),
		op2.NewKernel("void ceb_b(const double *x, double *w) { w[0] = x[0] - 0.25; }", "ceb_b"),
		op2.NewKernel("void ceb_c(double *x, const double *w) { x[0] = x[0] * 0.5 - w[0]; }", "ceb_c"),
		op2.NewKernel("void ceb_d(const double *x, double *w) { w[0] = x[0] + 0.75; }", "ceb_d"),
	}
	set := must(op2.NewSet(100, "ceb_cells"))
	x := must(op2.NewDat(set, 1, make([]float64, 100), "x"))
	w := must(op2.NewDat(set, 1, make([]float64, 100), "w"))
	// The kernels' arithmetic in Go: exact in binary fractions.
	steps := []func(x, w float64) (float64, float64){
		func(x, w float64) (float64, float64) { return x*1.5 + w, w },
		func(x, w float64) (float64, float64) { return x, x - 0.25 },
		func(x, w float64) (float64, float64) { return x*0.5 - w, w },
		func(x, w float64) (float64, float64) { return x, x + 0.75 },
	}
	var wantX, wantW float64
	pair := func(i int) {
		t.Helper()
		check(t, r.ParLoop(ks[i], set, x.Arg(op2.RW), w.Arg(op2.Read)))
		check(t, r.ParLoop(ks[i+1], set, x.Arg(op2.Read), w.Arg(op2.Write)))
		wantX, wantW = steps[i](wantX, wantW)
		wantX, wantW = steps[i+1](wantX, wantW)
		gx, gw := must(x.DataROErr()), must(w.DataROErr())
		if gx[7] != wantX || gw[7] != wantW {
			t.Fatalf("x, w = %v, %v; want %v, %v", gx[7], gw[7], wantX, wantW)
		}
	}
	// Two fused loops to build: the first compiles (slowly), the second
	// waits in the queue.
	pair(0)
	pair(2)
	if n := op2.PendingBuilds(); n != 2 {
		t.Fatalf("%d builds in the background, want 2", n)
	}
	check(t, r.Close())
	if n := op2.PendingBuilds(); n != 0 {
		t.Errorf("%d builds pending after Close", n)
	}
	closed := names(t, dir)
	op2.WaitBuilds()
	if after := names(t, dir); !slices.Equal(after, closed) {
		t.Errorf("the cache directory changed after Close:\n at Close %q\n later    %q", closed, after)
	}
	if compiles := names(t, marks); len(compiles) > 1 {
		t.Errorf("%d compiles in the background, want the one running at Close (the queued one dropped)", len(compiles))
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatalf("removing the cache directory after Close: %v", err)
	}
	// The runtime goes on without its directory: the build Close
	// dropped is queued again and fails, quietly; the loops run one by
	// one, with the right results, and the directory is not made again.
	pair(2)
	if n := op2.PendingBuilds(); n != 1 {
		t.Errorf("%d builds in the background after Close, want the dropped one again", n)
	}
	op2.WaitBuilds()
	pair(2)
	pair(0)
	if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the removed cache directory is back: %v", err)
	}
	check(t, r.Close())
}
