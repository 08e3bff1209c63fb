// Package checkpoint reads and writes GoOP2's checkpoint files: the
// values of a program's dats, Globals and constants, and its own state,
// in one HDF5 file (internal/h5) that a run on any number of MPI ranks
// can restore. The op2 package's Checkpoint and Restore, and the
// engine's automatic checkpoints, list what to save (Program) and call
// Write, Begin, Restore or State; this package knows nothing of the
// lock, the runtimes or the API's objects.
//
// A checkpoint is an HDF5 file holding:
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
//     bytes, attribute key;
//   - "op2_maps" (written since 2026-11-29; a file without it restores
//     unchecked): bytes, per map every rank held, its name, its sets'
//     names (uvarint lengths and bytes) and its fingerprint (8 bytes,
//     dist.Print.Sum), which a restore compares with the program's
//     maps of the same names.
//
// The name, set and key attributes are for people reading the file
// (h5dump): fixed-length strings of at most 255 bytes, cut there and at a
// NUL. Format 1 had no op2_names, and Restore reads its names from them.
package checkpoint

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/mpi"
)

// version is the format Write writes.
const version = 2

// oldest is the oldest format Restore reads.
const oldest = 1

// Program is what a checkpoint holds of a program, listed alike on every
// rank.
type Program struct {
	// World is the job when it has several ranks; nil otherwise.
	World *mpi.World
	// Partitioned says whether the mesh is partitioned (asked only with
	// a World).
	Partitioned bool
	// Dats are the dats saved and restored, in declaration order.
	Dats []*core.Storage
	// Omitted are the live dats left out (op2's SetNoCheckpoint), in
	// declaration order: a restore lines a file's dats of a name up with
	// the program's, these included, when the file saved them.
	Omitted []*core.Storage
	// Globals are the live Globals, in declaration order.
	Globals []*core.Storage
	// Consts are the constants saved and restored, in any order.
	Consts []*core.Const
	// Fatal ends the job when err says that an MPI wait ran out of time;
	// any other error it returns as it is.
	Fatal func(err error) error
	// API makes err an error as the API returns it (the engine's
	// API.Internal: "op2: " before the message); nil leaves it as it is.
	API func(err error) error
	// MapPrints, when not nil, returns the fingerprints of the program's
	// maps (collective under MPI): a checkpoint keeps them, and a
	// restore refuses a file whose maps of a name differ from the
	// program's (another mesh of the same sizes).
	MapPrints func() ([]MapPrint, error)
	// Automatic says the restore is an automatic checkpoint's, at the
	// loop it was written before: a file whose state has AutoKey's keys
	// restores only so (its dats saved without values are written by
	// the loops before they are read).
	Automatic bool
}

// MapPrint is a map's fingerprint: its name, its sets' names, and
// dist.Print.Sum of its table in the declared numbering over every
// rank.
type MapPrint struct {
	Name, From, To string
	Sum            uint64
}

// key is what a map is matched by between a file and a program.
func (m MapPrint) key() string { return fmt.Sprintf("%q %q %q", m.Name, m.From, m.To) }

// encodeMapPrints is the op2_maps dataset's bytes: each map's three
// names (uvarint length, bytes) and sum (8 bytes, little-endian).
func encodeMapPrints(maps []MapPrint) []byte {
	var b []byte
	for _, m := range maps {
		for _, s := range []string{m.Name, m.From, m.To} {
			b = binary.AppendUvarint(b, uint64(len(s)))
			b = append(b, s...)
		}
		b = binary.LittleEndian.AppendUint64(b, m.Sum)
	}
	return b
}

// decodeMapPrints reads what encodeMapPrints wrote.
func decodeMapPrints(b []byte) ([]MapPrint, error) {
	var out []MapPrint
	for len(b) > 0 {
		var names [3]string
		for k := range names {
			n, w := binary.Uvarint(b)
			if w <= 0 || n > uint64(len(b)-w) {
				return nil, fmt.Errorf("op2_maps is cut short")
			}
			names[k], b = string(b[w:w+int(n)]), b[w+int(n):]
		}
		if len(b) < 8 {
			return nil, fmt.Errorf("op2_maps is cut short")
		}
		out = append(out, MapPrint{Name: names[0], From: names[1], To: names[2], Sum: binary.LittleEndian.Uint64(b)})
		b = b[8:]
	}
	return out, nil
}

// AutoKey starts the keys of the state automatic checkpoints keep; the
// program's own state may not use it.
const AutoKey = "op2."

// contents is what a checkpoint holds, listed the same way on every
// rank.
type contents struct {
	w     *mpi.World // the job when it has several ranks; nil otherwise
	fatal func(error) error
	api   func(error) error // Program.API
	// automatic is Program.Automatic.
	automatic bool
	dats      []*core.Storage
	omitted   []*core.Storage // Program.Omitted
	mapPrints func() ([]MapPrint, error)
	maps      []MapPrint // mapPrints', once the ranks agree on the contents
	globals   []*core.Storage
	consts    []*core.Const // by name
	keys      []string      // the state's, sorted
	state     map[string][]byte
}

// newContents lists what to save or restore (what names the call).
func newContents(what string, p Program, state map[string][]byte) (*contents, error) {
	c := &contents{state: state, fatal: p.Fatal, api: p.API, dats: p.Dats, omitted: p.Omitted, mapPrints: p.MapPrints, globals: p.Globals, automatic: p.Automatic}
	asIs := func(err error) error { return err }
	if c.fatal == nil {
		c.fatal = asIs
	}
	if c.api == nil {
		c.api = asIs
	}
	if w := p.World; w != nil && w.Size() > 1 {
		if !p.Partitioned {
			return nil, c.api(fmt.Errorf("%s: the mesh is not partitioned yet: call it after op2.Partition", what))
		}
		c.w = w
	}
	c.consts = slices.Clone(p.Consts)
	slices.SortFunc(c.consts, func(a, b *core.Const) int { return cmp.Compare(a.Name, b.Name) })
	for k := range state {
		c.keys = append(c.keys, k)
	}
	slices.Sort(c.keys)
	return c, nil
}

func (c *contents) rank() int {
	if c.w == nil {
		return 0
	}
	return c.w.Rank()
}

// layout is a short fingerprint of the contents, for the ranks to agree on.
func (c *contents) layout() string {
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

func (c *contents) agree(what string) error { return c.agreeErr(what, nil) }

func (c *contents) agreeErr(what string, err error) error {
	if c.w == nil {
		return err
	}
	return dist.AgreeStep(c.w, what, err)
}

// names is the op2_names dataset of the checkpoint.
func (c *contents) names() []byte {
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

// GlobalSize is the number of elements of set s over all ranks (its
// owned elements without MPI).
func GlobalSize(s *core.Set) int {
	if h, ok := s.Halo.(*dist.SetHalo); ok {
		return h.GlobalSize
	}
	return s.Owned
}

// ptr is the address of b's first byte, nil when b is empty.
func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

// readMapPrints computes the program's map fingerprints into c.maps
// (collective: every rank calls it after agreeing on the contents).
func (c *contents) readMapPrints() error {
	if c.mapPrints == nil {
		return nil
	}
	maps, err := c.mapPrints()
	if err != nil {
		return err
	}
	c.maps = maps
	return nil
}
