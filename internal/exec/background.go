package exec

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goop2/op2/internal/core"
)

// Programs built in the background.
//
// Some programs only make loops faster: a fused loop's (op2's loop chains)
// runs loops that can also run one by one with the programs they already
// have, and a loop's tile form (sparse tiling) is a faster way to run a
// loop that has its program. On a first run, with nothing compiled yet,
// compiling them when they are first wanted would add their compile time
// to the program's. ProgramSoon and TileProgramSoon instead return nil
// while such a program is not compiled: the backend generates its source
// at once and a goroutine compiles it into the disk cache, at a low
// priority and one build at a time (process wide, in the order asked);
// the caller runs its loops the usual way meanwhile. Asked again once
// that build is done, they load the program from the disk cache (without
// compiling) and return it, or return the build's error, then and every
// time after: the caller goes on without it.

// BackgroundBuilder is implemented by backends that can have a program
// compiled on another goroutine before it is built (the host backends):
// the source is generated on the caller's goroutine, since it reads the
// loop, and only the compile, which reads nothing of it, runs elsewhere.
type BackgroundBuilder interface {
	// PrepareBuild generates the source of l's program (l.Sig is set)
	// as Build would build it. It returns nil when Build would find
	// that program compiled (in memory or in the disk cache), else a job
	// that compiles it into the disk cache, so that Build then finds it:
	// the job may run on any goroutine and reads nothing of l. An error
	// is one Build would return too (the source cannot be generated).
	PrepareBuild(l *core.Loop) (job func() error, err error)
	// PrepareTiles is PrepareBuild for l's tile form in variant (see
	// TileBuilder.BuildTiles).
	PrepareTiles(l *core.Loop, variant string) (job func() error, err error)
}

// backgroundBuild is a job on the background queue and its outcome.
type backgroundBuild struct {
	job    func() error
	owner  *Executor // the executor that queued it (EndBuilds); nil: a Job
	err    error     // set before done
	done   atomic.Bool
	queued time.Time
}

// BackgroundPatience is how long a program waits for a build in the
// background before it builds the program itself, at once: a program
// that keeps every core busy leaves the low-priority compiler little
// time, and a long run should not go on without its fused loops and
// tile forms for long. A run shorter than this never waits for them.
var BackgroundPatience = 10 * time.Second

// builds is the process's queue of background builds and the goroutine
// that runs them, one at a time, while there are any.
var builds struct {
	sync.Mutex
	queue   []*backgroundBuild
	running bool             // a goroutine runs the queue
	current *backgroundBuild // the build running, nil between builds
	active  int              // builds queued or running
	idle    sync.Cond        // broadcast when a build ends or is dropped
}

func init() { builds.idle.L = &builds.Mutex }

// startBuild queues job for owner (nil: a job of StartJob) and returns
// its build.
func startBuild(job func() error, owner *Executor) *backgroundBuild {
	bg := &backgroundBuild{job: job, owner: owner, queued: time.Now()}
	builds.Lock()
	defer builds.Unlock()
	builds.queue = append(builds.queue, bg)
	builds.active++
	if !builds.running {
		builds.running = true
		go runBuilds()
	}
	return bg
}

// runBuilds runs the queued builds in order until there are none.
func runBuilds() {
	builds.Lock()
	for len(builds.queue) > 0 {
		bg := builds.queue[0]
		builds.queue[0] = nil
		builds.queue = builds.queue[1:]
		builds.current = bg
		builds.Unlock()
		bg.err = bg.job()
		bg.job = nil // what it held (sources, models) is no longer needed
		bg.done.Store(true)
		builds.Lock()
		builds.current = nil
		builds.active--
		builds.idle.Broadcast()
	}
	builds.running = false
	builds.Unlock()
}

// Job is work queued in the background with the builds (StartJob).
type Job struct{ b *backgroundBuild }

// StartJob queues job to run in the background, one at a time with the
// builds (after those queued before it): other work that only makes
// loops faster, such as a tiled chain's schedule. WaitBuilds waits for
// it and PendingBuilds counts it. job must not panic.
func StartJob(job func() error) Job { return Job{startBuild(job, nil)} }

// Done reports whether the job has run, its effects then visible to the
// caller, or was dropped by EndAllBuilds without running (Err says so).
func (j Job) Done() bool { return j.b.done.Load() }

// Err is the job's error, once Done.
func (j Job) Err() error { return j.b.err }

// WaitBuilds waits until every build queued in the background (by any
// executor) is done, for measurements of the steady state and tests: the
// programs they built are then found by the next ProgramSoon and
// TileProgramSoon.
func WaitBuilds() {
	builds.Lock()
	defer builds.Unlock()
	for builds.active > 0 {
		builds.idle.Wait()
	}
}

// EndBuilds ends x's builds in the background, for a runtime done with
// its cache directory (a program or a test may remove it then): those
// still queued are dropped, and EndBuilds returns once the one running,
// if x queued it, is done, so that none writes into the directory
// afterwards. x forgets them (not the failures it has seen): asked for
// again, a program dropped is queued again, and one built is found in
// the disk cache. Builds other executors queued go on. Caller owns x (as
// for ProgramSoon).
func (x *Executor) EndBuilds() {
	endBuilds(x)
	clear(x.bg.pending)
}

// EndAllBuilds ends every build in the background, as EndBuilds ends an
// executor's, for a process about to remove a cache directory (a test
// binary its private one) whatever its runtimes still build. A program
// whose build it dropped is queued again when asked for again; a Job it
// dropped is Done, with an error, without having run.
func EndAllBuilds() { endBuilds(nil) }

// errDropped is the outcome of a build EndBuilds or EndAllBuilds dropped
// from the queue: not a failure, the build is queued again (soon).
var errDropped = errors.New("dropped from the queue of builds in the background")

// endBuilds drops the queued builds of owner (nil: of every executor)
// and waits for its running one.
func endBuilds(owner *Executor) {
	builds.Lock()
	defer builds.Unlock()
	kept := builds.queue[:0]
	for _, bg := range builds.queue {
		if owner != nil && bg.owner != owner {
			kept = append(kept, bg)
			continue
		}
		bg.err = errDropped
		bg.done.Store(true)
		builds.active--
	}
	clear(builds.queue[len(kept):])
	builds.queue = kept
	builds.idle.Broadcast()
	for builds.current != nil && (owner == nil || builds.current.owner == owner) {
		builds.idle.Wait()
	}
}

// PendingBuilds is the number of builds queued in the background or
// running.
func PendingBuilds() int {
	builds.Lock()
	defer builds.Unlock()
	return builds.active
}

// background is an executor's builds in the background: those not yet
// collected by the program cache key they build, and those that failed.
type background struct {
	pending map[string]*backgroundBuild
	failed  map[string]error
}

// ProgramSoon is Program for a program that only makes l faster than
// something else the caller can run (the fused loop of loops recorded
// in a chain): when l's program is neither built nor in the disk cache,
// and b's backend is a BackgroundBuilder, it returns nil and no error,
// its compile queued in the background; asked again once it is done, it
// builds the program from the disk cache. A failed build's error is
// returned every time the program is asked for. l.Sig is set unless
// the result is nil.
func (x *Executor) ProgramSoon(b *Opened, l *core.Loop) (Program, error) {
	x.key = programKey(x.key[:0], b.ID, "", l)
	if p, sig, ok := x.programs.get(x.key); ok {
		l.Sig = sig
		return p, nil
	}
	bb, ok := b.Backend.(BackgroundBuilder)
	if !ok {
		return x.Program(b, l)
	}
	ready, err := x.soon(b, l, "", func() (func() error, error) {
		l.Sig = core.Analyse(l)
		return bb.PrepareBuild(l)
	})
	if !ready {
		return nil, err
	}
	return x.Program(b, l)
}

// TileProgramSoon is TileProgram as ProgramSoon is Program: nil and no
// error while l's tile form compiles in the background. l.Sig must be set.
func (x *Executor) TileProgramSoon(b *Opened, l *core.Loop) (TileProgram, error) {
	tb, isTB := b.Backend.(TileBuilder)
	bb, isBB := b.Backend.(BackgroundBuilder)
	if !isTB || !isBB {
		return x.TileProgram(b, l)
	}
	variant := tb.TileVariant(l, x.tunedVariant(b, l))
	x.key = tileKey(x.key[:0], b.ID, variant, 0, l)
	if p, _, ok := x.programs.get(x.key); ok {
		return p.(TileProgram), nil
	}
	ready, err := x.soon(b, l, "tile form", func() (func() error, error) { return bb.PrepareTiles(l, variant) })
	if !ready {
		return nil, err
	}
	return x.TileProgram(b, l)
}

// soon reports whether the program whose key is in x.key (not built) can
// be built without compiling: its background build is done, or prepare
// (the backend's PrepareBuild or PrepareTiles) finds it compiled.
// Otherwise it queues the job prepare returns, if it has not already, and
// returns false with the build's error, if it failed.
func (x *Executor) soon(b *Opened, l *core.Loop, form string, prepare func() (func() error, error)) (bool, error) {
	bg := &x.bg
	if err, ok := bg.failed[string(x.key)]; ok {
		return false, err
	}
	if p, ok := bg.pending[string(x.key)]; ok {
		if !p.done.Load() {
			if time.Since(p.queued) < BackgroundPatience {
				return false, nil
			}
			// Waited long enough: build it at once. The build in the
			// background, if it runs later, finds it compiled.
			delete(bg.pending, string(x.key))
			return true, nil
		}
		delete(bg.pending, string(x.key))
		if p.err == errDropped {
			return x.soon(b, l, form, prepare) // queued again
		}
		if p.err != nil {
			x.buildFailed(b, l, form, p.err)
			return false, p.err
		}
		return true, nil
	}
	job, err := prepare()
	if err != nil {
		x.buildFailed(b, l, form, err)
		return false, err
	}
	if job == nil {
		return true, nil
	}
	if bg.pending == nil {
		bg.pending = map[string]*backgroundBuild{}
	}
	if len(bg.pending) >= MaxPrograms {
		// Builds done that no loop asked for again (their meshes gone):
		// a later ask finds the program in the disk cache, or queues it.
		for k, p := range bg.pending {
			if p.done.Load() {
				delete(bg.pending, k)
			}
		}
	}
	bg.pending[string(x.key)] = startBuild(job, x)
	if x.Logger != nil {
		x.logBackground(b, l, form, slog.LevelDebug, "op2: program queued to build in the background", nil)
	}
	return false, nil
}

// buildFailed keeps err, the failure of a build in the background of the
// program whose key is in x.key, so that it is not tried again (at most
// MaxPrograms failures are kept), and logs it.
func (x *Executor) buildFailed(b *Opened, l *core.Loop, form string, err error) {
	bg := &x.bg
	if bg.failed == nil || len(bg.failed) >= MaxPrograms {
		bg.failed = map[string]error{}
	}
	bg.failed[string(x.key)] = err
	if x.Logger != nil {
		x.logBackground(b, l, form, slog.LevelWarn, "op2: program built in the background failed", err)
	}
}

// logBackground logs an event of l's build in the background.
func (x *Executor) logBackground(b *Opened, l *core.Loop, form string, level slog.Level, msg string, err error) {
	ctx := context.Background()
	if !x.Logger.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{slog.String("kernel", l.Kernel.Name), slog.String("set", l.Set.Name), slog.String("backend", b.Name())}
	if form != "" {
		attrs = append(attrs, slog.String("form", form))
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	x.Logger.LogAttrs(ctx, level, msg, attrs...)
}

// tunedVariant is the tuner's variant for l's calls on b, when it has
// chosen one, else "".
func (x *Executor) tunedVariant(b *Opened, l *core.Loop) string {
	if x.Tuner != nil {
		if c, ok := x.tuned[string(x.tunedChoiceKey(b, l))]; ok {
			return c.Variant
		}
	}
	return ""
}
