package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2/internal/cuda"
)

// TestBadFlags: op2bench refuses flags that conflict or that the
// sections they reach cannot run with, naming them, with status 2 and
// before it runs or prints anything.
func TestBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-schemes-only", "-scheme-rounds", "0"}, "-scheme-rounds 0: want at least 1 with -schemes-only"},
		{[]string{"-schemes-only", "-scheme-rounds", "-1"}, "-scheme-rounds -1: want at least 1 with -schemes-only"},
		{[]string{"-schemes-only", "-scheme-iters", "0", "-scheme-rounds", "1"}, "-scheme-iters 0: want at least 1"},
		{[]string{"-scheme-rounds", "-1"}, "-scheme-rounds -1: want at least 0"},
		{[]string{"-scheme-iters", "0"}, "-scheme-iters 0: want at least 1"},
		{[]string{"-chains-only", "-chains-rounds", "0"}, "-chains-rounds 0: want at least 1"},
		{[]string{"-chains-only", "-chains-iters", "0"}, "-chains-iters 0: want at least 1"},
		{[]string{"-chains", "-chains-iters", "-3"}, "-chains-iters -3: want at least 1"},
		{[]string{"-chains-only", "-chains-tile", "-1"}, "-chains-tile -1: want at least 0"},
		// Flags that each run alone, or a section added to the full run
		// with one that leaves it out.
		{[]string{"-floor-only", "-chains-only"}, "-floor-only and -chains-only: each runs alone"},
		{[]string{"-matrix-only", "-mgcfd-only"}, "-matrix-only and -mgcfd-only: each runs alone"},
		{[]string{"-schemes-only", "-mgcfd-floor-only"}, "-schemes-only and -mgcfd-floor-only: each runs alone"},
		{[]string{"-gmsh", "a.msh", "-gmsh-load", "b.msh"}, "-gmsh and -gmsh-load: each runs alone"},
		{[]string{"-gmsh-read", "a.msh", "-gmsh", "b.msh"}, "-gmsh and -gmsh-read: each runs alone"},
		{[]string{"-gmsh", "a.msh", "-floor-only"}, "-gmsh and -floor-only: each runs alone"},
		{[]string{"-floor-only", "-matrix"}, "-matrix adds its section to the full run, which -floor-only leaves out"},
		{[]string{"-chains-only", "-mgcfd"}, "-mgcfd adds its section to the full run, which -chains-only leaves out"},
		{[]string{"-mgcfd-floor-only", "-mgcfd"}, "-mgcfd adds its section to the full run, which -mgcfd-floor-only leaves out"},
		{[]string{"-gmsh", "a.msh", "-floor"}, "-floor adds its section to the full run, which -gmsh leaves out"},
		// Values out of range, refused before the STREAM triad.
		{[]string{"-airfoil-iters", "-5"}, "-airfoil-iters -5: want at least 0 (0 skips Airfoil)"},
		{[]string{"-threads", "0"}, "-threads 0: want at least 1"},
		{[]string{"-floor-only", "-threads", "-2"}, "-threads -2: want at least 1"},
		{[]string{"-locality-iters", "-1"}, "-locality-iters -1: want at least 0"},
		{[]string{"-locality-only", "-locality-iters", "0"}, "-locality-iters 0: want at least 1 with -locality-only"},
		{[]string{"-locality-only", "-locality-rounds", "0"}, "-locality-rounds 0: want at least 1"},
		{[]string{"-matrix-only", "-matrix-n", "0"}, "-matrix-n 0: want at least 1"},
		{[]string{"-matrix", "-matrix-rounds", "0"}, "-matrix-rounds 0: want at least 1"},
		{[]string{"-floor-only", "-floor-iters", "0"}, "-floor-iters 0: want at least 1"},
		{[]string{"-floor-rounds", "0"}, "-floor-rounds 0: want at least 1 (-floor=false leaves the compute floor out)"},
		{[]string{"-floor-only", "-floor-kib", "0"}, "-floor-kib 0: want at least 1"},
		{[]string{"-mgcfd-only", "-mgcfd-cycles", "0"}, "-mgcfd-cycles 0: want at least 1"},
		{[]string{"-mgcfd", "-mgcfd-rounds", "0"}, "-mgcfd-rounds 0: want at least 1"},
		{[]string{"-mgcfd-floor-only", "-mgcfd-n", "66"}, "-mgcfd-n 66 with -mgcfd-levels 4: n−1 must be a positive multiple of 2^(levels−1) = 8"},
		{[]string{"-mgcfd-only", "-mgcfd-n", "1"}, "-mgcfd-n 1: want 2 to 1291 nodes per side"},
		{[]string{"-mgcfd-only", "-mgcfd-levels", "0"}, "-mgcfd-levels 0: want 1 to 20"},
		{[]string{"-mgcfd-floor-only", "-mgcfd-floor-small", "25,17"}, `-mgcfd-floor-small "25,17": want two increasing sizes smaller than -mgcfd-n 65`},
		{[]string{"-mgcfd-floor-only", "-mgcfd-floor-small", "17,66"}, `-mgcfd-floor-small "17,66": want two increasing sizes smaller than -mgcfd-n 65`},
		{[]string{"-mgcfd-floor-only", "-mgcfd-floor-small", "16,25"}, `-mgcfd-floor-small "16,25" with -mgcfd-levels 4: n−1 must be a positive multiple`},
		{[]string{"-mgcfd-floor-only", "-mgcfd-floor-small", "17,25,33"}, `-mgcfd-floor-small "17,25,33": want two sizes`},
		{[]string{"-mgcfd-floor-only", "-mgcfd-floor-small", "17,25xyz"}, `-mgcfd-floor-small "17,25xyz": want two sizes`},
		{[]string{"-mgcfd-floor-only", "-mgcfd-floor-small", "3,5,7xyz"}, `-mgcfd-floor-small "3,5,7xyz": want two sizes`},
		{[]string{"-gmsh", "a.msh", "-gmsh-rounds", "0"}, "-gmsh-rounds 0: want at least 1"},
		// A device that is not a device backend (the small mesh: a flag
		// let through runs quickly).
		{[]string{"-mgcfd-only", "-mgcfd-device", "bogus", "-mgcfd-n", "5", "-mgcfd-levels", "2", "-mgcfd-cycles", "1", "-mgcfd-rounds", "1"}, `-mgcfd-device "bogus": want cuda or opencl`},
		{[]string{"-mgcfd-only", "-mgcfd-device", "openmp", "-mgcfd-n", "5", "-mgcfd-levels", "2", "-mgcfd-cycles", "1", "-mgcfd-rounds", "1"}, `-mgcfd-device "openmp": want cuda or opencl`},
		{[]string{"-mgcfd", "-mgcfd-device", "sequential", "-airfoil-iters", "0", "-scheme-rounds", "0", "-locality-iters", "0", "-floor=false", "-mgcfd-n", "5", "-mgcfd-levels", "2", "-mgcfd-cycles", "1", "-mgcfd-rounds", "1"}, `-mgcfd-device "sequential": want cuda or opencl`},
		{[]string{"-mgcfd-floor-only", "-mgcfd-device", "CUDA", "-mgcfd-n", "9", "-mgcfd-levels", "2", "-mgcfd-floor-small", "3,5", "-mgcfd-cycles", "1", "-mgcfd-rounds", "1"}, `-mgcfd-device "CUDA": want cuda or opencl`},
	} {
		// A flag let through starts the benchmark: the timeout ends it.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, os.Args[0], tc.args...)
		cmd.Env = append(os.Environ(), "GOOP2_OP2BENCH_MAIN=1")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.HasPrefix(stderr.String(), "op2bench: ") || !strings.Contains(stderr.String(), tc.want) || stdout.Len() > 0 {
			t.Errorf("op2bench %s: %v, stderr %q, stdout %q; want exit status 2, nothing printed, and a message saying %q",
				strings.Join(tc.args, " "), err, stderr.String(), stdout.String(), tc.want)
		}
		cancel()
	}
}

// TestGoodFlags: flags that go together, and values that mean something
// (0 skipping a section of the full run, a flag of a section that does
// not run), pass the checks: op2bench goes on to start its CPU profile,
// which fails here: its path is a folder.
func TestGoodFlags(t *testing.T) {
	prof := t.TempDir()
	for _, args := range [][]string{
		{},
		{"-schemes-only", "-locality-only"},
		{"-floor-only", "-floor"},
		{"-matrix-only", "-matrix"},
		{"-mgcfd-only", "-mgcfd"},
		{"-chains-only", "-chains"},
		{"-schemes-only", "-floor=false"},
		{"-airfoil-iters", "0", "-scheme-rounds", "0", "-scheme-iters", "0", "-locality-iters", "0", "-locality-rounds", "0"},
		{"-floor=false", "-floor-rounds", "0"},
		{"-floor-only", "-chains-iters", "0", "-matrix-n", "0", "-mgcfd-n", "6"},
		{"-mgcfd-floor-only", "-mgcfd-n", "9", "-mgcfd-levels", "2", "-mgcfd-floor-small", "3,5"},
		{"-gmsh", "a.msh", "-gmsh-rounds", "1"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, os.Args[0], append(args, "-cpuprofile", prof)...)
		cmd.Env = append(os.Environ(), "GOOP2_OP2BENCH_MAIN=1")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.HasPrefix(stderr.String(), "op2bench: -cpuprofile: ") {
			t.Errorf("op2bench %s: %v, stderr %q; want the flags let through to the CPU profile", strings.Join(args, " "), err, stderr.String())
		}
		cancel()
	}
}

// TestMGCFDDeviceUnavailable: a -mgcfd-device that cannot open (cuda
// without a GPU) stops op2bench with status 1 before it prints or
// measures anything, with -mgcfd-only and with -mgcfd in the full run,
// and stops the MG-CFD section before its header.
func TestMGCFDDeviceUnavailable(t *testing.T) {
	// CUDA is made unavailable whatever the machine: the driver library
	// is one that does not exist, in a child process (the driver loads
	// once per process).
	noCUDA := cuda.LibraryEnv + "=/nonexistent/libcuda.so.1"
	if os.Getenv("OP2BENCH_TEST_NO_CUDA") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMGCFDDeviceUnavailable$", "-test.count=1")
		cmd.Env = append(os.Environ(), "OP2BENCH_TEST_NO_CUDA=1", noCUDA)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		return
	}
	var out bytes.Buffer
	err := mgcfdSection(&out, mgcfdOpts{n: 5, levels: 2, cycles: 1, rounds: 1, threads: 1, device: "cuda"})
	if err == nil || !strings.Contains(err.Error(), "mgcfd: -mgcfd-device cuda: ") || out.Len() > 0 {
		t.Errorf("mgcfdSection on cuda: %v, printed %q; want an error naming -mgcfd-device cuda and nothing printed", err, out.String())
	}
	small := []string{"-mgcfd-n", "5", "-mgcfd-levels", "2", "-mgcfd-cycles", "1", "-mgcfd-rounds", "1", "-mgcfd-device", "cuda"}
	for _, args := range [][]string{
		append([]string{"-mgcfd-only"}, small...),
		append([]string{"-mgcfd", "-airfoil-iters", "0", "-scheme-rounds", "0", "-locality-iters", "0", "-floor=false"}, small...),
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, os.Args[0], args...)
		cmd.Env = append(os.Environ(), "GOOP2_OP2BENCH_MAIN=1", noCUDA)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.HasPrefix(stderr.String(), "op2bench: mgcfd: -mgcfd-device cuda: ") || stdout.Len() > 0 {
			t.Errorf("op2bench %s: %v, stderr %q, stdout %q; want exit status 1, nothing printed, and a message naming -mgcfd-device cuda",
				strings.Join(args, " "), err, stderr.String(), stdout.String())
		}
		cancel()
	}
}
