package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/h5"
	"github.com/goop2/op2/internal/mpi"
	"github.com/goop2/op2/internal/regfile"
)

// Write writes a checkpoint of p and state to path (see op2.Checkpoint):
// under a temporary name, renamed over path once every rank wrote it.
// The caller holds the lock with no recorded loop left.
func Write(p Program, path string, state map[string][]byte) error {
	cs, err := Begin(p, path, state, nil)
	if err != nil {
		return err
	}
	return cs.Finish(nil)
}

// Session is a checkpoint being written: its file is open under the
// temporary name until Finish renames it. The values of the dats in
// Deferred are not written yet (automatic checkpoints write them, or
// list them without values, as the loops after the checkpoint show
// whether they are read before being written whole).
type Session struct {
	c         *contents
	cw        *writer
	path, tmp string
	what      string
	forget    func() // regfile.Track's, for tmp
	// Deferred holds the dats whose values are not written yet, each
	// with its index in the checkpoint's dats.
	Deferred map[*core.Storage]int
}

// Begin opens the checkpoint's file and writes everything but the values
// of the dats deferred names.
func Begin(p Program, path string, state map[string][]byte, deferred func(*core.Storage) bool) (*Session, error) {
	what := fmt.Sprintf("op2.Checkpoint(%q)", path)
	c, err := newContents(what, p, state)
	if err != nil {
		return nil, err
	}
	if err := c.fatal(c.agree(what + " " + c.layout())); err != nil {
		return nil, c.api(fmt.Errorf("%s: %w", what, err))
	}
	if err := c.fatal(c.readMapPrints()); err != nil {
		return nil, c.api(fmt.Errorf("%s: %w", what, err))
	}
	tmp := path + ".partial"
	f, par, err := c.create(tmp)
	if err != nil {
		return nil, c.api(fmt.Errorf("%s: %s: %w", what, tmp, err))
	}
	cs := &Session{c: c, cw: &writer{f: f, w: c.w, par: par, fatal: c.fatal}, path: path, tmp: tmp, what: what,
		forget: regfile.Track(tmp), Deferred: map[*core.Storage]int{}}
	for k, s := range c.dats {
		if deferred != nil && deferred(s) {
			cs.Deferred[s] = k
		}
	}
	if err := c.write(cs.cw, cs.Deferred); err != nil {
		return nil, cs.Finish(err)
	}
	return cs, nil
}

// Resolve writes deferred dat s: its values (saved), or no values.
func (cs *Session) Resolve(s *core.Storage, saved bool) error {
	k, ok := cs.Deferred[s]
	if !ok {
		return nil
	}
	delete(cs.Deferred, s)
	return cs.c.writeDat(cs.cw, k, s, saved)
}

// Order returns the dats still deferred, in the checkpoint's order: under
// MPI every rank handles them alike.
func (cs *Session) Order() []*core.Storage {
	left := make([]*core.Storage, 0, len(cs.Deferred))
	for s := range cs.Deferred {
		left = append(left, s)
	}
	slices.SortFunc(left, func(a, b *core.Storage) int { return cs.Deferred[a] - cs.Deferred[b] })
	return left
}

// Finish writes the deferred dats' values, closes the file and, when
// every rank wrote it without error (werr is this rank's error so far),
// renames it over the checkpoint; else it removes it.
func (cs *Session) Finish(werr error) error {
	c := cs.c
	defer cs.forget()
	if werr == nil {
		for _, s := range cs.Order() {
			if werr = cs.Resolve(s, true); werr != nil {
				break
			}
		}
	}
	werr = errors.Join(werr, cs.cw.err)
	if f := cs.cw.f; f != nil {
		werr = errors.Join(werr, f.Close())
	}
	if err := c.fatal(c.agreeErr(cs.what, werr)); err != nil {
		if c.rank() == 0 {
			os.Remove(cs.tmp)
		}
		return c.api(fmt.Errorf("%s: %s: %w", cs.what, cs.tmp, err))
	}
	var rerr error
	if c.rank() == 0 {
		if rerr = publish(cs.tmp, cs.path); rerr != nil {
			os.Remove(cs.tmp) // the checkpoint at path, if any, stays
		}
	}
	if err := c.fatal(c.agreeErr(cs.what+" rename", rerr)); err != nil {
		return c.api(fmt.Errorf("%s: %w", cs.what, err))
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

// create opens tmp for writing: on every rank through MPI-IO when the
// job has several ranks and a parallel HDF5 library (par), else on rank 0
// only (the other ranks get nil).
func (c *contents) create(tmp string) (f *h5.File, par bool, err error) {
	if c.w != nil {
		f, par, err := h5.OpenOnRanks(c.w, tmp, true)
		if par || err != nil {
			return f, par, c.fatal(err)
		}
	}
	if c.rank() == 0 {
		f, err = h5.Create(tmp)
	}
	return f, false, c.agreeErr("op2.Checkpoint: create "+tmp, err)
}

// writer writes datasets in one of three ways: one process; every
// rank through MPI-IO (par); gathered to rank 0 (f nil on the others).
type writer struct {
	f     *h5.File
	w     *mpi.World
	par   bool
	fatal func(error) error
	err   error // gathered: rank 0's first failure; the ranks go on gathering
}

// root writes a dataset of values every rank holds alike, from rank 0.
func (cw *writer) root(name string, typ h5.Type, rows int, buf unsafe.Pointer) error {
	switch {
	case cw.par:
		return cw.f.WriteRoot(name, typ, 1, rows, 1, buf)
	case cw.f != nil && cw.err == nil:
		cw.err = cw.f.Write(name, typ, 1, rows, 1, buf)
	}
	return nil
}

// empty writes a dataset of no rows of dim columns.
func (cw *writer) empty(name string, typ h5.Type, dim int) error {
	switch {
	case cw.par:
		return cw.f.WriteBlock(name, typ, 0, dim, 0, 0, nil)
	case cw.f != nil && cw.err == nil:
		cw.err = cw.f.WriteRows(name, typ, 2, 0, dim, 0, 0, nil)
	}
	return nil
}

// attrs writes string and int attributes of a dataset.
func (cw *writer) attrs(name string, strs [][2]string, ints [][2]string) error {
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

// dat writes a dat's owned values in the declared numbering and returns
// their fingerprint over every rank (valuesSum).
func (cw *writer) dat(name string, s *core.Storage) (uint64, error) {
	// A rank whose copy cannot be read goes on to the reduction below,
	// with the others, and all fail there together.
	herr := s.HostAccess(false)
	h, ok := s.Set.Halo.(*dist.SetHalo)
	if herr != nil && (cw.w == nil || !ok) {
		return 0, herr
	}
	elem := s.Dim * s.Type.Size()
	owned := s.Set.Owned
	var vals []byte
	if herr == nil && s.Host != nil {
		vals = unsafe.Slice((*byte)(s.Host), owned*elem)
	} else {
		vals = make([]byte, owned*elem) // declared without values, never used: zeros
	}
	typ := h5Type(s.Type)
	var print dist.Print
	if cw.w == nil || !ok {
		if decl := s.Set.Declared; decl != nil {
			vals = toDeclared(vals, elem, decl)
		}
		if elem > 0 {
			print.AddRows(vals, elem, nil, 0, 0)
		}
		if cw.err == nil {
			cw.err = cw.f.WriteRows(name, typ, 2, owned, s.Dim, 0, owned, ptr(vals))
		}
		return print.Sum(), nil
	}
	if elem > 0 && herr == nil {
		print.AddRows(vals, elem, h.Global[:owned], h.Base, 0)
	}
	v := append(print[:], 0) // and how many ranks failed
	if herr != nil {
		v[3] = 1
	}
	if err := cw.w.AllreduceInt64(v, mpi.Sum); err != nil {
		return 0, cw.fatal(err)
	}
	switch {
	case herr != nil:
		return 0, herr
	case v[3] > 0:
		return 0, fmt.Errorf("its values could not be read on %d other rank(s)", v[3])
	}
	copy(print[:], v)
	rows := h.GlobalSize
	if cw.par {
		start, block, err := dist.ToBlocks(cw.w, h.Global[:owned], h.Base, vals, elem, rows)
		if err != nil {
			return 0, cw.fatal(err)
		}
		return print.Sum(), cw.f.WriteBlock(name, typ, rows, s.Dim, start, len(block)/max(elem, 1), ptr(block))
	}
	var all []byte
	if cw.w.Rank() == 0 {
		all = make([]byte, rows*elem)
	}
	if err := dist.GatherRows(cw.w, h.Global[:owned], h.Base, vals, elem, all); err != nil {
		return 0, cw.fatal(err)
	}
	if cw.f != nil && cw.err == nil {
		cw.err = cw.f.WriteRows(name, typ, 2, rows, s.Dim, 0, rows, ptr(all))
	}
	return print.Sum(), nil
}

// valuesSum is the fingerprint of values held alike by every rank (a
// Global's, a constant's, a state entry's): the Print of one row.
func valuesSum(b []byte) uint64 {
	var p dist.Print
	if len(b) > 0 {
		p.AddRows(b, len(b), nil, 0, 0)
	}
	return p.Sum()
}

// sumAttr is the attribute that holds a dataset's fingerprint, written
// as 16 hexadecimal digits: a restore refuses values that differ from it.
const sumAttr = "sum"

// sumText is fingerprint v as sumAttr holds it.
func sumText(v uint64) [2]string { return [2]string{sumAttr, fmt.Sprintf("%016x", v)} }

// toDeclared returns the owned elements' values (elem bytes each) of a
// renumbered set's storage in the declared numbering.
func toDeclared(vals []byte, elem int, decl []int32) []byte {
	out := make([]byte, len(decl)*elem)
	for i, g := range decl {
		copy(out[int(g)*elem:(int(g)+1)*elem], vals[i*elem:(i+1)*elem])
	}
	return out
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
func (c *contents) writeDat(cw *writer, k int, s *core.Storage, saved bool) error {
	name := "dats/" + strconv.Itoa(k)
	var err error
	var sum uint64
	if saved {
		sum, err = cw.dat(name, s)
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
	strs := [][2]string{{"name", s.Name}, {"set", s.Set.Name}, {"type", s.Type.CName()}}
	if saved {
		strs = append(strs, sumText(sum))
	} else {
		ints = append(ints, [2]string{"saved", "0"})
	}
	return cw.attrs(name, strs, ints)
}

// write writes every dataset of the checkpoint but the dats deferred.
func (c *contents) write(cw *writer, deferred map[*core.Storage]int) error {
	ranks := 1
	if c.w != nil {
		ranks = c.w.Size()
	}
	head := []int32{version, int32(ranks), int32(len(c.dats)), int32(len(c.globals)), int32(len(c.consts)), int32(len(c.keys))}
	if err := cw.root("op2_checkpoint", h5.Int32, len(head), unsafe.Pointer(&head[0])); err != nil {
		return err
	}
	names := c.names()
	if err := cw.root("op2_names", h5.Uint8, len(names), ptr(names)); err != nil {
		return err
	}
	if maps := encodeMapPrints(c.maps); len(maps) > 0 {
		if err := cw.root("op2_maps", h5.Uint8, len(maps), ptr(maps)); err != nil {
			return err
		}
	}
	for k, s := range c.dats {
		if _, later := deferred[s]; later {
			continue
		}
		if err := c.writeDat(cw, k, s, true); err != nil {
			return err
		}
	}
	var herr error
	for _, s := range c.globals {
		if err := s.HostAccess(false); err != nil && herr == nil {
			herr = fmt.Errorf("global %q: %w", s.Name, err)
		}
	}
	sums, err := c.rootSums(herr)
	if err != nil {
		return err
	}
	for k, s := range c.globals {
		name := "globals/" + strconv.Itoa(k)
		if err := cw.root(name, h5Type(s.Type), s.Dim, s.Host); err != nil {
			return err
		}
		if err := cw.attrs(name, [][2]string{{"name", s.Name}, {"type", s.Type.CName()}, sumText(sums[0])}, nil); err != nil {
			return err
		}
		sums = sums[1:]
	}
	for _, k := range c.consts {
		name := "consts/" + k.Name
		if err := cw.root(name, h5Type(k.Type), k.Dim, k.Host); err != nil {
			return err
		}
		if err := cw.attrs(name, [][2]string{{"type", k.Type.CName()}, sumText(sums[0])}, nil); err != nil {
			return err
		}
		sums = sums[1:]
	}
	for i, key := range c.keys {
		name := "user/" + strconv.Itoa(i)
		v := c.state[key]
		if err := cw.root(name, h5.Uint8, len(v), ptr(v)); err != nil {
			return err
		}
		if err := cw.attrs(name, [][2]string{{"key", key}, sumText(sums[0])}, nil); err != nil {
			return err
		}
		sums = sums[1:]
	}
	return cw.err
}

// rootSums returns the fingerprints of the values written from rank 0
// (root): each Global's, constant's and state entry's, in that order, as
// rank 0 holds them. A program whose ranks hold other values of them
// saves rank 0's, and the fingerprint written on every rank must be of
// those (collective). herr is this rank's failure to read its Globals:
// every rank then returns an error, together.
func (c *contents) rootSums(herr error) ([]uint64, error) {
	if c.w == nil && herr != nil {
		return nil, herr
	}
	var sums []uint64
	for _, s := range c.globals {
		if herr != nil {
			sums = append(sums, 0)
			continue
		}
		sums = append(sums, valuesSum(unsafe.Slice((*byte)(s.Host), s.Dim*s.Type.Size())))
	}
	for _, k := range c.consts {
		sums = append(sums, valuesSum(unsafe.Slice((*byte)(k.Host), k.Dim*k.Type.Size())))
	}
	for _, key := range c.keys {
		sums = append(sums, valuesSum(c.state[key]))
	}
	if c.w == nil {
		return sums, nil
	}
	v := make([]int64, len(sums)+1) // and how many ranks failed
	if c.w.Rank() == 0 {
		for i, s := range sums {
			v[i] = int64(s)
		}
	}
	if herr != nil {
		v[len(sums)] = 1
	}
	if err := c.w.AllreduceInt64(v, mpi.Sum); err != nil {
		return nil, c.fatal(err)
	}
	switch {
	case herr != nil:
		return nil, herr
	case v[len(sums)] > 0:
		return nil, fmt.Errorf("the Globals could not be read on %d other rank(s)", v[len(sums)])
	}
	for i := range sums {
		sums[i] = uint64(v[i])
	}
	return sums, nil
}
