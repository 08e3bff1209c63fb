package engine

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/crash"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/fuse"
	"github.com/goop2/op2/internal/mpi"
	"github.com/goop2/op2/internal/tile"
)

// API makes the errors the public package exports: the engine reports
// misuse, failed recorded loops and refused accesses through it, and
// turns the internal packages' errors into the API's. The root package
// implements it.
type API interface {
	// Loop is a *op2.LoopError about argument arg (-1: the loop).
	Loop(kernel, set string, arg int, msg string) error
	// Chain is a *op2.ChainError: recorded loop index (of recorded)
	// failed with err.
	Chain(kernel, set string, index, recorded int, ranAfter bool, err error) error
	// ChainAccess is a *op2.ChainAccessError.
	ChainAccess(accessor, data string, rank, ranks, recorded int) error
	// Internal is an internal package's error as the API returns it.
	Internal(err error) error
	// IndexData is set s's index data (core.Set.Index), made the first
	// time, for index arguments; LayerData the layer of each element of
	// extruded set x, for layer arguments.
	IndexData(s *core.Set) *core.Storage
	LayerData(x *core.Extrusion) *core.Storage
	// RefillIndex remakes set s's index data for its new layout or
	// numbering (Partition, Renumber).
	RefillIndex(s *core.Set)
}

// Process is the state every runtime of the process shares: the lock
// (see Lock) and, under it, the recorded loops and what runs them, the
// crash report's view of the running loop, and the process's part in an
// MPI job. A program started by an MPI launcher initialises MPI at its
// first declaration (World). The distribution itself (agreements, halo
// exchanges, reductions) is package dist's, through the job.
//
// The root package embeds one Process in its process value, held by
// every runtime; NewProcess makes it.
type Process struct {
	// mu serialises loops of every runtime and host access to data. It
	// is taken only by Lock, whose mode says what happens to the
	// recorded loops.
	mu sync.Mutex
	// api makes the API's errors.
	api API
	// caller names the API call holding the lock (Lock's caller).
	caller string
	// Default is the default runtime, whose logger reports MPI's start.
	Default *Runtime

	// queue is the process's recorded loops (under mu).
	queue chainQueue
	// fuser fuses recorded loops (under mu).
	fuser fuse.Fuser
	// Builds says when fused loops' programs and tile forms are built
	// (under mu; background.go).
	Builds BuildMode
	// distQueued is the number of loops recorded in chains whose runtime
	// runs on several MPI ranks, and collective is set while a collective
	// call runs the recorded loops (both under mu).
	distQueued int
	collective bool
	// On several MPI ranks in lazy mode (chain_mpi.go): queueDirties are
	// the Dats the recorded loops modify, and ahead is set while the
	// queue runs loops that agreed when they were recorded (both under
	// mu).
	queueDirties map[*core.Storage]bool
	ahead        bool
	// checkFound is set by a loop run in check mode that ran to its end
	// and reports a finding (runChecked), for runQueue; kept holds the
	// findings of runs inside a chain on several ranks, for its end to
	// report (keepFindings, TakeFindings).
	checkFound bool
	kept       error
	// scopes are the chain scopes open in every runtime (OpenChain;
	// under mu): while one is, every runtime's recorded loops are the
	// chain's, and keepFindings gives each the failure of recorded loops
	// that ran while it was open; freeScopes those closed, for OpenChain
	// to use again (a chain allocates nothing).
	scopes, freeScopes []*ChainScope
	// chainRun is the chain being run by the queue: the halo exchange
	// that planned it, and its loops (kept for the next chain).
	chainRun struct {
		h     *dist.Halo
		loops []*core.Loop
	}
	// tiling is the state of the tiled runs (under mu): the kept
	// schedules and buffers reused from one forcing to the next, the halo
	// exchange of the run under MPI, its agreement function (made once)
	// and the number of runs under MPI (tests); the schedules computed in
	// the background (pending); the automatic tile sizes
	// chosen per chain (Config.Tile TileAuto: tileauto.go), and the
	// caches they are chosen for when a test set them.
	tiling struct {
		byKey       map[string]*tiledSchedule
		counts      map[string]*chainCounts
		pending     map[string]*pendingSchedule
		auto        map[string]*autoChoice
		caches      *tile.Caches
		key         []byte
		chain       exec.TiledChain
		globals     []tiledGlobal
		steps       []int  // the step of each loop of the tiled run
		assigned    []int  // the steps of the run's Global assignments
		before      []byte // their Globals' values before the run (keepAssigned)
		dead        []deadReduction
		scratch     map[scratchKey]*core.Storage
		scratchPin  runtime.Pinner
		halo        exec.Halo
		agree       func(*core.Loop) error
		distributed int
	}

	// The running loop as internal/crash's fatal-signal handler sees it,
	// so that a kernel that kills the process is named on stderr (under
	// mu, like every loop run), and the backend last described: its id,
	// name and whether it queues loops (exec.Waiter) rather than running
	// them before returning.
	crashNames       crash.Tracker
	crashBackendID   uint64
	crashBackendName string
	crashAsync       bool

	// declared is every object the program declared (Renumber), blocks
	// this rank's blocks of a mesh to be partitioned (Partition).
	declared declared
	blocks   blocks

	// auto is the automatic checkpointing (Config.Checkpoint of the
	// Default runtime), under mu; nil when off.
	auto *autoCkpt

	// The process's part in an MPI job.
	once  sync.Once
	world *mpi.World // nil when not started by a launcher
	err   error
	job   *dist.Job // with world: whether the mesh is partitioned, and the halo exchange
}

// NewProcess returns a process whose errors api makes.
func NewProcess(api API) *Process { return &Process{api: api} }

// World returns the MPI world, initialising MPI and the job the first
// time when the program was started by an MPI launcher; nil without one.
func (p *Process) World() (*mpi.World, error) {
	p.once.Do(func() {
		if mpi.Launched() == 0 {
			return
		}
		cfg, err := exec.ConfigFromEnv()
		if err != nil {
			p.err = err
			return
		}
		dir, timeout, _ := p.MPISettings() // the environment read above
		start := time.Now()
		p.world, p.err = mpi.Init(dir, timeout)
		if p.err != nil {
			p.err = p.api.Internal(fmt.Errorf("this program was started by an MPI launcher (%d processes) but cannot use MPI: %w", mpi.Launched(), p.err))
			return
		}
		p.job = dist.NewJob(p.world)
		// Logged to the default runtime's logger, or to OP2_LOG's when
		// the default runtime is not made yet (MPI starts before it when
		// a package variable declares a mesh).
		l := cfg.Logger
		if p.Default != nil {
			l = p.Default.logger.Load()
		}
		if l != nil {
			w := p.world
			l.LogAttrs(context.Background(), slog.LevelInfo, "op2: MPI initialised", slog.Int("rank", w.Rank()),
				slog.Int("ranks", w.Size()), slog.String("library", w.Library()), slog.Float64("seconds", time.Since(start).Seconds()))
		}
	})
	return p.world, p.err
}

// mpiSettings are what starting MPI takes of a configuration
// (MPISettings).
type mpiSettings struct {
	cacheDir       string
	compileTimeout time.Duration
}

// MPISettings returns the cache directory MPI's shims are built into
// and the compilers' timeout (mpi.Init): the default runtime's
// configuration's once it has one (op2.Configure), else the
// environment's. It may be called without the lock.
func (p *Process) MPISettings() (cacheDir string, compileTimeout time.Duration, err error) {
	if d := p.Default; d != nil {
		if s := d.mpi.Load(); s != nil {
			return s.cacheDir, s.compileTimeout, nil
		}
	}
	cfg, err := exec.ConfigFromEnv()
	return cfg.CacheDir, cfg.CompileTimeout, err
}

// Started is the MPI world if World has started it, without starting
// it: nil otherwise.
func (p *Process) Started() *mpi.World { return p.world }

// Job is the process's MPI job (partition and halo exchange), nil
// without MPI.
func (p *Process) Job() *dist.Job { return p.job }

// Partitioned reports whether Partition has laid the mesh out over more
// than one rank.
func (p *Process) Partitioned() bool { return p.job != nil && p.job.Partitioned() }

// Distributing reports whether declarations are a rank's block of a mesh
// still to be partitioned.
func (p *Process) Distributing() (bool, error) {
	w, err := p.World()
	if err != nil {
		return false, err
	}
	return w != nil && w.Size() > 1 && !p.Partitioned(), nil
}

// mpiEnded reports whether MPI has ended (op2.Finalize) in a process
// started by an MPI launcher, where no loop, collective call or solve
// may run. Caller holds mu.
func (p *Process) mpiEnded() bool { return p.world != nil && p.world.Finalized() }

// endedError is the error of what (a loop, an API call) asked for after
// MPI has ended (mpiEnded).
func (p *Process) endedError(what string) error {
	return p.api.Internal(fmt.Errorf("%s: rank %d: %w", what, p.world.Rank(), mpi.ErrFinalized))
}

// multiRank reports whether the process is one of several MPI ranks (as
// World, without starting MPI). Caller holds mu.
func (p *Process) multiRank() bool { return p.world != nil && p.world.Size() > 1 }

// Fatal ends the job when err says that an MPI wait ran out of time
// (OP2_MPI_TIMEOUT): MPI's state is then unusable, and the other ranks
// are waiting too. It prints err, which names what this rank waited for
// (the loop, the Dat, the peer rank), and aborts every rank. Any other
// error is returned as it is.
func (p *Process) Fatal(err error) error {
	if err != nil && dist.TimedOut(err) {
		p.Abort(err)
	}
	return err
}

// Abort stops every rank of an MPI job after printing err on this rank;
// without MPI it exits the process.
func (p *Process) Abort(err error) {
	w, _ := p.World()
	rank := 0
	if w != nil {
		rank = w.Rank()
	}
	fmt.Fprintf(os.Stderr, "op2: rank %d: %s\n", rank, strings.TrimPrefix(err.Error(), "op2: "))
	if w != nil {
		w.Abort(1)
	}
	os.Exit(1)
}

// MarkLooped records that loop l's sets have had a loop (their numbering
// is then fixed for loops bound earlier).
func MarkLooped(l *core.Loop) {
	l.Set.Looped = true
	for i := range l.Args {
		a := &l.Args[i]
		if a.Map != nil {
			a.Map.From.Looped, a.Map.To.Looped = true, true
		}
		if a.Data != nil && a.Data.Set != nil {
			a.Data.Set.Looped = true
		}
	}
}
