package exec

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/mpi"
)

// Backend turns loops into runnable programs for one target.
type Backend interface {
	// Name is the name the backend is registered under.
	Name() string
	// Generate returns the complete source the backend would compile for
	// the loop's signature (l.Sig), without compiling it.
	Generate(l *core.Loop) (string, error)
	// Build generates and compiles (or fetches from the disk cache) the
	// program for the loop's signature (l.Sig). The result serves every
	// later loop with the same signature, whatever data or set it is
	// called with.
	Build(l *core.Loop) (Program, error)
}

// VariantBuilder is implemented by backends that have more than one way
// to run a loop (the openmp scheme; the device scheme and work-group
// size), for the tuner to choose from by measurement.
type VariantBuilder interface {
	// Variants returns the names of the ways to run l (its signature
	// set), the configured way first, or nil when l has only one.
	Variants(l *core.Loop) []string
	// BuildVariant builds l's program in one of its Variants, as Build
	// does for the configured one.
	BuildVariant(l *core.Loop, variant string) (Program, error)
}

// An OrderKeeper is a backend whose programs combine the terms of a
// loop's order-sensitive results (core.Arg.OrderSensitive) in an order
// set by more than the loop's execution plan: SIMD lanes, which sum each
// lane's terms first; a device's work groups and the staging of
// increments in its local memory. Fusion must keep each loop's order as
// the loop has it alone (Executor.KeepsOrder); a backend that is no
// OrderKeeper combines as its plan (or, without one, the element order)
// says.
type OrderKeeper interface {
	// KeepsOrder reports whether program fp, running the fused loop
	// fused, combines the terms of l's order-sensitive results as
	// program lp does running l alone, given that both run by plans
	// that order the elements alike (or by none). l is one of the loops
	// fused, with its signature; so is fused.
	KeepsOrder(fused *core.Loop, fp Program, l *core.Loop, lp Program) bool
}

// Describer is implemented by backends that can say what they run on, for
// the log: the device, its platform, the compiler, the thread count.
type Describer interface {
	Describe() []slog.Attr
}

// MatVecer is implemented by backends that compute sparse matrix-vector
// products where their data live (the device backends), for Mat.Mult:
// the matrix, its pattern and the vectors then stay on the device.
type MatVecer interface {
	MatVec(m *MatVec) error
}

// MatVec is a product y = A x for a MatVecer: A's values (blocks of
// RDim×CDim values, row-major, in the pattern's order) on the block
// compressed-row pattern RowPtr, ColIdx (int32 storage), computed for
// the first Rows block rows of y; x holds CDim values per column element.
type MatVec struct {
	Name                         string // the matrix, for messages
	Values, RowPtr, ColIdx, X, Y *core.Storage
	Rows, RDim, CDim             int
}

// Waiter is implemented by backends that run loops asynchronously.
type Waiter interface {
	// Wait returns when every loop issued so far has finished.
	Wait() error
}

// StdioFlusher is implemented by device backends whose kernels' printf
// output reaches the process's C streams as the device runs them:
// FlushStdio waits for the loops queued and flushes those streams. The
// executor calls it after a loop whose kernel writes to them
// (core.KernelInfo.WritesStdio), as the host programs flush after such a
// loop, so that its output is not lost in a buffer when the program ends
// and comes before what the program prints next.
type StdioFlusher interface {
	FlushStdio() error
}

// Stamp is a time stamp a DeviceClock queued.
type Stamp any

// DeviceClock is implemented by asynchronous backends (Waiter) that can
// time the work they queue on the device. An executor that times its
// loops (Executor.Timing) then times each loop on such a backend between
// two stamps queued around it, read when the timings are (Timings.Records),
// instead of waiting for the loop to finish.
type DeviceClock interface {
	// Clocked reports whether the device can be timed (Stamp and Between
	// work).
	Clocked() bool
	// Stamp queues a time stamp after the work queued so far.
	Stamp() (Stamp, error)
	// Between waits for stamp to and returns the device time from stamp
	// from to it. It releases both stamps, whatever it returns.
	Between(from, to Stamp) (time.Duration, error)
}

// Program is compiled code for one loop signature. The executor calls, for
// each loop: PlanNeeds; Bind once; Launch for each non-empty range, in
// order; Finish. A program must not keep the loop (or its slices, data or
// maps) after Finish returns or after Bind or Launch fail.
//
// What a program must not do: cache plans (the executor's plan cache
// serves every backend), undo data states after a failure (the executor
// saves and restores them), or decide which elements run (the executor
// launches the core elements, then the rest, so that MPI can exchange
// halos in between).
type Program interface {
	// Source is the generated source the program was built from.
	Source() string
	// PlanNeeds returns nil when the program runs without an execution
	// plan, else what the plan must respect. It is called for every loop
	// and must not allocate.
	PlanNeeds() *PlanNeeds
	// Bind prepares a run of l: it makes every argument's data current
	// where the program runs (core.Storage.HostAccess or DeviceAccess),
	// records data and map addresses, refreshes constants and takes the
	// plan (nil when PlanNeeds returns nil). On error the executor puts
	// the data states back.
	Bind(l *core.Loop, pl *Plan) error
	// Launch runs the kernel over r (see Range). Reductions accumulate
	// over the launches of one loop.
	Launch(r Range) error
	// Finish completes the loop: reduction results end up in the Globals'
	// host values (device programs fold their partial results here, in a
	// fixed order, so results do not depend on timing).
	Finish(l *core.Loop) error
}

// Range is the part of a loop one launch covers: elements [First, Last)
// of the iteration set, or, when Colours is set, block colours
// [First, Last) of the plan.
type Range struct {
	First, Last int
	Colours     bool
}

// PlanNeeds is what a program asks of the execution plan.
type PlanNeeds struct {
	// Modifies says, per argument, whether it constrains the colouring;
	// nil means the arguments that modify data through a map.
	Modifies []bool
	// Unstaged says, per argument, that its data is not staged in shared
	// memory (it takes no room there); nil means all are staged.
	Unstaged []bool
	// SharedBudget is the staging memory a block may use, in bytes (device
	// programs); 0 means no limit (host programs).
	SharedBudget int
	// Threads is the number of threads that share the blocks of one colour
	// (host programs), for the block size choice.
	Threads int
	// Owners, when at least 1, asks for the owner-compute layout with that
	// many pieces, one per thread (host programs; see plan.Input.Owners);
	// 0 asks for the plain block colouring.
	Owners int
	// BlockSize, when positive, is the block size device programs start
	// from where the configuration names none, instead of the planner's
	// adaptive size (which is chosen for staging): the atomics scheme
	// stages nothing and asks for one element per work item, so that a
	// small set still spreads over the device (on an H100, Airfoil's
	// bres_calc over 2 800 edges ran on 3 blocks of 1 024 elements).
	BlockSize int
	// TooLarge, if not nil, explains that one element's staged data does
	// not fit SharedBudget.
	TooLarge func(l *core.Loop, nshared int) error
}

// Releaser is implemented by programs that hold memory outside Go (device
// buffers): Release frees it when the run time drops the program. The
// program is not used afterwards.
type Releaser interface {
	Release()
}

// Opener creates a backend for a configuration. It returns an error when
// something the backend needs (a driver, a device) is missing, marked with
// Unavailable so that callers can tell it from a configuration error.
type Opener func(cfg *Config) (Backend, error)

var (
	registryMu sync.Mutex
	registry   = map[string]Opener{}
)

// Register makes a backend available under name. Backends call it from an
// init function; registering a name twice panics.
func Register(name string, open Opener) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[name]; dup {
		panic("op2: backend " + strconv.Quote(name) + " registered twice")
	}
	registry[name] = open
}

// Generator writes a backend's source for a loop's signature (l.Sig) with
// nothing opened: no compiler, driver or device is needed (static
// generation). Device backends assume a nominal device.
type Generator func(l *core.Loop) (string, error)

var generators = map[string]Generator{}

// RegisterGenerator makes a backend's source available without opening the
// backend. Backends call it from an init function, beside Register.
func RegisterGenerator(name string, gen Generator) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := generators[name]; dup {
		panic("op2: generator " + strconv.Quote(name) + " registered twice")
	}
	generators[name] = gen
}

// Generate returns the source backend name generates for l's signature,
// without opening the backend.
func Generate(name string, l *core.Loop) (string, error) {
	registryMu.Lock()
	gen, ok := generators[name]
	registryMu.Unlock()
	if !ok {
		return "", core.Unavailable(fmt.Errorf("unknown backend %q (available: %s)", name, strings.Join(Backends(), ", ")))
	}
	return gen(l)
}

// devices holds the names RegisterDevice marked, a map replaced whole at
// each registration: IsDevice, asked for every loop a program issues
// (Config.Recording), reads it without a lock.
var devices atomic.Pointer[map[string]bool]

// RegisterDevice marks the named backend as a device backend: its programs
// run on a device with the device code generator's limits. Backends call it
// from an init function, beside Register.
func RegisterDevice(name string) {
	registryMu.Lock()
	defer registryMu.Unlock()
	m := map[string]bool{name: true}
	if old := devices.Load(); old != nil {
		for k := range *old {
			m[k] = true
		}
	}
	devices.Store(&m)
}

// IsDevice reports whether the named backend was marked by RegisterDevice.
func IsDevice(name string) bool {
	m := devices.Load()
	return m != nil && (*m)[name]
}

// Backends lists the registered backend names in sorted order.
func Backends() []string {
	registryMu.Lock()
	defer registryMu.Unlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Open creates the named backend.
func Open(name string, cfg *Config) (Backend, error) {
	registryMu.Lock()
	open, ok := registry[name]
	registryMu.Unlock()
	if !ok {
		return nil, CheckBackend(name)
	}
	return open(cfg)
}

// MaxThreads is the largest OpenMP thread count accepted from the
// configuration or OMP_NUM_THREADS. More threads than this would not make a
// loop faster on any machine GoOP2 targets, and asking the OpenMP runtime
// for far more threads than it can create kills the process.
const MaxThreads = 1024

// CheckThreads returns an error when n threads are not in [1, MaxThreads];
// source says where n came from, for the message.
func CheckThreads(n int, source string) error {
	if n < 1 || n > MaxThreads {
		return fmt.Errorf("%s = %d threads: must be between 1 and %d", source, n, MaxThreads)
	}
	return nil
}

// DefaultCFlags are the optimisation flags used when none are configured.
// -ffp-contract=off has every compiled form of a kernel round as its
// source says. With GNU C's default (-ffp-contract=fast) on a CPU with
// FMA, GCC contracts an a*b+c into one fused multiply-add wherever the
// optimised code allows, and that differs between the forms of one
// kernel (a loop's own program, its SIMD lanes and the elements left
// after them, a fused loop, a tile form's shorter runs): lazy mode,
// fusion and tiles changed the last bits of results (the lazy probe with
// GCC's default: 2 of 300 random programs). Off, they give eager
// execution's bits, and lanes the scalar code's but for Global sums. It
// cost nothing measurable on Airfoil and the Poisson assembly, 3-5% on
// MG-CFD's cycle.
var DefaultCFlags = []string{"-O3", "-march=native", "-fno-math-errno", "-ffp-contract=off"}

// DefaultThreads is the OpenMP thread count without OMP_NUM_THREADS: the
// CPUs this process may run on, shared evenly among the MPI ranks that an
// MPI launcher started on this machine (at least 1, at most MaxThreads),
// so that ranks started without binding (mpirun --bind-to none) do not
// run more threads than there are CPUs: OpenMP threads waiting at a
// barrier spin, and spinning threads of one rank take the CPUs the
// threads of another rank need.
func DefaultThreads() int {
	n := runtime.NumCPU()
	if local := mpi.LocalRanks(); local > 1 {
		n = max(1, n/local)
	}
	return min(n, MaxThreads)
}

// DefaultCacheDir is the cache directory used when none is configured: a
// "goop2" folder in the user's cache directory ($XDG_CACHE_HOME or
// $HOME/.cache), or, when there is none (HOME unset, as for services), the
// per-user folder goop2-<uid> in the temporary directory. The cache package
// creates it with mode 0700 and refuses it if another user owns it.
func DefaultCacheDir() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "goop2")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("goop2-%d", os.Geteuid()))
}

// envLoggers holds the loggers OP2_LOG made, one per level, so that every
// configuration read from the environment shares one.
var envLoggers sync.Map // slog.Level → *slog.Logger

func envLogger(level slog.Level) *slog.Logger {
	if l, ok := envLoggers.Load(level); ok {
		return l.(*slog.Logger)
	}
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if a.Key == slog.LevelKey && len(groups) == 0 && a.Value.Any() == LevelTrace {
			a.Value = slog.StringValue("TRACE")
		}
		return a
	}}
	l, _ := envLoggers.LoadOrStore(level, slog.New(slog.NewTextHandler(os.Stderr, opts)))
	return l.(*slog.Logger)
}

// LevelTrace is the log level (below Debug) of the events of every loop:
// its start and end and, under MPI, each halo exchange, with the rank
// (OP2_LOG=trace). It is core.LevelTrace.
const LevelTrace = core.LevelTrace
