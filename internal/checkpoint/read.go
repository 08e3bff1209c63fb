package checkpoint

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/goop2/op2/internal/collective"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/h5"
	"github.com/goop2/op2/internal/regfile"
)

// Restore loads the checkpoint at path into p's dats, Globals and
// constants and returns the state saved with it (see op2.Restore). Every
// rank checks the file before any changes anything, its values against
// the fingerprints written with them too (sum.go); a file that does not
// match is refused and nothing is changed. Under MPI each rank reads its
// own elements' rows, where they lie in few runs (direct.go), else its
// block, exchanged. The caller holds the lock with no recorded loop left.
func Restore(p Program, path string) (map[string][]byte, error) {
	what := fmt.Sprintf("op2.Restore(%q)", path)
	if p.Automatic {
		what = fmt.Sprintf("restart from the automatic checkpoint %q (OP2_CHECKPOINT)", path)
	}
	c, err := newContents(what, p, nil)
	if err != nil {
		return nil, err
	}
	if err := c.fatal(c.agree(what + " " + c.layout())); err != nil {
		return nil, c.api(fmt.Errorf("%s: %w", what, err))
	}
	if err := c.fatal(c.readMapPrints()); err != nil {
		return nil, c.api(fmt.Errorf("%s: %w", what, err))
	}
	r, err := c.plan(path)
	if r != nil && r.f != nil {
		defer r.f.Close()
	}
	// Every rank checks the file before any rank changes anything.
	if err := c.fatal(c.agreeErr(what, err)); err != nil {
		return nil, c.api(fmt.Errorf("%s: %w", what, err))
	}
	if err := c.fatal(c.agreeErr(what+" check", r.checkDats())); err != nil {
		return nil, c.api(fmt.Errorf("%s: %w", what, err))
	}
	if err := c.fatal(c.agreeErr(what+" read", r.apply())); err != nil {
		return nil, c.api(fmt.Errorf("%s: %w", what, err))
	}
	return r.state, nil
}

// restore is a checked plan of what Restore reads where.
type restore struct {
	c      *contents
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

	// Under MPI, the sets each rank reads directly (direct.go), and
	// their scratch buffer.
	direct  map[*core.Set]*directPlan
	scratch []byte
}

// plan opens the file and matches its contents with the program's,
// changing nothing.
func (c *contents) plan(path string) (*restore, error) {
	r, head, err := openCheckpoint(path)
	if err != nil {
		return r, err
	}
	r.c = c
	f := r.f
	if !c.automatic {
		for _, k := range r.keys {
			if strings.HasPrefix(k, AutoKey) {
				return r, fmt.Errorf("%s was written by automatic checkpoints (OP2_CHECKPOINT), at a loop in the middle of the program's steps, and may leave out dats the loops after it write: a run resumes from it by itself when OP2_CHECKPOINT names it; op2.Restore does not", path)
			}
		}
	}
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
	// A file that saved dats of a key the program now leaves out
	// (SetNoCheckpoint) as well as ones it saves: as many as the program
	// has of that key, both kinds, lined up in declaration order, the
	// omitted ones' entries dropped.
	saves, omits := map[string][]*core.Storage{}, map[string][]*core.Storage{}
	for _, s := range c.dats {
		k := datKey(s.Name, s.Set.Name, s.Dim, s.Type.CName())
		saves[k] = append(saves[k], s)
	}
	for _, s := range c.omitted {
		k := datKey(s.Name, s.Set.Name, s.Dim, s.Type.CName())
		omits[k] = append(omits[k], s)
	}
	for k, left := range omits {
		q, kept := pending[k], saves[k]
		if len(kept) == 0 || len(q) <= len(kept) || len(q) != len(kept)+len(left) {
			continue
		}
		all := slices.SortedFunc(slices.Values(append(slices.Clone(kept), left...)), func(a, b *core.Storage) int { return cmp.Compare(a.ID, b.ID) })
		var lined []string
		for i, s := range all {
			if !slices.Contains(left, s) {
				lined = append(lined, q[i])
			}
		}
		pending[k] = lined
	}
	taken := map[string]int{}
	take := func(key string) string {
		if q := pending[key]; len(q) > 0 {
			pending[key] = q[1:]
			taken[key]++
			return q[0]
		}
		return ""
	}
	// ambiguous refuses a file holding more entries of a key the program
	// has than the program declares: which is whose cannot be told (the
	// program may have dropped some of those the writer held), and taking
	// the first would restore another one's values.
	ambiguous := func(kind, name, set string, dim int, typ string) error {
		key := datKey(name, set, dim, typ)
		if left := len(pending[key]); left > 0 && taken[key] > 0 {
			on := ""
			if set != "" {
				on = fmt.Sprintf(" on set %q", set)
			}
			return fmt.Errorf("%s holds %d %ss %q%s of dim %d and type %s, and the program declares %d: which of them is which cannot be told (did the writer hold ones the program has since dropped?)",
				path, taken[key]+left, kind, name, on, dim, typ, taken[key])
		}
		return nil
	}
	for _, s := range c.dats {
		name := take(datKey(s.Name, s.Set.Name, s.Dim, s.Type.CName()))
		if name == "" {
			return r, fmt.Errorf("%s holds no dat %q on set %q of dim %d and type %s (it holds %d dats): was it declared after the checkpoint, or dropped by the program that wrote it before it was written (Go collected it: that run warned, naming it)? Declare the same dats, keep them reachable until Checkpoint returns, or leave this one out with SetNoCheckpoint", path, s.Name, s.Set.Name, s.Dim, s.Type.CName(), head[2])
		}
		if v, found, err := f.IntAttr(name, "saved"); err == nil && found && v == 0 {
			r.dats = append(r.dats, "") // an automatic checkpoint's: written before it is read
			continue
		}
		if err := r.shape(name, GlobalSize(s.Set), s.Dim, s.Type); err != nil {
			return r, fmt.Errorf("dat %q on set %q: %w", s.Name, s.Set.Name, err)
		}
		r.dats = append(r.dats, name)
	}
	for _, s := range c.globals {
		name := take(datKey(s.Name, "", s.Dim, s.Type.CName()))
		if name == "" {
			return r, fmt.Errorf("%s holds no global %q of dim %d and type %s (it holds %d globals)", path, s.Name, s.Dim, s.Type.CName(), head[3])
		}
		if err := r.shape(name, s.Dim, 1, s.Type); err != nil {
			return r, fmt.Errorf("global %q: %w", s.Name, err)
		}
		if err := r.checkValues(name, s.Type, s.Dim); err != nil {
			return r, fmt.Errorf("global %q: %w", s.Name, err)
		}
		r.global = append(r.global, name)
	}
	for _, s := range c.dats {
		if err := ambiguous("dat", s.Name, s.Set.Name, s.Dim, s.Type.CName()); err != nil {
			return r, err
		}
	}
	for _, s := range c.globals {
		if err := ambiguous("global", s.Name, "", s.Dim, s.Type.CName()); err != nil {
			return r, err
		}
	}
	if err := r.checkMaps(path); err != nil {
		return r, err
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
		if err := r.checkValues(name, k.Type, k.Dim); err != nil {
			return r, fmt.Errorf("constant %q: %w", k.Name, err)
		}
	}
	return r, r.readState(path, int(head[5]))
}

// checkMaps refuses a file whose maps (op2_maps; a file of an earlier
// GoOP2 has none) differ from the program's of the same name and sets:
// its values belong to another mesh, of the same sizes.
func (r *restore) checkMaps(path string) error {
	if ok, err := r.f.Exists("op2_maps"); err != nil || !ok || len(r.c.maps) == 0 {
		return nil
	}
	sh, err := r.stat("op2_maps")
	if err != nil {
		return err
	}
	b := make([]byte, sh.Rows)
	if err := r.read("op2_maps", h5.Uint8, 1, 0, sh.Rows, 1, ptr(b)); err != nil {
		return err
	}
	saved, err := decodeMapPrints(b)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	sums := map[string]uint64{}
	for _, m := range saved {
		sums[m.key()] = m.Sum
	}
	for _, m := range r.c.maps {
		if sum, ok := sums[m.key()]; ok && sum != m.Sum {
			return fmt.Errorf("%s was written with another map %q from set %q to set %q than the program's (other entries): its values belong to another mesh, or to this one numbered otherwise", path, m.Name, m.From, m.To)
		}
	}
	return nil
}

// readState reads the n entries of the program's state.
func (r *restore) readState(path string, n int) error {
	for k := range n {
		name := "user/" + strconv.Itoa(k)
		key := r.keys[k]
		sh, err := r.stat(name)
		if err != nil {
			return err
		}
		v := make([]byte, sh.Rows)
		if err := r.read(name, h5.Uint8, 1, 0, sh.Rows, 1, ptr(v)); err != nil {
			return err
		}
		if err := r.checkSum(name, valuesSum(v)); err != nil {
			return fmt.Errorf("state entry %q: %w", key, err)
		}
		r.state[key] = v
	}
	return nil
}

// openCheckpoint opens a checkpoint and reads its header.
func openCheckpoint(path string) (*restore, []int32, error) {
	fi, err := regfile.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	f, err := h5.Open(path, false)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %w", path, err)
	}
	r := &restore{f: f, size: fi.Size(), state: map[string][]byte{}}
	head := make([]int32, 6)
	if err := r.read("op2_checkpoint", h5.Int32, 4, 0, 6, 1, unsafe.Pointer(&head[0])); err != nil {
		return r, nil, fmt.Errorf("%s is not a GoOP2 checkpoint: %w", path, err)
	}
	if head[0] < oldest || head[0] > version {
		return r, nil, fmt.Errorf("%s: checkpoint format %d, this GoOP2 reads formats %d to %d", path, head[0], oldest, version)
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
func (r *restore) readNames(head []int32) error {
	const name = "op2_names"
	sh, err := r.stat(name)
	if err != nil {
		return err
	}
	if sh.NDims != 1 {
		return fmt.Errorf("%s is not a list of bytes (%d dimensions)", name, sh.NDims)
	}
	b := make([]byte, sh.Rows)
	if err := r.read(name, h5.Uint8, 1, 0, sh.Rows, 1, ptr(b)); err != nil {
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
func (r *restore) attrNames(head []int32) error {
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

// State reads the state the checkpoint at path holds, and nothing else.
func State(path string) (map[string][]byte, error) {
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
func (r *restore) key(name, datName, setName string, dat bool) (string, error) {
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
func (r *restore) stat(name string) (h5.Shape, error) {
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
func (r *restore) shape(name string, rows, dim int, t core.ScalarType) error {
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

func (r *restore) read(name string, typ h5.Type, ndims, start, count, dim int, buf unsafe.Pointer) error {
	if err := r.f.Read(name, typ, ndims, start, count, dim, buf); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// apply reads the values into the program's dats, Globals and constants.
func (r *restore) apply() error {
	c := r.c
	if c.w != nil {
		if err := r.planSets(); err != nil {
			return err
		}
	}
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
func (r *restore) dat(name string, s *core.Storage) error {
	elem := s.Dim * s.Type.Size()
	typ := h5Type(s.Type)
	h, ok := s.Set.Halo.(*dist.SetHalo)
	var local []byte
	if r.c.w == nil || !ok {
		rows := s.Set.Owned
		all := make([]byte, rows*elem)
		if err := r.read(name, typ, 2, 0, rows, s.Dim, ptr(all)); err != nil {
			return err
		}
		local = all
		if decl := s.Set.Declared; decl != nil {
			local = make([]byte, len(all))
			for i, g := range decl {
				copy(local[i*elem:(i+1)*elem], all[int(g)*elem:(int(g)+1)*elem])
			}
		}
	} else if p := r.direct[s.Set]; p != nil {
		var err error
		if r.scratch, err = r.readDirect(name, s, p, r.scratch); err != nil {
			return err
		}
		s.HaloStale = false // the halo got its owners' values too
		return nil
	} else {
		start, count := collective.Block(h.GlobalSize, r.c.w.Rank(), r.c.w.Size())
		block := make([]byte, count*elem)
		if err := r.read(name, typ, 2, start, count, s.Dim, ptr(block)); err != nil {
			return err
		}
		var err error
		if local, err = dist.FromBlocks(r.c.w, h.Global[:s.Set.Total], h.Base, block, elem, h.GlobalSize); err != nil {
			return r.c.fatal(err)
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
