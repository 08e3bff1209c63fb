// Package mpitest runs a test binary's tests on several MPI ranks: a test
// calls Run, which starts the test binary again under mpirun with only
// that test selected; on the ranks (InRanks reports true) the same test
// function does the distributed work.
package mpitest

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2/internal/mpi"
	"github.com/goop2/op2/internal/testreq"
)

// InRanks reports whether this process is a rank started by Run (or by any
// MPI launcher).
func InRanks() bool { return mpi.Launched() > 0 }

// Mpirun is the launcher's path, or "" (and why) when there is none.
func Mpirun() (string, error) {
	return exec.LookPath("mpirun")
}

// Run runs the current test (t.Name(), a top-level test) on np ranks and
// fails t with the job's output if any rank fails. The job is killed after
// timeout, so a rank that hangs cannot hang the test. Without mpirun the
// test is skipped with the command that installs it.
func Run(t *testing.T, np int, timeout time.Duration, env ...string) {
	t.Helper()
	out, err := Output(t, np, timeout, env...)
	if err != nil {
		t.Fatalf("%d ranks: %v:\n%s", np, err, out)
	}
	if testing.Verbose() {
		t.Logf("%d ranks:\n%s", np, out)
	}
}

// Output runs the current test on np ranks like Run and returns the job's
// combined output and its error (nil when every rank succeeded), for tests
// of failing jobs. A job still running after timeout fails t.
func Output(t *testing.T, np int, timeout time.Duration, env ...string) ([]byte, error) {
	t.Helper()
	path, err := Mpirun()
	if err != nil {
		testreq.Skip(t, "mpi", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := []string{"-np", strconv.Itoa(np), "--oversubscribe", "--bind-to", "none",
		os.Args[0], "-test.run=" + RunPattern(t.Name()), "-test.count=1"}
	if testing.Verbose() {
		args = append(args, "-test.v")
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"OMPI_MCA_rmaps_base_oversubscribe=1")
	// The ranks' temporary files (their caches, t.TempDir) go under a
	// temporary folder of the test's, removed when the test ends even when
	// a rank ends by MPI_Abort or is killed and so never removes its own.
	cmd.Env = append(cmd.Env, "TMPDIR="+rankTemp(t))
	cmd.Env = append(cmd.Env, env...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%d ranks: killed after %v:\n%s", np, timeout, out)
	}
	return out, err
}

// rankTemp makes the ranks' temporary folder and removes it when t ends.
// A compile in the background (jit.Compiler.Precompile) outlives the rank
// that started it, by design, and may still be writing its files there
// for a moment: the removal is tried again until removeWithin has
// passed, and only then fails t.
func rankTemp(t *testing.T) string {
	dir, err := os.MkdirTemp("", "mpitest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		deadline := time.Now().Add(removeWithin)
		for {
			err := os.RemoveAll(dir)
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("removing the ranks' temporary folder: %v", err)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	return dir
}

// removeWithin is how long rankTemp's removal is tried.
const removeWithin = 30 * time.Second

// RunPattern is the -test.run pattern that selects the test named name
// (a subtest's name has its parents' before it, joined by "/") and no
// other: go test matches each level of the pattern on its own, so every
// level is anchored ("^TestA$/^b$"; "^TestA/b$" would also run TestAB).
func RunPattern(name string) string {
	levels := strings.Split(name, "/")
	for i, l := range levels {
		levels[i] = "^" + regexp.QuoteMeta(l) + "$"
	}
	return strings.Join(levels, "/")
}
