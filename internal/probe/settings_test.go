package probe_test

import (
	"os"
	"strings"
	"testing"

	op2 "github.com/goop2/op2"
)

// Issue 37, item 2: every setting is validated when configured or read
// (exec.Settings). These probes try spellings (case, spaces), the
// environment against Config, and Configure after a refused Configure.

// spelling configures one choice setting spelt value and reports
// whether Configure took it.
func spelling(t *testing.T, set func(c *op2.Config, v string), v string) error {
	t.Helper()
	cfg := op2.Config{Backend: "sequential", CacheDir: cacheDir}
	set(&cfg, v)
	return op2.Configure(cfg)
}

// TestChoiceSpellings: the settings that name one of a few choices
// take the same spellings. OpenMPScheme, SIMD and OpenCLDevice take any
// case and surrounding spaces ("OWNER", " colour ", "SIMD8", "CPU"); the
// probe asks the same of DeviceScheme, DeviceLayout and Fusion, as
// Config and as OP2_* variables.
func TestChoiceSpellings(t *testing.T) {
	// Finding 2: DeviceScheme, DeviceLayout and Fusion refuse "SOA",
	// " soa", "Atomics", " staged", "ON", "off " (and the same through
	// OP2_DEVICE_LAYOUT...), while OpenMPScheme, SIMD and OpenCLDevice
	// of the same table take any case and spaces.
	defer func() { check(t, op2.Configure(op2.Config{CacheDir: cacheDir})) }()
	type setting struct {
		name, env string
		set       func(c *op2.Config, v string)
		values    []string
	}
	settings := []setting{
		{"OpenMPScheme", "OP2_OPENMP_SCHEME", func(c *op2.Config, v string) { c.OpenMPScheme = v }, []string{"OWNER", " colour "}},
		{"SIMD", "OP2_SIMD", func(c *op2.Config, v string) { c.SIMD = v }, []string{"OFF", " 8 "}},
		{"OpenCLDevice", "OP2_OPENCL_DEVICE", func(c *op2.Config, v string) { c.OpenCLDevice = v }, []string{"CPU"}},
		{"DeviceScheme", "OP2_DEVICE_SCHEME", func(c *op2.Config, v string) { c.DeviceScheme = v }, []string{"Atomics", " staged"}},
		{"DeviceLayout", "OP2_DEVICE_LAYOUT", func(c *op2.Config, v string) { c.DeviceLayout = v }, []string{"SOA", " soa"}},
		{"Fusion", "OP2_FUSION", func(c *op2.Config, v string) { c.Fusion = v }, []string{"ON", "off "}},
	}
	var refused []string
	for _, s := range settings {
		for _, v := range s.values {
			if err := spelling(t, s.set, v); err != nil {
				refused = append(refused, "Config."+s.name+"="+strconvQuote(v)+": "+err.Error())
			}
			t.Setenv(s.env, v)
			if err := op2.Configure(op2.Config{Backend: "sequential", CacheDir: cacheDir}); err != nil {
				refused = append(refused, s.env+"="+strconvQuote(v)+": "+err.Error())
			}
			os.Unsetenv(s.env)
		}
	}
	if len(refused) == 0 {
		return
	}
	t.Errorf("OpenMPScheme, SIMD and OpenCLDevice take any case and spaces, but:\n%s", strings.Join(refused, "\n"))
}

func strconvQuote(s string) string { return `"` + s + `"` }

// TestEnvAndConfig: Config's values win over the environment's;
// OP2_LOG of spaces means no logger; Configure after a refused Configure
// (bad Config, then bad variable) takes the next good one; bools set in
// the environment stay on (documented "also enabled by").
func TestEnvAndConfig(t *testing.T) {
	defer func() { check(t, op2.Configure(op2.Config{CacheDir: cacheDir})) }()
	t.Setenv("OP2_LOG", "  ")
	check(t, op2.Configure(op2.Config{Backend: "sequential", CacheDir: cacheDir}))
	t.Setenv("OP2_LOG", "OFF")
	check(t, op2.Configure(op2.Config{Backend: "sequential", CacheDir: cacheDir}))
	t.Setenv("OP2_LOG", "Warn")
	check(t, op2.Configure(op2.Config{Backend: "sequential", CacheDir: cacheDir}))
	os.Unsetenv("OP2_LOG")

	// The environment says openmp, Config says sequential: sequential.
	t.Setenv("OP2_BACKEND", "openmp")
	check(t, op2.Configure(op2.Config{Backend: "sequential", CacheDir: cacheDir}))
	if b := op2.Backend(); b != "sequential" {
		t.Errorf("Config.Backend sequential with OP2_BACKEND=openmp: backend %q", b)
	}
	check(t, op2.Configure(op2.Config{CacheDir: cacheDir}))
	if b := op2.Backend(); b != "openmp" {
		t.Errorf("OP2_BACKEND=openmp, Config.Backend empty: backend %q", b)
	}
	os.Unsetenv("OP2_BACKEND")

	// Refused, refused again through a variable, then taken.
	check(t, op2.Configure(op2.Config{Backend: "openmp", Threads: 2, CacheDir: cacheDir}))
	if err := op2.Configure(op2.Config{Backend: "sequential", DeviceLayout: "csr", CacheDir: cacheDir}); err == nil {
		t.Fatal("DeviceLayout csr taken")
	}
	t.Setenv("OP2_TILE", "x")
	if err := op2.Configure(op2.Config{Backend: "sequential", CacheDir: cacheDir}); err == nil {
		t.Fatal("OP2_TILE=x taken")
	}
	if _, err := op2.NewRuntime(op2.Config{Backend: "sequential", CacheDir: cacheDir}); err == nil {
		t.Error("NewRuntime took OP2_TILE=x")
	}
	if b := op2.Backend(); b != "openmp" {
		t.Errorf("after refused Configures the backend is %q, want openmp", b)
	}
	os.Unsetenv("OP2_TILE")
	check(t, op2.Configure(op2.Config{Backend: "sequential", CacheDir: cacheDir}))
	if b := op2.Backend(); b != "sequential" {
		t.Errorf("after a good Configure the backend is %q", b)
	}

	// A wrong variable of a setting Config sets itself is still refused
	// (the variable is read whatever the backend).
	t.Setenv("OP2_DEVICE_LAYOUT", "csr")
	if err := op2.Configure(op2.Config{Backend: "sequential", DeviceLayout: "soa", CacheDir: cacheDir}); err == nil {
		t.Error("OP2_DEVICE_LAYOUT=csr taken when Config.DeviceLayout overrides it")
	}
	os.Unsetenv("OP2_DEVICE_LAYOUT")

	// Threads beyond the maximum, and OMP_NUM_THREADS with a list.
	if err := op2.Configure(op2.Config{Backend: "openmp", Threads: 1 << 20, CacheDir: cacheDir}); err == nil {
		t.Error("Threads 1<<20 taken")
	}
	t.Setenv("OMP_NUM_THREADS", "2,1")
	check(t, op2.Configure(op2.Config{Backend: "openmp", CacheDir: cacheDir}))
	t.Setenv("OMP_NUM_THREADS", "2")
}

// TestNumericSpellings: numeric variables with surrounding spaces.
// OMP_NUM_THREADS=" 2" and OP2_DEVICE_WORKGROUP=" 64" are taken (their
// parsers trim); the probe asks the same of OP2_BLOCK_SIZE, OP2_TILE
// and OP2_CUDA_DEVICE, and of the booleans (OP2_TIMING=" 1").
func TestNumericSpellings(t *testing.T) {
	// Finding 3 (low): OP2_BLOCK_SIZE=" 8", OP2_TILE="4 ",
	// OP2_CUDA_DEVICE=" 0" and OP2_TIMING=" true" are refused while
	// OMP_NUM_THREADS=" 2" and OP2_DEVICE_WORKGROUP=" 64" are taken.
	defer func() { check(t, op2.Configure(op2.Config{CacheDir: cacheDir})) }()
	var refused, taken []string
	for _, kv := range [][2]string{{"OMP_NUM_THREADS", " 2"}, {"OP2_DEVICE_WORKGROUP", " 64"},
		{"OP2_BLOCK_SIZE", " 8"}, {"OP2_TILE", "4 "}, {"OP2_CUDA_DEVICE", " 0"}, {"OP2_TIMING", " true"}} {
		t.Setenv(kv[0], kv[1])
		if err := op2.Configure(op2.Config{Backend: "sequential", CacheDir: cacheDir}); err != nil {
			refused = append(refused, err.Error())
		} else {
			taken = append(taken, kv[0]+"="+strconvQuote(kv[1]))
		}
		os.Unsetenv(kv[0])
	}
	t.Setenv("OMP_NUM_THREADS", "2")
	if len(refused) == 0 {
		return
	}
	t.Errorf("taken: %v\nrefused:\n%s", taken, strings.Join(refused, "\n"))
}
