// Package testreq decides, for tests, what a missing optional library
// means: a skip saying what to install, or, where OP2_REQUIRE names the
// library, a failure. scripts/test-all installs every library the tests
// use and sets OP2_REQUIRE to all of them, so that a library that stops
// loading there, or a binding that breaks, fails CI instead of turning
// every test that needs it into a skip.
//
// A test skips through Check (an error that is, or wraps, the library's
// "not installed" sentinel skips; any other error fails), Command (a
// program not found on the PATH) or Skip (the caller has found the
// library missing). It never decides by the
// text of an error.
//
// OP2_REQUIRE is a comma-separated list of the names in Libraries, or
// "all"; an unknown name fails every test that asks. OP2_REQUIRE_NVRTC=1,
// the older switch, still requires nvrtc.
//
// testreq imports nothing of GoOP2, so any package's own tests may use it.
package testreq

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Env is the variable naming the libraries that must be present.
const Env = "OP2_REQUIRE"

// NVRTCEnv is the older switch for nvrtc alone ("1": required).
const NVRTCEnv = "OP2_REQUIRE_NVRTC"

// Libraries are the names OP2_REQUIRE takes, each with what to install
// (on Debian) when it is missing.
var Libraries = map[string]string{
	"cc":       "a C and a C++ compiler: apt-get install gcc g++",
	"opencl":   "an OpenCL loader and driver: apt-get install ocl-icd-libopencl1 pocl-opencl-icd (PoCL runs on the CPU)",
	"cuda":     "an NVIDIA GPU with its driver (libcuda.so.1)",
	"nvrtc":    "NVRTC: apt-get install libnvrtc11.2 libnvrtc-builtins11.8 (non-free; scripts/test-all fetches it into a private folder), or set OP2_NVRTC_LIBRARY",
	"mpi":      "MPI: apt-get install openmpi-bin libopenmpi-dev",
	"hdf5":     "HDF5: apt-get install libhdf5-103-1 libhdf5-openmpi-103-1 hdf5-tools",
	"petsc":    "PETSc: apt-get install libpetsc-real3.18 libopenmpi-dev",
	"metis":    "METIS: apt-get install libmetis5",
	"ptscotch": "PT-Scotch: apt-get install libptscotch-7.0 libopenmpi-dev",
	"gmsh":     "Gmsh for Python: apt-get install python3-gmsh python3-meshio",
	"cgns":     "CGNS: apt-get install libcgns3.4 cgns-convert",
}

// Required reports whether OP2_REQUIRE (or OP2_REQUIRE_NVRTC, for nvrtc)
// names what. It fails tb when what, or a name in OP2_REQUIRE, is not one
// of Libraries: a misspelt requirement must not pass unnoticed.
func Required(tb testing.TB, what string) bool {
	tb.Helper()
	if _, ok := Libraries[what]; !ok {
		tb.Fatalf("testreq: unknown library %q (known: %s)", what, known())
	}
	names, err := parse(os.Getenv(Env))
	if err != nil {
		tb.Fatal(err)
	}
	if what == "nvrtc" && os.Getenv(NVRTCEnv) != "" && os.Getenv(NVRTCEnv) != "0" {
		return true
	}
	return slices.Contains(names, "all") || slices.Contains(names, what)
}

// parse splits an OP2_REQUIRE value, refusing unknown names.
func parse(v string) ([]string, error) {
	var names []string
	for _, n := range strings.Split(v, ",") {
		n = strings.ToLower(strings.TrimSpace(n))
		if n == "" {
			continue
		}
		if _, ok := Libraries[n]; !ok && n != "all" {
			return nil, fmt.Errorf("%s=%q: unknown library %q (known: %s, or all)", Env, v, n, known())
		}
		names = append(names, n)
	}
	return names, nil
}

func known() string {
	var names []string
	for n := range Libraries {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// Skip ends tb because what is not installed here, err saying how that
// was found: a skip naming what to install, or a failure when OP2_REQUIRE
// names what.
func Skip(tb testing.TB, what string, err error) {
	tb.Helper()
	if Required(tb, what) {
		tb.Fatalf("%s names %s, but it is not available here: %v", Env, what, err)
	}
	tb.Skipf("%s is not available here (%v); this test needs %s (with %s=%s it fails instead)", what, err, Libraries[what], Env, what)
}

// Command returns the path of the program name (exec.LookPath), which
// what installs: when it is not found (exec.ErrNotFound) tb skips, or
// fails where OP2_REQUIRE names what (Check); any other error fails tb.
func Command(tb testing.TB, what, name string) string {
	tb.Helper()
	path, err := exec.LookPath(name)
	Check(tb, what, err, exec.ErrNotFound)
	return path
}

// Check returns when err is nil. When err is, or wraps, unavailable (the
// library's "not installed" sentinel, such as op2.ErrBackendUnavailable
// or hdf5.ErrNoHDF5) it is Skip; any other error fails tb, since a
// library that is installed but fails is a bug to see, not a skip.
func Check(tb testing.TB, what string, err, unavailable error) {
	tb.Helper()
	if err == nil {
		return
	}
	if unavailable == nil {
		tb.Fatalf("testreq.Check(%s): no sentinel error to match %v against", what, err)
	}
	if errors.Is(err, unavailable) {
		Skip(tb, what, err)
	}
	tb.Fatalf("%s: %v (not the error that says %s is missing: %v)", what, err, what, unavailable)
}
