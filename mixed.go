package op2

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/engine"
)

// MixedSet is a tuple of sets (PyOP2's MixedSet), the spaces of a mixed
// problem: velocity on one set and pressure on another, say. Its blocks
// are plain Sets, partitioned, renumbered and exchanged as any other.
//
// A loop over a mixed set (ParLoop only) runs the kernel over each block
// in turn, as one loop per block: block b's loop runs over set b, a
// MixedDat passed directly (MixedDat.Arg) gives that loop its block b,
// and every other argument (Globals, index arguments) is passed to every
// block's loop as it is, so a Global reduction sums over all blocks.
// PyOP2 refuses loops over mixed sets; this one is what a program
// writes by hand for them, one loop per block.
type MixedSet struct {
	name string
	sets []*Set
}

// NewMixedSet declares the mixed set of sets, in order (block i is
// sets[i]). It needs at least one set and no nil ones; a set may appear
// in more than one block.
func NewMixedSet(sets []*Set, name string) (*MixedSet, error) {
	if len(sets) == 0 {
		return nil, fmt.Errorf("op2: mixed set %q: no sets; a mixed set has at least one block", name)
	}
	for i, s := range sets {
		if s == nil {
			return nil, fmt.Errorf("op2: mixed set %q: block %d: set is nil", name, i)
		}
	}
	return &MixedSet{name: name, sets: append([]*Set(nil), sets...)}, nil
}

// Name is the mixed set's name.
func (s *MixedSet) Name() string { return s.name }

// Len is the number of blocks.
func (s *MixedSet) Len() int { return len(s.sets) }

// Block returns block i's set.
func (s *MixedSet) Block(i int) *Set { return s.sets[i] }

// Sets returns the blocks' sets, in order (a copy).
func (s *MixedSet) Sets() []*Set { return append([]*Set(nil), s.sets...) }

// Size is the number of elements a loop over the mixed set runs the
// kernel for: the sum of the blocks' owned elements.
func (s *MixedSet) Size() int {
	lock(forNoData, "MixedSet.Size") // Partition and Renumber change the counts
	defer unlock()
	return s.owned()
}

// owned is Size, the caller holding the lock or reading for a message
// (String: errors made under the lock print it).
func (s *MixedSet) owned() int {
	n := 0
	for _, b := range s.sets {
		n += b.c.Owned
	}
	return n
}

func (s *MixedSet) String() string {
	return fmt.Sprintf("mixed set %q (%d blocks, %d elements)", s.name, len(s.sets), s.owned())
}

// iteration makes a mixed set an IterationSet; its loops are run block by
// block (see Runtime.ParLoop), never bound as one.
func (s *MixedSet) iteration() (*Set, *Subset) { return nil, nil }

// sameBlocks says why the mixed sets a and b do not have the same blocks
// (both described by what), or "".
func sameBlocks(a, b *MixedSet, what string) string {
	if len(a.sets) != len(b.sets) {
		return fmt.Sprintf("%s have %d and %d blocks", what, len(a.sets), len(b.sets))
	}
	for i := range a.sets {
		if a.sets[i] != b.sets[i] {
			return fmt.Sprintf("%s differ in block %d: set %q and set %q", what, i, a.sets[i].c.Name, b.sets[i].c.Name)
		}
	}
	return ""
}

// MixedMap is a tuple of maps from one set, one into each block of a
// mixed set (PyOP2's MixedMap): a loop over that set reaches each block
// of a MixedDat through its own map.
type MixedMap struct {
	name string
	maps []*Map
	to   *MixedSet
}

// NewMixedMap declares the mixed map of maps, in order (block i is
// maps[i]), which must all go from one set. Its target is the mixed set
// of the maps' target sets.
func NewMixedMap(maps []*Map, name string) (*MixedMap, error) {
	if len(maps) == 0 {
		return nil, fmt.Errorf("op2: mixed map %q: no maps; a mixed map has at least one block", name)
	}
	to := make([]*Set, len(maps))
	for i, m := range maps {
		if m == nil {
			return nil, fmt.Errorf("op2: mixed map %q: block %d: map is nil", name, i)
		}
		if m.c.From != maps[0].c.From {
			return nil, fmt.Errorf("op2: mixed map %q: block %d: map %q goes from set %q, but block 0's map %q from set %q; the maps of a mixed map go from one set",
				name, i, m.c.Name, m.c.From.Name, maps[0].c.Name, maps[0].c.From.Name)
		}
		to[i] = setOf(m.c.To)
	}
	return &MixedMap{name: name, maps: append([]*Map(nil), maps...), to: &MixedSet{name: name + " targets", sets: to}}, nil
}

// Name is the mixed map's name.
func (m *MixedMap) Name() string { return m.name }

// Len is the number of blocks.
func (m *MixedMap) Len() int { return len(m.maps) }

// Block returns block i's map.
func (m *MixedMap) Block(i int) *Map { return m.maps[i] }

// Maps returns the blocks' maps, in order (a copy).
func (m *MixedMap) Maps() []*Map { return append([]*Map(nil), m.maps...) }

// From is the set every block's map goes from.
func (m *MixedMap) From() *Set { return setOf(m.maps[0].c.From) }

// To is the mixed set of the blocks' target sets.
func (m *MixedMap) To() *MixedSet { return m.to }

// MixedDat is a tuple of Dats, one per block of a mixed set (PyOP2's
// MixedDat): the unknowns of a mixed problem. Each block is a plain Dat,
// with its own dim, which a program may use on its own (Block); under
// MPI each block is partitioned and its halo exchanged like any Dat, and
// a mixed dat's dumps and HDF5 files are its blocks' (Block(i).WriteText,
// hdf5.WriteDat of each block).
//
// In a loop a mixed dat passes one kernel parameter per block, in block
// order, each what the block's Dat would pass by itself: through a
// mixed map (ArgVec, ArgMap) block i goes through block i's map. PyOP2
// packs the blocks' values into one buffer instead; a kernel ported from
// PyOP2 takes the blocks' pointers in its place.
type MixedDat[T Scalar] struct {
	name string
	set  *MixedSet
	dats []*Dat[T]
}

// NewMixedDat declares a mixed dat on set, block i with dims[i] values
// per element (at most MaxDim). data supplies the initial values, the
// blocks' values one block after the other (len = Σ set.Block(i).Size()
// × dims[i]), and is copied; nil means zeros. Block i is named
// name[i].
func NewMixedDat[T Scalar](set *MixedSet, dims []int, data []T, name string) (*MixedDat[T], error) {
	if set == nil {
		return nil, fmt.Errorf("op2: mixed dat %q: mixed set is nil", name)
	}
	if len(dims) != len(set.sets) {
		return nil, fmt.Errorf("op2: mixed dat %q on mixed set %q: %d dims given for %d blocks", name, set.name, len(dims), len(set.sets))
	}
	want := 0
	for i, s := range set.sets {
		if dims[i] < 1 {
			return nil, fmt.Errorf("op2: mixed dat %q on mixed set %q: block %d: dim %d; dims are at least 1", name, set.name, i, dims[i])
		}
		want += s.c.Owned * dims[i]
	}
	if data != nil && len(data) != want {
		return nil, fmt.Errorf("op2: mixed dat %q on mixed set %q: %d values given, want %d (the blocks' sizes × dims)", name, set.name, len(data), want)
	}
	md := &MixedDat[T]{name: name, set: set, dats: make([]*Dat[T], len(dims))}
	off := 0
	for i, s := range set.sets {
		var block []T
		if data != nil {
			n := s.c.Owned * dims[i]
			block, off = data[off:off+n], off+n
		}
		d, err := NewDat(s, dims[i], block, name+"["+strconv.Itoa(i)+"]")
		if err != nil {
			return nil, fmt.Errorf("op2: mixed dat %q: block %d: %w", name, i, unprefixed(err))
		}
		md.dats[i] = d
	}
	return md, nil
}

// NewMixedDatOf declares the mixed dat whose blocks are dats, in order
// (PyOP2's MixedDat of a tuple of Dats): the dats themselves, not copies,
// so a loop on the mixed dat changes them. Its mixed set is the dats'
// sets.
func NewMixedDatOf[T Scalar](dats []*Dat[T], name string) (*MixedDat[T], error) {
	if len(dats) == 0 {
		return nil, fmt.Errorf("op2: mixed dat %q: no dats; a mixed dat has at least one block", name)
	}
	sets := make([]*Set, len(dats))
	for i, d := range dats {
		if d == nil {
			return nil, fmt.Errorf("op2: mixed dat %q: block %d: dat is nil", name, i)
		}
		sets[i] = setOf(d.s.Set)
	}
	return &MixedDat[T]{name: name, set: &MixedSet{name: name + " sets", sets: sets}, dats: append([]*Dat[T](nil), dats...)}, nil
}

// unprefixed strips the "op2: " every error of the package starts with,
// for an error wrapped in another of the package's.
func unprefixed(err error) error {
	if msg, ok := strings.CutPrefix(err.Error(), prefix); ok {
		return &unprefixedError{msg: msg, err: err}
	}
	return err
}

// unprefixedError is err without its "op2: ", still matching what err
// matches (errors.Is, errors.As).
type unprefixedError struct {
	msg string
	err error
}

func (e *unprefixedError) Error() string { return e.msg }
func (e *unprefixedError) Unwrap() error { return e.err }

// Name is the mixed dat's name.
func (md *MixedDat[T]) Name() string { return md.name }

// Set is the mixed set of the blocks' sets.
func (md *MixedDat[T]) Set() *MixedSet { return md.set }

// Len is the number of blocks.
func (md *MixedDat[T]) Len() int { return len(md.dats) }

// Block returns block i's Dat.
func (md *MixedDat[T]) Block(i int) *Dat[T] { return md.dats[i] }

// Blocks returns the blocks' Dats, in order (a copy of the list).
func (md *MixedDat[T]) Blocks() []*Dat[T] { return append([]*Dat[T](nil), md.dats...) }

// Dims returns the blocks' dims.
func (md *MixedDat[T]) Dims() []int {
	dims := make([]int, len(md.dats))
	for i, d := range md.dats {
		dims[i] = d.s.Dim
	}
	return dims
}

// Data returns each block's Data (PyOP2's MixedDat.data, a tuple of
// arrays), with the same rules: the slices may be changed, and a device
// backend's copies are marked stale. It panics with the error its Err
// form, DataErr, would return.
func (md *MixedDat[T]) Data() [][]T { return orPanic(md.DataErr()) }

// DataErr is Data, returning as an error the first block's failure (see
// Dat.DataErr), naming the block.
func (md *MixedDat[T]) DataErr() ([][]T, error) {
	out := make([][]T, len(md.dats))
	for i, d := range md.dats {
		var err error
		if out[i], err = d.DataErr(); err != nil {
			return nil, md.blockError(i, err)
		}
	}
	return out, nil
}

// DataRO returns a copy of each block's values (see Dat.DataRO). It
// panics with the error its Err form, DataROErr, would return.
func (md *MixedDat[T]) DataRO() [][]T { return orPanic(md.DataROErr()) }

// DataROErr is DataRO, returning as an error the first block's failure
// (see Dat.DataROErr), naming the block.
func (md *MixedDat[T]) DataROErr() ([][]T, error) {
	out := make([][]T, len(md.dats))
	for i, d := range md.dats {
		var err error
		if out[i], err = d.DataROErr(); err != nil {
			return nil, md.blockError(i, err)
		}
	}
	return out, nil
}

// Sync brings every block's host copy up to date (see Dat.Sync); the
// error names the block that failed.
func (md *MixedDat[T]) Sync() error {
	for i, d := range md.dats {
		if err := d.Sync(); err != nil {
			return md.blockError(i, err)
		}
	}
	return nil
}

func (md *MixedDat[T]) blockError(i int, err error) error {
	return fmt.Errorf("op2: mixed dat %q: block %d: %w", md.name, i, unprefixed(err))
}

// Zero sets every block to zero (see Dat.Zero).
func (md *MixedDat[T]) Zero() error {
	for i, d := range md.dats {
		if err := d.Zero(); err != nil {
			return md.blockError(i, err)
		}
	}
	return nil
}

// CopyTo copies each block of md into the same block of dst (see
// Dat.CopyTo), which must have the same sets and dims, block for block;
// otherwise it returns an error naming the block and changes nothing.
func (md *MixedDat[T]) CopyTo(dst *MixedDat[T]) error {
	if dst == nil {
		return fmt.Errorf("op2: copying mixed dat %q: destination is nil", md.name)
	}
	if why := sameBlocks(md.set, dst.set, "the mixed dats' sets"); why != "" {
		return fmt.Errorf("op2: copying mixed dat %q to mixed dat %q: %s", md.name, dst.name, why)
	}
	for i := range md.dats {
		if a, b := md.dats[i].s.Dim, dst.dats[i].s.Dim; a != b {
			return fmt.Errorf("op2: copying mixed dat %q to mixed dat %q: block %d: dims differ (%d and %d)", md.name, dst.name, i, a, b)
		}
	}
	for i := range md.dats {
		if err := md.dats[i].CopyTo(dst.dats[i]); err != nil {
			return md.blockError(i, err)
		}
	}
	return nil
}

// Clone returns a new mixed dat named name with md's mixed set, dims and
// a copy of its values (PyOP2's duplicate); block i is named name[i].
func (md *MixedDat[T]) Clone(name string) (*MixedDat[T], error) {
	c := &MixedDat[T]{name: name, set: md.set, dats: make([]*Dat[T], len(md.dats))}
	for i, d := range md.dats {
		b, err := d.Clone(name + "[" + strconv.Itoa(i) + "]")
		if err != nil {
			return nil, md.blockError(i, err)
		}
		c.dats[i] = b
	}
	return c, nil
}

// Nbytes is the sum of the blocks' Nbytes (PyOP2's MixedDat.nbytes).
func (md *MixedDat[T]) Nbytes() int {
	n := 0
	for _, d := range md.dats {
		n += d.Nbytes()
	}
	return n
}

// Arg passes every block directly. In a loop over a mixed set, block b's
// loop gets block b (a T* to the element's values); in a loop over a Set
// (every block must live on it) the kernel gets one T* per block, in
// block order.
func (md *MixedDat[T]) Arg(acc Access) Arg {
	if md == nil {
		return nilMixed("dat")
	}
	m := &mixedArg{kind: "dat", name: md.name, direct: true}
	a := Arg{e: engine.Arg{Mixed: m}}
	m.blocks = make([]Arg, len(md.dats))
	for i, d := range md.dats {
		m.blocks[i] = d.Arg(acc)
	}
	return a
}

// ArgMap passes block i through column idx of mm's block i, for every
// block: the kernel gets one T* per block, in block order, each to the
// values of the block's target element (see Dat.ArgMap). mm must have as
// many blocks as md, each going into the set of md's block.
func (md *MixedDat[T]) ArgMap(acc Access, mm *MixedMap, idx int) Arg {
	return md.throughMap(mm, func(d *Dat[T], m *Map) Arg { return d.ArgMap(acc, m, idx) })
}

// ArgVec passes block i through every column of mm's block i, for every
// block: the kernel gets one T** per block, in block order, each holding
// one pointer per column of the block's map (see Dat.ArgVec). mm must
// have as many blocks as md, each going into the set of md's block.
func (md *MixedDat[T]) ArgVec(acc Access, mm *MixedMap) Arg {
	return md.throughMap(mm, func(d *Dat[T], m *Map) Arg { return d.ArgVec(acc, m) })
}

func (md *MixedDat[T]) throughMap(mm *MixedMap, arg func(*Dat[T], *Map) Arg) Arg {
	if md == nil {
		return nilMixed("dat")
	}
	m := &mixedArg{kind: "dat", name: md.name}
	a := Arg{e: engine.Arg{Mixed: m}}
	switch {
	case mm == nil:
		m.bad = fmt.Sprintf("%s: mixed map is nil", m.what())
		return a
	case len(mm.maps) != len(md.dats):
		m.bad = fmt.Sprintf("%s has %d blocks but mixed map %q has %d; pass it through a mixed map with one map per block",
			m.what(), len(md.dats), mm.name, len(mm.maps))
		return a
	}
	m.rowMap = &mm.name
	m.blocks = make([]Arg, len(md.dats))
	for i, d := range md.dats {
		m.blocks[i] = arg(d, mm.maps[i])
	}
	return a
}

// mixedArg is what a mixed argument (a MixedDat or MixedMat) holds: the
// arguments of its blocks, which a loop passes in its place.
type mixedArg struct {
	kind   string  // "dat" or "mat"
	name   string  // the mixed dat's or mat's name
	rowMap *string // the name of the mixed map it goes through, or nil
	colMap *string // a matrix's column mixed map's name
	blocks []Arg   // in block order (row-major for a matrix)
	cols   int     // a matrix's block columns; 0 for a dat
	direct bool    // MixedDat.Arg: block b in a loop over a mixed set
	bad    string  // why the argument is unusable, found when it was made
}

// nilMixed is the argument a nil mixed dat or mat (kind "dat" or "mat")
// makes: the loop refuses it, naming the argument.
func nilMixed(kind string) Arg {
	return Arg{e: engine.Arg{Mixed: &mixedArg{kind: kind, bad: fmt.Sprintf("the mixed %s is nil", kind)}}}
}

// what names the mixed argument in messages; only called on the way to
// an error, so that a repeated loop formats nothing.
func (m *mixedArg) what() string {
	s := fmt.Sprintf("mixed %s %q", m.kind, m.name)
	switch {
	case m.colMap != nil:
		s += fmt.Sprintf(" through mixed maps (%q, %q)", *m.rowMap, *m.colMap)
	case m.rowMap != nil:
		s += fmt.Sprintf(" through mixed map %q", *m.rowMap)
	}
	return s
}

// blockName names block b of a mixed argument with cols block columns.
func blockName(b, cols int) string {
	if cols == 0 {
		return strconv.Itoa(b)
	}
	return fmt.Sprintf("(%d, %d)", b/cols, b%cols)
}

// BlockName names block b of the mixed argument in messages
// (engine.Mixed); only called on the way to an error.
func (m *mixedArg) BlockName(b int) string {
	return fmt.Sprintf("block %s of %s", blockName(b, m.cols), m.what())
}

// Blocks, Direct, Problem and What make a mixed argument one the engine
// expands (engine.MixedBlocks).
func (m *mixedArg) Blocks() []engine.Arg { return engineArgs(m.blocks) }
func (m *mixedArg) Direct() bool         { return m.direct }
func (m *mixedArg) Problem() string      { return m.bad }
func (m *mixedArg) What() string         { return m.what() }

// engineBuf and apiArgs are engineArgs keeping the capacity, both ways:
// an expanded list is made in the memory of the runtime's reused buffer.
func engineBuf(args []Arg) []engine.Arg {
	return unsafe.Slice((*engine.Arg)(unsafe.Pointer(unsafe.SliceData(args))), cap(args))[:len(args)]
}

func apiArgs(args []engine.Arg) []Arg {
	return unsafe.Slice((*Arg)(unsafe.Pointer(unsafe.SliceData(args))), cap(args))[:len(args)]
}

// expandMixed returns the loop's arguments with every mixed argument
// replaced by its blocks' arguments (engine.ExpandMixed), for a loop of
// k over set (block is -1), or for block block's loop of a loop over the
// mixed set ms, in buf's memory when it has room (never in args'), and
// checks that the kernel takes them. Errors name the loop and the
// argument, as bind's do.
func expandMixed(k *Kernel, setName string, args []Arg, ms *MixedSet, block int, buf []Arg) ([]Arg, error) {
	kname := "<nil>"
	if k != nil {
		kname = k.c.Name
	}
	l := engine.MixedLoop{Kernel: kname, Set: setName}
	if ms != nil {
		l.MixedSet, l.Blocks, l.Block = ms.name, len(ms.sets), block
	}
	eflat, err := rt.proc.ExpandMixed(l, engineArgs(args), engineBuf(buf))
	if err != nil {
		return nil, err
	}
	flat := apiArgs(eflat)
	if k != nil && ms == nil {
		info, err := k.parse()
		if err != nil {
			return nil, err
		}
		if len(info.Params) != len(flat) {
			return nil, &LoopError{Kernel: kname, Set: setName, Arg: -1, Msg: fmt.Sprintf("kernel %q takes %d parameters but the loop's %d arguments pass %d (a mixed argument passes one per block)",
				kname, len(info.Params), len(args), len(flat))}
		}
	}
	return flat, nil
}

// blockError rewrites a LoopError bind returned about argument e.Arg of
// the expanded list flat so that it names the argument the caller passed
// and its block.
func blockError(err error, flat []Arg) error {
	if err == nil {
		return nil // before errors.As, whose target would be allocated
	}
	var le *LoopError
	if !errors.As(err, &le) || le.Arg < 0 || le.Arg >= len(flat) {
		return err
	}
	o := &flat[le.Arg].e.Origin
	if o.Of != nil {
		le.Msg = o.Of.BlockName(int(o.Block)) + ": " + le.Msg
	}
	if o.Of != nil || o.Moved {
		le.Arg = int(o.Pos)
	}
	return err
}

// parLoopMixed runs a loop over the mixed set ms as one loop per block
// (see MixedSet). Every block's loop is checked before any runs. Caller
// holds the lock.
func (r *Runtime) parLoopMixed(k *Kernel, ms *MixedSet, args []Arg) error {
	if err := checkMixedGlobals(k, ms, args); err != nil {
		return err
	}
	loops := make([]core.Loop, len(ms.sets))
	for b, s := range ms.sets {
		flat, err := expandMixed(k, s.c.Name, args, ms, b, nil)
		if err == nil {
			err = bindOver(r, r.e.Cfg.Backend, &loops[b], k, s, flat)
		}
		if err != nil {
			var le *LoopError
			if errors.As(err, &le) {
				le.Msg = fmt.Sprintf("block %d of mixed set %q: %s", b, ms.name, le.Msg)
			}
			return err
		}
		loops[b].Check = r.e.Cfg.Check
	}
	be, err := r.e.CurrentBackend()
	if err != nil {
		return err
	}
	for b := range loops {
		if r.e.Recording() && !runsAtOnce(r.e, k) {
			e := rt.proc.Slot()
			e.Loop = loops[b]
			if err := r.e.Commit(e, be); err != nil {
				return err
			}
			if err := r.e.AutoRecorded(&k.c.Kernel); err != nil {
				return err
			}
			continue
		}
		if err := runNow(r.e, be, &loops[b]); err != nil {
			return err
		}
	}
	return nil
}

// checkMixedGlobals refuses a loop over a mixed set that passes one
// Global for reading and for a reduction (engine.CheckMixedGlobals).
func checkMixedGlobals(k *Kernel, ms *MixedSet, args []Arg) error {
	name := "<nil>"
	if k != nil {
		name = k.c.Name
	}
	return rt.proc.CheckMixedGlobals(name, ms.name, engineArgs(args))
}
