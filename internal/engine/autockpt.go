package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/goop2/op2/internal/checkpoint"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/mpi"
)

// Automatic checkpoints (Config.Checkpoint), as OP2's op_checkpointing
// makes them:
//
//   - Every loop the program issues gets an index, in every runtime.
//   - Once a checkpoint is due (Config.CheckpointEvery), the loops that
//     follow are watched until the last of them are a sequence twice
//     over: the program's loops repeat with that period. For each position in the
//     period, the Dats whose first use from there on writes them whole
//     (WRITE on the loop's own set) need not be saved; the position where
//     the fewest bytes remain is chosen, and the checkpoint is written
//     when the loops reach it again (a loop that breaks the pattern
//     starts the watch over; 1000 loops after the checkpoint came due
//     without a settled repeat, it is written at once).
//   - The values of the Globals each loop reduced are logged as it runs,
//     and saved with the checkpoint with the index of the loop it was
//     written before.
//   - The host's reads of data a loop wrote (Dat.Data, Gather, a
//     matrix's values, a Solve; see HostRead) and the loops that assemble
//     a matrix are noted: the checkpoint keeps the index of the loop after
//     the last of them before it.
//   - A run that starts with the file present runs the loops before that
//     second index again (so what the host read, built from it, or a
//     matrix assembled is as it was), skips the loops from there to the
//     checkpoint's, giving the Globals they reduced their logged values
//     (so a program that tests a residual takes the same path), and
//     restores the checkpoint before running the loop at the index. A host
//     read of data a skipped loop wrote (the program took another path) is
//     refused, naming both.
//   - The checkpoint keeps a sum of the loops issued up to it (foldLoop:
//     names of kernels, sets and arguments), and the sum at each loop it
//     logged reductions of: a restart whose loops differ is refused at
//     the first of those loops or at the checkpoint's index, which would
//     name another place in its program.
//
// Only loops that run at once take part: a loop recorded by Chain or
// Lazy turns automatic checkpoints off for the rest of the run.

// The state keys of an automatic checkpoint.
const (
	autoLoopKey  = AutoKey + "loop"
	autoLogKey   = AutoKey + "reductions"
	autoRerunKey = AutoKey + "rerun"
	autoLoopsKey = AutoKey + "loops"
	autoSumsKey  = AutoKey + "sums"
)

// autoWatchMost is how many loops from the one a checkpoint came due at
// are watched for a repeat before the checkpoint is written at once, with
// every Dat.
const autoWatchMost = 1000

// autoAgreeEvery is how often, in loops, the ranks compare their clocks
// for a time-based interval (under MPI they must decide alike).
const autoAgreeEvery = 16

// autoCkpt is the process's automatic checkpointing, under the lock.
type autoCkpt struct {
	p *Process
	// rt is the runtime whose configuration started it: its Checkpoint
	// and CheckpointEvery, its constants and its logger.
	rt        *Runtime
	path      string
	everyText string        // CheckpointEvery, as configured
	every     time.Duration // or, when 0, loops
	loops     int

	n       int64     // loops issued so far: the index of the next one
	loopSum uint64    // the loops issued so far (foldLoop), from loopSumStart
	since   time.Time // the last checkpoint, or the first loop
	sinceN  int64
	off     bool

	replayTo int64 // the index to restore at; -1 when not replaying
	// logFrom is where the log of a restarted run starts (the file's
	// rerun point: the loops before it ran again, unlogged); no later
	// checkpoint may have a restart run fewer loops again.
	logFrom int64
	replay  map[int64][]byte // the reductions of the loops to skip
	// replaySum is the checkpoint's loopSum through the loop at
	// replayTo, and replayLoop that loop's name; replayChecked is false
	// for a file of an earlier GoOP2, which holds neither.
	replaySum     uint64
	replayLoop    string
	replayChecked bool
	// refused is the error of a restart whose loops were not the
	// writer's, which every loop after it returns.
	refused error
	// replaySums are, replaying, the writer's loop sums at the loops
	// whose reductions it logged (autoSumsKey): a skipped loop whose sum
	// differs is refused before its Globals get another loop's values.
	replaySums map[int64]uint64
	rerunTo    int64             // replaying: the loops before it run again
	stale      map[uint64]string // replaying: the data skipped loops wrote (by ID): the loop's kernel
	// After the restore, the dats left out of checkpoints (SetNoCheckpoint)
	// that skipped loops wrote, until a loop writes them whole.
	unrestored map[uint64]string

	// The last point the host saw what loops made: the index of the next
	// loop then, and what it did (op on data named name).
	lastObs        int64
	lastOp, lastOn string

	log []byte // every loop's reductions so far: index, length, values
	// sums is the loop sum at each loop of log: index, sum.
	sums []byte

	// The loops watched since the checkpoint came due (nil while none
	// is), with their shapes' sums (loopShape.sum), and seq, the period
	// they repeat with, their last len(seq), once found (period).
	watched   []loopShape
	watchSums []uint64
	broken    bool // a period found in them did not hold
	seq       []loopShape
	watchFrom int64 // the index of the loop the checkpoint came due at
	target    int   // position in seq to write before; -1 while watching
	pos       int   // position of the last loop in seq
	omit      map[uint64]bool

	// pending is the checkpoint written before the last target loop
	// whose deferred dats are not decided yet: each is saved or not at
	// its first use in the loops that follow, for at most left loops.
	pending *checkpoint.Session
	left    int
	touched map[*core.Storage][]byte // deferred dats the host used meanwhile: their values at the checkpoint
}

// loopShape is what the choice of a checkpoint's place sees of a loop.
// It holds no pointer to the loop's data: the loops watched (autoCkpt.seq)
// must not keep alive the dats a program drops, which a checkpoint would
// then save beside the program's own.
type loopShape struct {
	kernel uint64 // kernelIdentity
	set    uint64
	dats   []datUse
}

// datUse is a dat a loop uses: its identity (datIdentity), its bytes in
// the whole mesh, and whether every use of it in the loop writes it
// whole.
type datUse struct {
	id    uint64
	bytes int64
	whole bool
}

// datIdentity names dat s in a loopShape: its name, set, dim and type,
// not the object, so that a program declaring a scratch dat again in
// every step still repeats its loops. The dats a checkpoint defers by it
// (choose) are still decided by the loops that use them (decide).
func datIdentity(s *core.Storage) uint64 {
	sum := foldString(loopSumStart, s.Name)
	sum = foldBytes(sum, byte(s.Type))
	for _, v := range []uint64{s.Set.ID, uint64(s.Dim)} {
		sum = foldUint64(sum, v)
	}
	return sum
}

func (a loopShape) equal(b loopShape) bool {
	return a.kernel == b.kernel && a.set == b.set && slices.Equal(a.dats, b.dats)
}

// setIdentity names iteration set s in a loopShape: its ID, or for a
// subset's iteration set its parent's (marked), so that a program making
// its subsets again in every step (the cells a criterion picks) still
// repeats its loops.
func setIdentity(s *core.Set) uint64 {
	if s.SubsetOf != 0 {
		return s.SubsetOf | 1<<63
	}
	return s.ID
}

// kernelIdentity names kernel k in a loopShape: its content (Sum), so
// that a program making its kernels again in every step (op2.NewKernel
// allows it) still repeats its loops; its ID for GoOP2's own, which have
// no Sum.
func kernelIdentity(k *core.Kernel) uint64 {
	if k.Sum == ([16]byte{}) {
		return k.ID
	}
	return binary.LittleEndian.Uint64(k.Sum[:8])
}

// storageUse is a dat a loop uses and whether every use of it in the
// loop writes it whole.
type storageUse struct {
	s     *core.Storage
	whole bool
}

// usesOf returns the dats loop l uses, each once, in the order of its
// arguments.
func usesOf(l *core.Loop) []storageUse {
	var uses []storageUse
	for _, a := range l.Args {
		if a.Off || a.Data == nil || a.Data.Set == nil || a.Kind == core.ArgGlobal || a.Kind == core.ArgMat {
			continue
		}
		whole := a.Kind == core.ArgDirect && a.Access == core.Write && !a.View && l.Extruded == nil
		found := false
		for i := range uses {
			if uses[i].s == a.Data {
				uses[i].whole = uses[i].whole && whole
				found = true
			}
		}
		if !found {
			uses = append(uses, storageUse{s: a.Data, whole: whole})
		}
	}
	return uses
}

// shapeOf describes loop l.
func shapeOf(l *core.Loop) loopShape {
	sh := loopShape{kernel: kernelIdentity(l.Kernel), set: setIdentity(l.Set)}
	for _, u := range usesOf(l) {
		s := u.s
		sh.dats = append(sh.dats, datUse{id: datIdentity(s), bytes: int64(checkpoint.GlobalSize(s.Set)) * int64(s.Dim*s.Type.Size()), whole: u.whole})
	}
	return sh
}

// autoState returns the automatic checkpointing for a loop of runtime r
// (nil when it is off), starting it when r's configuration names a file.
// Once started it counts the loops of every runtime, since a restart
// replays the process's sequence of loops; the runtime that started it
// decides when it stops (its Checkpoint cleared) and how often it saves,
// and a runtime naming another file is an error.
func (p *Process) autoState(r *Runtime) (*autoCkpt, error) {
	cfg := &r.Cfg
	if a := p.auto; a != nil {
		switch {
		case a.rt == r && cfg.Checkpoint != a.path:
			// Its runtime was configured again: stop, or start afresh
			// with the new file.
			p.auto = nil
		case cfg.Checkpoint != "" && cfg.Checkpoint != a.path:
			return nil, p.api.Internal(fmt.Errorf("Config.Checkpoint = %q, but another runtime's automatic checkpoints go to %q: a process has one automatic checkpoint file", cfg.Checkpoint, a.path))
		default:
			if c := &a.rt.Cfg; a.everyText != c.CheckpointEvery {
				a.every, a.loops, _ = exec.ParseEvery(c.CheckpointEvery)
				a.everyText = c.CheckpointEvery
			}
			return a, nil
		}
	}
	if cfg.Checkpoint == "" {
		return nil, nil
	}
	every, loops, err := exec.ParseEvery(cfg.CheckpointEvery)
	if err != nil {
		return nil, p.api.Internal(fmt.Errorf("Config.CheckpointEvery = %q: %w", cfg.CheckpointEvery, err))
	}
	a := &autoCkpt{p: p, rt: r, path: cfg.Checkpoint, everyText: cfg.CheckpointEvery, every: every, loops: loops, since: time.Now(), replayTo: -1, target: -1, loopSum: loopSumStart}
	p.auto = a
	// A checkpoint from an earlier run: skip to it.
	w := p.Started()
	if w != nil && w.Size() < 2 {
		w = nil
	}
	what := fmt.Sprintf("automatic checkpoint %q", a.path)
	var state map[string][]byte
	_, statErr := os.Stat(a.path)
	if statErr == nil {
		state, err = checkpoint.State(a.path)
	}
	at := int64(-1)
	if err == nil && statErr == nil {
		if at, err = strconv.ParseInt(string(state[autoLoopKey]), 10, 64); err != nil || at < 0 {
			err = fmt.Errorf("%s holds no loop index: it was not written by an automatic checkpoint (OP2_CHECKPOINT)", a.path)
		}
	}
	if w != nil {
		err = dist.AgreeStep(w, fmt.Sprintf("%s: resume at loop %d", what, at), err)
	}
	if err != nil {
		p.auto = nil
		return nil, p.api.Internal(fmt.Errorf("%s: %w", what, err))
	}
	if at >= 0 {
		a.replayTo, a.rerunTo = at, at
		if v, ok := state[autoRerunKey]; ok {
			// Without it (a file of an earlier GoOP2) every loop runs again.
			if a.rerunTo, err = strconv.ParseInt(string(v), 10, 64); err != nil || a.rerunTo < 0 || a.rerunTo > at {
				p.auto = nil
				return nil, p.api.Internal(fmt.Errorf("%s: its index of the loops to run again, %q, is not one from 0 to %d", what, v, at))
			}
		}
		a.logFrom = a.rerunTo
		if v, ok := state[autoLoopsKey]; ok {
			// Without it (a file of an earlier GoOP2) the loops are not compared.
			sum, name, found := strings.Cut(string(v), " ")
			if a.replaySum, err = strconv.ParseUint(sum, 16, 64); err != nil || !found {
				p.auto = nil
				return nil, p.api.Internal(fmt.Errorf("%s: its record of the loops before the checkpoint, %q, is not a sum and a loop's name", what, v))
			}
			a.replayLoop, a.replayChecked = name, true
		}
		if a.replaySums, err = parseLoopSums(state[autoSumsKey]); err != nil {
			p.auto = nil
			return nil, p.api.Internal(fmt.Errorf("%s: %w", what, err))
		}
		a.stale = map[uint64]string{}
		// The log and its loop sums go on from the file's: a later
		// checkpoint holds every loop's.
		a.log, a.sums = state[autoLogKey], state[autoSumsKey]
		if a.replay, err = parseReductionLog(a.log); err != nil {
			p.auto = nil
			return nil, p.api.Internal(fmt.Errorf("%s: %w", what, err))
		}
	}
	return a, nil
}

// loopSumStart is the loop sum of no loops (FNV-1a's offset basis).
const loopSumStart uint64 = 14695981039346656037

// foldLoop returns sum with loop l folded in (FNV-1a): its kernel's name,
// the set it runs over, and each argument's kind, access, data, map, map
// index and view component. Names, not contents: a restart may change a
// kernel's body, a rank count or a partition, but must issue the same
// loops in the same order for a checkpoint's loop index to mean the same
// place.
func foldLoop(sum uint64, l *core.Loop) uint64 {
	sum = foldString(sum, l.Kernel.Name)
	sum = foldString(sum, l.SetName())
	for i := range l.Args {
		a := &l.Args[i]
		sum = foldBytes(sum, byte(a.Kind), byte(a.Access), byte(a.Idx), byte(a.Idx>>8), byte(a.Comp))
		if a.Off {
			sum = foldBytes(sum, 1)
		}
		if a.View {
			sum = foldBytes(sum, 2)
		}
		if a.Data != nil {
			sum = foldString(sum, a.Data.Name)
		}
		if a.Map != nil {
			sum = foldString(sum, a.Map.Name)
		}
	}
	return sum
}

const fnvPrime = 1099511628211

// foldString folds s's length, then its bytes: adjacent strings stay
// apart whatever bytes they hold.
func foldString(sum uint64, s string) uint64 {
	n := uint64(len(s))
	sum = foldBytes(sum, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
	for i := 0; i < len(s); i++ {
		sum = (sum ^ uint64(s[i])) * fnvPrime
	}
	return sum
}

func foldBytes(sum uint64, bs ...byte) uint64 {
	for _, b := range bs {
		sum = (sum ^ uint64(b)) * fnvPrime
	}
	return sum
}

// checkSameLoops refuses to restore the checkpoint before loop l, at
// index idx, when the loops this run issued up to l are not those the run
// that wrote it issued: the index would name another place in the
// program. Every rank decides alike.
func (a *autoCkpt) checkSameLoops(l *core.Loop, idx int64) error {
	var why string
	if a.replayChecked && a.loopSum != a.replaySum {
		why = fmt.Sprintf("both reach %s there, after different loops", a.replayLoop)
		if name := l.Name(); name != a.replayLoop {
			why = fmt.Sprintf("it was written before %s, this run issues %s there", a.replayLoop, name)
		}
	}
	return a.refuse(idx, why, true)
}

// refuse ends the restart at the loop at index idx, when why (how its
// loops differ from the writer's) is not empty, every rank alike (agree:
// they agree first): the error it returns, every later loop returns too.
func (a *autoCkpt) refuse(idx int64, why string, agree bool) error {
	var err error
	if why != "" {
		err = fmt.Errorf("automatic checkpoint %q: the loops this run issued up to loop %d are not those of the run that wrote it (%s): the program, or the input that decides its loops, changed since; remove the file to start again", a.path, idx, why)
	}
	if w := a.p.Started(); agree && w != nil && w.Size() > 1 {
		err = dist.AgreeStep(w, fmt.Sprintf("automatic checkpoint %q: the loops up to loop %d", a.path, idx), err)
	}
	if err != nil {
		a.refused = a.p.api.Internal(err)
		return a.refused
	}
	return nil
}

// parseLoopSums reads the loop sums of the logged loops: index, sum.
func parseLoopSums(b []byte) (map[int64]uint64, error) {
	if len(b)%16 != 0 {
		return nil, errors.New("the loop sums of the logged reductions are cut short")
	}
	out := make(map[int64]uint64, len(b)/16)
	for ; len(b) > 0; b = b[16:] {
		out[int64(binary.LittleEndian.Uint64(b))] = binary.LittleEndian.Uint64(b[8:])
	}
	return out, nil
}

// nextLogged splits the first entry off a log of reductions: its loop
// index, its values and the entries after it; ok is false when b is
// cut short.
func nextLogged(b []byte) (idx int64, values, rest []byte, ok bool) {
	if len(b) < 12 {
		return 0, nil, nil, false
	}
	idx, n := int64(binary.LittleEndian.Uint64(b)), int(binary.LittleEndian.Uint32(b[8:]))
	if n > len(b)-12 {
		return 0, nil, nil, false
	}
	return idx, b[12 : 12+n], b[12+n:], true
}

// dropLoggedBefore returns log (of reductions, in loop order) without the
// entries of the loops before index from.
func dropLoggedBefore(log []byte, from int64) []byte {
	b := log
	for {
		idx, _, rest, ok := nextLogged(b)
		if !ok || idx >= from {
			break // at from, or cut short (parseReductionLog says so)
		}
		b = rest
	}
	return append(log[:0:0], b...)
}

// dropSumsBefore returns sums (the logged loops' sums, in loop order)
// without those of the loops before index from.
func dropSumsBefore(sums []byte, from int64) []byte {
	b := sums
	for len(b) >= 16 && int64(binary.LittleEndian.Uint64(b)) < from {
		b = b[16:]
	}
	return append(sums[:0:0], b...)
}

// parseReductionLog reads the log of reductions.
func parseReductionLog(b []byte) (map[int64][]byte, error) {
	out := map[int64][]byte{}
	for len(b) > 0 {
		idx, values, rest, ok := nextLogged(b)
		if !ok {
			return nil, errors.New("the log of reductions is cut short")
		}
		out[idx], b = values, rest
	}
	return out, nil
}

// autoBefore is called, with the lock held, before loop l of runtime r
// runs at once. It reports whether to skip l: a loop before a restored
// checkpoint.
func (p *Process) autoBefore(r *Runtime, l *core.Loop) (skip bool, err error) {
	if r.Cfg.Checkpoint == "" && p.auto == nil || l.Kernel.HaloOnly {
		return false, nil // a halo loop runs on several ranks only: it is not counted
	}
	a, err := p.autoState(r)
	if a == nil || err != nil {
		return false, err
	}
	idx := a.n
	a.n++
	a.loopSum = foldLoop(a.loopSum, l)
	if a.refused != nil {
		return false, a.refused
	}
	if a.replayTo >= 0 {
		if sum, ok := a.replaySums[idx]; ok && idx < a.replayTo && sum != a.loopSum {
			// Every rank has the file's sums and issues the same loops:
			// they refuse alike, with no exchange (the ranks agree at
			// the checkpoint's loop).
			return false, a.refuse(idx, fmt.Sprintf("there loop %d reduced into Globals after other loops, or was another: here it is %s", idx, l.Name()), false)
		}
		if idx < a.rerunTo {
			return false, nil // the host read what it made: it runs again
		}
		if idx < a.replayTo {
			for _, arg := range l.Args {
				if s := writtenData(arg); s != nil {
					s.LoopWritten = true
					a.stale[s.ID] = l.Kernel.Name
				}
			}
			return true, a.setReductions(l, a.replay[idx])
		}
		if err := a.checkSameLoops(l, idx); err != nil {
			return false, err
		}
		runtime.GC()
		if err := a.rt.restoreAuto(a.path); err != nil {
			return false, err
		}
		for _, d := range p.LiveData() {
			s := d.Storage()
			if k, ok := a.stale[s.ID]; ok && omitted(d) {
				if a.unrestored == nil {
					a.unrestored = map[uint64]string{}
				}
				a.unrestored[s.ID] = k
			}
		}
		a.replayTo, a.replay, a.stale = -1, nil, nil
		a.since, a.sinceN = time.Now(), idx
		a.report(slog.LevelInfo, "op2: restored the automatic checkpoint", slog.String("file", a.path), slog.Int64("loop", idx),
			slog.Int64("loops_run_again", a.rerunTo), slog.Int64("loops_skipped", idx-a.rerunTo))
		if len(a.unrestored) > 0 {
			return false, a.checkUnrestored(l) // the loop at the checkpoint reads them too
		}
		return false, nil
	}
	if len(a.unrestored) > 0 {
		if err := a.checkUnrestored(l); err != nil {
			return false, err
		}
	}
	if a.pending != nil {
		if err := a.decide(l); err != nil {
			return false, err
		}
	}
	if a.off {
		return false, nil
	}
	if a.watched == nil {
		if !a.due(p, idx) {
			return false, nil
		}
		a.watchFrom = idx
	}
	sh := shapeOf(l)
	a.watched = append(a.watched, sh)
	a.watchSums = append(a.watchSums, sh.sum())
	if a.target >= 0 {
		a.pos = (a.pos + 1) % len(a.seq)
		if !sh.equal(a.seq[a.pos]) {
			a.seq, a.target, a.broken = nil, -1, true // the pattern changed: look again
		}
	}
	if a.target < 0 {
		n := a.period()
		if n == 0 {
			if idx-a.watchFrom >= autoWatchMost && a.pending == nil {
				return false, a.save(l, idx, nil) // the loops do not repeat
			}
			return false, nil
		}
		// The loops repeat with period n: the n watched before this
		// loop, which is at 0 (the first of them again).
		m := len(a.watched)
		a.seq = slices.Clip(a.watched[m-1-n : m-1])
		a.target, a.omit = a.choose()
		a.pos = 0
	}
	if a.pos == a.target && a.pending == nil {
		if err := a.save(l, idx, a.omit); err != nil {
			return false, err
		}
		if a.pending != nil {
			return false, a.decide(l) // the loop at the checkpoint is the first to look at
		}
	}
	return false, nil
}

// decide looks at loop l, about to run after the pending checkpoint:
// each deferred dat it uses is saved now (its values are still those of
// the checkpoint), unless l writes it whole without reading it, which
// makes its values unneeded. The checkpoint is finished when no dat is
// left to decide or after a period of loops (the rest are saved).
func (a *autoCkpt) decide(l *core.Loop) error {
	cs := a.pending
	if err := a.saveTouched(); err != nil {
		a.pending, a.touched = nil, nil
		return cs.Finish(err)
	}
	for _, d := range usesOf(l) {
		if _, ok := cs.Deferred[d.s]; ok {
			if err := cs.Resolve(d.s, !d.whole); err != nil {
				a.pending = nil
				return cs.Finish(err)
			}
		}
	}
	a.left--
	if len(cs.Deferred) > 0 && a.left > 0 {
		return nil
	}
	a.pending = nil
	return cs.Finish(nil)
}

// due reports whether a checkpoint is due before loop idx; every rank
// decides alike.
func (a *autoCkpt) due(p *Process, idx int64) bool {
	if a.every == 0 {
		return idx-a.sinceN >= int64(a.loops)
	}
	late := time.Since(a.since) >= a.every
	w := p.Started()
	if w == nil || w.Size() < 2 {
		return late
	}
	if idx%autoAgreeEvery != 0 {
		return false
	}
	v := []int64{0}
	if late {
		v[0] = 1
	}
	if err := w.AllreduceInt64(v, mpi.Max); err != nil {
		p.Fatal(err)
		return false
	}
	return v[0] == 1
}

// autoPeriodSeen is the fewest loops watched in which a period must
// repeat (besides twice at least) once a first guess failed, or
// CheckpointEvery's loops if fewer: fewer would take A A of A A B C for a
// period of one loop.
const autoPeriodSeen = 16

// period returns the period the watched loops repeat with, or 0 when
// none shows yet. The first guess is the distance to the first watched
// loop's next appearance. Else, and once a guess failed (broken), it is
// the least n such that the last max(2n, autoPeriodSeen) loops watched
// (fewer when checkpoints come every fewer loops) repeat the last n: so
// a watch that begins at a loop run once finds the period, and guessing again
// from the loop that broke the pattern never settled when that loop was
// one the period holds twice, as the second A of A A B C, and the
// checkpoint waited for autoWatchMost loops, saving every dat. A period
// shorter than the program's that repeats as often (an inner loop of the
// step) gives a checkpoint as often, which may save dats the whole step
// would have left out.
func (a *autoCkpt) period() int {
	s, w := a.watchSums, a.watched
	m := len(s)
	if !a.broken && m > 1 && s[m-1] == s[0] && w[m-1].equal(w[0]) {
		return m - 1
	}
	// No first guess yet (the first watched loop, a loop run once, may
	// never come again), or one failed.
	least := autoPeriodSeen
	if a.every == 0 {
		least = min(least, a.loops)
	}
	for n := 1; 2*n <= m; n++ {
		seen := max(2*n, least)
		if seen > m || s[m-1] != s[m-1-n] || !slices.Equal(s[m-seen:m-n], s[m-seen+n:]) {
			continue
		}
		same := true
		for i := m - seen + n; i < m && same; i++ {
			same = w[i].equal(w[i-n])
		}
		if same {
			return n
		}
	}
	return 0
}

// sum is a hash of the shape, equal for equal shapes.
func (a loopShape) sum() uint64 {
	h := loopSumStart
	for _, v := range []uint64{a.kernel, a.set, uint64(len(a.dats))} {
		h = foldUint64(h, v)
	}
	for _, d := range a.dats {
		h = foldUint64(foldUint64(h, d.id), uint64(d.bytes))
		if d.whole {
			h = foldBytes(h, 1)
		}
	}
	return h
}

// foldUint64 folds v's eight bytes into sum (foldBytes).
func foldUint64(sum, v uint64) uint64 {
	return foldBytes(sum, byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56))
}

// choose returns the position in the period where the fewest bytes of
// Dats must be saved, and the Dats whose values the checkpoint defers to
// the loops after it (decide): every Dat a loop of the period writes
// whole, which those loops show to be needed or not, so that a period
// guessed wrong (a shorter pattern inside the program's step) chooses the
// place but not what is saved.
func (a *autoCkpt) choose() (int, map[uint64]bool) {
	best, bestSaved := 0, int64(-1)
	p := len(a.seq)
	later := map[uint64]bool{}
	for i := range p {
		first := map[uint64]bool{} // dat ID: whether its first use writes it whole
		saved := int64(0)
		for k := range p {
			for _, d := range a.seq[(i+k)%p].dats {
				if d.whole {
					later[d.id] = true
				}
				if _, seen := first[d.id]; seen {
					continue
				}
				first[d.id] = d.whole
				if d.whole {
					saved += d.bytes
				}
			}
		}
		if saved > bestSaved {
			best, bestSaved = i, saved
		}
	}
	return best, later
}

// save begins the checkpoint before loop l, at index idx. The dats of
// later, which loops of the period write whole, are decided by the loops
// that follow (decide); the others are written now.
func (a *autoCkpt) save(l *core.Loop, idx int64, later map[uint64]bool) error {
	runtime.GC()
	rerun := []int64{a.lastObs}
	if w := a.p.Started(); w != nil && w.Size() > 1 {
		// Ranks that read data on the host alone: every rank runs the
		// loops again as far as the last of them.
		if err := w.AllreduceInt64(rerun, mpi.Max); err != nil {
			return err
		}
	}
	// A restarted run's log starts where its file's reruns ended: a
	// restart of this checkpoint runs those loops again too (a rank
	// whose host read set a later point may be gone: another rank count).
	rerun[0] = max(rerun[0], a.logFrom)
	// A restart runs the loops before rerun again, computing their
	// reductions: their log entries and sums are needed no more (the
	// checkpoint's loop sum still covers them), and a long run's log
	// would otherwise grow with every loop.
	a.log, a.sums = dropLoggedBefore(a.log, rerun[0]), dropSumsBefore(a.sums, rerun[0])
	state := map[string][]byte{autoLoopKey: []byte(strconv.FormatInt(idx, 10)), autoLogKey: a.log,
		autoRerunKey: []byte(strconv.FormatInt(rerun[0], 10)),
		autoLoopsKey: fmt.Appendf(nil, "%016x %s", a.loopSum, l.Name()), autoSumsKey: a.sums}
	var deferred func(*core.Storage) bool
	if len(later) > 0 {
		deferred = func(s *core.Storage) bool { return later[datIdentity(s)] }
	}
	start := time.Now()
	cs, err := checkpoint.Begin(a.rt.program(), a.path, state, deferred)
	// Written or not, the next checkpoint comes after another interval:
	// a file that cannot be written fails this loop, not every loop after
	// it (each retrying).
	a.left = max(len(a.seq), 1)
	a.seq, a.target, a.omit = nil, -1, nil
	a.watched, a.watchSums, a.broken = nil, nil, false
	a.since, a.sinceN = time.Now(), idx
	if err != nil {
		return err
	}
	attrs := []slog.Attr{slog.String("file", a.path), slog.Int64("loop", idx),
		slog.Int("dats_decided_later", len(cs.Deferred)), slog.Float64("seconds", time.Since(start).Seconds()),
		slog.Int64("restart_runs_loops", rerun[0])}
	if a.lastOp != "" && a.lastObs == rerun[0] {
		attrs = append(attrs, slog.String("because", fmt.Sprintf("%s of %q before loop %d", a.lastOp, a.lastOn, a.lastObs)))
	}
	a.report(slog.LevelInfo, "op2: automatic checkpoint", attrs...)
	if len(cs.Deferred) == 0 {
		return cs.Finish(nil)
	}
	a.pending = cs
	return nil
}

// autoAfter logs the Globals loop l reduced, after it ran at once.
func (p *Process) autoAfter(l *core.Loop) {
	a := p.auto
	if a == nil || a.off || l.Kernel.HaloOnly {
		return
	}
	for _, arg := range l.Args {
		if s := writtenData(arg); s != nil {
			s.LoopWritten = true
			if arg.Kind == core.ArgMat {
				// A matrix is not saved: a restart assembles it again.
				a.lastObs, a.lastOp, a.lastOn = a.n, "loop "+l.Kernel.Name+" assembling", s.Name
			}
		}
	}
	if a.replayTo >= 0 {
		return
	}
	start := len(a.log)
	for _, arg := range l.Args {
		if arg.Kind != core.ArgGlobal || arg.Access == core.Read || arg.Off {
			continue
		}
		if start == len(a.log) {
			a.log = binary.LittleEndian.AppendUint64(a.log, uint64(a.n-1))
			a.log = binary.LittleEndian.AppendUint32(a.log, 0)
		}
		s := arg.Data
		if err := s.HostAccess(false); err != nil {
			a.log = a.log[:start]
			a.turnOff(fmt.Sprintf("the values of global %q cannot be read: %v", s.Name, err))
			return
		}
		a.log = append(a.log, unsafe.Slice((*byte)(s.Host), s.Dim*s.Type.Size())...)
	}
	if len(a.log) > start {
		binary.LittleEndian.PutUint32(a.log[start+8:], uint32(len(a.log)-start-12))
		a.sums = binary.LittleEndian.AppendUint64(a.sums, uint64(a.n-1))
		a.sums = binary.LittleEndian.AppendUint64(a.sums, a.loopSum)
	}
}

// setReductions gives the Globals a skipped loop reduced the values it
// gave them (v, from the log).
func (a *autoCkpt) setReductions(l *core.Loop, v []byte) error {
	for _, arg := range l.Args {
		if arg.Kind != core.ArgGlobal || arg.Access == core.Read || arg.Off {
			continue
		}
		s := arg.Data
		n := s.Dim * s.Type.Size()
		if len(v) < n {
			return a.p.api.Internal(fmt.Errorf("automatic checkpoint %q: the log holds no values of global %q for loop %d: the program issues other loops than the run that wrote it", a.path, s.Name, a.n-1))
		}
		if err := s.HostAccess(true); err != nil {
			return err
		}
		copy(unsafe.Slice((*byte)(s.Host), n), v[:n])
		v = v[n:]
	}
	return nil
}

// AutoRecorded counts a loop of kernel k of r recorded by Chain or Lazy,
// which turns the automatic checkpoints off (a halo loop of GoOP2's own
// is not counted).
func (r *Runtime) AutoRecorded(k *core.Kernel) error {
	p := r.Proc
	if r.Cfg.Checkpoint == "" && p.auto == nil || k.HaloOnly {
		return nil // a halo loop runs on several ranks only: it is not counted
	}
	a, err := p.autoState(r)
	if a == nil || err != nil {
		return err
	}
	a.n++
	if a.refused != nil {
		return a.refused
	}
	if a.replayTo >= 0 {
		return p.api.Internal(fmt.Errorf("automatic checkpoint %q: a loop recorded (Chain, Lazy) before the loop it was written at: automatic checkpoints need loops that run at once", a.path))
	}
	if cs := a.pending; cs != nil {
		// The checkpoint begun before this loop is finished now, while
		// the dats it deferred still hold its values: the recorded loop
		// has not run, and what comes after it (the loops it runs with,
		// a write through Data) is no longer watched. Every rank
		// records the loop alike.
		err := a.saveTouched()
		a.pending, a.touched = nil, nil
		if err = cs.Finish(err); err != nil {
			return err
		}
	}
	a.turnOff("a loop was recorded (Chain, Lazy): automatic checkpoints need loops that run at once")
	return nil
}

func (a *autoCkpt) turnOff(why string) {
	if !a.off {
		a.off = true
		a.report(slog.LevelWarn, "op2: automatic checkpoints off", slog.String("file", a.path), slog.String("why", why))
	}
}

// report logs an event of the automatic checkpoints on the runtime that
// started them (Runtime.Report).
func (a *autoCkpt) report(level slog.Level, msg string, attrs ...slog.Attr) {
	a.rt.Report(level, msg, attrs...)
}

// writtenData returns the Dat or matrix argument a changes, or nil.
func writtenData(a core.Arg) *core.Storage {
	if a.Off || a.Data == nil || a.Access == core.Read || a.Kind == core.ArgGlobal {
		return nil
	}
	return a.Data
}

// HostRead is called, with the lock held, by every function of the API
// that gives the host the values of Dats or matrices (ss), or computes
// from them on the host, before it does: op says which (for the log and
// errors). Globals are skipped: their values are in the log of
// reductions. It notes the point for the automatic checkpoints (a
// restart runs the loops before it again), keeps the checkpoint's values
// of a dat not saved yet, and, replaying a checkpoint, refuses data a
// skipped loop wrote: this run took another path than the one that wrote
// the checkpoint.
func (p *Process) HostRead(op string, ss ...*core.Storage) error {
	a := p.auto
	if a == nil || a.off {
		return nil
	}
	for _, s := range ss {
		if s == nil || (s.Set == nil && s.Matrix == "") {
			continue
		}
		if k, ok := a.unrestored[s.ID]; ok {
			return p.api.Internal(fmt.Errorf("automatic checkpoint %q: %s reads %s, which the checkpoint left out (SetNoCheckpoint) and loop %q, skipped on this restart, wrote: its values were not restored", a.path, op, s.Describe(), k))
		}
		if a.replayTo >= 0 {
			if k, ok := a.stale[s.ID]; ok {
				return p.api.Internal(fmt.Errorf("automatic checkpoint %q: %s reads %s before loop %d, which the run that wrote the checkpoint did not (loop %q, skipped on this restart, wrote it): this run takes another path, and cannot resume from the file; remove it to start again",
					a.path, op, s.Describe(), a.n, k))
			}
		}
		if err := a.touch(s); err != nil {
			return err
		}
		if s.LoopWritten {
			a.lastObs, a.lastOp, a.lastOn = a.n, op, s.Name
		}
	}
	return nil
}

// HostReadAll is HostRead of every live Dat.
func (p *Process) HostReadAll(op string) error {
	if p.auto == nil || p.auto.off {
		return nil
	}
	for _, d := range p.LiveData() {
		if err := p.HostRead(op, d.Storage()); err != nil {
			return err
		}
	}
	return nil
}

// HostWrote is called, with the lock held, by the functions of the API
// that overwrite Dats (ss) on the host without reading them: the
// checkpoint's values of a dat not saved yet are kept.
func (p *Process) HostWrote(ss ...*core.Storage) error {
	a := p.auto
	if a == nil || a.off {
		return nil
	}
	for _, s := range ss {
		if err := a.touch(s); err != nil {
			return err
		}
	}
	return nil
}

// HostProduct is called, with the lock held, before the host computes
// y from the Dats or matrices in (a matrix product): it reports whether
// to skip it, when replaying a checkpoint a skipped loop wrote one of in
// (y is then restored with the checkpoint, like the dats skipped loops
// write). y counts as written by a loop.
func (p *Process) HostProduct(y *core.Storage, in ...*core.Storage) (skip bool, err error) {
	a := p.auto
	if a == nil || a.off {
		return false, nil
	}
	for _, s := range append(in, y) {
		if err := a.touch(s); err != nil {
			return false, err
		}
	}
	y.LoopWritten = true
	if a.replayTo >= 0 {
		for _, s := range in {
			if k, ok := a.stale[s.ID]; ok {
				a.stale[y.ID] = k
				return true, nil
			}
		}
	}
	return false, nil
}

// touch keeps the values of s, a dat the pending checkpoint has not
// saved yet, before the host reads or changes them: they are saved at the
// next loop (decide), when the ranks agree on them.
func (a *autoCkpt) touch(s *core.Storage) error {
	cs := a.pending
	if cs == nil {
		return nil
	}
	if _, deferred := cs.Deferred[s]; !deferred {
		return nil
	}
	if _, kept := a.touched[s]; kept {
		return nil
	}
	if err := s.HostAccess(false); err != nil {
		return err
	}
	if a.touched == nil {
		a.touched = map[*core.Storage][]byte{}
	}
	a.touched[s] = slices.Clone(unsafe.Slice((*byte)(s.Host), s.Bytes()))
	return nil
}

// saveTouched saves the values kept of the pending checkpoint's dats that
// the host used on any rank (each rank its own: a rank that kept none
// still holds the checkpoint's).
func (a *autoCkpt) saveTouched() error {
	cs := a.pending
	w := a.p.Started()
	several := w != nil && w.Size() > 1
	if len(a.touched) == 0 && !several {
		return nil
	}
	order := make([]*core.Storage, 0, len(cs.Deferred))
	for s := range cs.Deferred {
		order = append(order, s)
	}
	slices.SortFunc(order, func(x, y *core.Storage) int { return cs.Deferred[x] - cs.Deferred[y] })
	used := make([]int64, len(order))
	for i, s := range order {
		if _, ok := a.touched[s]; ok {
			used[i] = 1
		}
	}
	if several && len(used) > 0 {
		if err := w.AllreduceInt64(used, mpi.Max); err != nil {
			return err
		}
	}
	defer func() { a.touched = nil }()
	for i, s := range order {
		if used[i] == 0 {
			continue
		}
		kept, ok := a.touched[s]
		if !ok {
			if err := cs.Resolve(s, true); err != nil {
				return err
			}
			continue
		}
		// Saved from the values kept, the host's own put back after.
		host := unsafe.Slice((*byte)(s.Host), s.Bytes())
		now := slices.Clone(host)
		copy(host, kept)
		err := cs.Resolve(s, true)
		copy(host, now)
		if err != nil {
			return err
		}
	}
	return nil
}

// checkUnrestored refuses loop l, after the restore, when it reads a dat
// the checkpoint left out that skipped loops wrote; a loop writing such a
// dat whole gives it its values again.
func (a *autoCkpt) checkUnrestored(l *core.Loop) error {
	for _, d := range usesOf(l) {
		k, ok := a.unrestored[d.s.ID]
		if !ok {
			continue
		}
		if !d.whole {
			return a.p.api.Internal(fmt.Errorf("automatic checkpoint %q: loop %q over set %q reads %s, which the checkpoint left out (SetNoCheckpoint) and loop %q, skipped on this restart, wrote: its values were not restored (leave out only dats that loops write whole before they read them)",
				a.path, l.Kernel.Name, l.Set.Name, d.s.Describe(), k))
		}
		delete(a.unrestored, d.s.ID)
	}
	return nil
}
