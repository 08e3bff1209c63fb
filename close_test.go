package op2_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goop2/op2"
)

// heldBackgroundCC writes a compiler command that runs cc; a compile at
// the background's priority (nice jit.LowPriority) leaves a file
// "compile.PID" in marks, then waits (a minute at most) for a file "go"
// there. The compiles of loops run at once go straight to cc.
func heldBackgroundCC(t *testing.T, marks string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Fatalf("no C compiler: %v", err)
	}
	script := filepath.Join(t.TempDir(), "held-cc")
	body := `#!/bin/sh
if [ "$(nice)" = 19 ]; then
	: > "` + marks + `/compile.$$"
	i=0
	while [ ! -e "` + marks + `/go" ] && [ $i -lt 6000 ]; do sleep 0.01; i=$((i+1)); done
fi
exec ` + cc + ` "$@"
`
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

// closeRuns counts the runs of TestCloseEndsBuildsIntoItsCache.
var closeRuns atomic.Int64

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
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	queued := func() int { return strings.Count(log.String(), "program queued to build in the background") }
	r := must(op2.NewRuntime(op2.Config{Backend: "sequential", CC: heldBackgroundCC(t, marks), CacheDir: dir, Logger: logger}))
	t.Cleanup(func() { r.Close() })
	release := func() { os.WriteFile(filepath.Join(marks, "go"), nil, 0o600) }
	t.Cleanup(release) // first, if the test stops early
	// Kernels of their own, new in each run of the test: a fused loop
	// this process has loaded would not build again.
	run := closeRuns.Add(1)
	const writesX, writesW = "double *x, const double *w", "const double *x, double *w"
	kernel := func(name, params, body string) *op2.Kernel {
		return op2.NewKernel(fmt.Sprintf("void %s(%s) { (void)%d; %s }", name, params, run, body), name)
	}
	ks := []*op2.Kernel{
		kernel("ceb_a", writesX, "x[0] = x[0] * 1.5 + w[0];"),
		kernel("ceb_b", writesW, "w[0] = x[0] - 0.25;"),
		kernel("ceb_c", writesX, "x[0] = x[0] * 0.5 - w[0];"),
		kernel("ceb_d", writesW, "w[0] = x[0] + 0.75;"),
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
	// Two fused loops to build: the first compiles (held), the second
	// waits in the queue.
	pair(0)
	pair(2)
	if n := op2.PendingBuilds(); n != 2 {
		t.Fatalf("%d builds in the background, want 2", n)
	}
	// The compiler goes on once Close has dropped the queued build.
	go func() {
		for op2.PendingBuilds() > 1 {
			time.Sleep(time.Millisecond)
		}
		release()
	}()
	check(t, r.Close())
	if n := op2.PendingBuilds(); n != 0 {
		t.Errorf("%d builds pending after Close", n)
	}
	closed := names(t, dir)
	op2.WaitBuilds()
	if after := names(t, dir); !slices.Equal(after, closed) {
		t.Errorf("the cache directory changed after Close:\n at Close %q\n later    %q", closed, after)
	}
	if compiles := names(t, marks); len(compiles) != 2 { // and "go"
		t.Errorf("compiles in the background %q, want the one running at Close (the queued one dropped)", compiles)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatalf("removing the cache directory after Close: %v", err)
	}
	// The runtime goes on without its directory: the build Close
	// dropped is queued again and fails, quietly; the loops run one by
	// one, with the right results, and the directory is not made again.
	pair(2)
	if n := queued(); n != 3 {
		t.Errorf("%d builds queued in all, want 3: the one Close dropped again", n)
	}
	op2.WaitBuilds()
	pair(2)
	pair(0)
	if !strings.Contains(log.String(), "program built in the background failed") {
		t.Errorf("the build into the removed directory did not fail (or was not logged):\n%s", log.String())
	}
	if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the removed cache directory is back: %v", err)
	}
	check(t, r.Close())
}

// A runtime with a cache directory of its own, removed once the runtime
// is closed: Close ends the fused loops compiling in the background for
// it, so nothing writes into the directory afterwards.
func ExampleRuntime_Close() {
	dir, err := os.MkdirTemp("", "example-cache-")
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := op2.NewRuntime(op2.Config{Backend: "sequential", CacheDir: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	set, _ := op2.NewSet(4, "s")
	x, _ := op2.NewDat(set, 1, []float64{1, 2, 3, 4}, "x")
	y, _ := op2.NewDat[float64](set, 1, nil, "y")
	twice := op2.NewKernel("void twice_x(double *x) { *x *= 2; }", "twice_x")
	plus := op2.NewKernel("void plus_y(const double *x, double *y) { *y = *x + 1; }", "plus_y")
	_ = r.ParLoop(twice, set, x.Arg(op2.RW))
	_ = r.ParLoop(plus, set, x.Arg(op2.Read), y.Arg(op2.Write))
	fmt.Println(y.Data())
	if err := r.Close(); err != nil {
		fmt.Println(err)
	}
	fmt.Println(os.RemoveAll(dir))
	// Output:
	// [3 5 7 9]
	// <nil>
}
