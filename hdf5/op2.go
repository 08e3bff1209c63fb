package hdf5

import (
	"cmp"
	"fmt"
	"slices"
	"unsafe"

	"github.com/goop2/op2"
)

// DeclareSet declares the set stored under name (op_decl_set_hdf5). Under
// MPI each rank declares its block of it (see Block).
func (f *File) DeclareSet(name string) (*op2.Set, error) {
	n, err := f.SetSize(name)
	if err != nil {
		return nil, err
	}
	_, count := Block(n, op2.Rank(), op2.Ranks())
	s, err := op2.NewSet(count, name)
	if err != nil {
		return nil, f.dsErr(name, err)
	}
	return s, nil
}

// DeclareSetInferSize declares the set name whose size is the number of
// rows of dataset, a map or dat stored on it (OP2's
// op_decl_set_hdf5_infer_size), for files that store no set sizes. Under
// MPI each rank declares its block of it (see Block).
func (f *File) DeclareSetInferSize(name, dataset string) (*op2.Set, error) {
	info, err := f.Info(dataset)
	if err != nil {
		return nil, err
	}
	_, count := Block(info.Rows, op2.Rank(), op2.Ranks())
	s, err := op2.NewSet(count, name)
	if err != nil {
		return nil, f.dsErr(dataset, err)
	}
	return s, nil
}

// DeclareMap declares the map stored under name from one set to another
// with arity entries per element (op_decl_map_hdf5). The dataset must have
// arity columns and as many rows as from has elements over all ranks;
// under MPI each rank reads the rows of its block of from. The file is in
// the declared numbering, as WriteMap writes it: after op2.Renumber
// reordered from, each element gets the row of its declared number, and
// after it reordered to, each entry is translated to the target's new
// number, so that the map connects the same elements as the file says.
// Maps are declared before op2.Partition (as op2.NewMap requires): after
// it DeclareMap returns an error. A dataset of 64-bit integers (what
// WriteMap writes for a target set numbered beyond int32) is declared
// with op2.NewMap64.
func (f *File) DeclareMap(from, to *op2.Set, arity int, name string) (*op2.Map, error) {
	if from == nil || to == nil {
		return nil, f.dsErr(name, fmt.Errorf("source and target sets must not be nil"))
	}
	if op2.Partitioned() {
		return nil, f.dsErr(name, fmt.Errorf("map declared after op2.Partition: declare every map before partitioning the mesh"))
	}
	if s, err := f.stat(name); err == nil && s.Class == 0 && s.Size == 8 {
		return f.declareMap64(from, to, arity, name)
	}
	v, err := readElements[int32](f, name, arity, from)
	if err != nil {
		return nil, err
	}
	if f.mapBase != 0 {
		for i := range v {
			if v[i] < f.mapBase {
				return nil, f.dsErr(name, fmt.Errorf("entry %d of this rank's rows is %d, but the file's map tables are %d-based (SetMapBase)", i, v[i], f.mapBase))
			}
			v[i] -= f.mapBase
		}
	}
	if op2.Ranks() == 1 {
		if inv := inverse(declared(to)); inv != nil {
			// Entries outside the target set stay as they are, for
			// op2.NewMap to refuse by their value in the file.
			for i, t := range v {
				if t >= 0 && int(t) < len(inv) {
					v[i] = inv[t]
				}
			}
		}
	}
	m, err := op2.NewMap(from, to, arity, v, name)
	if err != nil {
		return nil, f.dsErr(name, err)
	}
	return m, nil
}

// readElements reads the rows of dataset name (dim columns) that hold the
// elements of set on this rank, element after element: the rank's block
// while a distributed mesh is still to be partitioned, the row of each
// element's declared number otherwise (the rows in order, unless
// op2.Renumber or op2.Partition changed the numbering).
func readElements[T op2.Scalar](f *File, name string, dim int, set *op2.Set) ([]T, error) {
	info, err := f.Info(name)
	if err != nil {
		return nil, err
	}
	if op2.Partitioned() {
		if info.Rows != set.GlobalSize() {
			return nil, f.dsErr(name, fmt.Errorf("has %d rows, but set %q has %d elements over all ranks", info.Rows, set.Name(), set.GlobalSize()))
		}
		return readPicked[T](f, name, dim, info.Rows, declaredRows(set))
	}
	start, err := f.blockOf(name, set)
	if err != nil {
		return nil, err
	}
	if op2.Ranks() == 1 {
		if rows := declared(set); rows != nil {
			return readPicked[T](f, name, dim, info.Rows, widen(rows))
		}
	}
	return readRows[T](f, name, dim, start, set.Size())
}

// blockOf checks that the dataset has one row per element of set (over
// all ranks, split as Block does) and returns the first row of this rank.
func (f *File) blockOf(name string, set *op2.Set) (int, error) {
	info, err := f.Info(name)
	if err != nil {
		return 0, err
	}
	start, count := Block(info.Rows, op2.Rank(), op2.Ranks())
	if count != set.Size() {
		if op2.Ranks() > 1 {
			return 0, f.dsErr(name, fmt.Errorf("has %d rows; rank %d's block of them is %d, but its set %q has %d elements", info.Rows, op2.Rank(), count, set.Name(), set.Size()))
		}
		return 0, f.dsErr(name, fmt.Errorf("has %d rows, but set %q has %d elements", info.Rows, set.Name(), set.Size()))
	}
	return start, nil
}

// declared is the declared number of each of set's owned elements, or nil
// when that is the element's own number.
func declared(set *op2.Set) []int32 {
	d := set.DeclaredNumbers()
	for i, g := range d {
		if int(g) != i {
			return d
		}
	}
	return nil
}

// inverse is the permutation that undoes p (nil for nil).
func inverse(p []int32) []int32 {
	if p == nil {
		return nil
	}
	inv := make([]int32, len(p))
	for k, g := range p {
		inv[g] = int32(k)
	}
	return inv
}

// readWindow is the most rows readPicked reads at once beyond those it
// returns.
const readWindow = 1 << 16

// readPicked reads row rows[k] of dataset name (dim columns, total rows)
// as element k of the result. It reads the rows in increasing order, in
// windows of at most max(readWindow, len(rows)) rows that hold at least
// one of them, so that a rank reading its scattered elements of a large
// dataset never holds much more than its own rows.
func readPicked[T op2.Scalar](f *File, name string, dim, total int, rows []int64) ([]T, error) {
	order := make([]int32, len(rows))
	for k := range order {
		if r := rows[k]; r < 0 || r >= int64(total) {
			return nil, f.dsErr(name, fmt.Errorf("element %d's declared number %d is outside its %d rows", k, r, total))
		}
		order[k] = int32(k)
	}
	slices.SortFunc(order, func(a, b int32) int { return cmp.Compare(rows[a], rows[b]) })
	window := max(readWindow, len(rows))
	out := make([]T, len(rows)*dim)
	for i := 0; i < len(order); {
		lo := int(rows[order[i]])
		j := i
		for j < len(order) && int(rows[order[j]]) < lo+window {
			j++
		}
		hi := int(rows[order[j-1]]) + 1
		buf, err := readRows[T](f, name, dim, lo, hi-lo)
		if err != nil {
			return nil, err
		}
		for ; i < j; i++ {
			k, r := int(order[i]), int(rows[order[i]])-lo
			copy(out[k*dim:(k+1)*dim], buf[r*dim:(r+1)*dim])
		}
	}
	return out, nil
}

// DeclareDat declares the dat stored under name on set with dim
// components per element (op_decl_dat_hdf5). The dataset must have dim
// columns, one row per element of set over all ranks, and elements of
// T's kind (integer or floating point; other widths are converted, and a
// value T cannot hold is an error). The file is in the declared
// numbering, as WriteDat writes it: each element gets the row of its
// declared number (Set.DeclaredNumbers), also after op2.Renumber
// reordered the set. Under MPI each rank reads the rows of its block
// before op2.Partition, and the rows of its owned elements after it (the
// halo gets the owners' values at the first exchange).
func DeclareDat[T op2.Scalar](f *File, set *op2.Set, dim int, name string) (*op2.Dat[T], error) {
	return DeclareDatAs[T](f, set, dim, name, name)
}

// DeclareDatAs is DeclareDat reading the dataset at path dataset (a name,
// or a path through groups such as "/run3/q") for a dat named name.
func DeclareDatAs[T op2.Scalar](f *File, set *op2.Set, dim int, dataset, name string) (*op2.Dat[T], error) {
	if set == nil {
		return nil, f.dsErr(dataset, fmt.Errorf("the set must not be nil"))
	}
	v, err := readElements[T](f, dataset, dim, set)
	if err != nil {
		return nil, err
	}
	d, err := op2.NewDat(set, dim, v, name)
	if err != nil {
		return nil, f.dsErr(dataset, err)
	}
	return d, nil
}

// ReadDat reads the dataset at path dataset into d's values (as
// DeclareDat reads a new dat: the rows of d's elements, in the declared
// numbering), for a restart from a file another run wrote. The dataset
// must have d's dim and one row per element of d's set over all ranks.
// Under MPI every rank reads its own elements; the next loop that reads
// d's halo exchanges it.
func ReadDat[T op2.Scalar](f *File, d *op2.Dat[T], dataset string) error {
	if d == nil {
		return f.dsErr(dataset, fmt.Errorf("the dat must not be nil"))
	}
	v, err := readElements[T](f, dataset, d.Dim(), d.Set())
	if err != nil {
		return err
	}
	w, err := d.DataWOErr()
	if err != nil {
		return err
	}
	copy(w, v)
	return nil
}

// DeclareConst declares the constant stored under name, of dim values
// (op_get_const_hdf5 followed by op_decl_const).
func DeclareConst[T op2.Scalar](f *File, dim int, name string) (*op2.Const[T], error) {
	v, err := ReadConst[T](f, name, dim)
	if err != nil {
		return nil, err
	}
	c, err := op2.NewConst(dim, v, name)
	if err != nil {
		return nil, f.dsErr(name, err)
	}
	return c, nil
}

// WriteSet writes the set's size over all ranks (s.GlobalSize).
func (f *File) WriteSet(s *op2.Set) error {
	return f.WriteSetSize(s.Name(), s.GlobalSize())
}

// WriteMap writes the map's table in the declared numbering. Under MPI it
// is collective: in a file written in parallel (see Create) each rank
// writes its block of the rows (op2.Map.GatherBlock), else rank 0 writes
// them all (op2.Map.Gather).
// The entries are written with the file's map base (SetMapBase).
func (f *File) WriteMap(m *op2.Map) error {
	if wideMap(m, f.mapBase) {
		return f.writeMap64(m)
	}
	if f.world != nil {
		start, v, err := m.GatherBlock()
		if err != nil {
			return f.dsErr(m.Name(), err)
		}
		for i := range v {
			v[i] += f.mapBase
		}
		rows := m.From().GlobalSize()
		if err := sizeAttr(rows); err != nil {
			return f.dsErr(m.Name(), err)
		}
		if err := writeBlocks(f, m.Name(), rows, m.Arity(), start, v); err != nil {
			return f.dsErr(m.Name(), err)
		}
		return f.attrs(m.Name(), int32(rows), m.Arity(), "int", 10)
	}
	v, err := m.Gather()
	if err != nil {
		return f.dsErr(m.Name(), err)
	}
	for i := range v {
		v[i] += f.mapBase
	}
	return f.WriteMapTable(m.Name(), m.Arity(), v)
}

// WriteDat writes the dat's values in the declared numbering, as
// op_dump_to_hdf5 writes each dat (op_fetch_data_hdf5_file for one). Under
// MPI it is collective: in a file written in parallel (see Create) each
// rank writes its block of the rows (op2.Dat.GatherBlock), else rank 0
// writes them all (op2.Dat.Gather).
func WriteDat[T op2.Scalar](f *File, d *op2.Dat[T]) error {
	return WriteDatAs(f, d, d.Name())
}

// WriteDatAs is WriteDat writing the dataset at path dataset (a name, or
// a path through groups such as "/run3/q", the groups created as needed),
// as OP2 writes a dat under another name (op_fetch_data_hdf5_file after
// renaming it).
func WriteDatAs[T op2.Scalar](f *File, d *op2.Dat[T], dataset string) error {
	if f.world != nil {
		start, v, err := d.GatherBlock()
		if err != nil {
			return f.dsErr(dataset, err)
		}
		if err := writeBlocks(f, dataset, d.Set().GlobalSize(), d.Dim(), start, v); err != nil {
			return f.dsErr(dataset, err)
		}
		_, tname, _ := elemType[T]()
		var z T
		return f.attrs(dataset, int32(d.Dim()*int(unsafe.Sizeof(z))), d.Dim(), tname, len(tname))
	}
	v, err := d.Gather()
	if err != nil {
		return f.dsErr(dataset, err)
	}
	return WriteArray(f, dataset, d.Dim(), v)
}

// checkRows checks that the dataset name has exactly n rows, one per
// element of the set setName.
func (f *File) checkRows(name, setName string, n int) error {
	info, err := f.Info(name)
	if err != nil {
		return err
	}
	if info.Rows != n {
		return f.dsErr(name, fmt.Errorf("has %d rows, but set %q has %d elements", info.Rows, setName, n))
	}
	return nil
}
