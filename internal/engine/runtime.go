package engine

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
)

// Runtime is the engine of one op2.Runtime: its configuration, open
// backends, executor (programs, plans, tuner), timings and logger, and
// the process it shares with every other runtime. Its fields are read
// and changed under the process's lock.
type Runtime struct {
	Cfg      exec.Config
	Backend  *exec.Opened // the configured backend once opened, else nil
	Backends map[string]*exec.Opened
	X        *exec.Executor // programs and plans, by backend instance
	Loop     core.Loop      // reused by loops that run at once
	// Err is a configuration error from the environment, returned by
	// the first loop.
	Err     error
	Timings *exec.Timings
	Proc    *Process
	// Consts lists the runtime's constants, which its checkpoints save
	// (set by the op2 package).
	Consts func() []*core.Const
	logger atomic.Pointer[slog.Logger] // nil: no logging
	// mpi is what starting MPI takes of the configuration (MPISettings).
	mpi atomic.Pointer[mpiSettings]
	// chains counts the open chain scopes.
	chains int
}

// NewRuntime returns a runtime of process p configured from the
// environment.
func NewRuntime(p *Process) *Runtime {
	r := &Runtime{Backends: map[string]*exec.Opened{}, X: exec.New(), Timings: exec.NewTimings(), Proc: p}
	var err error
	r.Cfg, err = exec.ConfigFromEnv()
	if err != nil {
		r.Err = p.api.Internal(err)
	}
	r.Apply(r.Cfg)
	return r
}

// Apply makes cfg the runtime's configuration for its executor, logger,
// timing and tuner (the backend is opened separately). Caller holds the
// lock (or owns r alone).
func (r *Runtime) Apply(cfg exec.Config) {
	r.Cfg = cfg
	r.mpi.Store(&mpiSettings{cfg.CacheDir, cfg.CompileTimeout})
	r.X.Configure(&cfg)
	r.SetLogger(cfg.Logger)
	r.SetTiming(cfg.Timing)
	r.SetTuning(cfg.Tune)
}

// SetTiming switches timing. Caller holds the lock (or owns r alone).
func (r *Runtime) SetTiming(on bool) {
	r.Cfg.Timing = on
	if on {
		r.X.Timing = r.Timings
	} else {
		r.X.Timing = nil
	}
}

// SetTuning gives the executor a tuner when on (see Config.Tune), whose
// choices are logged at Info, and problems with its file (ignored) at
// Warn.
func (r *Runtime) SetTuning(on bool) {
	r.Cfg.Tune = on
	if !on {
		r.X.Tuner = nil
		return
	}
	c := &r.Cfg
	t := exec.NewTuner(c.CacheDir, exec.TunerKey(c))
	t.Chosen = func(key string, chosen exec.Setting, tried []exec.Trial) {
		l := r.logger.Load()
		if l == nil {
			return
		}
		var ms []string
		for _, tr := range tried {
			if tr.Failed {
				ms = append(ms, fmt.Sprintf("%s: failed to build", tr.Setting))
				continue
			}
			ms = append(ms, fmt.Sprintf("%s: %.3fms", tr.Setting, tr.Time.Seconds()*1e3))
		}
		l.LogAttrs(context.Background(), slog.LevelInfo, "op2: tuned", slog.String("chosen", chosen.String()),
			slog.String("tried", strings.Join(ms, "; ")), slog.String("key", key))
	}
	t.Warn = func(err error) {
		if l := r.logger.Load(); l != nil {
			l.LogAttrs(context.Background(), slog.LevelWarn, "op2: tuning file", slog.String("error", err.Error()))
		}
	}
	if err := t.LoadError(); err != nil {
		t.Warn(err)
	}
	r.X.Tuner = t
}

// SetLogger makes l the runtime's logger (nil: none).
func (r *Runtime) SetLogger(l *slog.Logger) {
	r.Cfg.Logger = l
	r.X.Logger = l
	r.logger.Store(l)
}

// Logger is the runtime's logger, nil when it logs nothing. It may be
// called without the lock.
func (r *Runtime) Logger() *slog.Logger { return r.logger.Load() }

// Report logs an event on r's logger; without one, a warning goes to
// standard error, from rank 0 under MPI.
func (r *Runtime) Report(level slog.Level, msg string, attrs ...slog.Attr) {
	if l := r.Logger(); l != nil {
		l.LogAttrs(context.Background(), level, msg, attrs...)
		return
	}
	if w, _ := r.Proc.World(); level >= slog.LevelWarn && (w == nil || w.Rank() == 0) {
		fmt.Fprintln(os.Stderr, msg, slog.GroupValue(attrs...))
	}
}

// LogOpened logs the opening of backend b.
func (r *Runtime) LogOpened(b exec.Backend) {
	l := r.logger.Load()
	ctx := context.Background()
	if l == nil || !l.Enabled(ctx, slog.LevelInfo) {
		return
	}
	attrs := []slog.Attr{slog.String("backend", b.Name())}
	if d, ok := b.(exec.Describer); ok {
		attrs = append(attrs, d.Describe()...)
	}
	l.LogAttrs(ctx, slog.LevelInfo, "op2: backend opened", attrs...)
}

// CurrentBackend opens the configured backend on first use. Caller holds
// the lock.
func (r *Runtime) CurrentBackend() (*exec.Opened, error) {
	if r.Backend != nil {
		return r.Backend, nil
	}
	if r.Err != nil {
		return nil, r.Err
	}
	if err := r.install(r.Cfg, true); err != nil {
		return nil, err
	}
	return r.Backend, nil
}

// Configure makes user (op2.Config) the runtime's configuration, merged
// over the environment's (exec.MergeConfig), with a fresh set of open
// backends, programs and plans. It checks the configuration and opens
// its backend before anything changes: on error r is as it was. Caller
// holds the lock, in a forcing mode (recorded loops have run).
func (r *Runtime) Configure(user exec.Config) error {
	cfg, err := exec.ConfigFromEnv()
	if err != nil {
		return r.Proc.api.Internal(err)
	}
	if err := exec.MergeConfig(&cfg, user); err != nil {
		return r.Proc.api.Internal(err)
	}
	if cfg.CacheDir != r.Cfg.CacheDir {
		// Nothing r built in the background for the cache it leaves is
		// still writing into it when Configure returns (a program, or
		// a test, may remove it then).
		r.EndBuilds()
	}
	return r.install(cfg, false)
}

// EndBuilds ends the programs r asked to build in the background (fused
// loops, tile forms) into its cache directory: those queued are dropped
// and the one compiling is waited for (exec.Executor.EndBuilds), so that
// none writes into the directory once it returns. r's later forcings
// queue what they still want again. Caller holds the lock.
func (r *Runtime) EndBuilds() { r.X.EndBuilds() }

// Use selects backend name for r's next loops, keeping the rest of the
// configuration, and a backend already open with it. On error the
// previous backend stays selected. Caller holds the lock, in a forcing
// mode.
func (r *Runtime) Use(name string) error {
	if r.Err != nil {
		return r.Err
	}
	return r.install(r.Cfg.WithBackend(name), true)
}

// install makes cfg r's configuration and the backend it names r's
// backend, opening it (the one place that does) unless keep finds it
// open already; nothing changes when it cannot be opened. Without keep,
// the backends opened before are forgotten and the executor drops its
// programs and plans, and cfg is applied (Apply) before the opened
// backend is logged, with cfg's logger. Caller holds the lock.
func (r *Runtime) install(cfg exec.Config, keep bool) error {
	b, ok := r.Backends[cfg.Backend]
	if !keep || !ok {
		c := cfg
		opened, err := exec.Open(c.Backend, &c)
		if err != nil {
			return r.Proc.api.Internal(err)
		}
		b, ok = &exec.Opened{Backend: opened, ID: core.NewID(), Device: exec.IsDevice(c.Backend)}, false
	}
	if keep {
		// cfg is r's configuration with the backend and the defaults
		// that depend on it (WithBackend): Tile's too.
		r.Cfg = cfg
	} else {
		r.Err = nil
		r.Backends = map[string]*exec.Opened{}
		r.X.Clear()
		r.Apply(cfg)
	}
	r.Backend = b
	if !ok {
		r.Backends[cfg.Backend] = b
		r.LogOpened(b.Backend)
	}
	return nil
}

// Source is the source backend name compiles for the bound loop l
// (whose signature it sets): the program's, when one is built for l on
// b, else what the backend generates, without opening it when b is nil
// (static generation). Caller holds the lock.
func (r *Runtime) Source(name string, b *exec.Opened, l *core.Loop) (string, error) {
	l.Sig = core.Analyse(l)
	if b == nil {
		src, err := exec.Generate(name, l)
		return src, r.Proc.api.Internal(err)
	}
	if src, ok := r.X.Source(b, l); ok {
		return src, nil
	}
	src, err := b.Generate(l)
	return src, r.Proc.api.Internal(err)
}

// RecordCopy records a copy of the bound loop l to run on b (an
// op2.Loop's Compute in a chain or in lazy mode), with its program built
// now (Commit). Caller holds the lock.
func (r *Runtime) RecordCopy(l *core.Loop, b *exec.Opened) error {
	if err := r.Reserve(); err != nil {
		return err
	}
	e := r.Proc.Slot()
	args := append(e.Loop.Args[:0], l.Args...)
	e.Loop = *l
	e.Loop.Args = args
	return r.Commit(e, b)
}

// OpenChain opens a chain scope of r: its loops are recorded until the
// matching CloseChain. It fails when MPI cannot start. On several ranks
// it first runs the loops recorded in lazy mode, which a rank may have
// run already (chain_mpi.go): a chain's loops are the same on every rank.
// Caller holds the lock.
func (r *Runtime) OpenChain() (*ChainScope, error) {
	if _, err := r.Proc.World(); err != nil {
		return nil, err
	}
	if p := r.Proc; p.multiRank() && p.distQueued == 0 && p.queue.n > 0 {
		if err := p.Force(); err != nil {
			return nil, err
		}
	}
	r.chains++
	p := r.Proc
	var s *ChainScope
	if n := len(p.freeScopes); n > 0 {
		s, p.freeScopes = p.freeScopes[n-1], p.freeScopes[:n-1]
	} else {
		s = &ChainScope{}
	}
	p.scopes = append(p.scopes, s)
	return s, nil
}

// ChainScope is a chain scope OpenChain opened.
type ChainScope struct {
	// failed is the failure of the first run of recorded loops that
	// failed while the scope was open, whoever forced it (an accessor
	// or a loop of another goroutine), for the chain to return: the
	// loops recorded while a chain is open are the chain's. Guarded by
	// the lock.
	failed error
}

// CloseChain closes the scope s OpenChain opened and returns the
// failure of the recorded loops that ran while it was open (wherever
// they were forced), or nil. Caller holds the lock.
func (r *Runtime) CloseChain(s *ChainScope) (failed error) {
	r.chains--
	p := r.Proc
	p.scopes = slices.DeleteFunc(p.scopes, func(o *ChainScope) bool { return o == s })
	failed, s.failed = s.failed, nil
	p.freeScopes = append(p.freeScopes, s)
	return failed
}

// InChain reports whether a chain scope of r is open. Caller holds the
// lock.
func (r *Runtime) InChain() bool { return r.chains > 0 }

// Recording reports whether r records its loops (a chain scope is open,
// or it is lazy). Caller holds the lock.
func (r *Runtime) Recording() bool { return r.chains > 0 || r.Cfg.Recording() }

// Run executes a bound loop on backend b, after the recorded loops of
// other runtimes (this one's are recorded: see Recording). Caller holds
// the lock.
func (r *Runtime) Run(b *exec.Opened, l *core.Loop) error {
	if err := r.Proc.ForceCollective(); err != nil { // another runtime's recorded loops come first
		return err
	}
	return r.RunProgram(b, l, nil)
}

// RunProgram runs the bound loop l on backend b with its program p found
// earlier (see exec.Executor.RunProgram), or nil: under MPI after the
// ranks agree on it, in check mode through runChecked, named for the
// crash report while it runs. Caller holds the lock.
func (r *Runtime) RunProgram(b *exec.Opened, l *core.Loop, p exec.Program) error {
	if err := r.checkPartitioned(l); err != nil {
		return err
	}
	trace := r.tracer()
	if trace != nil {
		r.traceLoop(trace, "op2: loop start", l, nil)
	}
	if h := r.X.Halo; h != nil {
		if r.Proc.ahead { // agreed when recorded (runsAhead)
			r.Proc.job.Halo().RunAhead(trace)
		} else if err := h.Agree(l, trace); err != nil {
			return r.Proc.Fatal(r.Proc.api.Internal(err))
		}
	}
	MarkLooped(l)
	r.Proc.beginCrashReport(b, l) // name the loop if its kernel kills the process
	var err error
	if l.Check {
		err = r.runChecked(b, l, p)
	} else if err = r.X.RunProgram(b, l, p); err != nil {
		err = r.Proc.api.Internal(err)
	}
	r.Proc.endCrashReport()
	if trace != nil {
		r.traceLoop(trace, "op2: loop end", l, err)
	}
	return r.Proc.Fatal(err)
}

// checkPartitioned refuses loops on a mesh still to be partitioned and
// gives the executor the halo exchange once it is.
func (r *Runtime) checkPartitioned(l *core.Loop) error {
	if r.Proc.mpiEnded() {
		return r.Proc.endedError(loopName(l))
	}
	distributing, err := r.Proc.Distributing()
	if err != nil {
		return err
	}
	if distributing {
		return r.Proc.api.Internal(fmt.Errorf("loop %s over set %q: the mesh is declared on %d MPI ranks; call op2.Partition before the first loop", l.Kernel.Name, l.Set.Name, r.Proc.world.Size()))
	}
	if r.X.Halo == nil && r.Proc.Partitioned() {
		r.X.Halo = r.Proc.job.Exchange()
	}
	return nil
}

// loopName names loop l in an error: loop k over set "s".
func loopName(l *core.Loop) string {
	return fmt.Sprintf("loop %s over set %q", l.Kernel.Name, l.Set.Name)
}

// tracer returns the runtime's logger when it logs every loop
// (exec.LevelTrace, OP2_LOG=trace), else nil.
func (r *Runtime) tracer() *slog.Logger {
	if l := r.logger.Load(); l != nil && l.Enabled(context.Background(), exec.LevelTrace) {
		return l
	}
	return nil
}

// traceLoop logs a loop's start or end, with the rank under MPI.
func (r *Runtime) traceLoop(log *slog.Logger, msg string, l *core.Loop, err error) {
	attrs := []slog.Attr{slog.String("kernel", l.Kernel.Name), slog.String("set", l.Set.Name)}
	if w := r.Proc.world; w != nil {
		attrs = append(attrs, slog.Int("rank", w.Rank()))
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	log.LogAttrs(context.Background(), exec.LevelTrace, msg, attrs...)
}
