package exec

import (
	"log/slog"
	"slices"
	"time"
)

// Config is the run-time configuration, the one type of it: package
// op2's Config is an alias of it, so that a program configures these
// fields, and the backends, the engine and the configuration table
// (Settings, whose rows reach each field through a typed accessor) read
// them. Zero fields take their defaults, which the OP2_* environment
// variables override; a field named with Explicit counts even when zero.
// Every value is checked when configured (MergeConfig), whatever the
// backend. The settings table in docs/guide/configuration.md gives each
// field's variable, default and accepted values; the guide's topic pages
// say what each does.
type Config struct {
	// Backend is the backend name: "sequential" (default), "openmp",
	// "opencl" or "cuda".
	Backend string
	// CC is the C compiler command, with arguments if needed (default
	// $CC, else "cc"); CXX the C++ compiler, run only for C++ kernels
	// (op2.Kernel.CXX; default $CXX, else "g++").
	CC  string
	CXX string
	// CompileTimeout bounds each run of those compilers for a loop
	// (default 5 minutes, or $OP2_COMPILE_TIMEOUT): a compiler still
	// running then is stopped, with the processes it started, and the
	// loop fails with a *op2.CompileError that names the loop and
	// matches context.DeadlineExceeded.
	CompileTimeout time.Duration
	// CFlags replaces the optimisation flags (default DefaultCFlags,
	// or $OP2_CFLAGS).
	CFlags []string
	// CacheDir is where compiled loops and tuning choices are kept; a
	// directory another user owns, or group- or world-writable, is
	// refused.
	CacheDir string
	// Threads is the OpenMP thread count, at most op2.MaxThreads (default:
	// the CPUs the process may use, shared among the MPI ranks on the
	// machine).
	Threads int
	// BlockSize fixes the execution plan's block size; 0 chooses it
	// adaptively.
	BlockSize int
	// PlanCheck verifies every invariant of each new execution plan.
	PlanCheck bool
	// Check turns on check mode, for debugging kernels: a loop that
	// writes to a READ argument or (host backends) a Const, or leaves
	// values of a floating-point WRITE argument unwritten, returns a
	// *op2.LoopError naming it, and the values are restored
	// (docs/safety.md).
	Check bool
	// OpenCLPlatform selects the OpenCL platform whose name contains it;
	// OpenCLDevice the device type ("cpu", "gpu", "accelerator").
	OpenCLPlatform string
	OpenCLDevice   string
	// DeviceScheme is how the device backends apply increments through
	// maps: "staged" (staged in shared memory, colour by colour; the
	// default on opencl) or "atomics" (atomic adds, no colours; sums vary
	// in their last bits from run to run; the default on cuda).
	DeviceScheme string
	// DeviceLayout is how the device backends store Dats of dim > 1:
	// "aos" (as on the host) or "soa" (each component contiguous, so
	// that the threads of a warp read consecutive words; a Dat some loop
	// cannot read so, such as one passed as more than 1 KiB per element,
	// is stored "aos"). The default is "soa" on a GPU (cuda, an OpenCL
	// GPU) and "aos" on other OpenCL devices. Kernels see the same
	// pointers either way.
	DeviceLayout string
	// DeviceWorkGroupSize is the work items per work group (CUDA threads
	// per block) on the device backends: a power of two from 32 to 1024
	// (default 64).
	DeviceWorkGroupSize int
	// CUDADevice is the ordinal of the GPU the cuda backend uses.
	CUDADevice int
	// CUDAGraphs batches the cuda backend's kernel launches on the host
	// and replays each batch that repeats as a CUDA graph (off by
	// default until measured on a GPU).
	CUDAGraphs bool
	// Tune turns on the auto-tuner: the first calls of each loop try the
	// backend's ways of running it (lanes, scheme, work-group and block
	// sizes) and the fastest is kept, and saved in CacheDir for later
	// runs; results are correct with every setting.
	Tune bool
	// OpenMPScheme is how the openmp backend runs loops that modify data
	// through maps: "owner" (default: a piece per thread, then the
	// separating elements in colours) or "colour" (OP2's block colours).
	OpenMPScheme string
	// SIMD is how the host backends use SIMD lanes: "auto" (default: each
	// loop that can have them gets as many as the machine's vectors hold,
	// the scalar code where lanes measured slower: a math function the
	// compiler cannot vectorise, little arithmetic without a sum into a
	// Global or a matrix argument; see docs/guide/loops-and-chains.md),
	// "scalar" (the scalar code; the tuner may try lanes), "off", or "4"
	// or "8" lanes for every loop that can have them. Results are the
	// scalar code's up to fused multiply-adds and the order of Global
	// increments.
	SIMD string
	// Timing records, per loop, the calls, their times and the bytes they
	// move (see op2.EnableTiming and op2.Timings).
	Timing bool
	// Lazy records loops instead of running them, until something needs
	// their results (see op2.Chain). It is on by default on the host
	// backends (off on opencl and cuda; on several MPI ranks it records
	// only the loops that send nothing when they run): as a zero value
	// means the default, turn it off with Config{}.Explicit("Lazy") or
	// OP2_LAZY=0.
	Lazy bool
	// Fusion says whether recorded loops (Chain, Lazy) over one set fuse
	// into one generated loop: "auto" (default: where it was measured to
	// pay), "on" or "off". Results are bit for bit those of the loops run
	// one by one.
	Fusion string
	// Tile runs recorded loops on the host backends as sparse tiles of
	// this many elements of the first loop's set, so that their data stays
	// in cache from loop to loop. TileAuto (-1, OP2_TILE=auto) tiles a
	// chain of loops in one process only when its data does not fit the
	// last-level cache and tiles reduce the bytes it moves, with a size
	// chosen from the caches, and on one thread only when its tiled runs
	// measured as fast as its untiled ones, at the faster of two sizes (see
	// docs/guide/loops-and-chains.md). As a zero value means the
	// default, TileAuto on one thread (the sequential backend, or
	// Threads 1) and off otherwise, turn it off with
	// Config{}.Explicit("Tile") or OP2_TILE=0.
	// Increments may reach an element in another order than loop by loop.
	Tile int
	// Logger receives GoOP2's events through log/slog (default: a text
	// handler on standard error when OP2_LOG names a level, else none):
	// backends opened, programs compiled, MPI initialised at Info; cache
	// hits and plans at Debug; failed builds and ignored tuning files at
	// Warn. Its handler runs while GoOP2 holds its lock: it must not call
	// GoOP2 (the call would wait for ever).
	Logger *slog.Logger
	// Checkpoint turns on automatic checkpoints, OP2's checkpointing:
	// every CheckpointEvery the run saves an op2.Checkpoint to this path,
	// at the loop of the program's repeating sequence of loops where the
	// fewest bytes of Dats must be saved (a Dat that loop sequence writes
	// whole before reading it is listed without its values). When the
	// file exists as the run starts, the loops before the saved one run
	// again as far as the host last read their results, the rest are
	// skipped (a Global they reduced gets the value it had) and the
	// checkpoint is restored there, so that the run goes on from it. It
	// needs loops that run at once: a loop recorded by Chain or Lazy turns
	// it off for the run (a warning says so). The configuration of the
	// runtime a loop runs on counts: the first loop of a runtime naming a
	// file starts them, and from then on every runtime's loops are counted
	// (a restart replays the process's sequence of loops); a runtime
	// naming another file is refused.
	Checkpoint string
	// CheckpointEvery is how often Checkpoint saves: a duration ("90s",
	// "10m", the default) or a number of loops ("500").
	CheckpointEvery string

	// debugPlan prints each new execution plan's blocks, block size,
	// colours and owner pieces on standard error; only OP2_DEBUG_PLAN
	// sets it (Settings' EnvOnly row).
	debugPlan bool
	// explicit names the fields whose values count even when zero
	// (Explicit).
	explicit []string
	// lazyDefault says that Lazy is its default, which a device backend
	// turns off (see Recording): Use may switch the backend later.
	lazyDefault bool
	// tileDefault says that Tile is its default, which depends on the
	// backend (WithBackend).
	tileDefault bool
	// cudaDeviceDefault says that CUDADevice is its default, which cuda
	// resolves per rank (CUDADeviceDefault).
	cudaDeviceDefault bool
}

// CUDADeviceDefault reports whether neither the program nor the
// environment named the GPU (CUDADevice): cuda then gives ranks started
// by an MPI launcher the machine's GPUs in turn.
func (c *Config) CUDADeviceDefault() bool { return c.cudaDeviceDefault }

// Recording reports whether loops are recorded under c: Lazy, unless it
// is only the default and the backend is a device backend (opencl,
// cuda), whose failures found on the device come back from the loop's
// call.
func (c *Config) Recording() bool {
	return c.Lazy && !(c.lazyDefault && IsDevice(c.Backend))
}

// Explicit returns a copy of c in which the named fields count as set
// even where they hold their zero value, so that what the program says
// wins over the environment: Config{}.Explicit("Lazy") runs loops at once
// under OP2_LAZY=1, and Config{Backend: "openmp"}.Explicit("Tile",
// "Logger") turns tiling and logging off whatever OP2_TILE and OP2_LOG
// say. A named field at its zero value takes the built-in default (the
// settings table's Default column), never the variable's, except where
// the zero is itself a setting other than the default: Lazy false runs
// loops at once, Tile 0 runs no tiles and CUDADevice 0 is GPU 0 on every
// rank, whatever the defaults and the variables say; a named field
// with another value is taken as it would be anyway. Fields not named
// keep the rule that zero means the variable's value, else the default.
// Configure and NewRuntime refuse a name that is not a field of Config,
// with an error naming it.
func (c Config) Explicit(fields ...string) Config {
	c.explicit = append(slices.Clip(c.explicit), fields...)
	return c
}
