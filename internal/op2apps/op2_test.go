package op2apps

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/testcache"
	"github.com/goop2/op2/internal/testreq"
)

func TestMain(m *testing.M) { os.Exit(testcache.Run(m, "goop2-op2apps-pkg-cache-")) }

// The expected figures are what OP2-Common (commit b9e7a58) printed,
// built with its sequential library (and jac1/longint with its MPI one);
// testdata/op2 holds each run's output as it printed it, and
// docs/history/op2apps-2026-11-27.txt the commands and the machine.

// op2Lines returns the submatches of re in each line of OP2's output file
// name (in testdata/op2) that matches it.
func op2Lines(t *testing.T, name, re string) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "op2", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rx := regexp.MustCompile(re)
	var out [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := rx.FindStringSubmatch(sc.Text()); m != nil {
			out = append(out, m[1:])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no line matches %q", name, re)
	}
	return out
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// runConfig is a backend and lazy mode the ports run on.
type runConfig struct {
	backend string
	lazy    bool
}

func (c runConfig) name() string {
	if c.lazy {
		return c.backend + "/lazy"
	}
	return c.backend + "/at-once"
}

// configs are the configurations every port runs on in one process.
var configs = []runConfig{
	{backend: "sequential", lazy: true}, {backend: "sequential"},
	{backend: "openmp", lazy: true}, {backend: "openmp"},
	{backend: "opencl", lazy: true}, {backend: "opencl"},
	{backend: "cuda", lazy: true}, {backend: "cuda"},
}

// device says whether c's backend is a device backend.
func (c runConfig) device() bool { return c.backend == "opencl" || c.backend == "cuda" }

// configure configures the default runtime for c (two threads on openmp),
// skipping t through testreq where c's backend is not installed.
func configure(t *testing.T, c runConfig) {
	t.Helper()
	cfg := op2.Config{Backend: c.backend, Lazy: c.lazy}.Explicit("Lazy")
	if c.backend == "openmp" {
		cfg.Threads = 2
	}
	err := op2.Configure(cfg)
	if c.device() {
		testreq.Check(t, c.backend, err, op2.ErrBackendUnavailable)
	} else if err != nil {
		t.Fatal(err)
	}
}

// forEachConfig runs f as a subtest on each configuration, restoring the
// sequential backend afterwards.
func forEachConfig(t *testing.T, f func(t *testing.T, c runConfig)) {
	t.Helper()
	for _, c := range configs {
		t.Run(c.name(), func(t *testing.T) {
			configure(t, c)
			f(t, c)
		})
	}
	if err := op2.Configure(op2.Config{Backend: "sequential"}); err != nil {
		t.Fatal(err)
	}
}
