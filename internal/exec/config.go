package exec

import (
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/jit"
)

// A ConfigSetting is one row of the configuration table (Settings): a
// field of Config, the environment variable that sets it, its default,
// how a value is read and checked, and its part in the tuner's key.
// ConfigFromEnv, MergeConfig (package op2's Configure), TunerKey and the
// configuration guide's table all come from the rows.
type ConfigSetting struct {
	Field   string // the Config field's name, as Explicit and errors name it
	Env     string // the environment variable
	Default string // the default, in words
	Doc     string // what it does, in one sentence
	// EnvOnly says that the row's field is unexported: only the variable
	// sets it.
	EnvOnly bool
	// value is the row's field, reached through a typed accessor: how
	// the variable's value is read into it (unset: not called; set but
	// empty: called only with emptyIsValue) and how a value a program
	// configured (not the zero value, which means the default) is
	// checked, its error naming the field.
	value        access
	emptyIsValue bool
	// zeroIsValue says that a field Explicit names at its zero value
	// takes that value rather than the built-in default, because the
	// default is another value: Lazy false (loops run at once), Tile 0
	// (no tiles), CUDADevice 0 (GPU 0 on every rank).
	zeroIsValue bool
	// auto, when not nil, sets the field's default from the rest of the
	// configuration, when neither the program nor the environment set
	// the field (Lazy: off when automatic checkpoints or check mode are
	// on, which expect loops that run at once; Tile: by the backend).
	auto func(c *Config)
	// verify, when not nil, checks the value in use when the program
	// or the environment named it explicitly, whatever the backend
	// (running a compiler); source is "Config.F" or the variable.
	verify func(c *Config, source string) error
	// keyPos, when positive, places key's text in the tuner's key
	// (TunerKey), in increasing keyPos.
	keyPos int
	key    func(c *Config) string
}

// access is a row's Config field, whatever its type (value).
type access interface {
	// fromEnv reads the variable env's value v into c's field, or
	// returns an error naming the variable and the value.
	fromEnv(c *Config, env, v string) error
	// merge copies user's field to dst's when it is not zero, after
	// checking it (the error names it as name), and reports whether it
	// did.
	merge(dst, user *Config, name string) (bool, error)
	// reset copies from's field to dst's.
	reset(dst, from *Config)
	// addr is the field's address in c, as a typed pointer (tests).
	addr(c *Config) any
}

// value is a Config field of type T as a row sees it: its accessor, how
// the variable's text is read into a T, how a configured value is
// checked (nil: every value is taken) and stored (norm, nil: as it is),
// and which value is the zero one (the default).
type value[T any] struct {
	field func(c *Config) *T
	parse func(env, v string) (T, error)
	check func(name string, v T) error
	norm  func(v T) T
	zero  func(v T) bool
}

func (f *value[T]) fromEnv(c *Config, env, v string) error {
	x, err := f.parse(env, v)
	if err != nil {
		return err
	}
	*f.field(c) = x
	return nil
}

func (f *value[T]) merge(dst, user *Config, name string) (bool, error) {
	v := *f.field(user)
	if f.zero(v) {
		return false, nil
	}
	if f.check != nil {
		if err := f.check(name, v); err != nil {
			return false, err
		}
	}
	if f.norm != nil {
		v = f.norm(v)
	}
	*f.field(dst) = v
	return true, nil
}

func (f *value[T]) reset(dst, from *Config) { *f.field(dst) = *f.field(from) }

func (f *value[T]) addr(c *Config) any { return f.field(c) }

// scalar is the row value of a field of a comparable type, whose zero
// value is the default.
func scalar[T comparable](field func(c *Config) *T, parse func(env, v string) (T, error), check func(name string, v T) error) *value[T] {
	return &value[T]{field: field, parse: parse, check: check, zero: func(v T) bool { var z T; return v == z }}
}

// boolean is the row value of a boolean field.
func boolean(field func(c *Config) *bool) *value[bool] { return scalar(field, parseBool, nil) }

// text is the row value of a string field that takes any text.
func text(field func(c *Config) *string) *value[string] {
	return scalar(field, func(_, v string) (string, error) { return v, nil }, nil)
}

// path is the row value of a string field holding a file or folder
// path, which may not be blank (" " would name a file called " ").
func path(field func(c *Config) *string) *value[string] {
	return scalar(field, func(env, v string) (string, error) {
		if strings.TrimSpace(v) == "" {
			return "", fmt.Errorf("%s=%q is blank: give a path, or leave it unset", env, v)
		}
		return v, nil
	}, func(name, v string) error {
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("%s = %q is blank: give a path, or leave it empty", name, v)
		}
		return nil
	})
}

// choice is the row value of a string field that names one of a fixed
// set of values with check, stored as Choice gives it.
func choice(field func(c *Config) *string, check func(string) error) *value[string] {
	f := scalar(field, choiceParser(check), choiceCheck(check))
	f.norm = Choice
	return f
}

// Settings is the configuration table, in the order the configuration
// guide lists it.
var Settings = []ConfigSetting{
	{Field: "Backend", Env: "OP2_BACKEND", Default: "`sequential`", Doc: "the backend: `sequential`, `openmp`, `opencl` or `cuda`",
		value: choice(func(c *Config) *string { return &c.Backend }, CheckBackend)},
	{Field: "CC", Env: "CC", Default: "`cc`", Doc: "the C compiler command, which may include arguments (`gcc -std=gnu11`); one named explicitly must run, and compile with the arguments it holds, whatever the backend",
		value: text(func(c *Config) *string { return &c.CC }), verify: func(c *Config, source string) error {
			cc := &jit.Compiler{CC: c.CC, Timeout: c.CompileTimeout}
			if len(strings.Fields(c.CC)) > 1 { // arguments it may refuse, which --version passes over
				return cc.CheckArgs(source)
			}
			return cc.Check()
		}},
	// The C++ compiler is optional: a missing one is reported when a C++
	// kernel is built, and C kernels still run.
	{Field: "CXX", Env: "CXX", Default: "`g++`", Doc: "the C++ compiler of C++ kernels (`Kernel.CXX`) on the host backends, run only when one is built",
		value: text(func(c *Config) *string { return &c.CXX })},
	{Field: "CompileTimeout", Env: jit.TimeoutEnv, Default: "`" + strings.TrimSuffix(jit.DefaultTimeout.String(), "0s") + "`", Doc: "how long the C and C++ compilers of the host backends (and the MPI compiler wrapper building GoOP2's MPI, PT-Scotch and PETSc shims) may run for one build (a duration: `90s`, `10m`); one still running then is stopped, and the loop it was building fails with a `CompileError` naming the loop",
		value: scalar(func(c *Config) *time.Duration { return &c.CompileTimeout }, func(env, v string) (time.Duration, error) {
			d, err := jit.ParseTimeout(v)
			if err != nil {
				return 0, fmt.Errorf("%s=%w", env, err)
			}
			return d, nil
		}, func(field string, d time.Duration) error {
			if d < 0 {
				return fmt.Errorf("%s = %v must not be negative", field, d)
			}
			return nil
		})},
	{Field: "CFlags", Env: "OP2_CFLAGS", Default: "`" + strings.Join(DefaultCFlags, " ") + "`", Doc: "the optimisation flags, replaced whole (the variable: separated by spaces; set and empty: none); flags named explicitly must compile; a loop with 64-bit integer data is built with `-fno-strict-aliasing` too (a kernel may spell them `long` or `int64_t`, the generated code `long long`); without `-ffp-contract=off`, GCC on a CPU with FMA may round a kernel's `a*b+c` differently in its fused, tiled and SIMD forms than in its own program (the last bits)",
		value: &value[[]string]{field: func(c *Config) *[]string { return &c.CFlags },
			parse: func(_, v string) ([]string, error) { return strings.Fields(v), nil },
			// A copy, which the program cannot change; an empty slice
			// (no flags) is not the default.
			norm: slices.Clone[[]string], zero: func(v []string) bool { return v == nil }},
		emptyIsValue: true,
		verify: func(c *Config, source string) error {
			return (&jit.Compiler{CC: c.CC, Flags: c.CFlags, Timeout: c.CompileTimeout}).CheckFlags(source)
		},
		keyPos: 9, key: func(c *Config) string { return " cflags=" + strings.Join(c.CFlags, " ") }},
	{Field: "CacheDir", Env: "OP2_CACHE_DIR", Default: "`goop2` in the user's cache directory, else `goop2-<uid>` in the temporary directory", Doc: "compiled loops and tuning choices; created 0700; a directory another user owns or others can write is refused",
		value: path(func(c *Config) *string { return &c.CacheDir })},
	{Field: "Threads", Env: "OMP_NUM_THREADS", Default: "the CPUs the process may use, shared among the MPI ranks a launcher started on this machine", Doc: fmt.Sprintf("OpenMP threads, 1 to %d (the variable: its first number)", MaxThreads),
		value: scalar(func(c *Config) *int { return &c.Threads }, func(env, v string) (int, error) {
			n, err := strconv.Atoi(strings.TrimSpace(strings.Split(v, ",")[0]))
			if err != nil || n < 1 {
				return 0, fmt.Errorf("%s=%q is not a positive integer", env, v)
			}
			return n, CheckThreads(n, env)
		}, func(field string, v int) error {
			if v < 0 {
				return fmt.Errorf("%s = %d must not be negative", field, v)
			}
			return CheckThreads(v, field)
		}),
		keyPos: 1, key: func(c *Config) string { return fmt.Sprintf("threads=%d", c.Threads) }},
	{Field: "BlockSize", Env: "OP2_BLOCK_SIZE", Default: "0: chosen per loop", Doc: "execution plan block size",
		value:  scalar(func(c *Config) *int { return &c.BlockSize }, intParser(0, "a non-negative integer"), nonNegative),
		keyPos: 10, key: func(c *Config) string { return blockSizeKey(c.BlockSize) }},
	{Field: "PlanCheck", Env: "OP2_PLAN_CHECK", Default: "off", Doc: "verify every invariant of each new execution plan", value: boolean(func(c *Config) *bool { return &c.PlanCheck })},
	{Field: "Check", Env: "OP2_CHECK", Default: "off", Doc: "check mode: find kernels that cast away the `const` of READ arguments (or, on the host backends, Consts) and write to them, and undo the writes; and kernels that leave values of a floating-point WRITE argument unwritten", value: boolean(func(c *Config) *bool { return &c.Check })},
	{Field: "Timing", Env: "OP2_TIMING", Default: "off", Doc: "the timing report: each loop's calls, times and bytes (`op2.EnableTiming` switches it until the next `Configure`)", value: boolean(func(c *Config) *bool { return &c.Timing })},
	{Field: "Lazy", Env: "OP2_LAZY", Default: "on on the host backends, unless `Checkpoint` or `Check` is set; off on `opencl` and `cuda`", Doc: "record loops until their results are needed, running them (fused where that pays) when something forces them; on several MPI ranks only loops that meet no other rank as they run (no halo exchange, no reduction) are recorded; `false` (`Config{}.Explicit(\"Lazy\")`, `OP2_LAZY=0`) runs each loop at once",
		value: boolean(func(c *Config) *bool { return &c.Lazy }), zeroIsValue: true,
		auto: func(c *Config) {
			c.Lazy = c.Checkpoint == "" && !c.Check
			c.lazyDefault = true
		}},
	{Field: "Tile", Env: "OP2_TILE", Default: "`auto` on one thread (`sequential`, or `Threads` 1), else off", Doc: "run recorded loops on the host backends as sparse tiles of this many elements of the first loop's set; `auto` (`TileAuto`, -1) tiles a chain, in one process, only where its data does not fit the last-level cache and tiles cut the bytes it moves, each tile's data filling half of one CPU's part of the last-level cache, and on one thread only where its tiled runs prove at least as fast as its untiled ones, at the faster of that size and one filling half of a core's L2 cache; `off` (`Config{}.Explicit(\"Tile\")`, `OP2_TILE=0`) runs no tiles",
		value: scalar(func(c *Config) *int { return &c.Tile }, parseTile, checkTile), zeroIsValue: true,
		auto: func(c *Config) {
			c.tileDefault = true
			tileDefault(c)
		}},
	{Field: "DebugPlan", Env: "OP2_DEBUG_PLAN", Default: "off", Doc: "print each new execution plan's blocks, block size, colours and owner pieces on standard error (`OP2_LOG=debug` logs them too)",
		EnvOnly: true, value: boolean(func(c *Config) *bool { return &c.debugPlan })},
	{Field: "Logger", Env: "OP2_LOG", Default: "none", Doc: "a `*slog.Logger` for GoOP2's events (the variable: a text handler on standard error at `trace`, `debug`, `info`, `warn` or `error`; `off`: none)",
		value: scalar(func(c *Config) **slog.Logger { return &c.Logger }, func(env, v string) (*slog.Logger, error) {
			v = strings.TrimSpace(v)
			if v == "" || strings.EqualFold(v, "off") {
				return nil, nil
			}
			level := LevelTrace
			if !strings.EqualFold(v, "trace") {
				if err := level.UnmarshalText([]byte(v)); err != nil {
					return nil, fmt.Errorf("%s=%q is not a log level (trace, debug, info, warn, error or off)", env, v)
				}
			}
			return envLogger(level), nil
		}, nil)},
	{Field: "OpenCLPlatform", Env: "OP2_OPENCL_PLATFORM", Default: "the first platform with a device", Doc: "a substring of the OpenCL platform's name, checked when `opencl` opens",
		value: text(func(c *Config) *string { return &c.OpenCLPlatform }), keyPos: 6, key: func(c *Config) string { return " cl=" + c.OpenCLPlatform }},
	{Field: "OpenCLDevice", Env: "OP2_OPENCL_DEVICE", Default: "any", Doc: "the OpenCL device type: `cpu`, `gpu`, `accelerator`, `default` or `all`",
		value:  choice(func(c *Config) *string { return &c.OpenCLDevice }, CheckOpenCLDevice),
		keyPos: 7, key: func(c *Config) string { return "/" + c.OpenCLDevice }},
	{Field: "DeviceScheme", Env: "OP2_DEVICE_SCHEME", Default: "`staged` on `opencl`, `atomics` on `cuda`", Doc: "how `opencl` and `cuda` apply increments through maps: `staged` stages a block's data in shared memory and applies increments colour by colour; `atomics` adds them atomically, with no colours and no execution plan (loops whose only modifications through maps are increments; sums then vary in order from run to run); `warp` is `atomics` in which, on `cuda`, the threads of a warp with one target add their increments together first, one atomic operation per target",
		value:  choice(func(c *Config) *string { return &c.DeviceScheme }, checkDeviceScheme),
		keyPos: 3, key: func(c *Config) string { return " dev=" + c.DeviceScheme }},
	{Field: "DeviceLayout", Env: "OP2_DEVICE_LAYOUT", Default: "`soa` on a GPU, else `aos`", Doc: "how `opencl` and `cuda` store Dats of dim > 1: `aos`, or `soa` (component by component; a Dat some loop cannot read so is stored `aos`)",
		value:  choice(func(c *Config) *string { return &c.DeviceLayout }, checkDeviceLayout),
		keyPos: 4, key: func(c *Config) string { return "/" + c.DeviceLayout }},
	{Field: "DeviceWorkGroupSize", Env: "OP2_DEVICE_WORKGROUP", Doc: "work items per work group (CUDA threads per block) of the `opencl` and `cuda` kernels: a power of two from 32 to 1024 within the device's limit",
		value: scalar(func(c *Config) *int { return &c.DeviceWorkGroupSize }, func(env, v string) (int, error) {
			n, err := parseWorkGroupSize(v)
			if err != nil {
				return 0, fmt.Errorf("%s=%q: %w", env, v, err)
			}
			return n, nil
		}, func(field string, v int) error {
			if err := checkWorkGroupSize(v); err != nil {
				return fmt.Errorf("%s: %w", field, err)
			}
			return nil
		}),
		keyPos: 5, key: func(c *Config) string { return workGroupKey(c.DeviceWorkGroupSize) }},
	{Field: "CUDADevice", Env: "OP2_CUDA_DEVICE", Default: "0; under an MPI launcher, the rank's number on its machine modulo the GPUs there", Doc: "the ordinal of the GPU `cuda` uses",
		auto: func(c *Config) { c.CUDADevice, c.cudaDeviceDefault = 0, true }, zeroIsValue: true,
		value: scalar(func(c *Config) *int { return &c.CUDADevice }, intParser(0, "a device number (0, 1, ...)"), func(field string, v int) error {
			if v < 0 {
				return fmt.Errorf("%s = %d: device numbers start at 0", field, v)
			}
			return nil
		}),
		keyPos: 8, key: func(c *Config) string { return fmt.Sprintf(" cuda=%d", c.CUDADevice) }},
	{Field: "CUDAGraphs", Env: "OP2_CUDA_GRAPHS", Default: "off", Doc: "`cuda` queues kernel launches on the host, 32 at most, until anything else is asked of the GPU or 1 ms has passed, and sends a batch it has sent before as a CUDA graph, one launch for its kernels; an error of a queued launch names its loop at the call that sends it",
		value: boolean(func(c *Config) *bool { return &c.CUDAGraphs })},
	{Field: "Tune", Env: "OP2_TUNE", Default: "off", Doc: "the auto-tuner: the first calls of each loop try its variants and then block sizes; the fastest is kept and saved for this machine and configuration", value: boolean(func(c *Config) *bool { return &c.Tune })},
	{Field: "OpenMPScheme", Env: "OP2_OPENMP_SCHEME", Default: "`" + DefaultOpenMPScheme + "`", Doc: "how `openmp` runs loops that modify data through maps: `owner` runs each thread's own piece of the set in parallel, then the elements between pieces in block colours; `colour` colours blocks of the whole set, as OP2 does",
		value:  choice(func(c *Config) *string { return &c.OpenMPScheme }, checkOpenMPScheme),
		keyPos: 2, key: func(c *Config) string { return " omp=" + c.OpenMPScheme }},
	{Field: "SIMD", Env: "OP2_SIMD", Default: "`auto`", Doc: "SIMD lanes on `sequential` and `openmp`: `auto` runs each loop that can have lanes in as many as the machine's vectors hold of its data (the scalar code where lanes measured slower: fewer than two divisions and square roots with no sum into a Global and no matrix argument; a math function the compiler cannot vectorise where lanes cannot call it through SIMD clones: in a kernel with a branch, in a for statement, in a C++ kernel, or with a compiler other than GCC on x86-64); `scalar` runs the scalar code and lets the tuner try lanes; `off` never lanes; `4` or `8` runs every loop that can have lanes in chunks of that many",
		value:  choice(func(c *Config) *string { return &c.SIMD }, checkSIMD),
		keyPos: 11, key: func(c *Config) string { return simdKey(c.SIMD) }},
	{Field: "Fusion", Env: "OP2_FUSION", Default: "`auto`", Doc: "whether recorded loops over one set fuse into one generated loop: `auto` (where it was measured to pay), `on` or `off`",
		value: choice(func(c *Config) *string { return &c.Fusion }, CheckFusion)},
	{Field: "Checkpoint", Env: "OP2_CHECKPOINT", Default: "none", Doc: "automatic checkpoints (`op2.Checkpoint`'s files) to this path, every `CheckpointEvery`, each at the loop of the program's repeating sequence where the fewest bytes of Dats must be saved; when the file exists at the start, the run runs the loops again as far as the host last read their results, skips the rest before the checkpoint (Globals reduced by them get their saved values) and restores it there",
		value: path(func(c *Config) *string { return &c.Checkpoint })},
	{Field: "CheckpointEvery", Env: "OP2_CHECKPOINT_EVERY", Default: "`10m`", Doc: "how often `Checkpoint` saves: a duration (`90s`, `10m`) or a number of loops (`500`)",
		value: scalar(func(c *Config) *string { return &c.CheckpointEvery }, func(env, v string) (string, error) {
			if _, _, err := ParseEvery(v); err != nil {
				return "", fmt.Errorf("%s=%q: %w", env, v, err)
			}
			return strings.TrimSpace(v), nil
		}, func(field string, v string) error {
			if _, _, err := ParseEvery(v); err != nil {
				return fmt.Errorf("%s = %q: %w", field, v, err)
			}
			return nil
		})},
}

// DefaultCheckpointEvery is CheckpointEvery's default.
const DefaultCheckpointEvery = 10 * time.Minute

// ParseEvery reads CheckpointEvery: a duration ("90s", "10m"; a positive
// one), or a positive number of loops; empty is the default.
func ParseEvery(s string) (every time.Duration, loops int, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return DefaultCheckpointEvery, 0, nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 {
			return 0, 0, fmt.Errorf("%d loops: want at least 1", n)
		}
		return 0, n, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, 0, fmt.Errorf("neither a positive duration (90s, 10m) nor a number of loops")
	}
	return d, 0, nil
}

// Value readers and checks of the rows.

// parseBool reads a boolean variable: strconv.ParseBool's values, and
// on/off and yes/no in any case, the words the settings table's Default
// column and OP2_FUSION use.
func parseBool(env, v string) (bool, error) {
	t := strings.TrimSpace(v)
	switch strings.ToLower(t) {
	case "on", "yes":
		return true, nil
	case "off", "no":
		return false, nil
	}
	b, err := strconv.ParseBool(t)
	if err != nil {
		return false, fmt.Errorf("%s=%q is not a boolean (on, yes, 1 or true; off, no, 0 or false)", env, v)
	}
	return b, nil
}

// intParser reads an integer of at least lo, described as what.
func intParser(lo int, what string) func(env, v string) (int, error) {
	return func(env, v string) (int, error) {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < lo {
			return 0, fmt.Errorf("%s=%q is not %s", env, v, what)
		}
		return n, nil
	}
}

func nonNegative(field string, v int) error {
	if v < 0 {
		return fmt.Errorf("%s = %d must not be negative", field, v)
	}
	return nil
}

// choiceParser and choiceCheck read and check a setting that names one of
// a fixed set of values with check. Names are taken in any case, with
// spaces around them (Choice).
// tileDefault sets c.Tile to its default for c's backend and threads:
// TileAuto on one thread, else off.
func tileDefault(c *Config) {
	c.Tile = 0
	if c.Backend == "sequential" || c.Threads == 1 {
		c.Tile = TileAuto
	}
}

// WithBackend returns c with the backend name (any case, as Backend
// takes it), and the settings whose defaults depend on the backend worked
// out again for it where c left them to their defaults (Tile; Lazy's
// is Recording's), as Use keeps the rest of a configuration.
func (c Config) WithBackend(name string) Config {
	c.Backend = Choice(name)
	if c.tileDefault {
		tileDefault(&c)
	}
	return c
}

func choiceParser(check func(string) error) func(env, v string) (string, error) {
	return func(env, v string) (string, error) {
		if err := check(Choice(v)); err != nil {
			return "", fmt.Errorf("%s=%q: %w", env, v, err)
		}
		return Choice(v), nil
	}
}

// Choice is the name a setting's value s stands for: s in lower case,
// without the spaces around it. Configure and ConfigFromEnv store it so,
// so that "SOA" and "soa" are one setting (and one tuner key).
func Choice(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

func choiceCheck(check func(string) error) func(field string, v string) error {
	return func(field string, v string) error {
		if err := check(Choice(v)); err != nil {
			return fmt.Errorf("%s: %w", field, err)
		}
		return nil
	}
}

func checkOpenMPScheme(s string) error { _, err := ParseOpenMPScheme(s); return err }
func checkSIMD(s string) error         { _, _, err := ParseSIMD(s); return err }

// Defaults returns the built-in configuration: each setting's default,
// without the environment's overrides.
func Defaults() Config {
	return Config{Backend: "sequential", CC: "cc", CXX: "g++", CFlags: slices.Clone(DefaultCFlags),
		CacheDir: DefaultCacheDir(), Threads: DefaultThreads(), Lazy: true}
}

// ConfigFromEnv returns the default configuration with the environment's
// overrides applied: every variable of Settings, each read and checked
// as its row says (whatever the backend). The error names the first
// variable whose value its setting does not take.
func ConfigFromEnv() (Config, error) {
	cfg := Defaults()
	for _, s := range Settings {
		v, set := os.LookupEnv(s.Env)
		if !set || v == "" && !s.emptyIsValue {
			continue
		}
		if err := s.value.fromEnv(&cfg, s.Env, v); err != nil {
			return cfg, err
		}
	}
	for _, s := range Settings {
		if v := os.Getenv(s.Env); s.auto != nil && v == "" {
			s.auto(&cfg)
		}
	}
	return cfg, nil
}

// MergeConfig applies the settings a program configured, user (package
// op2's Config), to c, the configuration from the environment: each
// non-zero field is checked as its row says (the error names it
// "Config.F") and replaces c's. A field user.Explicit named replaces c's
// even when zero: its zero value stands for the built-in default
// (Defaults), not the environment's, so that a program can turn off what
// a variable turned on (the zero of a row marked zeroIsValue — Lazy,
// Tile, CUDADevice — is taken as it is); Explicit may name only exported fields, which
// all have a row. Then the values a program or the environment named
// explicitly are verified (compilers run). On error c is unchanged.
func MergeConfig(c *Config, user Config) error {
	for _, name := range user.explicit {
		i := slices.IndexFunc(Settings, func(s ConfigSetting) bool { return s.Field == name })
		if i < 0 || Settings[i].EnvOnly {
			return fmt.Errorf("Config.Explicit(%q): Config has no such setting", name)
		}
	}
	merged := *c
	merged.lazyDefault = false // until Lazy's row is left to its default
	merged.tileDefault = false
	merged.cudaDeviceDefault = false
	var defaults *Config // made when an explicit zero needs it
	type named struct {
		s      ConfigSetting
		source string
	}
	var verified []named
	var auto []ConfigSetting // rows left to their default
	for _, s := range Settings {
		source := ""
		if v, set := os.LookupEnv(s.Env); set && (v != "" || s.emptyIsValue) {
			source = s.Env
		}
		if !s.EnvOnly {
			set, err := s.value.merge(&merged, &user, "Config."+s.Field)
			switch {
			case err != nil:
				return err
			case set:
				source = "Config." + s.Field
			case slices.Contains(user.explicit, s.Field) && s.zeroIsValue:
				s.value.reset(&merged, &user)
				source = ""
			case s.auto != nil && source == "" && !slices.Contains(user.explicit, s.Field):
				auto = append(auto, s)
			case slices.Contains(user.explicit, s.Field):
				if defaults == nil {
					d := Defaults()
					defaults = &d
				}
				s.value.reset(&merged, defaults)
				source = "" // the default, which is not verified
			}
		}
		if s.verify != nil && source != "" {
			verified = append(verified, named{s, source})
		}
	}
	for _, s := range auto {
		s.auto(&merged)
	}
	for _, e := range verified {
		if err := e.s.verify(&merged, e.source); err != nil {
			return err
		}
	}
	*c = merged
	return nil
}

// TunerKey is configuration c's part of the tuner's keys: the settings
// that change which way of running a loop is fastest.
func TunerKey(c *Config) string {
	var rows []ConfigSetting
	for _, s := range Settings {
		if s.keyPos > 0 {
			rows = append(rows, s)
		}
	}
	slices.SortFunc(rows, func(a, b ConfigSetting) int { return a.keyPos - b.keyPos })
	var b strings.Builder
	for _, s := range rows {
		b.WriteString(s.key(c))
	}
	return b.String()
}

// simdKey is the part of the tuner's key that names a SIMD setting other
// than auto.
func simdKey(s string) string {
	if v := strings.ToLower(strings.TrimSpace(s)); v != "" && v != "auto" {
		return " simd=" + v
	}
	return ""
}

// workGroupKey is the part of the tuner's key that names a device
// work-group size other than the default ("" for the default, so that
// choices saved before the size was configurable still apply).
func workGroupKey(n int) string {
	if n == 0 || n == deviceOptions.DefaultWorkGroupSize {
		return ""
	}
	return fmt.Sprintf("/wg%d", n)
}

// blockSizeKey is the part of the tuner's key that names a configured
// block size ("" for none). With one, the tuner chooses only the variant,
// so its choices must not stand for a configuration that leaves the block
// size to it.
func blockSizeKey(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" block=%d", n)
}

// CheckBackend returns an error when no backend of that name is
// registered; it matches core.ErrBackendUnavailable.
func CheckBackend(name string) error {
	if !slices.Contains(Backends(), name) {
		return core.Unavailable(fmt.Errorf("unknown backend %q (available: %s)", name, strings.Join(Backends(), ", ")))
	}
	return nil
}

// CheckFusion returns an error when s is not a Fusion setting.
func CheckFusion(s string) error {
	switch s {
	case "", "auto", "on", "off":
		return nil
	}
	return fmt.Errorf("fusion %q: want \"auto\", \"on\" or \"off\"", s)
}

// OpenCLDeviceTypes are the names Config.OpenCLDevice accepts ("" means
// any, as "all" and "any" do), in lower case; the opencl backend maps them
// to OpenCL's device types.
var OpenCLDeviceTypes = []string{"all", "any", "cpu", "gpu", "accelerator", "default"}

// CheckOpenCLDevice returns an error when name (any case) is not an
// OpenCL device type of OpenCLDeviceTypes.
func CheckOpenCLDevice(name string) error {
	if name == "" || slices.Contains(OpenCLDeviceTypes, strings.ToLower(name)) {
		return nil
	}
	return fmt.Errorf("unknown OpenCL device type %q (cpu, gpu, accelerator, default, or all)", name)
}

// The openmp backend's schemes (Config.OpenMPScheme).
const (
	OpenMPOwner  = "owner"
	OpenMPColour = "colour"
	// DefaultOpenMPScheme is the scheme used when none is configured.
	DefaultOpenMPScheme = OpenMPOwner
)

// ParseOpenMPScheme reports whether scheme (a Config.OpenMPScheme value;
// empty means DefaultOpenMPScheme; "color" is accepted for "colour";
// any case) is the owner-compute scheme, or returns an error for an
// unknown scheme.
func ParseOpenMPScheme(scheme string) (owner bool, err error) {
	switch strings.ToLower(strings.TrimSpace(scheme)) {
	case "":
		return DefaultOpenMPScheme == OpenMPOwner, nil
	case OpenMPOwner:
		return true, nil
	case OpenMPColour, "color":
		return false, nil
	}
	return false, fmt.Errorf("unknown openmp scheme %q (%s or %s)", scheme, OpenMPOwner, OpenMPColour)
}

// AutoLanes is the lane count ParseSIMD gives for "auto": each loop's
// own, chosen when it is built (host.SIMD.For).
const AutoLanes = -1

// ParseSIMD reads a Config.SIMD value: "" or "auto" (lanes AutoLanes, off
// false), "scalar" (the scalar code, which the tuner may replace by
// lanes: lanes 0, off false), "off" (scalar code only: off true), or a
// lane count of the host code generator's (HostOptions.LaneWidths: "4",
// "8"; also "simd4", "simd8"), any case.
func ParseSIMD(s string) (lanes int, off bool, err error) {
	v := strings.ToLower(strings.TrimSpace(s))
	switch v {
	case "", "auto":
		return AutoLanes, false, nil
	case "scalar":
		return 0, false, nil
	case "off":
		return 0, true, nil
	}
	n, err := strconv.Atoi(strings.TrimPrefix(v, "simd"))
	if err != nil || !slices.Contains(hostOptions.LaneWidths, n) {
		w := make([]string, len(hostOptions.LaneWidths))
		for i, n := range hostOptions.LaneWidths {
			w[i] = strconv.Itoa(n)
		}
		return 0, false, fmt.Errorf("unknown SIMD setting %q: want auto, scalar, off, or a lane count (%s)", s, strings.Join(w, ", "))
	}
	return n, false, nil
}

// SettingsTable is the configuration table in Markdown, one row per
// setting in the order of Settings, as the configuration guide
// (docs/guide/configuration.md) shows it.
func SettingsTable() string {
	var b strings.Builder
	b.WriteString("| `Config` field | Variable | Default | What it sets |\n|---|---|---|---|\n")
	for _, s := range Settings {
		field := "`" + s.Field + "`"
		if s.EnvOnly {
			field = "—"
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", field, s.Env, s.Default, s.Doc)
	}
	return b.String()
}
