package exec

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/jit"
	"github.com/goop2/op2/internal/plan"
)

// Executor runs loops: it is the one place that owns the per-loop sequence
// for every backend. For each loop it finds the program for the loop's
// shape (building it, with its signature, the first time), finds or builds
// the execution plan, saves the data states, lets the program bind the data,
// launches the core elements and then the rest, finishes the reductions and,
// when anything fails before a launch, puts every data state back.
//
// An Executor is not safe for concurrent use; the op2 run time serialises
// loops.
type Executor struct {
	programs programCache
	plans    *core.PlanCache[*Plan]
	// key is the buffer of the program and plan keys (reused); saved
	// holds the running loop's data states (run and RunTiles; reused,
	// emptied after each run by forget).
	key   []byte
	saved []savedState
	// kept holds the reduction Globals' values across a loop's exec-halo
	// pass (keepReductions; reused).
	kept        []byte
	generations uint64
	// BlockSize fixes the plans' block size; 0 chooses it (see ChoosePlan).
	BlockSize int
	// PlanCheck verifies every invariant of each new plan.
	PlanCheck bool
	// DebugPlan prints each new plan's blocks, block size, colours and
	// owner pieces on standard error (OP2_DEBUG_PLAN=1).
	DebugPlan bool
	// OnLaunch, if not nil, is called before every launch (tests).
	OnLaunch func(l *core.Loop, r Range)
	// Halo, if not nil, exchanges halo data around the launches of a
	// distributed run.
	Halo Halo
	// Timing, if not nil, receives the times and bytes of every loop
	// that runs successfully; loops on a Waiter backend are then waited
	// for, so that each loop's time is its own.
	Timing *Timings
	// Logger, if not nil, receives an event for every program built
	// (Info when compiled, Debug when found in a cache) and every plan
	// built (Debug).
	Logger *slog.Logger

	// Tuner, if not nil, chooses each loop's program variant and, when
	// BlockSize is 0, its plan's block size by measurement.
	Tuner *Tuner

	// tuned holds the tuner's choices by backend, loop shape and size;
	// tunedKey is the buffer of their keys (tunedChoiceKey, reused).
	tuned    map[string]tunedChoice
	tunedKey []byte

	// order holds KeepsOrder's answers by backend, fused loop shape,
	// set and maps; orderKey is the buffer of their keys (reused).
	order    map[string]bool
	orderKey []byte

	// bg is the builds in the background this executor started
	// (ProgramSoon, TileProgramSoon; background.go).
	bg background
}

// call is the state of one RunProgram call, made on its stack and passed
// down: what the call spent building its program and plan, the setting
// the tuner chose for it and how many launches it made. The Executor
// itself keeps only what outlives a call (caches, reused buffers,
// configuration).
type call struct {
	// The time the call spent building its program and its plan.
	built, planned time.Duration
	// The call's setting when a tuner chose it (tuning), and whether
	// the call is one of the tuner's measurements (measuring, saved
	// under tuneKey) and used a plan (planUsed).
	tuning, measuring, planUsed bool
	setting                     tunedChoice
	tuneKey                     string
	// launched counts the call's launches (run).
	launched int
}

// tunedChoice is the tuner's setting for a loop, whether it is the
// backend's configured variant (whose program is the loop's usual one),
// and its description for the timing report.
type tunedChoice struct {
	Setting
	configured bool
	label      string
}

// Halo is what a distributed (MPI) run adds to every loop. The executor
// calls Begin before the program binds the data, Wait before the launch
// that needs halo data (after the core elements, so that messages travel
// while they run; on a device the received rows go to the device copy the
// program bound, core.Storage.ScatterRows) and End after Finish.
type Halo interface {
	// Begin starts the exchanges of the halos l reads that are out of
	// date, and prepares its reductions; device says that l's program
	// reads its data on a device (Opened.Device), where the rows
	// received then go, else to the host copies.
	Begin(l *core.Loop, device bool) error
	// Wait completes the exchanges Begin started.
	Wait(l *core.Loop) error
	// End combines l's reductions across ranks and marks the halos of
	// the data l modified out of date.
	End(l *core.Loop) error
	// Agree runs before the executor does, on every rank: the ranks
	// agree on l and on the halos it exchanges (dist.Halo.Agree). trace,
	// if not nil, is the logger Begin logs l's exchanges to (LevelTrace).
	Agree(l *core.Loop, trace *slog.Logger) error
}

// Configure takes the plan settings of c: BlockSize, PlanCheck and
// OP2_DEBUG_PLAN's DebugPlan.
func (x *Executor) Configure(c *Config) {
	x.BlockSize, x.PlanCheck, x.DebugPlan = c.BlockSize, c.PlanCheck, c.debugPlan
}

// New returns an executor with empty caches.
func New() *Executor {
	// The key buffer, hashed for every loop, starts 256 bytes long: an
	// object of that size class starts on a cache line, where the
	// smaller ones append would grow it through may not, and the cost
	// of hashing the key then moved with the heap's layout (39 or 72 ns
	// a loop in one benchmark, the code the same).
	return &Executor{plans: core.NewPlanCache(func(p *Plan) { p.release() }), key: make([]byte, 0, 256)}
}

// Opened is a backend instance as the executor sees it: the backend and an
// identity that keeps its programs and plans apart from other instances'.
type Opened struct {
	Backend
	ID uint64
	// Device says that the backend's programs run on a device
	// (IsDevice).
	Device bool
}

// savedState is a Storage's state before a loop, for putting it back.
type savedState struct {
	s     *core.Storage
	state core.DataState
	dev   core.DeviceBuffer
}

// Program returns the program for l's shape on b, generating and compiling
// it only for a shape not seen before, and sets l.Sig.
func (x *Executor) Program(b *Opened, l *core.Loop) (Program, error) {
	return x.program(b, l, "", nil)
}

// program returns the program for l's shape on b in one of the backend's
// variants ("": the configured one, which sets l.Sig; another needs l.Sig
// set). The time a build takes is added to c's, when c is not nil.
func (x *Executor) program(b *Opened, l *core.Loop, variant string, c *call) (Program, error) {
	x.key = programKey(x.key[:0], b.ID, variant, l)
	if p, sig, ok := x.programs.get(x.key); ok {
		l.Sig = sig
		return p, nil
	}
	x.generations++
	start := time.Now()
	before := jit.ReadStats()
	var p Program
	var err error
	if variant == "" {
		l.Sig = core.Analyse(l)
		p, err = b.Build(l)
	} else if vb, ok := b.Backend.(VariantBuilder); ok {
		p, err = vb.BuildVariant(l, variant)
	} else {
		err = fmt.Errorf("%s: the %s backend has no variant %q", l.Name(), b.Name(), variant)
	}
	if err != nil {
		if note := core.ReadOnlyNote(l, err); note != "" {
			err = fmt.Errorf("%w\n%s", err, note)
		}
		err = core.UndeclaredError(l, err)
	}
	x.countBuild(b, l, variant, time.Since(start), before, err, c)
	if err != nil {
		return nil, err
	}
	// A device backend may have changed how some of the loop's data is
	// stored (core.Storage.KeepAoSOnDevice), which is part of the key.
	x.key = programKey(x.key[:0], b.ID, variant, l)
	x.programs.put(x.key, p, l.Sig)
	return p, nil
}

// countBuild counts a build for l (its program, a variant, its tile
// form, the chain driver) that took d as l's compile time, in c's when
// it is built for call c, and logs it. One built before the loop runs
// (recorded in lazy mode, fused, tiled) counts all the same.
func (x *Executor) countBuild(b *Opened, l *core.Loop, what string, d time.Duration, before jit.Stats, err error, c *call) {
	if c != nil {
		c.built += d
	} else if x.Timing != nil && err == nil {
		x.Timing.addCompile(l, b.Name(), d)
	}
	if x.Logger != nil {
		x.logBuild(b, l, what, d, before, err)
	}
}

// logBuild logs the build of l's program on b, which took d: Info when
// something was compiled, Debug when the program came from the disk cache
// or from a program already loaded, Warn when the build failed.
func (x *Executor) logBuild(b *Opened, l *core.Loop, variant string, d time.Duration, before jit.Stats, err error) {
	after := jit.ReadStats()
	level, outcome := slog.LevelDebug, "memory"
	switch {
	case err != nil:
		level, outcome = slog.LevelWarn, "failed"
	case after.Compiles > before.Compiles:
		level, outcome = slog.LevelInfo, "miss"
	case after.DiskHits > before.DiskHits:
		outcome = "disk"
	}
	ctx := context.Background()
	if !x.Logger.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("kernel", l.Kernel.Name), slog.String("set", l.Set.Name),
		slog.String("backend", b.Name()), slog.Float64("seconds", d.Seconds()),
		slog.String("cache", outcome),
	}
	if variant != "" {
		attrs = append(attrs, slog.String("variant", variant))
	}
	if after.Rebuilds > before.Rebuilds {
		attrs = append(attrs, slog.Bool("rebuilt", true))
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	x.Logger.LogAttrs(ctx, level, "op2: program built", attrs...)
}

// Source returns the source of the program already built for l's shape on
// b, if there is one.
func (x *Executor) Source(b *Opened, l *core.Loop) (string, bool) {
	x.key = programKey(x.key[:0], b.ID, "", l)
	if p, _, ok := x.programs.get(x.key); ok {
		return p.Source(), true
	}
	return "", false
}

// programKey is the program cache's key: the backend instance, the
// variant and the loop's shape (core.AppendKey).
func programKey(buf []byte, backend uint64, variant string, l *core.Loop) []byte {
	return variantKey(buf, backend, "", variant, 0, l)
}

// variantKey is programKey of the variant that is prefix followed by
// variant, without concatenating them, and for a copy n > 0 of a
// program (TileProgramCopy) n after them.
func variantKey(buf []byte, backend uint64, prefix, variant string, n int, l *core.Loop) []byte {
	buf = binary.LittleEndian.AppendUint64(buf, backend)
	buf = binary.AppendUvarint(buf, uint64(len(prefix)+len(variant)))
	buf = append(buf, prefix...)
	buf = append(buf, variant...)
	if n > 0 {
		buf = binary.AppendUvarint(buf, uint64(n))
	}
	return core.AppendKey(buf, l)
}

// Run runs l on b.
func (x *Executor) Run(b *Opened, l *core.Loop) error { return x.RunProgram(b, l, nil) }

// RunProgram is Run with l's program p already found by Program (nil:
// find it), for a loop recorded earlier (op2's chains). p is valid only
// while the executor has dropped no program since it was found: the
// caller compares Dropped. A failure before any of the loop ran
// satisfies NothingRan.
func (x *Executor) RunProgram(b *Opened, l *core.Loop, p Program) error {
	if x.Tuner != nil || x.Timing != nil {
		return x.runMeasured(b, l, p)
	}
	if p == nil {
		var err error
		if p, err = x.Program(b, l); err != nil {
			return beforeRun(err)
		}
	}
	var c call
	return x.run(b, p, l, &c)
}

// runFailure marks a loop's failure with how much of it ran: none
// (beforeRun, NothingRan) or perhaps some (PartlyRan). One type holds
// both, so that the outermost mark decides.
type runFailure struct {
	err    error
	partly bool
}

func (e *runFailure) Error() string { return e.err.Error() }
func (e *runFailure) Unwrap() error { return e.err }

// MayHaveRun reports whether some of the launch may have run.
func (e *runFailure) MayHaveRun() bool { return e.partly }

// beforeRun marks err (nil: none) as a failure before any of a loop ran:
// its program, plan or bindings failed, and its data's states are as
// they were.
func beforeRun(err error) error {
	if err == nil || NothingRan(err) || mayHaveRun(err) {
		return err
	}
	return &runFailure{err: err}
}

// NothingRan reports whether err, from RunProgram, failed the loop before
// any of it ran: its program did not build or load, its plan or bindings
// failed (its data could not be allocated on the device, say), or its
// first launch failed with none of it run (not PartlyRan). The loop
// changed nothing, and may run again, or in parts.
func NothingRan(err error) bool {
	var f *runFailure
	return errors.As(err, &f) && !f.partly
}

// PartlyRan wraps err, the failure of a Program's Launch or a
// TileProgram's LaunchTiles, to say that some of that launch may have
// run (other threads' elements, earlier colours or tiles): the executor
// then takes the loop's data as modified, in part, and does not run it
// again, even where the launch was its first. An error of any type with a
// method MayHaveRun() bool returning true says the same, from Bind too (a
// device's queued launches of earlier loops, failing at a copy:
// cuda.QueuedError).
func PartlyRan(err error) error {
	if err == nil {
		return nil
	}
	return &runFailure{err: err, partly: true}
}

// mayHaveRun reports whether err says that launches may have run
// (PartlyRan, or a MayHaveRun method).
func mayHaveRun(err error) bool {
	var m interface{ MayHaveRun() bool }
	return errors.As(err, &m) && m.MayHaveRun()
}

// Dropped is the number of programs dropped so far (least recently used
// beyond MaxPrograms, or by Clear): a program found before is still
// loaded while it has not changed.
func (x *Executor) Dropped() uint64 { return x.programs.removed }

// runMeasured runs l on b (with program p, or the one Program finds
// when nil) and measures the call: the program and plan
// builds apart, the rest (waiting for an asynchronous backend to finish the
// loop) as its run time, which goes to x.Timing and, when the call is one
// of the tuner's measurements, to the tuner.
func (x *Executor) runMeasured(b *Opened, l *core.Loop, p Program) error {
	var c call
	start := time.Now()
	var err error
	if p == nil {
		p, err = x.program(b, l, "", &c)
	}
	configured := p
	if err == nil && x.Tuner != nil {
		p, err = x.tunedProgram(b, l, p, &c)
	}
	err = beforeRun(err)
	w, waiter := b.Backend.(Waiter)
	if waiter && err == nil && c.measuring && x.Timing == nil {
		// Loops queued before this one must not count in its time.
		if err = w.Wait(); err == nil {
			start, c.built = time.Now(), 0
		}
	}
	// Timed on the device, between two stamps, the loop is not waited
	// for (the tuner's measurements are).
	var clock DeviceClock
	clocked := false
	if err == nil && x.Timing != nil && !c.measuring {
		clock, clocked = b.Backend.(DeviceClock)
		clocked = clocked && clock.Clocked()
	}
	var from Stamp
	if clocked {
		from, err = clock.Stamp()
	}
	if err == nil {
		err = x.run(b, p, l, &c)
		if err != nil && c.tuning && c.setting.chosen() {
			// The tuner's setting failed (a plan, a binding or a launch
			// the device refuses): it is not a choice. When nothing had
			// run, the loop runs again as configured.
			launched := c.launched
			x.dropSetting(b, l, err, &c)
			if launched == 0 {
				err = x.run(b, configured, l, &c)
			}
		}
	}
	if clocked && from != nil {
		to, serr := clock.Stamp()
		if err == nil && serr == nil {
			x.Timing.addClocked(l, b.Name(), c.planned, c.built, c.setting.label, clock, from, to)
			return nil
		}
		if serr == nil {
			_, _ = clock.Between(from, to) // releases them
		}
		if err == nil {
			err = serr
		}
		return err
	}
	if waiter && err == nil && (c.measuring || x.Timing != nil) {
		err = w.Wait()
	}
	if err != nil {
		return err
	}
	run := time.Since(start) - c.built - c.planned
	if c.measuring {
		x.Tuner.Record(c.tuneKey, run, c.planUsed && x.BlockSize == 0)
	}
	if x.Timing != nil {
		x.Timing.add(l, b.Name(), run, c.planned, c.built, c.setting.label)
	}
	return nil
}

// run runs l on b with program p for the call c, counting its launches
// in c.launched.
func (x *Executor) run(b *Opened, p Program, l *core.Loop, c *call) error {
	c.launched = 0
	var pl *Plan
	if needs := p.PlanNeeds(); needs != nil {
		var err error
		if pl, err = x.plan(b, l, needs, c); err != nil {
			return beforeRun(err)
		}
	}
	defer x.forget()
	for i := range l.Args {
		if l.Sig.Base[i] == i {
			s := l.Args[i].Data
			x.saved = append(x.saved, savedState{s: s, state: s.State, dev: s.Dev})
		}
	}
	halo := x.Halo
	if halo != nil {
		if err := halo.Begin(l, b.Device); err != nil {
			x.restore()
			return err
		}
	}
	// The core elements (or the colours holding only core blocks) need no
	// halo data; then the other owned elements, then the exec halo.
	// Without MPI only the first is not empty.
	var parts [3]Range
	if pl != nil {
		parts = [3]Range{{0, pl.NColorsCore, true}, {pl.NColorsCore, pl.NColorsOwned, true}, {pl.NColorsOwned, pl.NColors, true}}
	} else {
		end := l.IterEnd()
		c, o := min(l.Set.Core, end), min(l.Set.Owned, end)
		parts = [3]Range{{0, c, false}, {c, o, false}, {o, end, false}}
	}
	// A reduction must not count the exec halo, which other ranks own:
	// a loop with both runs the exec halo in a second pass whose
	// reduction results are thrown away.
	split := len(l.Sig.Reductions) > 0 && parts[2].First < parts[2].Last
	passes := [2][]Range{parts[:], nil}
	if split {
		passes = [2][]Range{parts[:2], parts[2:]}
	}
	// fail ends a loop that failed before any of it ran (in Bind, or in
	// its first launch with none of it run): the data states go back,
	// and exchanges begun complete, so that the halos Begin marked
	// current are; the error satisfies NothingRan unless an exchange
	// failed too.
	fail := func(err error) error {
		x.restore()
		if halo != nil {
			if werr := halo.Wait(l); werr != nil {
				return errors.Join(err, werr)
			}
		}
		return beforeRun(err)
	}
	if err := p.Bind(l, pl); err != nil {
		return fail(err)
	}
	for pass, ranges := range passes {
		if pass == 1 {
			if ranges == nil {
				break
			}
			var err error
			if x.kept, err = keepReductions(x.kept[:0], l); err != nil {
				return err
			}
			if err := p.Bind(l, pl); err != nil {
				return err
			}
		}
		for k, r := range ranges {
			if r.First >= r.Last {
				continue
			}
			if halo != nil && (k > 0 || pass == 1) {
				if err := halo.Wait(l); err != nil {
					return err
				}
				halo = nil
			}
			if x.OnLaunch != nil {
				x.OnLaunch(l, r)
			}
			if err := p.Launch(r); err != nil {
				partly := mayHaveRun(err)
				if c.launched == 0 && !partly {
					return fail(err)
				}
				if partly {
					c.launched++ // this launch's, in part
				}
				return fmt.Errorf("%w (after %d of its launches had run or been queued, in part or whole: the data this loop modifies may be partly updated)", err, c.launched)
			}
			c.launched++
		}
		if err := p.Finish(l); err != nil {
			return err
		}
	}
	if b.Device && l.Kernel.Info != nil && l.Kernel.Info.WritesStdio {
		if f, ok := b.Backend.(StdioFlusher); ok {
			if err := f.FlushStdio(); err != nil {
				return err
			}
		}
	}
	if split {
		if err := putReductions(x.kept, l); err != nil {
			return err
		}
	}
	if halo != nil {
		if err := halo.Wait(l); err != nil {
			return err
		}
	}
	if x.Halo != nil {
		return x.Halo.End(l)
	}
	return nil
}

// forget drops the saved states, so that the executor keeps no Dat alive.
func (x *Executor) forget() {
	clear(x.saved)
	x.saved = x.saved[:0]
}

// restore puts back the data states saved before a loop that failed before
// any launch, freeing device buffers the loop allocated. A buffer of
// another backend that the loop freed (after copying its values home)
// cannot come back: the host copy is then the current one.
func (x *Executor) restore() {
	for _, sv := range x.saved {
		s := sv.s
		if s.Dev == sv.dev {
			s.State = sv.state
			continue
		}
		if s.Dev != nil {
			s.Dev.Free() // allocated by the failed loop
		}
		if sv.dev != nil {
			s.Dev, s.State = nil, core.StateDeviceUnallocated
			continue
		}
		s.Dev, s.State = nil, sv.state
	}
}

// Plan is an execution plan as programs receive it: the plan, with its
// arrays pinned (their addresses may be stored in C memory while the Plan
// lives), and room for a device program's copy of the arrays.
type Plan struct {
	*plan.Plan
	// Device is a device program's copy of the plan's arrays, made by its
	// Bind the first time it gets the plan; it is released with the plan.
	Device Releaser
}

func (p *Plan) release() {
	if p.Device != nil {
		p.Device.Release()
		p.Device = nil
	}
}

// plan returns the execution plan for l's set and maps on b, building it the
// first time, for the call c (the tuner's setting, the time spent).
// Plans are kept until their set or one of their maps is garbage
// collected.
func (x *Executor) plan(b *Opened, l *core.Loop, needs *PlanNeeds, c *call) (*Plan, error) {
	k := binary.LittleEndian.AppendUint64(x.key[:0], b.ID)
	k = append(k, l.Sig.Key...)
	k = binary.LittleEndian.AppendUint64(k, l.Set.ID)
	for i := range l.Args {
		if m := l.Args[i].Map; m != nil {
			k = binary.LittleEndian.AppendUint64(k, m.ID)
		}
	}
	blockSize := x.BlockSize
	if c.tuning {
		// The variant's program may ask for another plan (the openmp
		// scheme's owner pieces, a device scheme's colouring).
		if blockSize == 0 {
			blockSize = c.setting.BlockSize
		}
		k = binary.LittleEndian.AppendUint64(k, uint64(blockSize))
		k = append(k, c.setting.Variant...)
	}
	c.planUsed = true
	x.key = k
	if pl, ok := x.plans.Get(k); ok {
		return pl, nil
	}
	start := time.Now()
	built, err := ChoosePlan(l, needs, blockSize, x.PlanCheck)
	d := time.Since(start)
	c.planned += d
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.Name(), err)
	}
	if x.DebugPlan {
		fmt.Fprintf(os.Stderr, "plan %s: blocks %d size %d colours %d owners %d\n", l.Name(), built.NBlocks, built.BlockSize, built.NColors, built.Owners)
	}
	if x.Logger != nil {
		x.Logger.LogAttrs(context.Background(), slog.LevelDebug, "op2: plan built",
			slog.String("kernel", l.Kernel.Name), slog.String("set", l.Set.Name), slog.String("backend", b.Name()),
			slog.Int("blocks", built.NBlocks), slog.Int("block_size", built.BlockSize),
			slog.Int("colours", built.NColors), slog.Int("owners", built.Owners), slog.Float64("seconds", d.Seconds()))
	}
	pl := &Plan{Plan: built}
	var ptrs []any
	for _, s := range [][]int32{built.BlkMap, built.Offset, built.NElems, built.ColOffset, built.NColBlk, built.ThrCol, built.NThrCol, built.BlkCol, built.OwnerOffset} {
		if len(s) > 0 {
			ptrs = append(ptrs, &s[0])
		}
	}
	core.KeepPinned(pl, ptrs...)
	x.plans.Put(k, l, pl)
	return pl, nil
}

// ChoosePlan builds the plan for l with the block size policy, and checks
// every invariant of the plan when check is set. A configured
// block size (blockSize > 0) is used as it is by host programs. Device programs (needs.SharedBudget > 0) start
// from the planner's adaptive size (or needs.BlockSize) and halve it until a
// block's staged data fits their shared memory. Host programs need no staging memory, so blocks
// start large: large blocks need fewer colours and keep each colour's data
// together in cache (measured on Airfoil's res_calc: 7.5 ms per call with
// 8192-element blocks, 13.9 ms with OP2's 256). But when the mesh has little
// locality large blocks all conflict and the colours serialise the loop, so
// the size is quartered until every colour has, on average, work for all
// threads (four blocks per thread), down to 256.
func ChoosePlan(l *core.Loop, needs *PlanNeeds, blockSize int, check bool) (*plan.Plan, error) {
	modifies := func(i int) bool { return l.Args[i].IndirectModify() }
	if needs.Modifies != nil {
		modifies = func(i int) bool { return needs.Modifies[i] }
	}
	in := plan.ForLoop(l, modifies, blockSize)
	in.Owners = needs.Owners
	for i := range in.Args {
		if needs.Unstaged != nil && needs.Unstaged[i] {
			in.Args[i].ElemBytes = 0
		}
	}
	build := func() (*plan.Plan, error) {
		pl, err := plan.Build(in)
		if err != nil {
			return nil, fmt.Errorf("building the execution plan: %w", err)
		}
		return pl, nil
	}
	var pl *plan.Plan
	var err error
	switch {
	case needs.SharedBudget > 0:
		if blockSize <= 0 && needs.BlockSize > 0 {
			in.BlockSize = needs.BlockSize
		}
		for {
			if pl, err = build(); err != nil {
				return nil, err
			}
			if pl.NShared <= needs.SharedBudget || pl.BlockSize <= 1 {
				break
			}
			in.BlockSize = pl.BlockSize / 2
		}
		if pl.NShared > needs.SharedBudget {
			if needs.TooLarge != nil {
				return nil, needs.TooLarge(l, pl.NShared)
			}
			return nil, fmt.Errorf("a block's staged data (%d bytes) does not fit the %d bytes the backend has for it", pl.NShared, needs.SharedBudget)
		}
	case blockSize > 0:
		if pl, err = build(); err != nil {
			return nil, err
		}
	default:
		threads := max(needs.Threads, 1)
		in.BlockSize = min(max(l.IterEnd()/(16*threads), 256), 8192)
		for {
			if pl, err = build(); err != nil {
				return nil, err
			}
			if in.BlockSize <= 256 || pl.NBlocks >= 4*threads*pl.NColors {
				break
			}
			in.BlockSize = max(in.BlockSize/4, 256)
		}
	}
	if check {
		if err := pl.Check(in); err != nil {
			return nil, fmt.Errorf("execution plan check failed: %w", err)
		}
	}
	return pl, nil
}

// chosen reports whether c differs from the configuration: another
// variant, or a block size other than the executor's own.
func (c *tunedChoice) chosen() bool { return !c.configured || c.BlockSize != 0 }

// dropSetting gives up the tuner's setting for the call c of l, which
// failed with err: a measurement's setting is never chosen (Tuner.Fail), a
// saved choice is forgotten and measured again; the call continues as
// configured, unmeasured.
func (x *Executor) dropSetting(b *Opened, l *core.Loop, err error, c *call) {
	if c.measuring {
		x.Tuner.Fail(c.tuneKey)
	} else {
		x.Tuner.Forget(x.Tuner.Key(backendKey(b), l.Sig.Key, l.IterEnd()))
		delete(x.tuned, string(x.tunedKey))
	}
	if x.Logger != nil {
		x.Logger.LogAttrs(context.Background(), slog.LevelInfo, "op2: tuning drops a setting",
			slog.String("kernel", l.Kernel.Name), slog.String("set", l.Set.Name), slog.String("backend", b.Name()),
			slog.String("setting", c.setting.Setting.String()), slog.Bool("measuring", c.measuring), slog.String("error", err.Error()))
	}
	c.measuring = false
	c.setting = tunedChoice{configured: true, label: "as configured (the tuned setting failed)"}
}

// tunedProgram sets cl.setting to the tuner's setting for the call cl of
// l on b (its choice once made, looked up without allocating; else the
// setting this call measures, cl.measuring) and returns the program of
// its variant: configured, the loop's usual program, or another one.
func (x *Executor) tunedProgram(b *Opened, l *core.Loop, configured Program, cl *call) (Program, error) {
	k := x.tunedChoiceKey(b, l)
	c, ok := x.tuned[string(k)]
	if !ok {
		var variants []string
		if vb, ok := b.Backend.(VariantBuilder); ok {
			variants = vb.Variants(l)
		}
		if len(variants) == 0 && (configured.PlanNeeds() == nil || x.BlockSize > 0) {
			// One way to run the loop, and no plan to size.
			c = tunedChoice{configured: true, label: "nothing to choose"}
			x.remember(k, c)
			cl.tuning, cl.setting = true, c
			return configured, nil
		}
		key := x.Tuner.Key(backendKey(b), l.Sig.Key, l.IterEnd())
		s, measuring := x.Tuner.Setting(key, variants)
		c = tunedChoice{Setting: s, configured: len(variants) == 0 || s.Variant == variants[0]}
		shown := s
		if x.BlockSize > 0 {
			shown.BlockSize = x.BlockSize
		}
		c.label = shown.String()
		if measuring {
			cl.measuring, cl.tuneKey = true, key
			c.label = "measuring " + c.label
		} else {
			x.remember(k, c)
		}
	}
	cl.tuning, cl.setting = true, c
	if c.configured {
		return configured, nil
	}
	p, err := x.program(b, l, c.Variant, cl)
	if err != nil {
		// A variant the device cannot build (a work-group size beyond
		// its resources for this kernel) is not a choice: this call runs
		// as configured.
		x.dropSetting(b, l, err, cl)
		return configured, nil
	}
	return p, nil
}

// tunedChoiceKey sets x.tunedKey to the key of l's choice on b in
// x.tuned (backend, size, loop shape) and returns it.
func (x *Executor) tunedChoiceKey(b *Opened, l *core.Loop) []byte {
	k := binary.LittleEndian.AppendUint64(x.tunedKey[:0], b.ID)
	k = binary.LittleEndian.AppendUint64(k, uint64(l.IterEnd()))
	k = append(k, l.Sig.Key...)
	x.tunedKey = k
	return k
}

// maxTuned bounds the tuner's choices the executor keeps at hand: loops
// over subsets of ever new sizes would otherwise add one each.
const maxTuned = 4096

// remember keeps the tuner's choice c for the loop keyed k, starting
// afresh when maxTuned are kept (the tuner still holds every choice).
func (x *Executor) remember(k []byte, c tunedChoice) {
	if x.tuned == nil || len(x.tuned) >= maxTuned {
		x.tuned = map[string]tunedChoice{}
	}
	x.tuned[string(k)] = c
}

// backendKey names b for the tuner's saved choices: its name and, for a
// Describer, what it runs on (device, platform, driver, compiler, threads),
// so that choices made on one device are not taken for another.
func backendKey(b *Opened) string {
	d, ok := b.Backend.(Describer)
	if !ok {
		return b.Name()
	}
	var sb strings.Builder
	sb.WriteString(b.Name())
	for _, a := range d.Describe() {
		sb.WriteString(" " + a.Key + "=" + a.Value.String())
	}
	return sb.String()
}

// Clear drops every program (releasing what they hold) and every plan.
func (x *Executor) Clear() {
	x.programs.clear()
	x.plans.Clear()
	clear(x.tuned)
	x.bg = background{}
}

// Plans is the number of plans held.
func (x *Executor) Plans() int { return x.plans.Len() }

// Programs is the number of programs held.
func (x *Executor) Programs() int { return x.programs.len() }

// Generations is the number of programs generated so far.
func (x *Executor) Generations() uint64 { return x.generations }

// SetMaxPrograms changes the number of programs kept (tests lower it).
func (x *Executor) SetMaxPrograms(n int) { x.programs.max = n }

// MaxPrograms is the number of programs kept.
func (x *Executor) MaxPrograms() int { return x.programs.limit() }
