package exec

import (
	"encoding/binary"
	"math/bits"
	"time"
	"unsafe"

	"github.com/goop2/op2/internal/core"
)

// Timings accumulates, per loop (kernel name, iteration set name and
// backend name), the number of calls, their times and the bytes they must
// move. An Executor whose Timing field is not nil records every loop it
// runs successfully into it; a nil field costs nothing.
//
// A Timings is not safe for concurrent use; the op2 run time serialises
// loops.
type Timings struct {
	byKey   map[timingKey]*TimingRecord
	records []*TimingRecord // in the order of their first call
	// clocked holds the calls timed on a device whose time is not read
	// yet (addClocked), in call order.
	clocked []clockedCall
	// early holds the builds of programs of loops that have not run yet
	// (addCompile).
	early map[timingKey]time.Duration
}

// clockedCall is a call timed on a device between two stamps, not read
// yet: its time goes to r.Run when it is (settle).
type clockedCall struct {
	r        *TimingRecord
	clock    DeviceClock
	from, to Stamp
}

// maxClocked is how many calls timed on a device a Timings keeps unread:
// with more, it reads them (waiting for the oldest's device work), so
// that a program that never reads its timings holds a bounded number of
// stamps.
const maxClocked = 1024

type timingKey struct{ kernel, set, backend string }

// TimingRecord is what a Timings holds for one loop.
type TimingRecord struct {
	Kernel, Set, Backend string
	Calls                int
	// Run is the time of the calls without Plan and Compile: from the
	// executor's entry to the loop's completion, halo exchanges
	// included. On a DeviceClock backend it is the device time between
	// stamps queued before and after the loop's work; another Waiter
	// backend is waited for.
	Run     time.Duration
	Plan    time.Duration // building execution plans
	Compile time.Duration // building programs (generation, compilation or cache loads)
	Bytes   float64       // the bytes all calls must move (LoopBytes)
	// Moved is the bytes the calls must move as they ran: Bytes for
	// calls run alone; for a call in a tiled chain, its share of the
	// chain's ChainBytes.
	Moved float64
	// Tuned is the tuner's setting for the last call ("owner, block
	// 1024"), "measuring ..." while it tries settings, "" without a
	// tuner.
	Tuned string

	// The last call's arguments and iteration count, and its bytes, so
	// that a repeated loop does not count again.
	shape     []argShape
	iter      int
	callBytes float64
}

type argShape struct {
	data, m, col uint64 // col: a matrix argument's column map
	idx, comp    int    // comp: a view's component + 1, 0 for a whole Dat
	access       core.Access
	role         core.ArgFacts // the argument's role (core.ArgFacts.Role)
}

// shapeOf is argument a's argShape: what LoopBytes reads of it.
func shapeOf(a *core.Arg) argShape {
	s := argShape{data: a.Data.ID, idx: a.Idx, access: a.Access, role: a.Facts().Role()}
	if a.Map != nil {
		s.m = a.Map.ID
	}
	if a.Mat != nil && a.Mat.Col != nil {
		s.col = a.Mat.Col.ID
	}
	if a.View {
		s.comp = a.Comp + 1
	}
	return s
}

// AppendBytesKey appends to buf what LoopBytes and ChainBytes read of loop
// l's arguments (each one's argShape), so that byte counts kept for a
// chain of loops are found again only for loops that move the same bytes
// (with their sets and element counts, which the caller keys).
func AppendBytesKey(buf []byte, l *core.Loop) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(l.Args)))
	for i := range l.Args {
		s := shapeOf(&l.Args[i])
		for _, v := range [...]uint64{s.data, s.m, s.col, uint64(s.idx), uint64(s.comp), uint64(s.access), uint64(s.role)} {
			buf = binary.AppendUvarint(buf, v)
		}
	}
	return buf
}

// NewTimings returns an empty Timings.
func NewTimings() *Timings { return &Timings{byKey: map[timingKey]*TimingRecord{}} }

// Records returns copies of the records, in the order of their loops'
// first calls. It first reads the times of the calls timed on a device
// (waiting for their work to finish).
func (t *Timings) Records() []TimingRecord {
	t.settle()
	out := make([]TimingRecord, len(t.records))
	for i, r := range t.records {
		out[i] = *r
		out[i].shape = nil
	}
	return out
}

// Reset drops every record (and the stamps of calls timed on a device,
// once their work has finished).
func (t *Timings) Reset() {
	t.settle()
	clear(t.byKey)
	clear(t.early)
	t.records = nil
}

// addClocked records one call of l on backend, timed on the device
// between stamps from and to of clock: its plan and compile times, its
// bytes and the tuner's setting now, its run time when it is read
// (settle).
func (t *Timings) addClocked(l *core.Loop, backend string, plan, compile time.Duration, tuned string, clock DeviceClock, from, to Stamp) {
	r := t.record(l, backend, 0, plan, compile, tuned)
	r.Moved += r.callBytes
	if len(t.clocked) >= maxClocked {
		t.settle()
	}
	t.clocked = append(t.clocked, clockedCall{r: r, clock: clock, from: from, to: to})
}

// settle reads the device times of the calls timed on a device into
// their records. A time the device cannot give (it failed) counts 0: the
// failure itself comes back from the next wait for the device.
func (t *Timings) settle() {
	for i := range t.clocked {
		c := &t.clocked[i]
		if d, err := c.clock.Between(c.from, c.to); err == nil {
			c.r.Run += d
		}
	}
	clear(t.clocked)
	t.clocked = t.clocked[:0]
}

// add records one call of l on backend: its times, its bytes and the
// tuner's setting for it.
func (t *Timings) add(l *core.Loop, backend string, run, plan, compile time.Duration, tuned string) {
	r := t.record(l, backend, run, plan, compile, tuned)
	r.Moved += r.callBytes
}

// addTiled records one call of l run in a tiled chain, whose share of the
// bytes the chain moves is moved.
func (t *Timings) addTiled(l *core.Loop, backend string, run time.Duration, moved float64) {
	r := t.record(l, backend, run, 0, 0, "tiled")
	r.Moved += moved
}

// addCompile keeps d, the build of l's program on backend before the
// loop ran (a loop recorded in lazy mode finds its program when it is
// recorded), for the loop's record: it counts in the record's compile
// time once the loop runs (record). A loop that never runs alone (it ran
// fused with others) has no record, and its build counts nowhere.
func (t *Timings) addCompile(l *core.Loop, backend string, d time.Duration) {
	k := timingKey{l.Kernel.Name, l.SetName(), backend}
	if r, ok := t.byKey[k]; ok {
		r.Compile += d
		return
	}
	if t.early == nil {
		t.early = map[timingKey]time.Duration{}
	}
	t.early[k] += d
}

// record adds one call of l on backend to its record, all but Moved, and
// returns the record.
func (t *Timings) record(l *core.Loop, backend string, run, plan, compile time.Duration, tuned string) *TimingRecord {
	k := timingKey{l.Kernel.Name, l.SetName(), backend}
	r, ok := t.byKey[k]
	if !ok {
		r = &TimingRecord{Kernel: k.kernel, Set: k.set, Backend: backend}
		t.byKey[k] = r
		t.records = append(t.records, r)
		if d, ok := t.early[k]; ok {
			r.Compile += d
			delete(t.early, k)
		}
	}
	r.Calls++
	r.Run += run
	r.Plan += plan
	r.Compile += compile
	r.Tuned = tuned
	if !r.sameShape(l) {
		r.shape = r.shape[:0]
		for i := range l.Args {
			r.shape = append(r.shape, shapeOf(&l.Args[i]))
		}
		r.iter = l.IterEnd()
		r.callBytes = LoopBytes(l)
	}
	r.Bytes += r.callBytes
	return r
}

// sameShape reports whether l has the arguments and iteration count of the
// call whose bytes r holds.
func (r *TimingRecord) sameShape(l *core.Loop) bool {
	if r.shape == nil || len(r.shape) != len(l.Args) || r.iter != l.IterEnd() {
		return false
	}
	for i := range l.Args {
		if r.shape[i] != shapeOf(&l.Args[i]) {
			return false
		}
	}
	return true
}

// LoopBytes is the number of bytes one call of l must move between memory
// and the processor, OP2's convention for its bandwidth figures:
//
//   - each Dat passed directly (however many arguments pass it): the
//     elements the loop runs over × dim × element size, once when it is
//     only read or only written, twice when it is both read and written
//     (RW, INC, or READ in one argument and WRITE in another);
//   - each Dat passed through maps: the distinct elements of its set that
//     the loop's maps reach from the elements the loop runs over (each
//     counted once, however many arguments, columns and elements refer to
//     it) × dim × element size, once or twice as for direct Dats;
//   - each Global: dim × element size, twice for a reduction;
//   - each map used: 4 bytes × arity × the elements the loop runs over.
//
// A Dat passed only through views (op2.DatView) counts the distinct
// components they pass instead of dim, each once for being read and once
// for being written (view 0 read and view 2 written: two components, not
// two read and written). A Dat on an extruded set, in a loop over an
// extruded set, counts the distinct layers the loop reaches (in each
// column's layers, a variable set's range) × one layer's values, rather
// than whole columns. Disabled optional arguments count
// nothing. Index arguments (op2.ArgIdx,
// Map.ArgIdx) are read from an int32 Dat of indices, and a loop over a
// Subset reaches its set through a map of the subset's indices: both are
// counted as the Dats and maps they are.
//
// The elements the loop runs over are l.IterEnd(): the set's owned
// elements, plus the exec halo for loops that modify data through a map
// (in a distributed run, this rank's).
func LoopBytes(l *core.Loop) float64 {
	n := l.IterEnd()
	var total float64
	for i := range l.Args {
		a := &l.Args[i]
		if a.Off {
			continue // a disabled optional argument moves nothing
		}
		facts := a.Facts()
		indirect := facts.Any(core.FactMapped)
		// Count each Dat once per kind of access (direct or through
		// maps): only at its first argument of that kind.
		first := true
		// The components read and written: views pass one each, a
		// whole Dat all of them.
		var read, written uint64
		for j := range l.Args {
			b := &l.Args[j]
			if b.Data != a.Data || b.Facts().Any(core.FactMapped) != indirect {
				continue
			}
			if j < i {
				first = false
				break
			}
			comps := ^uint64(0)
			if b.View && b.Comp < 64 {
				comps = 1 << b.Comp
			}
			switch b.Access {
			case core.Read:
				read |= comps
			case core.Write:
				written |= comps
			default: // RW, INC, MIN, MAX read and write
				read, written = read|comps, written|comps
			}
		}
		if !first {
			continue
		}
		// An extruded Dat in an extruded loop counts the layers the loop
		// reaches (extReferenced), each with its layer's values.
		extruded := a.Ext != nil && a.Data.Extruded != nil
		whole := a.Data.Dim
		if extruded {
			whole = a.Data.LayerDim()
		}
		values := func(comps uint64) int { // per element
			if comps == ^uint64(0) {
				return whole // the whole Dat (after its view, perhaps)
			}
			return min(whole, bits.OnesCount64(comps))
		}
		times := 0 // for a matrix: whether it is read, and written
		if read != 0 {
			times++
		}
		if written != 0 {
			times++
		}
		elem := float64((values(read) + values(written)) * a.Data.Type.Size())
		switch {
		case facts.Any(core.FactMat):
			// The element matrix's values, each read and written
			// (INC) or written (WRITE), and the offsets read.
			r, c := a.MatShape()
			total += float64(n) * float64(r*c*a.Data.Type.Size()*times+4*a.Map.Arity*a.Mat.Col.Arity)
		case facts.Any(core.FactGlobal):
			total += elem
		case extruded:
			total += elem * float64(extReferenced(l, i, n))
		case !indirect:
			total += elem * float64(n)
		default:
			total += elem * float64(referenced(l, i, n))
		}
	}
	// Maps, each once.
	for i := range l.Args {
		m := l.Args[i].Map
		if m == nil || l.Args[i].Facts().Any(core.FactMat) {
			continue // a matrix argument's offsets are counted with it
		}
		seen := false
		for j := 0; j < i; j++ {
			if l.Args[j].Map == m {
				seen = true
				break
			}
		}
		if !seen {
			total += float64(4 * m.Arity * n)
		}
	}
	return total
}

// ChainBytes is the number of bytes a chain of loops run in tiles must
// move between memory and the processor when each tile's data stays in
// cache from one loop to the next (package tile's aim): LoopBytes's
// convention applied to the loops as if they were one loop. Each Dat is
// counted once for the whole chain: the distinct values any loop reads,
// directly or through maps, plus the distinct values any loop writes
// (each element's dim values, or the component a view passes), × element
// size;
// each map once, for the most elements a loop runs over; Globals and
// matrix arguments as LoopBytes counts them, per loop. So a chain never
// moves more than its loops one by one (the sum of their LoopBytes). It
// is a model: the tiles' data must fit in the cache, and an element
// written before it is read still counts as read.
func ChainBytes(loops []*core.Loop) float64 {
	dats := map[*core.Storage]*datUse{}
	var order []*core.Storage
	maps := map[*core.Map]int{} // the most rows a loop reads
	var mapOrder []*core.Map
	total := 0.0
	for _, l := range loops {
		n := l.IterEnd()
		for i := range l.Args {
			a := &l.Args[i]
			if a.Off {
				continue
			}
			switch facts := a.Facts(); {
			case facts.Any(core.FactGlobal):
				times := 1
				if a.IsReduction() {
					times = 2
				}
				total += float64(a.ElemValues() * a.Data.Type.Size() * times)
				continue
			case facts.Any(core.FactMat):
				r, c := a.MatShape()
				times := 1
				if a.Access != core.Write {
					times = 2
				}
				total += float64(n) * float64(r*c*a.Data.Type.Size()*times+4*a.Map.Arity*a.Mat.Col.Arity)
				continue
			}
			d := dats[a.Data]
			if d == nil {
				dim := max(1, a.Data.Dim)
				size := a.Data.Len / dim
				if a.Data.Set != nil {
					size = a.Data.Set.Total
				}
				words := (dim + 63) / 64
				d = &datUse{read: make([]uint64, size*words), written: make([]uint64, size*words), words: words, elems: size}
				dats[a.Data] = d
				order = append(order, a.Data)
			}
			read, written := a.Access != core.Write, a.Access.Modifies()
			c0, c1 := 0, max(1, a.Data.Dim) // the components passed
			if a.View {
				c0, c1 = a.Comp, a.Comp+1
			}
			m := a.Map
			if m == nil {
				d.markDirect(min(n, d.elems), c0, c1, read, written)
				continue
			}
			if _, ok := maps[m]; !ok {
				mapOrder = append(mapOrder, m)
			}
			r := reachOf(a, n)
			d.markReach(r, c0, c1, read, written)
			maps[m] = max(maps[m], r.rows)
		}
	}
	for _, s := range order {
		total += float64(dats[s].count * s.Type.Size())
	}
	for _, m := range mapOrder {
		total += float64(4 * m.Arity * maps[m])
	}
	return total
}

// datUse is what a chain's loops read and write of one Dat, each
// component of each element (views pass one component): component c of
// element e is bit c%64 of word e*words+c/64.
type datUse struct {
	read, written []uint64
	words, elems  int
	count         int // how many bits are set in both
}

// markDirect marks components [c0, c1) of elements [0, n) read and/or
// written.
func (d *datUse) markDirect(n, c0, c1 int, read, written bool) {
	if d.words > 1 {
		for e := range n {
			d.markWide(e, c0, c1, read, written)
		}
		return
	}
	mask := bitRange(c0, c1)
	for e := range n {
		d.mark(e, mask, read, written)
	}
}

// markReach marks components [c0, c1) of the elements r reaches (those
// within the Dat) read and/or written.
func (d *datUse) markReach(r reach, c0, c1 int, read, written bool) {
	start, step := r.col, r.arity
	if r.col < 0 {
		start, step = 0, 1
	}
	if d.words > 1 {
		for k := start; k < len(r.table); k += step {
			if e := int(r.table[k]); e >= 0 && e < d.elems {
				d.markWide(e, c0, c1, read, written)
			}
		}
		return
	}
	mask := bitRange(c0, c1)
	for k := start; k < len(r.table); k += step {
		if e := int(r.table[k]); e >= 0 && e < d.elems {
			d.mark(e, mask, read, written)
		}
	}
}

// mark marks the components in mask of element e, a Dat of at most 64
// components, read and/or written.
func (d *datUse) mark(e int, mask uint64, read, written bool) {
	if read {
		d.count += setBits(&d.read[e], mask)
	}
	if written {
		d.count += setBits(&d.written[e], mask)
	}
}

// markWide marks components [c0, c1) of element e, a Dat of more than
// 64 components, read and/or written.
func (d *datUse) markWide(e, c0, c1 int, read, written bool) {
	for w := c0 / 64; w <= (c1-1)/64; w++ {
		mask := bitRange(max(c0, 64*w)-64*w, min(c1, 64*w+64)-64*w)
		if read {
			d.count += setBits(&d.read[e*d.words+w], mask)
		}
		if written {
			d.count += setBits(&d.written[e*d.words+w], mask)
		}
	}
}

// setBits sets the bits of mask in *word and returns how many were not
// set before.
func setBits(word *uint64, mask uint64) int {
	m := mask &^ *word
	*word |= m
	return bits.OnesCount64(m)
}

// bitRange returns the bits [lo, hi) of a word, 0 <= lo < hi <= 64.
func bitRange(lo, hi int) uint64 { return ^uint64(0) >> (64 - (hi - lo)) << lo }

// extReferenced counts the distinct layers of the columns of argument
// i's Dat, on an extruded set, that an extruded loop's columns [0, n)
// reach, in each column's layers (all, or its range for variable
// layers), through every argument passing that Dat the way argument i
// does (directly, or through maps).
func extReferenced(l *core.Loop, i, n int) int {
	d := l.Args[i].Data
	layers := d.Extruded.Layers
	x := l.Extruded
	var ranges []int32 // first and one past the last layer per column
	if r := x.Ranges; r != nil && r.Host != nil && r.Len >= 2*n {
		ranges = unsafe.Slice((*int32)(r.Host), r.Len)
	}
	marks := make([]uint64, (d.Set.Total*layers+63)/64)
	count := 0
	mark := func(e, layer int) {
		if e < 0 || e >= d.Set.Total || layer < 0 || layer >= layers {
			return
		}
		k := e*layers + layer
		if marks[k/64]&(1<<(k%64)) == 0 {
			marks[k/64] |= 1 << (k % 64)
			count++
		}
	}
	indirect := l.Args[i].Facts().Any(core.FactMapped)
	for j := i; j < len(l.Args); j++ {
		a := &l.Args[j]
		if a.Data != d || a.Ext == nil || a.Facts().Any(core.FactMapped) != indirect {
			continue
		}
		var r reach
		if indirect {
			r = reachOf(a, n)
		}
		for c := range n {
			lo, hi := 0, x.Layers
			if ranges != nil {
				lo, hi = int(ranges[2*c]), int(ranges[2*c+1])
			}
			if !indirect {
				for layer := lo; layer < hi; layer++ {
					mark(c, int(a.Ext.Start[0])+layer*int(a.Ext.Offset[0]))
				}
				continue
			}
			if c >= r.rows {
				continue
			}
			for col := range r.arity {
				if r.col >= 0 && col != r.col {
					continue
				}
				e := int(r.table[c*r.arity+col])
				for layer := lo; layer < hi; layer++ {
					mark(e, int(a.Ext.Start[col])+layer*int(a.Ext.Offset[col]))
				}
			}
		}
	}
	return count
}

// referenced counts the distinct elements of the set of argument i's Dat
// that the loop's elements [0, n) reach through every indirect argument
// passing that Dat.
func referenced(l *core.Loop, i, n int) int {
	d := l.Args[i].Data
	marks := make([]bool, d.Set.Total)
	count := 0
	for j := i; j < len(l.Args); j++ {
		a := &l.Args[j]
		if a.Data != d || a.Map == nil {
			continue
		}
		count += reachOf(a, n).mark(marks)
	}
	return count
}

// reach is what an indirect argument reads of its map from the loop's
// elements [0, n): the table's first rows rows, every column (col < 0:
// a vector argument) or column col.
type reach struct {
	table      []int32
	arity, col int
	rows       int
}

// reachOf returns what indirect argument a reads of its map from the
// loop's elements [0, n).
func reachOf(a *core.Arg, n int) reach {
	m := a.Map
	rows := min(n, len(m.Table)/max(m.Arity, 1))
	r := reach{table: m.Table[:rows*m.Arity], arity: m.Arity, col: a.Idx, rows: rows}
	if a.Facts().Any(core.FactAllColumns) {
		r.col = -1
	}
	return r
}

// mark sets marks[e] for every element e that r reaches (those within
// marks) and returns how many it set that were not set before.
func (r reach) mark(marks []bool) int {
	start, step := r.col, r.arity
	if r.col < 0 {
		start, step = 0, 1
	}
	count := 0
	for k := start; k < len(r.table); k += step {
		if e := r.table[k]; uint(e) < uint(len(marks)) && !marks[e] {
			marks[e] = true
			count++
		}
	}
	return count
}
