package op2

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/h5"
	"github.com/goop2/op2/internal/mpi"
	"github.com/goop2/op2/internal/regfile"
	"github.com/goop2/op2/mesh"
)

// A checkpoint is an HDF5 file (see Checkpoint) holding:
//
//   - "op2_checkpoint": six ints, the format version, the ranks that wrote
//     it, and how many dats, globals, constants and user entries follow;
//   - "op2_names" (format 2): bytes, the names of the entries below as
//     data, so that any Go string round-trips (empty, long, holding
//     NULs): each dat's name and its set's, each Global's name, each
//     state key, in that order, each as its length (a uvarint) and its
//     bytes;
//   - "dats/K": the K-th saved dat in declaration order, one row per
//     element of its set over all ranks in the declared numbering, with
//     the attributes dim and type (its C type), and name and set;
//   - "globals/K": the K-th live Global's values, attributes name and type;
//   - "consts/NAME": each constant of the default runtime, attribute type;
//   - "user/K": the K-th entry of the program's state, in key order, as
//     bytes, attribute key.
//
// The name, set and key attributes are for people reading the file
// (h5dump): fixed-length strings of at most 255 bytes, cut there and at a
// NUL. Format 1 had no op2_names, and Restore reads its names from them.
const checkpointVersion = 2

// oldestCheckpoint is the oldest format Restore reads.
const oldestCheckpoint = 1

// Checkpoint saves what a run needs to continue from this point into the
// HDF5 file at path: the values of every dat the program still holds
// (but those Dat.SetNoCheckpoint leaves out), of every Global, of the default runtime's constants, and state, the
// program's own (a step counter, a time: whatever it needs to find its
// place again), which Restore returns. Dats are saved in the numbering
// the mesh was declared with, so a run on any number of ranks can restore
// them. The file is written under a temporary name (path + ".partial")
// and renamed over path once complete, so a run stopped while it writes
// leaves the previous checkpoint intact.
//
// It is collective under MPI (every rank calls it, after Partition, with
// the same state): with a parallel HDF5 library (Debian:
// libhdf5-openmpi-103-1) every rank writes its own rows of each dat
// through MPI-IO; without one they are gathered to rank 0, which writes
// them. Recorded loops run first. It needs the HDF5 library at run time
// (Debian: libhdf5-103-1).
func Checkpoint(path string, state map[string][]byte) error {
	if path == "" {
		return errors.New("op2: Checkpoint: the path is empty")
	}
	if err := reservedKeys(state); err != nil {
		return err
	}
	runtime.GC() // dats the program no longer holds are not saved
	forced := lock(forCollective)
	defer unlock()
	if forced != nil {
		return forced
	}
	if err := rt.proc.hostReadAll("Checkpoint"); err != nil {
		return err
	}
	return writeCheckpoint(path, state)
}

// SetNoCheckpoint(true) leaves the dat out of checkpoints, Checkpoint's
// and the automatic ones (Config.Checkpoint): its values are not saved,
// and Restore leaves them as the program has them, whether or not the
// file holds them. SetNoCheckpoint(false) puts it back (the default).
// It is for data a restarted program has again without the checkpoint:
// values it declares again (coordinates read from the mesh), or that the
// loops after the checkpoint write whole before reading them (output
// only). Restoring a file that left a dat out into a program that saves
// it is refused, naming the dat. An automatic restart skips the loops
// before the checkpoint, so a dat left out keeps the values it was
// declared with until a loop writes it. Under MPI every rank must make
// the same choice: Checkpoint and Restore refuse ranks whose dats differ.
func (d *Dat[T]) SetNoCheckpoint(omit bool) { d.noCheckpoint.Store(omit) }

// autoKey starts the keys of the state automatic checkpoints keep.
const autoKey = "op2."

// reservedKeys refuses state keys of automatic checkpoints.
func reservedKeys(state map[string][]byte) error {
	for k := range state {
		if strings.HasPrefix(k, autoKey) {
			return fmt.Errorf("op2: Checkpoint: state key %q: keys starting with %q are the automatic checkpoints'", k, autoKey)
		}
	}
	return nil
}

// writeCheckpoint is Checkpoint with the lock held and no recorded loop
// left.
func writeCheckpoint(path string, state map[string][]byte) error {
	cs, err := beginCheckpoint(path, state, nil)
	if err != nil {
		return err
	}
	return cs.finish(nil)
}

// ckptSession is a checkpoint being written: its file is open under the
// temporary name until finish renames it. The values of the dats in
// deferred are not written yet (automatic checkpoints write them, or
// list them without values, as the loops after the checkpoint show
// whether they are read before being written whole).
type ckptSession struct {
	c         *ckptContents
	cw        *ckptWriter
	path, tmp string
	what      string
	deferred  map[*core.Storage]int // a dat: its index in c.dats
}

// beginCheckpoint opens the checkpoint's file and writes everything but
// the values of the dats defer names.
func beginCheckpoint(path string, state map[string][]byte, deferred func(*core.Storage) bool) (*ckptSession, error) {
	what := fmt.Sprintf("op2.Checkpoint(%q)", path)
	c, err := checkpointContents(what, state)
	if err != nil {
		return nil, err
	}
	if err := mpiFatal(c.agree(what + " " + c.layout())); err != nil {
		return nil, fmt.Errorf("op2: %s: %w", what, err)
	}
	tmp := path + ".partial"
	f, par, err := c.create(tmp)
	if err != nil {
		return nil, fmt.Errorf("op2: %s: %s: %w", what, tmp, err)
	}
	cs := &ckptSession{c: c, cw: &ckptWriter{f: f, w: c.w, par: par}, path: path, tmp: tmp, what: what, deferred: map[*core.Storage]int{}}
	for k, s := range c.dats {
		if deferred != nil && deferred(s) {
			cs.deferred[s] = k
		}
	}
	if err := c.write(cs.cw, cs.deferred); err != nil {
		return nil, cs.finish(err)
	}
	return cs, nil
}

// resolve writes deferred dat s: its values (saved), or no values.
func (cs *ckptSession) resolve(s *core.Storage, saved bool) error {
	k, ok := cs.deferred[s]
	if !ok {
		return nil
	}
	delete(cs.deferred, s)
	return cs.c.writeDat(cs.cw, k, s, saved)
}

// finish writes the deferred dats' values, closes the file and, when
// every rank wrote it without error (werr is this rank's error so far),
// renames it over the checkpoint; else it removes it.
func (cs *ckptSession) finish(werr error) error {
	c := cs.c
	if werr == nil {
		// In the dats' order: under MPI every rank writes them alike.
		left := make([]*core.Storage, 0, len(cs.deferred))
		for s := range cs.deferred {
			left = append(left, s)
		}
		slices.SortFunc(left, func(a, b *core.Storage) int { return cs.deferred[a] - cs.deferred[b] })
		for _, s := range left {
			if werr = cs.resolve(s, true); werr != nil {
				break
			}
		}
	}
	werr = errors.Join(werr, cs.cw.err)
	if f := cs.cw.f; f != nil {
		werr = errors.Join(werr, f.Close())
	}
	if err := mpiFatal(c.agreeErr(cs.what, werr)); err != nil {
		if c.rank() == 0 {
			os.Remove(cs.tmp)
		}
		return fmt.Errorf("op2: %s: %s: %w", cs.what, cs.tmp, err)
	}
	var rerr error
	if c.rank() == 0 {
		rerr = publish(cs.tmp, cs.path)
	}
	if err := mpiFatal(c.agreeErr(cs.what+" rename", rerr)); err != nil {
		return fmt.Errorf("op2: %s: %w", cs.what, err)
	}
	return nil
}

// publish makes the complete file tmp the checkpoint at path: its data
// reach the disk before the rename, and the rename before it returns.
func publish(tmp, path string) error {
	f, err := os.Open(tmp)
	if err != nil {
		return err
	}
	err = f.Sync()
	f.Close()
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// ckptContents is what a checkpoint holds, listed the same way on every
// rank.
type ckptContents struct {
	w       *mpi.World // the job when it has several ranks; nil otherwise
	dats    []*core.Storage
	globals []*core.Storage
	consts  []*core.Const // by name
	keys    []string      // the state's, sorted
	state   map[string][]byte
}

// checkpointContents lists what to save or restore.
func checkpointContents(what string, state map[string][]byte) (*ckptContents, error) {
	c := &ckptContents{state: state}
	if w := rt.proc.Started(); w != nil && w.Size() > 1 {
		if !rt.proc.Partitioned() {
			return nil, fmt.Errorf("op2: %s: the mesh is not partitioned yet: call it after op2.Partition", what)
		}
		c.w = w
	}
	for _, d := range rt.proc.LiveData() {
		if o, ok := d.(interface{ omitted() bool }); ok && o.omitted() {
			continue // SetNoCheckpoint: neither saved nor restored
		}
		c.dats = append(c.dats, d.Storage())
	}
	c.globals = rt.proc.LiveGlobals()
	reg := rt.consts
	reg.Lock()
	for _, k := range reg.byName {
		c.consts = append(c.consts, k)
	}
	reg.Unlock()
	slices.SortFunc(c.consts, func(a, b *core.Const) int { return cmp.Compare(a.Name, b.Name) })
	for k := range state {
		c.keys = append(c.keys, k)
	}
	slices.Sort(c.keys)
	return c, nil
}

func (c *ckptContents) rank() int {
	if c.w == nil {
		return 0
	}
	return c.w.Rank()
}

// layout is a short fingerprint of the contents, for the ranks to agree on.
func (c *ckptContents) layout() string {
	h := fnv.New64a()
	for _, s := range c.dats {
		fmt.Fprintf(h, "d%q%q%d%q", s.Name, s.Set.Name, s.Dim, s.Type.CName())
	}
	for _, s := range c.globals {
		fmt.Fprintf(h, "g%q%d%q", s.Name, s.Dim, s.Type.CName())
	}
	for _, k := range c.consts {
		fmt.Fprintf(h, "c%q%d%q", k.Name, k.Dim, k.Type.CName())
	}
	for _, k := range c.keys {
		fmt.Fprintf(h, "u%q%d", k, len(c.state[k]))
	}
	return fmt.Sprintf("(%d dats, %d globals, %d constants, %d state entries; layout %016x)", len(c.dats), len(c.globals), len(c.consts), len(c.keys), h.Sum64())
}

func (c *ckptContents) agree(what string) error { return c.agreeErr(what, nil) }

func (c *ckptContents) agreeErr(what string, err error) error {
	if c.w == nil {
		return err
	}
	return dist.AgreeStep(c.w, what, err)
}

// create opens tmp for writing: on every rank through MPI-IO when the
// job has several ranks and a parallel HDF5 library (par), else on rank 0
// only (the other ranks get nil).
func (c *ckptContents) create(tmp string) (f *h5.File, par bool, err error) {
	if c.w != nil {
		f, par, err := h5.OpenOnRanks(c.w, tmp, true)
		if par || err != nil {
			return f, par, mpiFatal(err)
		}
	}
	if c.rank() == 0 {
		f, err = h5.Create(tmp)
	}
	return f, false, c.agreeErr("op2.Checkpoint: create "+tmp, err)
}

// ckptWriter writes datasets in one of three ways: one process; every
// rank through MPI-IO (par); gathered to rank 0 (f nil on the others).
type ckptWriter struct {
	f   *h5.File
	w   *mpi.World
	par bool
	err error // gathered: rank 0's first failure; the ranks go on gathering
}

// root writes a dataset of values every rank holds alike, from rank 0.
func (cw *ckptWriter) root(name string, typ h5.Type, rows int, buf unsafe.Pointer) error {
	switch {
	case cw.par:
		return cw.f.WriteRoot(name, typ, 1, rows, 1, buf)
	case cw.f != nil && cw.err == nil:
		cw.err = cw.f.Write(name, typ, 1, rows, 1, buf)
	}
	return nil
}

// empty writes a dataset of no rows of dim columns.
func (cw *ckptWriter) empty(name string, typ h5.Type, dim int) error {
	switch {
	case cw.par:
		return cw.f.WriteBlock(name, typ, 0, dim, 0, 0, nil)
	case cw.f != nil && cw.err == nil:
		cw.err = cw.f.WriteRows(name, typ, 2, 0, dim, 0, 0, nil)
	}
	return nil
}

// attrs writes string and int attributes of a dataset.
func (cw *ckptWriter) attrs(name string, strs [][2]string, ints [][2]string) error {
	write := func() error {
		for _, a := range strs {
			// At least one byte: HDF5 has no strings of none.
			if err := cw.f.WriteStringAttr(name, a[0], a[1], max(1, min(len(a[1]), 255))); err != nil {
				return err
			}
		}
		for _, a := range ints {
			v, _ := strconv.Atoi(a[1])
			if err := cw.f.WriteIntAttr(name, a[0], int32(v)); err != nil {
				return err
			}
		}
		return nil
	}
	switch {
	case cw.par:
		return cw.f.Collective("op2.Checkpoint: attributes of "+name, write)
	case cw.f != nil && cw.err == nil:
		cw.err = write()
	}
	return nil
}

// dat writes a dat's owned values in the declared numbering.
func (cw *ckptWriter) dat(name string, s *core.Storage) error {
	if err := s.HostAccess(false); err != nil {
		return err
	}
	elem := s.Dim * s.Type.Size()
	owned := s.Set.Owned
	var vals []byte
	if s.Host != nil {
		vals = unsafe.Slice((*byte)(s.Host), owned*elem)
	} else {
		vals = make([]byte, owned*elem) // declared without values, never used: zeros
	}
	typ := h5Type(s.Type)
	h, ok := s.Set.Halo.(*dist.SetHalo)
	if cw.w == nil || !ok {
		if decl := s.Set.Declared; decl != nil {
			vals = toDeclared(vals, elem, decl)
		}
		if cw.err == nil {
			cw.err = cw.f.WriteRows(name, typ, 2, owned, s.Dim, 0, owned, hostPtr(vals))
		}
		return nil
	}
	rows := h.GlobalSize
	if cw.par {
		start, block, err := dist.ToBlocks(cw.w, h.Global[:owned], vals, elem, rows)
		if err != nil {
			return mpiFatal(err)
		}
		return cw.f.WriteBlock(name, typ, rows, s.Dim, start, len(block)/max(elem, 1), hostPtr(block))
	}
	var all []byte
	if cw.w.Rank() == 0 {
		all = make([]byte, rows*elem)
	}
	if err := dist.GatherRows(cw.w, h.Global[:owned], vals, elem, all); err != nil {
		return mpiFatal(err)
	}
	if cw.f != nil && cw.err == nil {
		cw.err = cw.f.WriteRows(name, typ, 2, rows, s.Dim, 0, rows, hostPtr(all))
	}
	return nil
}

// h5Type is the HDF5 shim's type of t.
func h5Type(t core.ScalarType) h5.Type {
	switch t {
	case core.Float32:
		return h5.Float32
	case core.Int32:
		return h5.Int32
	case core.Int64:
		return h5.Int64
	case core.Uint32:
		return h5.Uint32
	}
	return h5.Float64
}

// writeDat writes dat k, s: its values when saved, else a dataset of no
// rows marked saved = 0; then its attributes.
func (c *ckptContents) writeDat(cw *ckptWriter, k int, s *core.Storage, saved bool) error {
	name := "dats/" + strconv.Itoa(k)
	var err error
	if saved {
		err = cw.dat(name, s)
	} else {
		err = cw.empty(name, h5Type(s.Type), s.Dim)
	}
	if err != nil {
		return fmt.Errorf("dat %q on set %q: %w", s.Name, s.Set.Name, err)
	}
	if c.w != nil {
		// The exchange's buffers, each the size of this rank's part of
		// the dat, go back before the next dat's are made.
		debug.FreeOSMemory()
	}
	ints := [][2]string{{"dim", strconv.Itoa(s.Dim)}}
	if !saved {
		ints = append(ints, [2]string{"saved", "0"})
	}
	return cw.attrs(name, [][2]string{{"name", s.Name}, {"set", s.Set.Name}, {"type", s.Type.CName()}}, ints)
}

// write writes every dataset of the checkpoint but the dats deferred.
func (c *ckptContents) write(cw *ckptWriter, deferred map[*core.Storage]int) error {
	ranks := 1
	if c.w != nil {
		ranks = c.w.Size()
	}
	head := []int32{checkpointVersion, int32(ranks), int32(len(c.dats)), int32(len(c.globals)), int32(len(c.consts)), int32(len(c.keys))}
	if err := cw.root("op2_checkpoint", h5.Int32, len(head), unsafe.Pointer(&head[0])); err != nil {
		return err
	}
	names := c.names()
	if err := cw.root("op2_names", h5.Uint8, len(names), hostPtr(names)); err != nil {
		return err
	}
	for k, s := range c.dats {
		if _, later := deferred[s]; later {
			continue
		}
		if err := c.writeDat(cw, k, s, true); err != nil {
			return err
		}
	}
	for k, s := range c.globals {
		name := "globals/" + strconv.Itoa(k)
		if err := s.HostAccess(false); err != nil {
			return fmt.Errorf("global %q: %w", s.Name, err)
		}
		if err := cw.root(name, h5Type(s.Type), s.Dim, s.Host); err != nil {
			return err
		}
		if err := cw.attrs(name, [][2]string{{"name", s.Name}, {"type", s.Type.CName()}}, nil); err != nil {
			return err
		}
	}
	for _, k := range c.consts {
		name := "consts/" + k.Name
		if err := cw.root(name, h5Type(k.Type), k.Dim, k.Host); err != nil {
			return err
		}
		if err := cw.attrs(name, [][2]string{{"type", k.Type.CName()}}, nil); err != nil {
			return err
		}
	}
	for i, key := range c.keys {
		name := "user/" + strconv.Itoa(i)
		v := c.state[key]
		if err := cw.root(name, h5.Uint8, len(v), hostPtr(v)); err != nil {
			return err
		}
		if err := cw.attrs(name, [][2]string{{"key", key}}, nil); err != nil {
			return err
		}
	}
	return cw.err
}

// names is the op2_names dataset of the checkpoint.
func (c *ckptContents) names() []byte {
	var b []byte
	add := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	for _, s := range c.dats {
		add(s.Name)
		add(s.Set.Name)
	}
	for _, s := range c.globals {
		add(s.Name)
	}
	for _, k := range c.keys {
		add(k)
	}
	return b
}

// Restore loads a checkpoint that Checkpoint wrote into the program's
// dats, Globals and constants, and returns the state saved with it. The
// program must have declared the same mesh, dats, Globals and constants
// (names, sets, dims and types; dats and Globals are matched by these,
// in declaration order; dats that Dat.SetNoCheckpoint leaves out are not
// looked for and keep their values), and under MPI partitioned it, on any
// number of ranks: each rank reads the rows of its own elements and their
// halo. A checkpoint that does not match is refused, naming what
// differs, and nothing is changed. It is collective under MPI; recorded
// loops run first.
func Restore(path string) (map[string][]byte, error) {
	runtime.GC() // dats the program no longer holds are not restored
	forced := lock(forCollective)
	defer unlock()
	if forced != nil {
		return nil, forced
	}
	return restoreCheckpoint(path)
}

// restoreCheckpoint is Restore with the lock held and no recorded loop
// left.
func restoreCheckpoint(path string) (map[string][]byte, error) {
	what := fmt.Sprintf("op2.Restore(%q)", path)
	c, err := checkpointContents(what, nil)
	if err != nil {
		return nil, err
	}
	if err := mpiFatal(c.agree(what + " " + c.layout())); err != nil {
		return nil, fmt.Errorf("op2: %s: %w", what, err)
	}
	r, err := c.plan(path)
	if r != nil && r.f != nil {
		defer r.f.Close()
	}
	// Every rank checks the file before any rank changes anything.
	if err := mpiFatal(c.agreeErr(what, err)); err != nil {
		return nil, fmt.Errorf("op2: %s: %w", what, err)
	}
	if err := mpiFatal(c.agreeErr(what+" read", r.apply())); err != nil {
		return nil, fmt.Errorf("op2: %s: %w", what, err)
	}
	return r.state, nil
}

// ckptRestore is a checked plan of what Restore reads where.
type ckptRestore struct {
	c      *ckptContents
	f      *h5.File
	size   int64 // the file's
	dats   []string
	global []string
	state  map[string][]byte

	// The file's names: each dat's and its set's, each Global's, each
	// state key, in the file's order.
	datNames    [][2]string
	globalNames []string
	keys        []string
}

// plan opens the file and matches its contents with the program's,
// changing nothing.
func (c *ckptContents) plan(path string) (*ckptRestore, error) {
	r, head, err := openCheckpoint(path)
	if err != nil {
		return r, err
	}
	r.c = c
	f := r.f
	// Dats and Globals: the file's entries by name, set, dim and type, in order.
	pending := map[string][]string{}
	for k := range int(head[2]) {
		name := "dats/" + strconv.Itoa(k)
		key, err := r.key(name, r.datNames[k][0], r.datNames[k][1], true)
		if err != nil {
			return r, err
		}
		pending[key] = append(pending[key], name)
	}
	for k := range int(head[3]) {
		name := "globals/" + strconv.Itoa(k)
		key, err := r.key(name, r.globalNames[k], "", false)
		if err != nil {
			return r, err
		}
		pending[key] = append(pending[key], name)
	}
	take := func(key string) string {
		if q := pending[key]; len(q) > 0 {
			pending[key] = q[1:]
			return q[0]
		}
		return ""
	}
	for _, s := range c.dats {
		name := take(datKey(s.Name, s.Set.Name, s.Dim, s.Type.CName()))
		if name == "" {
			return r, fmt.Errorf("%s holds no dat %q on set %q of dim %d and type %s", path, s.Name, s.Set.Name, s.Dim, s.Type.CName())
		}
		if v, found, err := f.IntAttr(name, "saved"); err == nil && found && v == 0 {
			r.dats = append(r.dats, "") // an automatic checkpoint's: written before it is read
			continue
		}
		if err := r.shape(name, setOf(s.Set).GlobalSize(), s.Dim, s.Type); err != nil {
			return r, fmt.Errorf("dat %q on set %q: %w", s.Name, s.Set.Name, err)
		}
		r.dats = append(r.dats, name)
	}
	for _, s := range c.globals {
		name := take(datKey(s.Name, "", s.Dim, s.Type.CName()))
		if name == "" {
			return r, fmt.Errorf("%s holds no global %q of dim %d and type %s", path, s.Name, s.Dim, s.Type.CName())
		}
		if err := r.shape(name, s.Dim, 1, s.Type); err != nil {
			return r, fmt.Errorf("global %q: %w", s.Name, err)
		}
		r.global = append(r.global, name)
	}
	for _, k := range c.consts {
		name := "consts/" + k.Name
		if ok, err := f.Exists(name); err != nil || !ok {
			return r, fmt.Errorf("%s holds no constant %q", path, k.Name)
		}
		// Matched by type, as dats and Globals are: int and unsigned int
		// have one size and class, and would convert (-5 into 0).
		if typ, found, err := f.StringAttr(name, "type"); err != nil || !found {
			return r, fmt.Errorf("constant %q: %s: its type attribute cannot be read", k.Name, name)
		} else if typ != k.Type.CName() {
			return r, fmt.Errorf("constant %q: saved as %s, declared %s", k.Name, typ, k.Type.CName())
		}
		if err := r.shape(name, k.Dim, 1, k.Type); err != nil {
			return r, fmt.Errorf("constant %q: %w", k.Name, err)
		}
	}
	return r, r.readState(path, int(head[5]))
}

// readState reads the n entries of the program's state.
func (r *ckptRestore) readState(path string, n int) error {
	for k := range n {
		name := "user/" + strconv.Itoa(k)
		key := r.keys[k]
		sh, err := r.stat(name)
		if err != nil {
			return err
		}
		v := make([]byte, sh.Rows)
		if err := r.read(name, h5.Uint8, 1, 0, sh.Rows, 1, hostPtr(v)); err != nil {
			return err
		}
		r.state[key] = v
	}
	return nil
}

// openCheckpoint opens a checkpoint and reads its header.
func openCheckpoint(path string) (*ckptRestore, []int32, error) {
	fi, err := regfile.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	f, err := h5.Open(path, false)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %w", path, err)
	}
	r := &ckptRestore{f: f, size: fi.Size(), state: map[string][]byte{}}
	head := make([]int32, 6)
	if err := r.read("op2_checkpoint", h5.Int32, 4, 0, 6, 1, unsafe.Pointer(&head[0])); err != nil {
		return r, nil, fmt.Errorf("%s is not a GoOP2 checkpoint: %w", path, err)
	}
	if head[0] < oldestCheckpoint || head[0] > checkpointVersion {
		return r, nil, fmt.Errorf("%s: checkpoint format %d, this GoOP2 reads formats %d to %d", path, head[0], oldestCheckpoint, checkpointVersion)
	}
	for _, n := range head[2:] {
		if n < 0 {
			return r, nil, fmt.Errorf("%s: the header holds negative counts %v", path, head)
		}
	}
	var nerr error
	if head[0] == 1 {
		nerr = r.attrNames(head)
	} else {
		nerr = r.readNames(head)
	}
	if nerr != nil {
		return r, nil, fmt.Errorf("%s: %w", path, nerr)
	}
	return r, head, nil
}

// readNames reads the names of a checkpoint of format 2 from op2_names.
func (r *ckptRestore) readNames(head []int32) error {
	const name = "op2_names"
	sh, err := r.stat(name)
	if err != nil {
		return err
	}
	if sh.NDims != 1 {
		return fmt.Errorf("%s is not a list of bytes (%d dimensions)", name, sh.NDims)
	}
	b := make([]byte, sh.Rows)
	if err := r.read(name, h5.Uint8, 1, 0, sh.Rows, 1, hostPtr(b)); err != nil {
		return err
	}
	// Each name takes a byte at least: a forged header's counts cannot
	// make this allocate more than the file holds.
	if n := 2*int64(head[2]) + int64(head[3]) + int64(head[5]); n > int64(len(b)) {
		return fmt.Errorf("%s holds %d bytes, too few for the %d names the header counts", name, len(b), n)
	}
	next := func() (string, error) {
		n, w := binary.Uvarint(b)
		if w <= 0 || n > uint64(len(b)-w) {
			return "", fmt.Errorf("%s is cut short or garbled", name)
		}
		s := string(b[w : w+int(n)])
		b = b[w+int(n):]
		return s, nil
	}
	r.datNames = make([][2]string, head[2])
	for k := range r.datNames {
		for i := range 2 {
			if r.datNames[k][i], err = next(); err != nil {
				return err
			}
		}
	}
	r.globalNames = make([]string, head[3])
	for k := range r.globalNames {
		if r.globalNames[k], err = next(); err != nil {
			return err
		}
	}
	r.keys = make([]string, head[5])
	for k := range r.keys {
		if r.keys[k], err = next(); err != nil {
			return err
		}
	}
	if len(b) > 0 {
		return fmt.Errorf("%s holds %d bytes after the names the header counts", name, len(b))
	}
	return nil
}

// attrNames reads the names of a checkpoint of format 1 from the
// attributes of its entries.
func (r *ckptRestore) attrNames(head []int32) error {
	attr := func(name, a string) (string, error) {
		s, found, err := r.f.StringAttr(name, a)
		if err != nil || !found {
			return "", fmt.Errorf("%s: its %s attribute cannot be read", name, a)
		}
		return s, nil
	}
	// Appended, not allocated from the header's counts: a forged count
	// fails at the first entry missing.
	for k := range int(head[2]) {
		name := "dats/" + strconv.Itoa(k)
		var v [2]string
		for i, a := range []string{"name", "set"} {
			s, err := attr(name, a)
			if err != nil {
				return err
			}
			v[i] = s
		}
		r.datNames = append(r.datNames, v)
	}
	for k := range int(head[3]) {
		s, err := attr("globals/"+strconv.Itoa(k), "name")
		if err != nil {
			return err
		}
		r.globalNames = append(r.globalNames, s)
	}
	for k := range int(head[5]) {
		s, err := attr("user/"+strconv.Itoa(k), "key")
		if err != nil {
			return fmt.Errorf("user/%d has no key attribute", k)
		}
		r.keys = append(r.keys, s)
	}
	return nil
}

// checkpointState reads the state a checkpoint holds, and nothing else.
func checkpointState(path string) (map[string][]byte, error) {
	r, head, err := openCheckpoint(path)
	if r != nil {
		defer r.f.Close()
	}
	if err != nil {
		return nil, err
	}
	if err := r.readState(path, int(head[5])); err != nil {
		return nil, err
	}
	return r.state, nil
}

func datKey(name, set string, dim int, typ string) string {
	return fmt.Sprintf("%q %q %d %q", name, set, dim, typ)
}

// key is the key of a dat (or Global) entry of the file: its name and
// set's name, and its attributes.
func (r *ckptRestore) key(name, datName, setName string, dat bool) (string, error) {
	typ, found, err := r.f.StringAttr(name, "type")
	if err != nil || !found {
		return "", fmt.Errorf("%s: its type attribute cannot be read", name)
	}
	dim := 0
	if dat {
		d, found, err := r.f.IntAttr(name, "dim")
		if err != nil || !found {
			return "", fmt.Errorf("%s: its dim attribute cannot be read", name)
		}
		dim = int(d)
	} else {
		sh, err := r.stat(name)
		if err != nil {
			return "", err
		}
		dim = sh.Rows
	}
	return datKey(datName, setName, dim, typ), nil
}

// stat describes a dataset, refusing one whose values the file does not
// hold (a truncated or forged file).
func (r *ckptRestore) stat(name string) (h5.Shape, error) {
	sh, err := r.f.Stat(name)
	if err != nil {
		return sh, fmt.Errorf("%s: %w", name, err)
	}
	bytes := sh.ElemCount * uint64(sh.Size)
	if sh.Filters == 0 && (bytes > sh.Storage || bytes > uint64(r.size)) {
		return sh, fmt.Errorf("%s claims %d bytes of values, but the file stores %d and is %d bytes long", name, bytes, sh.Storage, r.size)
	}
	return sh, nil
}

// shape checks that a dataset holds rows × dim values of t's kind and size.
func (r *ckptRestore) shape(name string, rows, dim int, t core.ScalarType) error {
	sh, err := r.stat(name)
	if err != nil {
		return err
	}
	class, signed := 1, t != core.Uint32
	if t == core.Int32 || t == core.Int64 || t == core.Uint32 {
		class = 0
	}
	if sh.Rows != rows || sh.Dim != dim || sh.Class != class || sh.Size != t.Size() || (class == 0 && sh.Signed != signed) {
		return fmt.Errorf("%s holds %d × %d %s values; the program's are %d × %d %s", name, sh.Rows, sh.Dim, sh.TypeName, rows, dim, t.CName())
	}
	return nil
}

func (r *ckptRestore) read(name string, typ h5.Type, ndims, start, count, dim int, buf unsafe.Pointer) error {
	if err := r.f.Read(name, typ, ndims, start, count, dim, buf); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// apply reads the values into the program's dats, Globals and constants.
func (r *ckptRestore) apply() error {
	c := r.c
	for k, s := range c.dats {
		if r.dats[k] == "" {
			continue
		}
		if err := r.dat(r.dats[k], s); err != nil {
			return fmt.Errorf("dat %q on set %q: %w", s.Name, s.Set.Name, err)
		}
	}
	for k, s := range c.globals {
		if err := s.HostAccess(true); err != nil {
			return err
		}
		if err := r.read(r.global[k], h5Type(s.Type), 1, 0, s.Dim, 1, s.Host); err != nil {
			return err
		}
	}
	for _, k := range c.consts {
		if err := r.read("consts/"+k.Name, h5Type(k.Type), 1, 0, k.Dim, 1, k.Host); err != nil {
			return err
		}
		k.Version.Add(1)
	}
	return nil
}

// dat reads a dat's values: every local element's, halo included, from
// the row of its declared number.
func (r *ckptRestore) dat(name string, s *core.Storage) error {
	elem := s.Dim * s.Type.Size()
	typ := h5Type(s.Type)
	h, ok := s.Set.Halo.(*dist.SetHalo)
	var local []byte
	if r.c.w == nil || !ok {
		rows := s.Set.Owned
		all := make([]byte, rows*elem)
		if err := r.read(name, typ, 2, 0, rows, s.Dim, hostPtr(all)); err != nil {
			return err
		}
		local = all
		if decl := s.Set.Declared; decl != nil {
			local = make([]byte, len(all))
			for i, g := range decl {
				copy(local[i*elem:(i+1)*elem], all[int(g)*elem:(int(g)+1)*elem])
			}
		}
	} else {
		start, count := mesh.Block(h.GlobalSize, r.c.w.Rank(), r.c.w.Size())
		block := make([]byte, count*elem)
		if err := r.read(name, typ, 2, start, count, s.Dim, hostPtr(block)); err != nil {
			return err
		}
		var err error
		if local, err = dist.FromBlocks(r.c.w, h.Global[:s.Set.Total], block, elem, h.GlobalSize); err != nil {
			return mpiFatal(err)
		}
	}
	if err := s.HostAccess(true); err != nil {
		return err
	}
	if len(local) > 0 {
		copy(unsafe.Slice((*byte)(s.Host), len(local)), local)
	}
	if ok && r.c.w != nil {
		s.HaloStale = false // the halo got its owners' values too
	}
	return nil
}
