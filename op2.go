// Package op2 runs parallel loops over unstructured meshes, in the manner of
// OP2 and PyOP2.
//
// A program declares its mesh as Sets (nodes, edges, cells), Maps between
// them and data on the sets (Dats), plus Globals (small arrays for
// reductions) and Consts (named values every kernel can read). It describes
// the work on one element as a C function, a Kernel, and hands it to
// ParLoop with the set to loop over and the arguments. GoOP2 generates the
// code around the kernel for the selected backend, compiles it once (cached
// in memory and on disk) and runs it over the set. The same program runs
// unchanged on every backend: "sequential" (one core), "openmp" (all
// cores), "opencl" (an OpenCL device) and "cuda" (an NVIDIA GPU), chosen
// with Configure or OP2_BACKEND, and on several machines under MPI
// (Partition).
//
// Arguments reach the kernel as in OP2: a Dat directly or through one map
// column as T*, through every column as T**, a Global as T*; Access says
// how the kernel uses each. Loops may also be recorded and run later
// (Chain, lazy mode), over Subsets, ExtrudedSets and MixedSets, and
// assemble Mats for a Solver. Misuse is reported before anything runs, as
// a *LoopError naming the loop, the argument and the objects involved;
// every error message starts with "op2: ", once.
//
// The guide, docs/guide in the repository, has one page per topic: data
// and kernels, loops and chains, matrices and solvers, extruded, mixed and
// subsets, configuration (every setting, its variable and default),
// meshes (Gmsh and CGNS), I/O, MPI, checks and errors, timing and
// logging, porting from OP2 or PyOP2, and the source layout.
package op2

import (
	"log/slog"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/engine"
	"github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/jit"
	"github.com/goop2/op2/internal/solver"

	// The host backends register themselves.
	_ "github.com/goop2/op2/internal/backend/cuda"
	_ "github.com/goop2/op2/internal/backend/opencl"
	_ "github.com/goop2/op2/internal/backend/openmp"
	_ "github.com/goop2/op2/internal/backend/sequential"
)

// Access is how a loop argument uses its data.
type Access = core.Access

// Access modes. Dats accept Read, Write, RW and Inc, and Min and Max
// through a map (ArgMap, ArgVec); Globals accept Read, Inc, Min and Max.
//
// Min and Max through a map: the kernel gets a private accumulator per
// target that starts from the identity (the type's largest value for
// Min, +Inf for floating point; its smallest for Max, -Inf), never from
// the target's value, writes its candidate into it (or leaves it alone),
// and after the kernel the target keeps the smaller (larger) of its value
// and the accumulator's. The result is the minimum (maximum) of the
// target's value before the loop and every element's candidates, the same
// bits on every backend and rank (except that which of -0 and +0 stays is
// unspecified, as they compare equal; a NaN candidate is ignored).
const (
	Read  = core.Read  // the kernel only reads
	Write = core.Write // the kernel writes every value and reads none
	RW    = core.RW    // the kernel reads and writes
	Inc   = core.Inc   // the kernel only adds to the values
	Min   = core.Min   // keep the minimum of the contributions (Globals; Dats through a map)
	Max   = core.Max   // keep the maximum of the contributions (Globals; Dats through a map)
)

// Config is the run-time configuration. Zero fields take their defaults,
// which the OP2_* environment variables override; a field named with
// Explicit counts even when zero, so that a program can turn off what a
// variable turned on. Every value is checked
// when configured, whatever the backend. The settings table in
// docs/guide/configuration.md gives each field's variable, default and
// accepted values; the guide's topic pages say what each does.
//
// Config is the engine's configuration type itself, so that the
// compiler keeps the API's fields and the settings table in step. Its
// fields: Backend, CC, CXX, CompileTimeout, CFlags, CacheDir, Threads,
// BlockSize, PlanCheck, Check, OpenCLPlatform, OpenCLDevice,
// DeviceScheme, DeviceLayout, DeviceWorkGroupSize, CUDADevice,
// CUDAGraphs, Tune, OpenMPScheme, SIMD, Timing, Lazy, Fusion, Tile,
// Logger, Checkpoint and CheckpointEvery. Its method Explicit(fields ...string) Config returns
// a copy of c in which the named fields count as set even where they
// hold their zero value: Config{}.Explicit("Lazy") runs loops at once
// under OP2_LAZY=1. Configure and NewRuntime refuse a name that is not a
// field of Config, with an error naming it.
type Config = exec.Config

// Runtime is one GoOP2 run time: a configuration and its open backends,
// the compiled programs and execution plans, the constants kernels can
// refer to, and statistics. The package-level functions (Configure, Use,
// ParLoop, NewLoop, Generate, NewConst, ReadStats...) use the default
// runtime; a program (or a test) may create others with NewRuntime, each
// configured independently. Sets, maps, Dats and Globals belong to no
// runtime. Loops of every runtime, and host access to data, run one at a
// time (one process-wide lock), so loops issued from several goroutines,
// or from several runtimes, never overlap.
type Runtime struct {
	// e is the runtime's engine: configuration, backends, executor,
	// timings, logger and the process it shares with every runtime.
	e      *engine.Runtime
	consts *engine.Consts
	// proc is the process's shared state, the same for every runtime
	// (the default runtime's); proc.Process is e.Proc.
	proc *process
	// mixedArgs is the expanded argument list of a loop with mixed
	// arguments, reused from loop to loop (under the lock).
	mixedArgs []Arg
}

// rt is the default runtime.
var rt = newRuntime(newProcess())

// Default returns the default runtime, the one the package-level functions
// use.
func Default() *Runtime { return rt }

// Logger returns the logger that receives the runtime's events
// (Config.Logger, or the one OP2_LOG made), or nil when there is none.
// Packages built on GoOP2 (hdf5, vtk) log through it.
func (r *Runtime) Logger() *slog.Logger { return r.e.Logger() }

// newProcess returns the process's shared state, made once with the
// default runtime.
func newProcess() *process {
	matHalo := NewKernel("void goop2_mat_halo(const void *x) { (void)x; }", "goop2_mat_halo")
	matHalo.c.HaloOnly = true
	p := &process{Process: engine.NewProcess(apiErrors{}), matHalo: matHalo}
	p.petsc.Settings = p.MPISettings
	return p
}

// newRuntime returns a runtime configured from the environment, in the
// process d.
func newRuntime(d *process) *Runtime {
	r := &Runtime{e: engine.NewRuntime(d.Process), consts: engine.NewConsts(), proc: d}
	r.e.Consts = r.consts.All
	if d.Default == nil {
		d.Default = r.e
	}
	return r
}

// NewRuntime returns a new runtime configured with c, as Configure
// configures the default one (zero fields keep the defaults, which
// include the environment's overrides).
func NewRuntime(c Config) (*Runtime, error) {
	r := newRuntime(rt.proc)
	if err := r.configure(c, "NewRuntime"); err != nil {
		return nil, err
	}
	return r, nil
}

// Configure replaces the run-time configuration; zero fields of c keep the
// defaults (which include the environment's overrides), except those
// Config.Explicit names. It checks the new
// configuration and opens the chosen backend before anything changes: on
// error the previous configuration and backend stay in use, so later loops
// run as before.
func Configure(c Config) error { return rt.configure(c, "Configure") }

// Configure replaces runtime r's configuration (see the package-level
// Configure).
//
// The loops recorded so far (see Chain) run first, with the configuration
// they were issued under; if one fails, Configure returns its error
// (*ChainError) and changes nothing. A configuration naming another
// CacheDir first ends the programs r queued to compile in the background
// (fused loops, tile forms) as Close does, so that none writes into the
// cache left behind after Configure returns.
func (r *Runtime) Configure(c Config) error { return r.configure(c, "Runtime.Configure") }

// configure is Configure for the API call named caller.
func (r *Runtime) configure(c Config, caller string) error {
	err := lock(forData, caller)
	defer unlock()
	if err != nil {
		return err
	}
	return r.e.Configure(c)
}

// Use selects the backend for the loops that follow (its name in any
// case, as Config.Backend), keeping the rest of the configuration; the
// settings left to defaults that depend on the backend (Lazy, Tile) take
// the new backend's. On error the previous backend stays selected.
func Use(backend string) error { return rt.use(backend, "Use") }

// Use selects runtime r's backend (see the package-level Use).
// The loops recorded so far (see Chain) run first, on the backend they
// were issued for; if one fails, Use returns its error and keeps the
// backend.
func (r *Runtime) Use(backend string) error { return r.use(backend, "Runtime.Use") }

// use is Use for the API call named caller.
func (r *Runtime) use(backend string, caller string) error {
	err := lock(forData, caller)
	defer unlock()
	if err != nil {
		return err
	}
	return r.e.Use(backend)
}

// MaxPrograms is the number of compiled loop programs kept in memory. A
// program is keyed by the backend, the kernel's content (its name and
// source, not the Kernel object: kernels declared again with the same
// source share one program) and the loop's shape. When a program beyond
// this number is needed, the least recently used one is dropped, and its
// code unloaded (it is built again, from the disk cache, if its loop runs
// again), so programs that generate kernels with ever-different sources run
// in bounded memory.
const MaxPrograms = exec.MaxPrograms

// MaxThreads is the largest thread count Config.Threads and
// OMP_NUM_THREADS may ask for.
const MaxThreads = exec.MaxThreads

// The modes of lock (see engine.Mode).
var (
	forNoData     = engine.ForNoData
	forData       = engine.ForData
	forStatus     = engine.ForStatus
	forCollective = engine.ForCollective
)

// forStorage is engine.ForStorage: forData for an accessor of the Dat or
// Global whose storage is s.
func forStorage(s *core.Storage) engine.Mode { return engine.ForStorage(s) }

// lock takes the process's lock in mode m for the API call named caller
// (engine.Process.Lock: "Dat.Data", "Wait", the name a ChainAccessError
// gives): the one way the package takes it. It returns with the lock held whether or not
// the recorded loops ran.
func lock(m engine.Mode, caller string) error { return rt.proc.Lock(m, caller) }

// unlock releases the lock lock took.
func unlock() { rt.proc.Unlock() }

// orPanic returns v, or panics with err. The accessors that return values
// but no error (Dat.Data and the like) are their Err forms through it, so
// that they panic with the very error the Err form returns.
func orPanic[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Backend returns the name of the backend the next loop will run on.
func Backend() string { return rt.Backend() }

// Backend returns the name of the backend runtime r's next loop runs on.
func (r *Runtime) Backend() string {
	lock(forNoData, "Runtime.Backend")
	defer unlock()
	return r.e.Cfg.Backend
}

// Wait returns when every loop issued so far has finished. Loops on device
// backends are queued and run asynchronously (host access to their data
// waits as needed); Wait is for timing them. On host backends it returns at
// once, after running the loops recorded so far (see Chain), whose
// failure it returns.
func Wait() error { return rt.wait("Wait") }

// Wait returns when every loop runtime r issued has finished.
func (r *Runtime) Wait() error { return r.wait("Runtime.Wait") }

// wait is Wait for the API call named caller.
func (r *Runtime) wait(caller string) error {
	err := lock(forData, caller)
	defer unlock()
	if err != nil {
		return err
	}
	return r.waitBackend()
}

// waitBackend waits for the loops queued on r's backend. Caller holds
// the lock.
func (r *Runtime) waitBackend() error {
	if r.e.Backend == nil {
		return nil
	}
	if w, ok := r.e.Backend.Backend.(exec.Waiter); ok {
		return apiError(w.Wait())
	}
	return nil
}

// Close ends the default runtime's work before the program ends or
// removes its cache directory (see Runtime.Close).
func Close() error { return rt.close("Close") }

// Close ends runtime r's work, for a program (or a test) about to remove
// r's cache directory, or done with r. The loops recorded so far run and
// Close waits for every loop r issued, as Wait does, and returns their
// failure; then, failure or not, the programs r queued to compile in the
// background (fused loops, tile forms; see Chain) are dropped, and the one
// compiling, if r queued it, is waited for: once Close returns, nothing
// writes into r's cache directory on r's behalf. r stays usable: its
// later loops queue what they want built again, for a later Close to end.
// (A Configure naming another CacheDir ends r's builds in the same way.)
func (r *Runtime) Close() error { return r.close("Runtime.Close") }

// close is Close for the API call named caller.
func (r *Runtime) close(caller string) error {
	err := lock(forData, caller)
	defer unlock()
	if err == nil {
		err = r.waitBackend()
	}
	r.e.EndBuilds()
	return err
}

// Backends lists the names of every registered backend.
func Backends() []string { return exec.Backends() }

// Stats reports what the code cache did in this process.
type Stats struct {
	Compiles     uint64 // C compilations
	DiskHits     uint64 // loops loaded from the disk cache without compiling
	Rebuilds     uint64 // damaged disk cache entries that were rebuilt
	Generations  uint64 // code generations (one per new loop signature and backend)
	ProgramCache int    // loop programs held in memory (at most MaxPrograms)
	// Libraries is the number of compiled host libraries loaded. A library
	// is unloaded when the last program using it leaves the program cache.
	Libraries int
	// Plans is the number of execution plans held in memory (with their
	// device copies). A plan is built for one
	// iteration set and the maps of one loop, and is dropped once that
	// set or one of those maps has been garbage collected.
	Plans int

	// Copies of Dats and Globals between host and device (device backends).
	Uploads, Downloads         uint64
	UploadBytes, DownloadBytes uint64
}

// ReadStats returns the default runtime's counters.
func ReadStats() Stats { return rt.Stats() }

// Stats returns runtime r's counters. Generations, ProgramCache and Plans
// are r's own; the compiler, disk cache, library and transfer counters are
// the process's. The loops recorded so far (see Chain) run first.
func (r *Runtime) Stats() Stats {
	lock(forStatus, "Runtime.Stats")
	defer unlock()
	js := jit.ReadStats()
	up, down, upB, downB := core.TransferStats()
	return Stats{Compiles: js.Compiles, DiskHits: js.DiskHits, Rebuilds: js.Rebuilds,
		Generations: r.e.X.Generations(), ProgramCache: r.e.X.Programs(), Libraries: jit.Loaded(), Plans: r.e.X.Plans(),
		Uploads: up, Downloads: down, UploadBytes: upB, DownloadBytes: downB}
}

// process is the state every runtime of the process shares: one value,
// the default runtime's (rt.proc), which every runtime holds. The engine
// part (engine.Process) owns the lock and, under it, the recorded loops
// and what runs them, the crash report's view of the running loop and
// the process's MPI job; the fields here are the declared objects,
// PETSc's use, and the blocks of the mesh declared before Partition.
type process struct {
	*engine.Process

	// petsc is the process's use of PETSc.
	petsc solver.Process
	// addKernels are the kernels adding one Dat's values to another's,
	// by C type and dim.
	addKernels engine.AddKernels
	// matHalo reads nothing: the loop it runs in exchanges a halo.
	matHalo *Kernel
}
