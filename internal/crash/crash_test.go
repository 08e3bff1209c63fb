package crash

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/goop2/op2/internal/crash/internal/sigprobe"
)

//go:noinline
func nilDeref(p *int) (recovered bool) {
	defer func() { _, recovered = recover().(runtime.Error) }()
	return *p == 1
}

// TestGoFaultWhileRunning: with the handler installed and a loop
// described as running, a nil dereference in Go is still a panic that
// recovers (the handler sees Go code and passes the signal to Go).
func TestGoFaultWhileRunning(t *testing.T) {
	if err := Install(); err != nil {
		t.Fatalf("Install: %v", err)
	}
	var tr Tracker
	tr.Begin("k", "s", "sequential", false)
	defer tr.End()
	for range 3 {
		if !nilDeref(nil) {
			t.Fatal("a nil dereference did not panic recoverably")
		}
	}
}

func TestTrackerDescribes(t *testing.T) {
	var tr Tracker
	long := strings.Repeat("s", 3*maxNameLen)
	cases := []struct {
		kernel, set, backend string
		async                bool
		wantSet              string
		running, after       int
	}{
		{"k1", "edges", "openmp", false, "edges", 1, 0},
		{"k1", "edges", "openmp", false, "edges", 1, 0}, // repeated: cached
		{"k2", "edges", "sequential", false, "edges", 1, 0},
		{"k2", long, "opencl", true, long[:maxNameLen], 2, 2},
		{"k1", "nodes", "openmp", false, "nodes", 1, 0},
	}
	for _, c := range cases {
		tr.Begin(c.kernel, c.set, c.backend, c.async)
		k, s, b, st := described()
		if k != c.kernel || s != c.wantSet || b != c.backend || st != c.running {
			t.Errorf("Begin(%q, %.10q, %q, %v) published %q %.10q %q state %d", c.kernel, c.set, c.backend, c.async, k, s, b, st)
		}
		if !Running() {
			t.Errorf("Running() is false during loop %q", c.kernel)
		}
		tr.End()
		if _, _, _, st := described(); st != c.after {
			t.Errorf("after End of %q the state is %d, want %d", c.kernel, st, c.after)
		}
	}
}

// TestTrackerRepeatedLoopAllocatesNothing: describing the loop last
// described, or one whose names were all seen, allocates nothing.
func TestTrackerRepeatedLoopAllocatesNothing(t *testing.T) {
	var tr Tracker
	tr.Begin("k", "edges", "openmp", false)
	tr.End()
	tr.Begin("k2", "nodes", "openmp", false)
	tr.End()
	same := func() { tr.Begin("k2", "nodes", "openmp", false); tr.End() }
	if a := testing.AllocsPerRun(100, same); a != 0 {
		t.Errorf("a repeated loop allocates %v times", a)
	}
	alternate := func() {
		tr.Begin("k", "edges", "openmp", false)
		tr.End()
		tr.Begin("k2", "nodes", "openmp", false)
		tr.End()
	}
	if a := testing.AllocsPerRun(100, alternate); a != 0 {
		t.Errorf("alternating two known loops allocates %v times", a)
	}
}

// TestTrackerBounded: many distinct set names do not accumulate C copies.
func TestTrackerBounded(t *testing.T) {
	var tr Tracker
	for i := range 5 * maxNames {
		set := fmt.Sprintf("set%d", i)
		tr.Begin("k", set, "openmp", false)
		if _, s, _, _ := described(); s != set {
			t.Fatalf("loop %d published set %q, want %q", i, s, set)
		}
		tr.End()
		if len(tr.names) > maxNames+3 {
			t.Fatalf("after %d sets the tracker keeps %d names, want at most %d", i+1, len(tr.names), maxNames+3)
		}
	}
}

func BenchmarkTrackerRepeatedLoop(b *testing.B) {
	var tr Tracker
	b.ReportAllocs()
	for b.Loop() {
		tr.Begin("k", "edges", "openmp", false)
		tr.End()
	}
}

// maskChildEnv makes TestChainedHandlerBlocksSignals's child process.
const maskChildEnv = "OP2_CRASH_MASK_CHILD"

// TestChainedHandlerBlocksSignals: the handler found below this one
// (here a probe standing where LLVM's stands, asking for no signal to be
// blocked) runs with every signal blocked, as Go's own handler needs
// when this one calls it: a signal taken while Go's handler adjusts the
// signal goroutine's stack ran a nested Go handler against half-updated
// stack bounds, "fatal: morestack on gsignal".
func TestChainedHandlerBlocksSignals(t *testing.T) {
	if os.Getenv(maskChildEnv) != "" {
		if err := sigprobe.Install(syscall.SIGSEGV); err != nil {
			t.Fatal(err)
		}
		if err := Install(); err != nil {
			t.Fatal(err)
		}
		for range 2 { // the first call and one after this handler checked it stays on top
			sigprobe.Send(syscall.SIGSEGV)
		}
		if sigprobe.Calls() != 2 {
			t.Fatalf("the probe ran %d times, want 2", sigprobe.Calls())
		}
		for _, sig := range []syscall.Signal{syscall.SIGURG, syscall.SIGPROF, syscall.SIGCHLD, syscall.SIGUSR1, syscall.SIGWINCH, syscall.SIGSEGV} {
			if !sigprobe.Blocked(sig) {
				t.Errorf("the chained handler ran with %v unblocked", sig)
			}
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestChainedHandlerBlocksSignals$", "-test.v")
	cmd.Env = append(os.Environ(), maskChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
