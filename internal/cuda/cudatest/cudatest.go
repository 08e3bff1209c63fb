// Package cudatest runs tests against a stand-in for NVIDIA's driver
// library (testdata/fakecuda.c), so that the CUDA code around the kernels
// is tested on machines without a GPU. The stand-in's device memory is
// host memory; a module whose image is the text "image" holds a kernel
// that adds its second parameter (a 64-bit integer) to the word its
// first points at, a kernel named op2_poke writes the bytes of its
// parameters 2 to 9 (their number its second) to its first, and every
// other kernel (a real CUBIN) does nothing. It logs copies, launches and
// graphs, one per line ("htod N", "dtoh N", "kernel G B V", "poke N V",
// "noop G B", "graph launch N", "instantiate N", ...).
//
// The driver library is loaded once per process, so a test runs its body
// in a child process: Child says whether this is it, and Run, in the
// parent, builds the stand-in, starts the child and returns the log.
package cudatest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/testreq"
)

// childEnv marks the child process Run starts.
const childEnv = "OP2_TEST_FAKE_CUDA"

// Child reports whether this process is the child a Run started, in which
// the test runs its body against the stand-in.
func Child() bool { return os.Getenv(childEnv) != "" }

// Run builds the stand-in driver with gcc (skipping tb, through testreq,
// without it), runs test (a test of this test binary) in a child process
// that loads it (OP2_CUDA_LIBRARY), with env added to the environment,
// and returns the stand-in's log. tb fails unless the child's test
// passes.
func Run(tb testing.TB, test string, env ...string) string {
	tb.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		testreq.Skip(tb, "cc", err)
	}
	_, self, _, _ := runtime.Caller(0)
	dir := tb.TempDir()
	lib := filepath.Join(dir, "libcuda.so.1")
	src := filepath.Join(filepath.Dir(self), "testdata", "fakecuda.c")
	if out, err := exec.Command(gcc, "-shared", "-fPIC", "-O1", "-o", lib, src).CombinedOutput(); err != nil {
		tb.Fatalf("building the stand-in driver: %v\n%s", err, out)
	}
	logPath := filepath.Join(dir, "log")
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"=1", "OP2_CUDA_LIBRARY="+lib, "FAKE_CUDA_LOG="+logPath)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		tb.Fatalf("%s against the stand-in driver: %v\n%s", test, err, out)
	}
	log, err := os.ReadFile(logPath)
	if err != nil {
		tb.Fatal(err)
	}
	return string(log)
}

// Log returns what the stand-in logged so far, for the child.
func Log() string {
	b, _ := os.ReadFile(os.Getenv("FAKE_CUDA_LOG"))
	return string(b)
}
