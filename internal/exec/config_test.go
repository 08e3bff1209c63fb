package exec

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/core"
)

// TestDefaultCacheDir: the default cache is per user, also when HOME is
// unset (services, cron, containers): never a directory shared by all
// users.
func TestDefaultCacheDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("OP2_CACHE_DIR", "")

	t.Setenv("HOME", "/home/someone")
	if got, want := DefaultCacheDir(), "/home/someone/.cache/goop2"; got != want {
		t.Errorf("with HOME set: %q, want %q", got, want)
	}
	t.Setenv("HOME", "")
	want := filepath.Join(tmp, fmt.Sprintf("goop2-%d", os.Geteuid()))
	if got := DefaultCacheDir(); got != want {
		t.Errorf("without HOME: %q, want %q", got, want)
	}
	cfg, err := ConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CacheDir != want {
		t.Errorf("ConfigFromEnv without HOME: CacheDir %q, want %q", cfg.CacheDir, want)
	}
}

// TestOpenUnknownIsUnavailable: an unknown backend name matches
// ErrBackendUnavailable, names the registered backends, and its message
// does not start with "op2: " (package op2 adds that).
func TestOpenUnknownIsUnavailable(t *testing.T) {
	_, err := Open("no-such-backend", &Config{})
	if !errors.Is(err, core.ErrBackendUnavailable) {
		t.Fatalf("error %v does not match ErrBackendUnavailable", err)
	}
	if msg := err.Error(); msg != fmt.Sprintf("unknown backend %q (available: %s)", "no-such-backend", strings.Join(Backends(), ", ")) {
		t.Errorf("message %q", msg)
	}
	if core.Unavailable(nil) != nil {
		t.Error("Unavailable(nil) is not nil")
	}
}

// TestTimingAndLogFromEnv: OP2_TIMING turns timing on, OP2_LOG chooses a
// logger's level (one logger per level; trace is below debug), "off" or nothing means none, and
// anything else is refused.
func TestTimingAndLogFromEnv(t *testing.T) {
	t.Setenv("OP2_TIMING", "1")
	t.Setenv("OP2_LOG", "debug")
	cfg, err := ConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Timing || cfg.Logger == nil || !cfg.Logger.Enabled(t.Context(), slog.LevelDebug) {
		t.Errorf("OP2_TIMING=1 OP2_LOG=debug: timing %v, logger %v", cfg.Timing, cfg.Logger)
	}
	again, _ := ConfigFromEnv()
	if again.Logger != cfg.Logger {
		t.Error("OP2_LOG made a new logger for every configuration")
	}
	t.Setenv("OP2_LOG", "INFO")
	if cfg, err = ConfigFromEnv(); err != nil || cfg.Logger == nil || cfg.Logger.Enabled(t.Context(), slog.LevelDebug) || !cfg.Logger.Enabled(t.Context(), slog.LevelInfo) {
		t.Errorf("OP2_LOG=INFO: %v, %v", cfg.Logger, err)
	}
	t.Setenv("OP2_LOG", "trace")
	if cfg, err = ConfigFromEnv(); err != nil || cfg.Logger == nil || !cfg.Logger.Enabled(t.Context(), LevelTrace) {
		t.Errorf("OP2_LOG=trace: %v, %v", cfg.Logger, err)
	}
	for _, v := range []string{"", "off"} {
		t.Setenv("OP2_LOG", v)
		t.Setenv("OP2_TIMING", "")
		if cfg, err = ConfigFromEnv(); err != nil || cfg.Logger != nil || cfg.Timing {
			t.Errorf("OP2_LOG=%q: logger %v timing %v err %v", v, cfg.Logger, cfg.Timing, err)
		}
	}
	t.Setenv("OP2_LOG", "loud")
	if _, err := ConfigFromEnv(); err == nil || !strings.Contains(err.Error(), "OP2_LOG") {
		t.Errorf("OP2_LOG=loud: %v", err)
	}
	t.Setenv("OP2_LOG", "")
	t.Setenv("OP2_TIMING", "maybe")
	if _, err := ConfigFromEnv(); err == nil || !strings.Contains(err.Error(), "OP2_TIMING") {
		t.Errorf("OP2_TIMING=maybe: %v", err)
	}
}

// TestDeviceSettingsFromEnv: the device backends' settings come from the
// environment, and a device number that is not one is refused.
func TestDeviceSettingsFromEnv(t *testing.T) {
	t.Setenv("OP2_DEVICE_SCHEME", "atomics")
	t.Setenv("OP2_DEVICE_LAYOUT", "soa")
	t.Setenv("OP2_CUDA_DEVICE", "1")
	cfg, err := ConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DeviceScheme != "atomics" || cfg.DeviceLayout != "soa" || cfg.CUDADevice != 1 {
		t.Errorf("config %+v", cfg)
	}
	for _, bad := range []string{"-1", "gpu"} {
		t.Setenv("OP2_CUDA_DEVICE", bad)
		if _, err := ConfigFromEnv(); err == nil || !strings.Contains(err.Error(), "OP2_CUDA_DEVICE") {
			t.Errorf("OP2_CUDA_DEVICE=%s: %v", bad, err)
		}
	}
}

// TestCUDADeviceDefault: the GPU counts as left to its default (dealt
// out per rank by cuda) only when neither the program nor OP2_CUDA_DEVICE
// names one; an explicit 0 names device 0.
func TestCUDADeviceDefault(t *testing.T) {
	for _, c := range []struct {
		name string
		env  string
		user Config
		want bool
	}{
		{"unset", "", Config{}, true},
		{"variable", "0", Config{}, false},
		{"config", "", Config{CUDADevice: 1}, false},
		{"explicit zero", "", Config{}.Explicit("CUDADevice"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.env != "" {
				t.Setenv("OP2_CUDA_DEVICE", c.env)
			}
			cfg := Defaults()
			if err := MergeConfig(&cfg, c.user); err != nil {
				t.Fatal(err)
			}
			if cfg.CUDADeviceDefault() != c.want {
				t.Errorf("CUDADeviceDefault = %v, want %v (device %d)", cfg.CUDADeviceDefault(), c.want, cfg.CUDADevice)
			}
		})
	}
}

// TestDeviceWorkGroupFromEnv: OP2_DEVICE_WORKGROUP sets the device
// backends' work-group size; a value that is not a power of two from 32
// to 1024 is refused with an error naming the variable, the value and the
// sizes allowed.
func TestDeviceWorkGroupFromEnv(t *testing.T) {
	for _, c := range []struct {
		env  string
		want int
		bad  bool
	}{{"", 0, false}, {"32", 32, false}, {"256", 256, false}, {"1024", 1024, false},
		{"48", 0, true}, {"2048", 0, true}, {"16", 0, true}, {"abc", 0, true}, {"-64", 0, true}} {
		t.Setenv("OP2_DEVICE_WORKGROUP", c.env)
		cfg, err := ConfigFromEnv()
		if !c.bad {
			if err != nil || cfg.DeviceWorkGroupSize != c.want {
				t.Errorf("OP2_DEVICE_WORKGROUP=%q: size %d, %v; want %d", c.env, cfg.DeviceWorkGroupSize, err, c.want)
			}
			continue
		}
		if err == nil {
			t.Errorf("OP2_DEVICE_WORKGROUP=%q: no error", c.env)
			continue
		}
		for _, w := range []string{`OP2_DEVICE_WORKGROUP="` + c.env + `"`, "32, 64, 128, 256, 512, 1024"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("OP2_DEVICE_WORKGROUP=%q: error %q lacks %q", c.env, err, w)
			}
		}
	}
}

// TestLazyFromEnv: lazy mode is on by default, in one process and when
// an MPI launcher started several (where only loops that meet no other
// rank are recorded); OP2_LAZY overrides it either way, and a value that
// is not a boolean is refused.
func TestLazyFromEnv(t *testing.T) {
	for _, v := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS", "PMIX_RANK", "PMI_RANK"} {
		t.Setenv(v, "") // as if no launcher started the test
	}
	for _, c := range []struct {
		v     string
		ranks string // OMPI_COMM_WORLD_SIZE; "": no launcher
		lazy  bool
		ok    bool
	}{
		{"", "", true, true}, {"", "1", true, true}, {"", "2", true, true},
		{"1", "", true, true}, {"true", "", true, true}, {"1", "2", true, true},
		{"0", "", false, true}, {"false", "1", false, true}, {"0", "2", false, true},
		{"maybe", "", true, false},
	} {
		t.Setenv("OP2_LAZY", c.v)
		t.Setenv("OMPI_COMM_WORLD_SIZE", c.ranks)
		cfg, err := ConfigFromEnv()
		if (err == nil) != c.ok || (err != nil && !strings.Contains(err.Error(), "OP2_LAZY")) || c.ok && cfg.Lazy != c.lazy {
			t.Errorf("OP2_LAZY=%q with %q ranks launched: lazy %v, error %v", c.v, c.ranks, cfg.Lazy, err)
		}
		if d := Defaults(); !d.Lazy {
			t.Errorf("%q ranks launched: default lazy %v", c.ranks, d.Lazy)
		}
	}
}

// TestLazyOffWithAutomaticCheckpoints: automatic checkpoints and check
// mode need loops that run at once, so Lazy's default is off when
// Checkpoint (or Check) is set, by the environment or the program; Lazy
// set explicitly is kept.
func TestLazyOffWithAutomaticCheckpoints(t *testing.T) {
	// A device backend, registered as the opencl and cuda backends' init
	// functions register theirs.
	Register("lazytestdevice", func(*Config) (Backend, error) { return nil, errors.New("never opened") })
	RegisterDevice("lazytestdevice")
	for _, v := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS", "PMIX_RANK", "PMI_RANK", "OP2_LAZY", "OP2_CHECKPOINT"} {
		t.Setenv(v, "")
	}
	for _, c := range []struct {
		env, lazyEnv string // OP2_CHECKPOINT, OP2_LAZY
		user         Config
		lazy         bool
	}{
		{"", "", Config{}, true},
		{"ck.h5", "", Config{}, false},
		{"ck.h5", "1", Config{}, true},
		{"", "", Config{Checkpoint: "ck.h5"}, false},
		{"", "", Config{Checkpoint: "ck.h5", Lazy: true}, true},
		{"", "1", Config{Checkpoint: "ck.h5"}, true},
		{"ck.h5", "", Config{}.Explicit("Checkpoint"), true},
		{"", "", Config{Check: true}, false}, // check mode reports each loop's writes at the loop
		{"", "", Config{Check: true, Lazy: true}, true},
		{"", "", Config{Tune: true}, true}, // the tuner measures the loops as they run, fused ones too
		{"", "", Config{Tune: true, Lazy: true}, true},
		{"", "", Config{Backend: "lazytestdevice"}, false}, // device failures come back from ParLoop
		{"", "", Config{Backend: "lazytestdevice", Lazy: true}, true},
	} {
		t.Setenv("OP2_CHECKPOINT", c.env)
		t.Setenv("OP2_LAZY", c.lazyEnv)
		cfg, err := ConfigFromEnv()
		if err == nil {
			err = MergeConfig(&cfg, c.user)
		}
		if err != nil || cfg.Recording() != c.lazy {
			t.Errorf("OP2_CHECKPOINT=%q OP2_LAZY=%q, Config{Backend: %q, Checkpoint: %q, Lazy: %v}: lazy %v (%v), want %v", c.env, c.lazyEnv, c.user.Backend, c.user.Checkpoint, c.user.Lazy, cfg.Recording(), err, c.lazy)
		}
	}
}

// TestTileFromEnv: OP2_TILE sets the tile size, 0 and "off" turn tiling
// off, "auto" and nothing (with the default backend, sequential) leave
// the choice to the engine (TileAuto), and a
// value that is neither "auto" nor a non-negative integer is refused.
func TestTileFromEnv(t *testing.T) {
	for _, c := range []struct {
		v    string
		tile int
		ok   bool
	}{{"", TileAuto, true}, {"0", 0, true}, {"off", 0, true}, {" Off", 0, true}, {"2000", 2000, true}, {"auto", TileAuto, true}, {" AUTO ", TileAuto, true},
		{"-1", 0, false}, {"big", 0, false}} {
		t.Setenv("OP2_TILE", c.v)
		cfg, err := ConfigFromEnv()
		if (err == nil) != c.ok || (err != nil && !strings.Contains(err.Error(), "OP2_TILE")) || cfg.Tile != c.tile {
			t.Errorf("OP2_TILE=%q: tile %d, error %v", c.v, cfg.Tile, err)
		}
	}
}

// TestTileConfigured: a program's Config.Tile wins over OP2_TILE (a tile
// size, TileAuto), Tile 0 named with Explicit turns tiling off whatever
// OP2_TILE says, an unnamed 0 keeps the variable's value (else TileAuto
// on one thread, off on several), and a value below TileAuto is
// refused, naming the field.
func TestTileConfigured(t *testing.T) {
	for _, c := range []struct {
		env  string
		user Config
		want int
		err  bool
	}{
		{"", Config{}, TileAuto, false},
		{"", Config{Backend: "openmp", Threads: 2}, 0, false},
		{"", Config{Backend: "openmp", Threads: 1}, TileAuto, false},
		{"off", Config{Backend: "openmp", Threads: 1}, 0, false},
		{"500", Config{}, 500, false},
		{"500", Config{Tile: TileAuto}, TileAuto, false},
		{"auto", Config{Tile: 64}, 64, false},
		{"500", Config{}.Explicit("Tile"), 0, false},
		{"", Config{}.Explicit("Tile"), 0, false},
		{"0", Config{}, 0, false},
		{"", Config{Tile: -2}, TileAuto, true}, // unchanged
	} {
		t.Setenv("OP2_TILE", c.env)
		cfg, err := ConfigFromEnv()
		if err != nil {
			t.Fatal(err)
		}
		err = MergeConfig(&cfg, c.user)
		if (err != nil) != c.err || err != nil && !strings.Contains(err.Error(), "Config.Tile") || cfg.Tile != c.want {
			t.Errorf("OP2_TILE=%q, Config.Tile %d (explicit %v): tile %d, error %v; want %d", c.env, c.user.Tile, c.user.explicit, cfg.Tile, err, c.want)
		}
	}
}

// TestWithBackendTileDefault: a Tile left to its default follows the
// backend Use switches to (auto on one thread, else off), as a new
// configuration's would; one the program or OP2_TILE set stays.
func TestWithBackendTileDefault(t *testing.T) {
	for _, c := range []struct {
		env        string
		user       Config
		use        string
		want, then int
	}{
		{"", Config{Backend: "sequential", Threads: 2}, "openmp", TileAuto, 0},
		{"", Config{Backend: "openmp", Threads: 2}, "sequential", 0, TileAuto},
		{"", Config{Backend: "openmp", Threads: 2}, "OpenMP", 0, 0},
		{"", Config{Backend: "sequential", Threads: 2, Tile: 64}, "openmp", 64, 64},
		{"500", Config{Backend: "sequential", Threads: 2}, "openmp", 500, 500},
		{"", Config{Backend: "sequential", Threads: 2}.Explicit("Tile"), "openmp", 0, 0},
	} {
		t.Setenv("OP2_TILE", c.env)
		cfg, err := ConfigFromEnv()
		if err == nil {
			err = MergeConfig(&cfg, c.user)
		}
		if err != nil {
			t.Fatal(err)
		}
		then := cfg.WithBackend(c.use)
		if cfg.Tile != c.want || then.Tile != c.then || then.Backend != Choice(c.use) {
			t.Errorf("OP2_TILE=%q %+v: tile %d, after WithBackend(%q) %d on %q; want %d, %d", c.env, c.user, cfg.Tile, c.use, then.Tile, then.Backend, c.want, c.then)
		}
	}
}

// TestDefaultThreadsShareTheCPUs: ranks an MPI launcher started on one
// machine share its CPUs (at least one thread each); OMP_NUM_THREADS
// still decides when set.
func TestDefaultThreadsShareTheCPUs(t *testing.T) {
	cpus := min(runtime.NumCPU(), MaxThreads)
	for _, c := range []struct {
		env  map[string]string
		want int
	}{
		{map[string]string{}, cpus},
		{map[string]string{"OMPI_COMM_WORLD_LOCAL_SIZE": "1"}, cpus},
		{map[string]string{"OMPI_COMM_WORLD_LOCAL_SIZE": "2"}, max(1, runtime.NumCPU()/2)},
		{map[string]string{"MPI_LOCALNRANKS": "1000"}, 1},
		{map[string]string{"PMIX_LOCAL_SIZE": "junk"}, cpus},
		{map[string]string{"OMPI_COMM_WORLD_LOCAL_SIZE": "1000", "OMP_NUM_THREADS": "3"}, 3},
	} {
		for _, v := range []string{"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "PMIX_LOCAL_SIZE", "OMP_NUM_THREADS"} {
			t.Setenv(v, c.env[v])
			if c.env[v] == "" {
				os.Unsetenv(v)
			}
		}
		cfg, err := ConfigFromEnv()
		if err != nil || cfg.Threads != min(c.want, MaxThreads) {
			t.Errorf("%v: %d threads (%v), want %d", c.env, cfg.Threads, err, c.want)
		}
	}
}

// TestWorkGroupKey: the tuner's configuration key names a device
// work-group size other than the default, and not the default (so that
// choices saved before the size was configurable still apply).
func TestWorkGroupKey(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, ""}, {64, ""}, {32, "/wg32"}, {256, "/wg256"}} {
		if got := workGroupKey(c.n); got != c.want {
			t.Errorf("workGroupKey(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

// TestTunerKeyUnchanged: the key the configuration table writes is the
// one saved tuning files were written with (the format below is the one
// package op2 wrote before the table), so saved choices still apply.
func TestTunerKeyUnchanged(t *testing.T) {
	old := func(c *Config) string {
		return fmt.Sprintf("threads=%d omp=%s dev=%s/%s%s cl=%s/%s cuda=%d cflags=%s%s%s", c.Threads, c.OpenMPScheme,
			c.DeviceScheme, c.DeviceLayout, workGroupKey(c.DeviceWorkGroupSize), c.OpenCLPlatform, c.OpenCLDevice, c.CUDADevice, strings.Join(c.CFlags, " "),
			blockSizeKey(c.BlockSize), simdKey(c.SIMD))
	}
	for _, c := range []Config{
		{},
		{Threads: 2, CFlags: DefaultCFlags},
		{Threads: 8, OpenMPScheme: "colour", DeviceScheme: "atomics", DeviceLayout: "soa", DeviceWorkGroupSize: 128,
			OpenCLPlatform: "Portable", OpenCLDevice: "cpu", CUDADevice: 1, CFlags: []string{"-O2"}, BlockSize: 256, SIMD: "8",
			Backend: "openmp", Tune: true, Tile: 4, Fusion: "on"},
		{DeviceWorkGroupSize: 64, SIMD: "auto", OpenMPScheme: "owner"},
	} {
		if got, want := TunerKey(&c), old(&c); got != want {
			t.Errorf("TunerKey() = %q, want %q", got, want)
		}
	}
}

// TestSettingsCoverConfig: every exported field of Config has one row in
// Settings, every row's accessor reaches the field its name says (an
// EnvOnly row: the unexported field of that name), and no two rows share
// a variable.
func TestSettingsCoverConfig(t *testing.T) {
	rows := map[string]int{}
	envs := map[string]bool{}
	var c Config
	fields := reflect.ValueOf(&c).Elem()
	for _, s := range Settings {
		rows[s.Field]++
		if envs[s.Env] {
			t.Errorf("two rows read %s", s.Env)
		}
		envs[s.Env] = true
		if s.value == nil || s.Doc == "" || s.Default == "" {
			t.Errorf("row %s: a value, a default and a description are required", s.Field)
			continue
		}
		name := s.Field
		if s.EnvOnly {
			name = strings.ToLower(name[:1]) + name[1:]
		}
		f := fields.FieldByName(name)
		if !f.IsValid() || f.Addr().Pointer() != reflect.ValueOf(s.value.addr(&c)).Pointer() ||
			f.Type() != reflect.TypeOf(s.value.addr(&c)).Elem() {
			t.Errorf("row %s does not reach Config.%s", s.Field, name)
		}
		if f.IsValid() && f.CanInterface() == s.EnvOnly {
			t.Errorf("row %s: EnvOnly is %v, but Config.%s exported is %v", s.Field, s.EnvOnly, name, f.CanInterface())
		}
	}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[Config]()) {
		if !f.IsExported() {
			continue
		}
		if rows[f.Name] != 1 {
			t.Errorf("Config.%s has %d rows in Settings, want 1", f.Name, rows[f.Name])
		}
	}
}

var updateGuide = flag.Bool("update", false, "rewrite the configuration guide's settings table")

// TestSettingsTableInGuide: the configuration guide's table of settings
// is the one SettingsTable writes from Settings (go test -run
// TestSettingsTableInGuide -update rewrites it).
func TestSettingsTableInGuide(t *testing.T) {
	const path = "../../docs/guide/configuration.md"
	const begin, end = "<!-- settings table: generated from internal/exec.Settings; go test ./internal/exec -run TestSettingsTableInGuide -update -->\n", "<!-- end of settings table -->"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no settings table between %q and %q", path, begin, end)
	}
	want := SettingsTable()
	if got := doc[i+len(begin) : j]; got != want {
		if !*updateGuide {
			t.Fatalf("%s's settings table is not the one Settings gives; run go test ./internal/exec -run TestSettingsTableInGuide -update", path)
		}
		if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMergeExplicitZeroWins: a field the program names explicitly wins
// over the environment even at its zero value, which stands for the
// built-in default; the zero fields it does not name keep the
// environment's values; a name that is not a setting of the program's
// Config is refused, naming it, with nothing changed.
func TestMergeExplicitZeroWins(t *testing.T) {
	t.Setenv("OP2_LAZY", "1")
	t.Setenv("OP2_TIMING", "1")
	t.Setenv("OP2_BLOCK_SIZE", "128")
	t.Setenv("OP2_SIMD", "off")
	t.Setenv("OP2_LOG", "debug")
	t.Setenv("OP2_CFLAGS", "-O1")
	env, err := ConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if !env.Lazy || !env.Timing || env.BlockSize != 128 || env.SIMD != "off" || env.Logger == nil {
		t.Fatalf("the environment's configuration: %+v", env)
	}
	c := env
	if err := MergeConfig(&c, Config{}); err != nil || !reflect.DeepEqual(c, env) {
		t.Errorf("zero fields named nowhere changed the environment's configuration: %+v (%v)", c, err)
	}
	if err := MergeConfig(&c, Config{}.Explicit("Lazy", "BlockSize", "SIMD", "Logger", "CFlags")); err != nil {
		t.Fatal(err)
	}
	// Lazy's zero value wins as false (off), although its default is on.
	if c.Lazy || c.BlockSize != 0 || c.SIMD != "" || c.Logger != nil || !reflect.DeepEqual(c.CFlags, DefaultCFlags) {
		t.Errorf("explicit zero values did not win: lazy %v, block size %d, SIMD %q, logger %v, flags %q", c.Lazy, c.BlockSize, c.SIMD, c.Logger, c.CFlags)
	}
	if !c.Timing {
		t.Error("Timing, not named, lost the environment's value")
	}
	c = env
	if err := MergeConfig(&c, Config{Lazy: true, BlockSize: 64}.Explicit("Lazy", "BlockSize")); err != nil || !c.Lazy || c.BlockSize != 64 {
		t.Errorf("explicit non-zero values: lazy %v, block size %d (%v)", c.Lazy, c.BlockSize, err)
	}
	for _, name := range []string{"Lazzy", "DebugPlan", "debugPlan", "explicit"} { // a typo, a variable only, unexported fields
		c := env
		err := MergeConfig(&c, Config{}.Explicit("Lazy", name))
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", name)) {
			t.Errorf("explicit %q: error %v, want one naming it", name, err)
		}
		if !reflect.DeepEqual(c, env) {
			t.Errorf("explicit %q: the refused merge changed the configuration", name)
		}
	}
}

// TestBooleanVariables: a boolean variable takes the words the settings
// table writes its defaults in (on, off) and yes/no as well as
// strconv.ParseBool's values, in any case; another value is refused,
// saying what is taken. OP2_TUNE=on was refused as "not a boolean" while
// the table gave Tune's default as "off".
func TestBooleanVariables(t *testing.T) {
	for _, c := range []struct {
		v    string
		want bool
		ok   bool
	}{
		{"on", true, true}, {"ON", true, true}, {" yes ", true, true}, {"1", true, true}, {"true", true, true}, {"T", true, true},
		{"off", false, true}, {"Off", false, true}, {"no", false, true}, {"0", false, true}, {"false", false, true},
		{"maybe", false, false}, {"onn", false, false},
	} {
		t.Setenv("OP2_TUNE", c.v)
		cfg, err := ConfigFromEnv()
		switch {
		case c.ok && err != nil:
			t.Errorf("OP2_TUNE=%q: %v", c.v, err)
		case c.ok && cfg.Tune != c.want:
			t.Errorf("OP2_TUNE=%q: Tune %v, want %v", c.v, cfg.Tune, c.want)
		case !c.ok && (err == nil || !strings.Contains(err.Error(), `OP2_TUNE="`+c.v+`" is not a boolean (on, yes, 1 or true; off, no, 0 or false)`)):
			t.Errorf("OP2_TUNE=%q: error %v", c.v, err)
		}
	}
}

// TestBlankPathsRefused: a path setting that is only blanks (a folder or
// a checkpoint file named " ") is refused, from the variable and the
// field alike, naming it.
func TestBlankPathsRefused(t *testing.T) {
	for _, c := range []struct{ env, field string }{{"OP2_CACHE_DIR", "CacheDir"}, {"OP2_CHECKPOINT", "Checkpoint"}} {
		t.Run(c.field, func(t *testing.T) {
			t.Setenv(c.env, " ")
			if _, err := ConfigFromEnv(); err == nil || !strings.Contains(err.Error(), c.env) {
				t.Errorf("%s=\" \": %v; want an error naming it", c.env, err)
			}
			t.Setenv(c.env, "")
			cfg, err := ConfigFromEnv()
			if err != nil {
				t.Fatal(err)
			}
			user := Config{}
			reflect.ValueOf(&user).Elem().FieldByName(c.field).SetString("  ")
			if err := MergeConfig(&cfg, user); err == nil || !strings.Contains(err.Error(), "Config."+c.field) {
				t.Errorf("Config.%s \"  \": %v; want an error naming it", c.field, err)
			}
		})
	}
}
