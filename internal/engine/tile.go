package engine

import (
	"encoding/binary"
	"runtime"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/tile"
)

// Sparse tiling of recorded loops (Config.Tile, OP2_TILE).
//
// When the queue is forced, the longest run of recorded loops that can
// run in tiles (tileable, same runtime and backend, Globals used safely)
// runs through the executor's RunTiles with a schedule from package tile.
// The schedule is computed in Go once per distinct chain (tileKey: the
// loops' sets and arguments, the tile size and whether tiles run on
// threads) and kept, with its element lists pinned for the generated
// code; a repeated chain finds it and allocates nothing.
//
// Under MPI (several ranks, the mesh partitioned) the schedule has a
// boundary (tile.Schedule.Boundary): the elements of a loop beyond its
// set's core (they read halo copies, or are exec halo elements) and the
// elements that modify an owned item sent to another rank, with every
// element that depends on one of them. The other tiles run first, with
// no halo exchange: they read no value an exchange brings and change
// none it sends. Then the boundary runs loop by loop, each loop with its
// agreement, exchanges and reductions as when it runs alone (see
// exec.Executor.RunTiles), so that the results are those of the loops
// run one by one, but for the order in which a loop's increments reach
// an item.

// maxTiledChains is the number of schedules kept; beyond it they are all
// dropped (a program whose chains never repeat keeps bounded memory).
const maxTiledChains = 64

// tiledSchedule is a kept schedule, pinned while it is kept.
type tiledSchedule struct {
	s   *tile.Schedule
	pin runtime.Pinner
	// names are how a crash report names the chains' loops, by their
	// kernels (kernelsKey; chains of other kernels may share the
	// schedule, and alternate): a tile runs them in turn.
	names map[uint64][2]string
}

// crashNames returns how a crash report names loops, which run in tiles
// of ts: their kernels ("a, b or c (a chain run in tiles)") and their
// sets, made once for each sequence of kernels.
func (ts *tiledSchedule) crashNames(loops []*core.Loop) (kernels, sets string) {
	key := kernelsKey(loops)
	if n, ok := ts.names[key]; ok {
		return n[0], n[1]
	}
	var ks, ss []string
	for _, l := range loops {
		ks = append(ks, l.Kernel.Name)
		if !slices.Contains(ss, l.Set.Name) {
			ss = append(ss, l.Set.Name)
		}
	}
	last := len(ks) - 1
	n := [2]string{strings.Join(ks[:last], ", ") + " or " + ks[last] + " (a chain run in tiles)", strings.Join(ss, ", ")}
	if ts.names == nil || len(ts.names) >= 16 { // bounded: kernels made anew each time
		ts.names = map[uint64][2]string{}
	}
	ts.names[key] = n
	return n[0], n[1]
}

// kernelsKey is a hash (FNV-1a) of the IDs of loops' kernels, in order.
func kernelsKey(loops []*core.Loop) uint64 {
	h := uint64(14695981039346656037)
	for _, l := range loops {
		for id := l.Kernel.ID; ; id >>= 8 {
			h = (h ^ (id & 0xff)) * 1099511628211
			if id < 256 {
				break
			}
		}
		h = (h ^ 0xff) * 1099511628211
	}
	return h
}

// chainCounts are the bytes a chain's loops move, which only the timing
// report reads: they depend on the loops, not on the tile size, so the
// schedules of one chain in tiles of different sizes share them.
type chainCounts struct {
	bytes []float64 // each loop's exec.LoopBytes
	moved []float64 // each loop's share of exec.ChainBytes
}

// Where the library chose the tile size (Config.Tile TileAuto) and tiles
// run on one thread, the choice is measured before it is kept: from its
// second run (autoChoice.seen), the chain's runs go in turn untiled (its
// loops one by one, fused as usual) and in tiles of each size the
// library proposes (tile.Auto's,
// and tile.AutoL2's when it differs), tileTrials runs of each, and the
// chain then runs the way whose fastest run was the fastest, tiles
// winning a tie. On one thread every way gives the same results bit for
// bit, so the program sees no difference but the time; tiles that cut
// the bytes moved may still lose to loops whose data the last-level
// cache holds, or whose time is the arithmetic.
const tileTrials = 3

// maxTileWays is the number of ways a chain's trial compares: untiled
// and two tile sizes.
const maxTileWays = 3

// tileTrial is the state of a chain's measured choice among ways
// [0, ways): way 0 is untiled, way i > 0 the chain's i-th tile size.
type tileTrial struct {
	best    [maxTileWays]time.Duration // the fastest run of each way so far
	runs    [maxTileWays]int           // the runs of each way so far
	ways    int
	decided bool
	way     int // the choice, once made
}

// next returns the way of the chain's next run: the chosen one, or
// during the trial the way with the fewest runs (the first of them).
func (t *tileTrial) next() int {
	if t.decided {
		return t.way
	}
	w := 0
	for i := 1; i < t.ways; i++ {
		if t.runs[i] < t.runs[w] {
			w = i
		}
	}
	return w
}

// add adds a run of way w that took d, and reports whether that made the
// choice.
func (t *tileTrial) add(w int, d time.Duration) bool {
	if t.runs[w] == 0 || d < t.best[w] {
		t.best[w] = d
	}
	t.runs[w]++
	if t.decided {
		return false
	}
	for i := range t.ways {
		if t.runs[i] < tileTrials {
			return false
		}
	}
	t.decided, t.way = true, 0
	for i := 1; i < t.ways; i++ {
		if t.best[i] <= t.best[t.way] {
			t.way = i
		}
	}
	return true
}

// tiledAgree is the tiled run's TiledChain.Agree under MPI: the loop's
// agreement, as RunProgram makes it (a tiled run has no tracer).
func (p *Process) tiledAgree(l *core.Loop) error { return p.tiling.halo.Agree(l, nil) }

// tiledGlobal is a Global used by a loop of the run being tiled.
type tiledGlobal struct {
	s             *core.Storage
	reduced, read bool
}

// deadReduction is a Global reduction argument of a loop of a tiled run
// whose result an assignment later in the run replaces: for the run it
// reduces into a scratch Global (scratchGlobal), its Global kept in s.
type deadReduction struct {
	l *core.Loop
	i int
	s *core.Storage
}

// scratchGlobal returns a Global of s's type and length whose value
// nothing reads, for the reductions of a tiled run that an assignment
// later in the run makes dead. It is made once per type and length and
// kept, pinned.
func (p *Process) scratchGlobal(s *core.Storage) *core.Storage {
	key := scratchKey{s.Type, s.Len}
	if g, ok := p.tiling.scratch[key]; ok {
		return g
	}
	if p.tiling.scratch == nil {
		p.tiling.scratch = map[scratchKey]*core.Storage{}
	}
	buf := make([]uint64, max(1, (s.Bytes()+7)/8))
	p.tiling.scratchPin.Pin(&buf[0])
	g := &core.Storage{Name: "a reduction an assignment replaces", Type: s.Type, Dim: s.Dim, Len: s.Len, ID: core.NewID(), Host: unsafe.Pointer(&buf[0])}
	p.tiling.scratch[key] = g
	return g
}

// scratchKey is the type and length of a scratch Global.
type scratchKey struct {
	t core.ScalarType
	n int
}

// The job's halo exchange, the executor's Halo under MPI, runs tiles.
var _ exec.TileHalo = (*dist.Halo)(nil)

// tileable reports whether loop l of runtime r may run in tiles on
// backend b at all. Under MPI, r's halo exchange must be one loops can
// run in tiles under (an exec.TileHalo, as the job's dist.Halo is), and
// the tile size one the program chose (exec.TileAuto tiles in one
// process only).
func tileable(r *Runtime, b *exec.Opened, l *core.Loop) bool {
	if r.Cfg.Tile == 0 || l.Check || l.Extruded != nil || r.X.Tuner != nil || r.tracer() != nil {
		return false
	}
	if r.Cfg.Tile == exec.TileAuto && r.X.Halo != nil {
		return false
	}
	if r.X.Halo != nil {
		if _, ok := r.X.Halo.(exec.TileHalo); !ok {
			return false
		}
	} else if l.Set.Halo != nil {
		return false
	}
	if _, ok := b.Backend.(exec.TileBuilder); !ok {
		return false
	}
	for i := range l.Args {
		if a := &l.Args[i]; a.Kind == core.ArgMat || a.Hidden {
			return false
		}
	}
	return true
}

// globalsAllow reports whether loop l may join a tiled run whose earlier
// loops' Globals are tiling.globals: no Global that one of them reduces,
// and no reduction of a Global that they use or that l reads too. It
// then adds l's Globals.
func (p *Process) globalsAllow(l *core.Loop) bool {
	gs := p.tiling.globals
	find := func(s *core.Storage) int {
		for k := range gs {
			if gs[k].s == s {
				return k
			}
		}
		return -1
	}
	for i := range l.Args {
		a := &l.Args[i]
		if a.Kind != core.ArgGlobal || a.Off {
			continue
		}
		k := find(a.Data)
		if a.IsReduction() {
			if k >= 0 {
				return false
			}
			for j := range l.Args {
				if b := &l.Args[j]; b.Data == a.Data && !b.IsReduction() {
					return false
				}
			}
		} else if k >= 0 && gs[k].reduced {
			return false
		}
	}
	for i := range l.Args {
		a := &l.Args[i]
		if a.Kind != core.ArgGlobal || a.Off {
			continue
		}
		if k := find(a.Data); k >= 0 {
			gs[k].reduced = gs[k].reduced || a.IsReduction()
			gs[k].read = gs[k].read || !a.IsReduction()
		} else {
			gs = append(gs, tiledGlobal{a.Data, a.IsReduction(), !a.IsReduction()})
		}
	}
	p.tiling.globals = gs
	return true
}

// globalsAssign reports whether an assignment to Global s may join a
// tiled run whose loops' Globals are tiling.globals: none of them reads
// s other than by reducing into it (the assignment is made before the
// run's tiles, and their reductions into s are dead). Loops after it
// then meet s as a Global the run has not used.
func (p *Process) globalsAssign(s *core.Storage) bool {
	gs := p.tiling.globals
	for k := range gs {
		if gs[k].s == s {
			if gs[k].read {
				return false
			}
			p.tiling.globals = slices.Delete(gs, k, k+1)
			break
		}
	}
	return true
}

// runTiled runs the steps from k on (see chainQueue.force; of n recorded
// entries) whose loops (fused or not) can run in tiles, when there are at
// least two, and returns how many steps ran (0: none, and step k runs as
// usual). The failure of one of them is stored in *err as a *ChainError.
// Caller holds the lock.
func (p *Process) runTiled(k, n int, err *error) int {
	q := &p.queue
	if k+1 >= len(q.steps) || p.ahead {
		return 0 // a run of tiles needs two steps; under MPI, a chain (its agreement)
	}
	l0, r := q.loop(&q.steps[k])
	if l0 == nil {
		return 0 // an assignment
	}
	b := q.slots[q.steps[k].i].b
	if !tileable(r, b, l0) {
		return 0
	}
	c := &p.tiling.chain
	defer func() {
		clear(c.Loops)
		clear(c.Programs)
		clear(p.tiling.globals)
		c.Loops, c.Programs, c.Schedule, c.Bytes, c.Moved, p.tiling.globals = c.Loops[:0], c.Programs[:0], nil, nil, nil, p.tiling.globals[:0]
		c.Agree, p.tiling.halo = nil, nil
		p.tiling.steps, p.tiling.assigned = p.tiling.steps[:0], p.tiling.assigned[:0]
	}()
	// The run: loops of the same runtime and backend that can run in
	// tiles, whose Globals allow it, for one period of a repeated
	// sequence at most (endsPeriod), each with its own program (a
	// program holds one loop's bindings at a time: a loop of an earlier
	// one's shape runs a copy), binding no constant other than one of
	// the same name an earlier loop binds (otherConsts); in one process,
	// assignments to Globals between them (globalsAssign).
	dropped := r.X.Dropped()
	steps, assigned := p.tiling.steps[:0], p.tiling.assigned[:0]
	for j := k; j < len(q.steps); j++ {
		if e := q.slots[q.steps[j].i]; e.set != nil && len(c.Loops) > 0 && r.X.Halo == nil {
			if !p.globalsAssign(e.set) {
				break
			}
			assigned = append(assigned, j)
			continue
		}
		l, lr := q.loop(&q.steps[j])
		if l == nil || lr != r || q.slots[q.steps[j].i].b != b || !tileable(r, b, l) || q.endsPeriod(j, c.Loops, l) || !p.globalsAllow(l) || otherConsts(c.Loops, l) {
			break
		}
		c.Loops = append(c.Loops, l)
		steps = append(steps, j)
	}
	p.tiling.steps, p.tiling.assigned = steps, assigned
	if len(c.Loops) < 2 {
		return 0
	}
	// stepsTo is the number of steps from k to loop j's, included.
	stepsTo := func(j int) int { return steps[j] - k + 1 }
	threads := b.Backend.(exec.TileBuilder).TileThreads()
	h := r.X.Halo
	size := r.Cfg.Tile
	var auto *autoChoice // a size the library chooses
	measured := false    // and, on one thread in one process, measures (tileTrial)
	weighed := len(c.Loops)
	if size == exec.TileAuto {
		if auto = p.autoChoice(r, c.Loops); auto.sizes[0] == 0 {
			return 0 // tiles would not pay: no tile form is built
		}
		size = auto.sizes[0]
		if measured = threads == 1 && h == nil; measured {
			// A chain is measured from its second run: one seen once
			// (a first iteration, the part of one at the end of a full
			// queue) builds no tile form and no schedule. A chain
			// measured faster untiled looks up nothing more.
			if auto.seen++; auto.seen == 1 || auto.trial.decided && auto.trial.way == 0 {
				return p.runUntiled(r, k, stepsTo(weighed-1), n, auto, err)
			}
		}
	}
	// A loop whose tile form is being built in the background
	// (tileProgram) ends the run; the forms of the loops after it are
	// still asked for, to be built too.
	pending := false
	for j, l := range c.Loops {
		p, perr := r.tileProgram(b, l)
		if copies := countShape(c.Loops[:j], l); p != nil && perr == nil && copies > 0 {
			p, perr = r.X.TileProgramCopy(b, l, copies)
		}
		if perr != nil || p != nil && slices.Contains(c.Programs, p) {
			// A loop whose tile form does not build runs alone.
			clear(c.Loops[j:])
			c.Loops = c.Loops[:j]
			break
		}
		if pending = pending || p == nil; !pending {
			c.Programs = append(c.Programs, p)
		}
	}
	if len(c.Programs) < len(c.Loops) {
		clear(c.Loops[len(c.Programs):])
		c.Loops = c.Loops[:len(c.Programs)]
	}
	count := len(c.Loops)
	if count < 2 || r.X.Dropped() != dropped {
		// Too short, or building a program dropped one found before
		// (a full program cache): the loops run one by one.
		return 0
	}
	failed := 0 // the loops checked; on a failure, the index of the loop that failed
	var ferr error
	for j, l := range c.Loops {
		if ferr = r.checkPartitioned(l); ferr != nil {
			break
		}
		failed = j + 1
	}
	way := -1 // the way of a measured choice (tileTrial) this run goes
	if measured {
		if count < weighed {
			return 0 // tile forms still building: not the chain measured
		}
		if way = auto.trial.next(); way == 0 {
			return p.runUntiled(r, k, stepsTo(count-1), n, auto, err)
		}
		size = auto.sizes[way-1]
	}
	var ts *tiledSchedule
	if ferr == nil {
		// A schedule the library computes in the background (a size
		// it chose, on one thread, in one process) leaves the loops to
		// run as usual until it is done: during a trial, timed as a run
		// untiled; else one by one from step k (which a shorter
		// chain may start with).
		soon := threads == 1 && h == nil && !r.atOnce(!r.tileSizeChosen())
		if ts = p.schedule(c.Loops, size, threads > 1, h != nil, soon); ts == nil {
			if way > 0 {
				return p.runUntiled(r, k, stepsTo(count-1), n, auto, err)
			}
			return 0
		}
	}
	if ferr == nil {
		p.keepAssigned(assigned, steps[count-1])
		if !p.assignInRun(assigned, steps[count-1]) {
			p.putBackAssigned(assigned, steps[count-1])
			return 0 // the loops one by one: the failing assignment reports in its place
		}
	}
	for _, l := range c.Loops[:failed] {
		MarkLooped(l)
	}
	if ferr == nil {
		c.Schedule = ts.s
		if r.X.Timing != nil {
			counts := p.counted(c.Loops, h != nil)
			c.Bytes, c.Moved = counts.bytes, counts.moved
		}
		c.Threads = threads
		if h != nil {
			if p.tiling.agree == nil {
				p.tiling.agree = p.tiledAgree // made once: a repeated chain allocates nothing
			}
			p.tiling.halo, c.Agree = h, p.tiling.agree
			p.tiling.distributed++
		}
		var start time.Time
		if way > 0 && !auto.trial.decided {
			start = time.Now()
		}
		dead := p.deadReductions(steps[:count], assigned)
		kernels, sets := ts.crashNames(c.Loops)
		p.beginCrashNames(b, kernels, sets) // name the loops if a kernel kills the process
		failed, ferr = r.X.RunTiles(b, c)
		p.endCrashReport()
		for _, d := range dead {
			d.l.Args[d.i].Data = d.s
		}
		clear(dead)
		if ferr != nil && exec.NothingRan(ferr) && h == nil {
			// No loop of the run ran (a program's binding, or the first
			// launch, failed): they run one by one, so that the loops
			// before the one that fails alone run, and the error names
			// it, as untiled; the assignments made before the tiles are
			// undone, to be made in their places (or dropped after the
			// failing loop). Under MPI the ranks must take the same
			// steps.
			p.putBackAssigned(assigned, steps[count-1])
			return 0
		}
		if ferr != nil {
			ferr = p.Fatal(p.api.Internal(ferr))
		} else if !start.IsZero() {
			auto.record(r, c.Loops[0], way, time.Since(start))
		}
	}
	if ferr != nil {
		s := &q.steps[steps[failed]]
		l := c.Loops[failed]
		*err = p.chainError(l.Kernel.Name, l.SetName(), s.end-1, n, ferr)
	}
	return stepsTo(count - 1)
}

// endsPeriod reports whether loop l, at step j, ends a tiled run of
// loops: the loops from it on repeat the run's shapes in order (a
// repeated sequence's period is over), or two of them have its shape
// already (a first loop seen once, such as a first iteration's, would
// otherwise let the run take in every iteration recorded).
func (q *chainQueue) endsPeriod(j int, loops []*core.Loop, l *core.Loop) bool {
	if len(loops) == 0 {
		return false
	}
	if countShape(loops, l) >= 2 {
		return true
	}
	if loops[0].Sig != l.Sig || l.Sig == nil {
		return false
	}
	i := 0
	for ; j < len(q.steps) && i < len(loops); j++ {
		if m, _ := q.loop(&q.steps[j]); m != nil {
			if m.Sig != loops[i].Sig {
				return false
			}
			i++
		}
	}
	return true
}

// otherConsts reports whether loop l binds a constant other than one of
// the same name that a loop of loops binds (a Const removed and declared
// again between them): a tiled run copies each loop's constants into its
// program's library before any tile runs, and the programs of loops with
// one generated source share a library, whose constant would then hold
// the last loop's value for all of them.
func otherConsts(loops []*core.Loop, l *core.Loop) bool {
	for _, c := range l.Consts {
		for _, m := range loops {
			for _, d := range m.Consts {
				if d.Name == c.Name && d != c {
					return true
				}
			}
		}
	}
	return false
}

// countShape returns how many of loops have l's shape (its signature):
// the copy of its program l runs in a tiled run (TileProgramCopy).
func countShape(loops []*core.Loop, l *core.Loop) int {
	n := 0
	for _, m := range loops {
		if m.Sig == l.Sig && l.Sig != nil {
			n++
		}
	}
	return n
}

// assignInRun makes the Global assignments of the tiled run (at steps
// assigned) before its last loop's step, last, before the run's tiles,
// and reports whether they were all made. Where one fails the run's steps run one by
// one instead: those made early are made again in their places, which
// gives the same values, as no loop before them in the run reads their
// Globals (globalsAssign).
func (p *Process) assignInRun(assigned []int, last int) bool {
	q := &p.queue
	for _, j := range assigned {
		if j > last {
			break
		}
		if q.slots[q.steps[j].i].assign() != nil {
			return false
		}
	}
	return true
}

// keepAssigned keeps the values the Globals assigned in a tiled run (at
// steps assigned, to last) have before assignInRun makes the assignments
// (tiling.before, reused), for putBackAssigned.
func (p *Process) keepAssigned(assigned []int, last int) {
	q := &p.queue
	b := p.tiling.before[:0]
	for _, j := range assigned {
		if j > last {
			break
		}
		e := q.slots[q.steps[j].i]
		if e.set.HostAccess(false) != nil {
			b = b[:0]
			break // nothing to put back: the run's steps fail alike one by one
		}
		b = append(b, unsafe.Slice((*byte)(e.set.Host), e.size)...)
	}
	p.tiling.before = b
}

// putBackAssigned gives the Globals assigned in a tiled run the values
// keepAssigned kept, in the reverse order of the assignments (a Global
// assigned twice gets its first value).
func (p *Process) putBackAssigned(assigned []int, last int) {
	q := &p.queue
	b := p.tiling.before
	n := 0
	for _, j := range assigned {
		if j > last {
			break
		}
		n += q.slots[q.steps[j].i].size
	}
	if n != len(b) {
		return // not kept
	}
	for k := len(assigned) - 1; k >= 0; k-- {
		j := assigned[k]
		if j > last {
			continue
		}
		e := q.slots[q.steps[j].i]
		n -= e.size
		copy(unsafe.Slice((*byte)(e.set.Host), e.size), b[n:n+e.size])
	}
}

// deadReductions binds to a scratch Global (scratchGlobal) each Global
// reduction of the loops of the tiled run (at steps) that an assignment
// to its Global later in the run (at steps assigned) replaces, and
// returns them, to be put back after the run (tiling.dead, reused).
func (p *Process) deadReductions(steps, assigned []int) []deadReduction {
	q := &p.queue
	dead := p.tiling.dead[:0]
	if len(assigned) == 0 {
		return dead
	}
	last := steps[len(steps)-1]
	for i, j := range steps {
		l := p.tiling.chain.Loops[i]
		for a := range l.Args {
			arg := &l.Args[a]
			if arg.Kind != core.ArgGlobal || arg.Off || !arg.IsReduction() {
				continue
			}
			for _, t := range assigned {
				if t > j && t < last && q.slots[q.steps[t].i].set == arg.Data {
					dead = append(dead, deadReduction{l, a, arg.Data})
					arg.Data = p.scratchGlobal(arg.Data)
					break
				}
			}
		}
	}
	p.tiling.dead = dead
	return dead
}

// runUntiled runs the count steps from k (of n recorded entries) one by
// one, as they would run without tiles, where the measured choice auto
// (tileTrial) has them do so, and returns how many ran; it times them
// while the choice is not made, from the chain's second run. The failure
// of one of them is stored in *err as a *ChainError. Caller holds the
// lock.
func (p *Process) runUntiled(r *Runtime, k, count, n int, auto *autoChoice, err *error) int {
	q := &p.queue
	var start time.Time
	if auto.seen > 1 && !auto.trial.decided {
		start = time.Now()
	}
	l0, _ := q.loop(&q.steps[k])
	for j := k; j < k+count; j++ {
		if *err = p.runStep(&q.steps[j], n); *err != nil {
			return j - k + 1
		}
	}
	if !start.IsZero() {
		auto.record(r, l0, 0, time.Since(start))
	}
	return count
}

// pendingSchedule is a schedule computed in the background.
type pendingSchedule struct {
	job exec.Job
	s   *tile.Schedule // set by the job
}

// schedule returns the tile schedule of loops, with a boundary under MPI
// (distributed), computing it only for a chain not seen before. With
// soon, a new chain's schedule is computed in the background
// (exec.StartJob) and schedule returns nil until it is done: the loops
// then run as usual, which only a sequential schedule may do, since its
// tiles give their results bit for bit. No schedule starts while builds
// are pending in the background: the chains of recorded loops change as
// fused programs and tile forms arrive, and a chain seen only then would
// be weighed for nothing.
func (p *Process) schedule(loops []*core.Loop, size int, parallel, distributed, soon bool) *tiledSchedule {
	key := chainKey(p.tiling.key[:0], loops, size, parallel, distributed)
	p.tiling.key = key
	if ts, ok := p.tiling.byKey[string(key)]; ok {
		return ts
	}
	var s *tile.Schedule
	if soon {
		ps, ok := p.tiling.pending[string(key)]
		switch {
		case ok && !ps.job.Done():
			return nil
		case ok:
			delete(p.tiling.pending, string(key))
			s = ps.s
		case exec.PendingBuilds() > 0:
			return nil
		default:
			if len(p.tiling.pending) >= maxTiledChains || p.tiling.pending == nil {
				p.tiling.pending = map[string]*pendingSchedule{}
			}
			// The chain is described here (it reads the loops), and
			// only the inspector, which reads the description and
			// the map tables (fixed once a loop used them), runs on.
			ch := describeChain(loops, distributed)
			ps := &pendingSchedule{}
			ps.job = exec.StartJob(func() error {
				s := tile.Build(ch, size, parallel)
				s.Elems, s.Offsets = nil, nil // as kept below
				ps.s = s
				return nil
			})
			p.tiling.pending[string(key)] = ps
			return nil
		}
	}
	if len(p.tiling.byKey) >= maxTiledChains {
		for _, ts := range p.tiling.byKey {
			ts.pin.Unpin()
		}
		clear(p.tiling.byKey)
	}
	if p.tiling.byKey == nil {
		p.tiling.byKey = map[string]*tiledSchedule{}
	}
	if s == nil {
		s = tile.Build(describeChain(loops, distributed), size, parallel)
	}
	ts := &tiledSchedule{s: s}
	// The runs are what the tile forms read: the element lists would
	// only double the memory kept (14 MB per chain on Airfoil's mesh).
	ts.s.Elems, ts.s.Offsets = nil, nil
	for j := range ts.s.Runs {
		if len(ts.s.Runs[j]) > 0 {
			ts.pin.Pin(&ts.s.Runs[j][0])
		}
		ts.pin.Pin(&ts.s.RunOffsets[j][0])
	}
	ts.pin.Pin(&ts.s.Colours[0])
	p.tiling.byKey[string(key)] = ts
	return ts
}

// counted returns the bytes loops move one by one and their shares of
// the bytes the chain moves in tiles, which only the timing report reads:
// counting them reaches every element of every loop, so a chain counts
// them the first time a timed run asks, once for every tile size.
func (p *Process) counted(loops []*core.Loop, distributed bool) *chainCounts {
	key := countsKey(p.tiling.key[:0], loops, distributed)
	p.tiling.key = key
	if cc, ok := p.tiling.counts[string(key)]; ok {
		return cc
	}
	if len(p.tiling.counts) >= maxTiledChains || p.tiling.counts == nil {
		p.tiling.counts = map[string]*chainCounts{}
	}
	cc := &chainCounts{}
	sum := 0.0
	for _, l := range loops {
		cc.bytes = append(cc.bytes, exec.LoopBytes(l))
		sum += cc.bytes[len(cc.bytes)-1]
	}
	chain := exec.ChainBytes(loops)
	for _, b := range cc.bytes {
		share := 1 / float64(len(loops))
		if sum > 0 {
			share = b / sum
		}
		cc.moved = append(cc.moved, chain*share)
	}
	p.tiling.counts[string(key)] = cc
	return cc
}

// chainKey appends to buf the key of a chain of loops tiled with size
// seed elements per tile, on threads (parallel), under MPI (distributed):
// the loops' sets, element counts, whether each must run in order
// (inOrder) and Dat arguments (their data, maps and access): all that
// describeChain gives package tile, which decides the schedule (not the
// Globals' data: a chain passing a fresh Global each time keeps its
// schedule).
func chainKey(buf []byte, loops []*core.Loop, size int, parallel, distributed bool) []byte {
	key := binary.AppendUvarint(buf, uint64(size))
	key = append(key, boolByte(parallel), boolByte(distributed))
	for _, l := range loops {
		key = appendSetKey(key, l, distributed)
		key = append(key, boolByte(inOrder(l)))
		key = binary.AppendUvarint(key, uint64(len(l.Args)))
		for i := range l.Args {
			a := &l.Args[i]
			if a.Off || a.Kind == core.ArgGlobal {
				key = append(key, 0) // no ArgKind is 0
				continue
			}
			key = append(key, byte(a.Kind), byte(a.Access))
			key = binary.AppendUvarint(key, a.Data.ID)
			if a.Map != nil {
				key = binary.AppendUvarint(key, a.Map.ID)
				key = binary.AppendUvarint(key, uint64(a.Idx))
			}
		}
	}
	return key
}

// countsKey appends to buf the key of the byte counts of a chain of loops
// (counted): the loops' sets and element counts (under MPI, distributed,
// their core and owned elements too), and what the counts read of their
// arguments (exec.AppendBytesKey).
func countsKey(buf []byte, loops []*core.Loop, distributed bool) []byte {
	key := append(buf, boolByte(distributed))
	for _, l := range loops {
		key = appendSetKey(key, l, distributed)
		key = exec.AppendBytesKey(key, l)
	}
	return key
}

// appendSetKey appends to key loop l's set and element count, and under
// MPI (distributed) the set's core and owned elements.
func appendSetKey(key []byte, l *core.Loop, distributed bool) []byte {
	key = binary.AppendUvarint(key, l.Set.ID)
	key = binary.AppendUvarint(key, uint64(l.IterEnd()))
	if distributed {
		key = binary.AppendUvarint(key, uint64(l.Set.Core))
		key = binary.AppendUvarint(key, uint64(l.Set.Owned))
	}
	return key
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// describeChain describes loops for package tile: their sizes, whether
// their elements must run in order (a floating-point Global reduction),
// and, for every enabled Dat argument, its data, map and access. Under MPI
// (distributed) it also gives each loop its set's core and owned
// elements, and each Dat its late items (lateItems).
func describeChain(loops []*core.Loop, distributed bool) *tile.Chain {
	c := &tile.Chain{}
	if distributed {
		c.Late = [][]tile.Lateness{} // a boundary, even with no Dat
	}
	data := map[*core.Storage]int{}
	late := map[*core.Set][]tile.Lateness{}
	for _, l := range loops {
		tl := tile.Loop{Size: l.IterEnd(), InOrder: inOrder(l)}
		tl.Core, tl.Owned = min(l.Set.Core, tl.Size), min(l.Set.Owned, tl.Size)
		for i := range l.Args {
			a := &l.Args[i]
			if a.Off || a.Kind == core.ArgGlobal {
				continue
			}
			d, ok := data[a.Data]
			if !ok {
				d = len(c.Data)
				data[a.Data] = d
				items := a.Data.Len / max(1, a.Data.Dim)
				if a.Data.Set != nil {
					items = a.Data.Set.Total
				}
				c.Data = append(c.Data, items)
				if distributed {
					c.Late = append(c.Late, lateItems(a.Data.Set, late))
				}
			}
			ta := tile.Arg{Data: d, Write: a.Access.Modifies(), Idx: -1}
			if a.Map != nil {
				ta.Map, ta.Arity = a.Map.Table, a.Map.Arity
				if a.Kind == core.ArgIndirect {
					ta.Idx = a.Idx
				}
			}
			tl.Args = append(tl.Args, ta)
		}
		c.Loops = append(c.Loops, tl)
	}
	return c
}

// inOrder reports whether loop l's elements must run in order: it
// reduces into a floating-point Global (whose sum depends on the order of
// its terms, a minimum or maximum on signed zeros too), through an
// argument that is not off.
func inOrder(l *core.Loop) bool {
	for i := range l.Args {
		a := &l.Args[i]
		if !a.Off && a.Kind == core.ArgGlobal && a.IsReduction() && (a.Data.Type == core.Float64 || a.Data.Type == core.Float32) {
			return true
		}
	}
	return false
}

// lateItems returns the late items of a Dat on set (nil: none), kept in
// bySet: its halo copies (LateTouch), which exchanges write, and its owned
// items sent to other ranks (LateWrite), whose values exchanges read.
// Only elements beyond their set's core, late already, reach halo copies
// through a map; marking the copies keeps the boundary right without
// relying on it.
func lateItems(set *core.Set, bySet map[*core.Set][]tile.Lateness) []tile.Lateness {
	if set == nil {
		return nil
	}
	if late, ok := bySet[set]; ok {
		return late
	}
	var late []tile.Lateness
	if sh, ok := set.Halo.(*dist.SetHalo); ok {
		late = make([]tile.Lateness, set.Total)
		for k := set.Owned; k < set.Total; k++ {
			late[k] = tile.LateTouch
		}
		for _, n := range sh.Neighbours {
			for _, k := range n.Send {
				late[k] = max(late[k], tile.LateWrite)
			}
		}
	}
	bySet[set] = late
	return late
}
