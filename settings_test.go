package op2_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/exec"
)

// TestEverySettingChecked walks every field of Config: each one that can
// hold a wrong value is given one, with the sequential backend (which uses
// none of the device or openmp settings), and Configure must refuse it
// with an error naming the field, leaving the previous configuration in
// use. A field the table does not list fails the test, so a new setting
// comes with its check.
func TestEverySettingChecked(t *testing.T) {
	cache := os.Getenv("OP2_CACHE_DIR")
	check(t, op2.Configure(op2.Config{Backend: "openmp", CacheDir: cache, PlanCheck: true}))
	defer func() { check(t, op2.Configure(op2.Config{CacheDir: cache, PlanCheck: true})) }()
	notADir := filepath.Join(t.TempDir(), "file")
	check(t, os.WriteFile(notADir, nil, 0o600))

	// bad sets a wrong value; want is what the error must say besides
	// "Config.<field>" (empty: the field's name is part of the message
	// the check writes). A nil bad gives the reason every value is taken.
	type setting struct {
		bad    func(c *op2.Config)
		want   []string
		reason string
	}
	settings := map[string]setting{
		"Backend":             {bad: func(c *op2.Config) { c.Backend = "no-such-backend" }, want: []string{`unknown backend "no-such-backend"`}},
		"CC":                  {bad: func(c *op2.Config) { c.CC = "no-such-cc" }, want: []string{`"no-such-cc"`, "apt-get install gcc"}},
		"CXX":                 {reason: "a command, run when a C++ kernel is built: a missing one is reported then and C kernels still run (TestMissingCXXCompiler)"},
		"CompileTimeout":      {bad: func(c *op2.Config) { c.CompileTimeout = -time.Second }, want: []string{"Config.CompileTimeout", "-1s"}},
		"CFlags":              {bad: func(c *op2.Config) { c.CFlags = []string{"-fno-such-flag"} }, want: []string{"Config.CFlags", "-fno-such-flag"}},
		"CacheDir":            {bad: func(c *op2.Config) { c.CacheDir = notADir }, want: []string{notADir}},
		"Threads":             {bad: func(c *op2.Config) { c.Threads = -1 }, want: []string{"Config.Threads"}},
		"BlockSize":           {bad: func(c *op2.Config) { c.BlockSize = -1 }, want: []string{"Config.BlockSize"}},
		"PlanCheck":           {reason: "a bool"},
		"Check":               {reason: "a bool"},
		"OpenCLPlatform":      {reason: "a part of a platform's name, which only the OpenCL driver knows: checked when the opencl backend opens (TestOpenCLDeviceSelection)"},
		"OpenCLDevice":        {bad: func(c *op2.Config) { c.OpenCLDevice = "toaster" }, want: []string{"Config.OpenCLDevice", `unknown OpenCL device type "toaster"`}},
		"DeviceScheme":        {bad: func(c *op2.Config) { c.DeviceScheme = "colourful" }, want: []string{"Config.DeviceScheme", `unknown device scheme "colourful"`}},
		"DeviceLayout":        {bad: func(c *op2.Config) { c.DeviceLayout = "csr" }, want: []string{"Config.DeviceLayout", `unknown device layout "csr"`}},
		"DeviceWorkGroupSize": {bad: func(c *op2.Config) { c.DeviceWorkGroupSize = 48 }, want: []string{"Config.DeviceWorkGroupSize", "48"}},
		"CUDADevice":          {bad: func(c *op2.Config) { c.CUDADevice = -1 }, want: []string{"Config.CUDADevice"}},
		"CUDAGraphs":          {reason: "a bool"},
		"Tune":                {reason: "a bool"},
		"OpenMPScheme":        {bad: func(c *op2.Config) { c.OpenMPScheme = "greedy" }, want: []string{"Config.OpenMPScheme", `unknown openmp scheme "greedy"`}},
		"SIMD":                {bad: func(c *op2.Config) { c.SIMD = "16" }, want: []string{"Config.SIMD", `unknown SIMD setting "16"`}},
		"Timing":              {reason: "a bool"},
		"Lazy":                {reason: "a bool (refused under MPI with more than one rank: chain_mpi_test.go)"},
		"Fusion":              {bad: func(c *op2.Config) { c.Fusion = "yes" }, want: []string{"Config.Fusion", `"yes"`}},
		"Tile":                {bad: func(c *op2.Config) { c.Tile = -2 }, want: []string{"Config.Tile"}},
		"Logger":              {reason: "any *slog.Logger; nil keeps the default"},
		"Checkpoint":          {reason: "a path: one that cannot be written fails the loop at which the first checkpoint is due, naming it (TestAutoCheckpointBadPath)"},
		"CheckpointEvery":     {bad: func(c *op2.Config) { c.CheckpointEvery = "soon" }, want: []string{`Config.CheckpointEvery = "soon"`, "neither a positive duration"}},
	}
	fields := reflect.VisibleFields(reflect.TypeFor[op2.Config]())
	rows := map[string]bool{}
	for _, s := range exec.Settings {
		rows[s.Field] = !s.EnvOnly
	}
	for _, f := range fields {
		if !f.IsExported() { // Explicit's list, not a setting
			continue
		}
		if !rows[f.Name] {
			t.Errorf("Config.%s has no row in the configuration table (exec.Settings)", f.Name)
		}
		s, ok := settings[f.Name]
		if !ok {
			t.Errorf("Config.%s is not in this test's table: give it a wrong value and the error it must give, or the reason every value is taken", f.Name)
			continue
		}
		delete(settings, f.Name)
		if s.bad == nil {
			continue
		}
		t.Run(f.Name, func(t *testing.T) {
			cfg := op2.Config{Backend: "sequential", CacheDir: cache}
			s.bad(&cfg)
			wantErr(t, op2.Configure(cfg), s.want...)
			if _, err := op2.NewRuntime(cfg); err == nil {
				t.Errorf("NewRuntime took a configuration Configure refused")
			}
			if b := op2.Backend(); b != "openmp" {
				t.Fatalf("after a refused Configure the backend is %q, want openmp", b)
			}
			runsOn(t)
		})
	}
	for name := range settings {
		t.Errorf("the table lists %q, which is not a field of Config", name)
	}
}

// settingVariables are the environment variables GoOP2 reads (apart from
// those its own tests use), found in its non-test sources.
func settingVariables(t *testing.T) []string {
	t.Helper()
	re := regexp.MustCompile(`"(OP2_[A-Z0-9_]+)"`)
	testOnly := []string{"internal/probe", "internal/backendtest", "internal/testreq", "internal/testcache", "internal/mpitest", "internal/dist/disttest", "internal/cuda/cudatest"}
	found := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if slices.Contains(testOnly, path) || (path != "." && strings.HasPrefix(d.Name(), ".")) || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllSubmatch(b, -1) {
			found[string(m[1])] = true
		}
		return nil
	})
	check(t, err)
	vars := []string{"OMP_NUM_THREADS", "CC", "CXX"}
	for v := range found {
		vars = append(vars, v)
	}
	slices.Sort(vars)
	return vars
}

// TestEveryVariableChecked: every environment variable GoOP2 reads that
// can hold a wrong value is given one, and Configure (whatever the
// backend: the sequential one here) refuses it with an error naming the
// variable and the value, leaving the previous configuration in use. A
// variable found in the sources but not in the table fails the test.
func TestEveryVariableChecked(t *testing.T) {
	cache := os.Getenv("OP2_CACHE_DIR")
	check(t, op2.Configure(op2.Config{Backend: "openmp", CacheDir: cache, PlanCheck: true}))
	defer func() { check(t, op2.Configure(op2.Config{CacheDir: cache, PlanCheck: true})) }()

	// A variable with a bad value must be refused with an error
	// mentioning it, the value and want; one with a reason takes any
	// value (or is checked where that reason says).
	type variable struct {
		bad    string
		want   string
		reason string
	}
	library := "the path of a library, loaded when first needed: a file that does not load is an error naming the variable (its package's tests)"
	vars := map[string]variable{
		"OMP_NUM_THREADS":      {bad: "0", want: "not a positive integer"},
		"CC":                   {bad: "no-such-cc", want: "was not found"},
		"CXX":                  {reason: "a command, run when a C++ kernel is built (TestMissingCXXCompiler)"},
		"OP2_BACKEND":          {bad: "no-such-backend", want: "unknown backend"},
		"OP2_BLOCK_SIZE":       {bad: "-3", want: "not a non-negative integer"},
		"OP2_CACHE_DIR":        {reason: "a directory, created if missing; one that cannot be used is refused, naming it, when a backend opens (TestErrorsCallersCanInspect)"},
		"OP2_CFLAGS":           {bad: "-O3 -fno-such-flag", want: "refuses the flags"},
		"OP2_COMPILE_TIMEOUT":  {bad: "soon", want: "not a positive duration"},
		"OP2_CHECK":            {bad: "maybe", want: "not a boolean"},
		"OP2_CHECKPOINT":       {reason: "a path: one that cannot be written fails the loop at which the first checkpoint is due, naming it (TestAutoCheckpointBadPath)"},
		"OP2_CHECKPOINT_EVERY": {bad: "0", want: "want at least 1"},
		"OP2_CUDA_DEVICE":      {bad: "-1", want: "not a device number"},
		"OP2_CUDA_GRAPHS":      {bad: "maybe", want: "not a boolean"},
		"OP2_DEBUG_PLAN":       {bad: "maybe", want: "not a boolean"},
		"OP2_DEVICE_LAYOUT":    {bad: "csr", want: `unknown device layout "csr"`},
		"OP2_DEVICE_SCHEME":    {bad: "colourful", want: `unknown device scheme "colourful"`},
		"OP2_DEVICE_WORKGROUP": {bad: "48", want: "power of two"},
		"OP2_FUSION":           {bad: "maybe", want: `"auto", "on" or "off"`},
		"OP2_LAZY":             {bad: "maybe", want: "not a boolean"},
		"OP2_LOG":              {bad: "loud", want: "not a log level"},
		"OP2_OPENCL_DEVICE":    {bad: "toaster", want: `unknown OpenCL device type "toaster"`},
		"OP2_OPENCL_PLATFORM":  {reason: "a part of a platform's name, which only the OpenCL driver knows: checked when the opencl backend opens"},
		"OP2_OPENMP_SCHEME":    {bad: "greedy", want: `unknown openmp scheme "greedy"`},
		"OP2_PLAN_CHECK":       {bad: "maybe", want: "not a boolean"},
		"OP2_SIMD":             {bad: "16", want: `unknown SIMD setting "16"`},
		"OP2_TILE":             {bad: "-1", want: "not a non-negative integer"},
		"OP2_TIMING":           {bad: "maybe", want: "not a boolean"},
		"OP2_TUNE":             {bad: "maybe", want: "not a boolean"},
		"OP2_MPI_TIMEOUT":      {reason: "read when an MPI job starts, which refuses a value that is not a duration naming the variable (internal/mpi TestTimeoutFromEnv)"},
		"OP2_GPU_DIRECT":       {reason: "read when an MPI job starts, which refuses a value other than auto, on and off naming the variable (internal/mpi TestGPUDirectFromEnv, TestDeviceMemory)"},
		"OP2_CGNS_LIBRARY":     {reason: library},
		"OP2_CUDA_LIBRARY":     {reason: library},
		"OP2_HDF5_LIBRARY":     {reason: library},
		"OP2_METIS_LIBRARY":    {reason: library},
		"OP2_NVRTC_LIBRARY":    {reason: library},
		"OP2_OPENCL_LIBRARY":   {reason: library},
		"OP2_PETSC_LIBRARY":    {reason: library},
		"OP2_PTSCOTCH_LIBRARY": {reason: library},
		"OP2_PYTHON":           {reason: "op2bench's Python for the DOLFINx comparison: one that cannot import dolfinx is reported in its output, which names what to install (cmd/op2bench TestMatrixSectionNoPETSc)"},
	}
	for _, name := range settingVariables(t) {
		v, ok := vars[name]
		if !ok {
			t.Errorf("%s is read by GoOP2 but not in this test's table: give it a wrong value and the error it must give, or the reason every value is taken", name)
			continue
		}
		if v.bad == "" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, v.bad)
			wantErr(t, op2.Configure(op2.Config{Backend: "sequential", CacheDir: cache}), name, v.bad, v.want)
			if b := op2.Backend(); b != "openmp" {
				t.Fatalf("after a refused Configure the backend is %q, want openmp", b)
			}
			runsOn(t)
		})
	}
}

// TestCCArgumentsChecked: arguments inside CC are checked when CC is
// configured, as CFlags are (compiling a file), rather than failing the
// first loop: `cc --version` passes over them.
func TestCCArgumentsChecked(t *testing.T) {
	cache := os.Getenv("OP2_CACHE_DIR")
	defer func() { check(t, op2.Configure(op2.Config{CacheDir: cache, PlanCheck: true})) }()
	err := op2.Configure(op2.Config{CC: "cc -fno-such-flag", CacheDir: cache})
	if err == nil || !strings.Contains(err.Error(), `Config.CC="cc -fno-such-flag" cannot compile a file`) || !strings.Contains(err.Error(), "-fno-such-flag") {
		t.Errorf("CC with an argument cc refuses: %v", err)
	}
	t.Setenv("CC", "cc -fno-such-flag")
	if err := op2.Configure(op2.Config{CacheDir: cache}); err == nil || !strings.Contains(err.Error(), `CC="cc -fno-such-flag" cannot compile a file`) {
		t.Errorf("the variable CC with an argument cc refuses: %v", err)
	}
	t.Setenv("CC", "cc -std=gnu11")
	check(t, op2.Configure(op2.Config{CacheDir: cache}))
}
