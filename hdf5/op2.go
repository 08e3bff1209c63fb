package hdf5

import (
	"fmt"

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

// DeclareMap declares the map stored under name from one set to another
// with arity entries per element (op_decl_map_hdf5). The dataset must have
// arity columns and as many rows as from has elements over all ranks;
// under MPI each rank reads the rows of its block of from.
func (f *File) DeclareMap(from, to *op2.Set, arity int, name string) (*op2.Map, error) {
	if from == nil || to == nil {
		return nil, f.dsErr(name, fmt.Errorf("source and target sets must not be nil"))
	}
	start, err := f.blockOf(name, from)
	if err != nil {
		return nil, err
	}
	v, err := readRows[int32](f, name, arity, start, from.Size())
	if err != nil {
		return nil, err
	}
	m, err := op2.NewMap(from, to, arity, v, name)
	if err != nil {
		return nil, f.dsErr(name, err)
	}
	return m, nil
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

// DeclareDat declares the dat stored under name on set with dim
// components per element (op_decl_dat_hdf5). The dataset must have dim
// columns, one row per element of set over all ranks, and elements of
// T's kind (integer or floating point; other widths are converted, and a
// value T cannot hold is an error).
// Under MPI each rank reads the rows of its block.
func DeclareDat[T op2.Scalar](f *File, set *op2.Set, dim int, name string) (*op2.Dat[T], error) {
	if set == nil {
		return nil, f.dsErr(name, fmt.Errorf("the set must not be nil"))
	}
	start, err := f.blockOf(name, set)
	if err != nil {
		return nil, err
	}
	v, err := readRows[T](f, name, dim, start, set.Size())
	if err != nil {
		return nil, err
	}
	d, err := op2.NewDat(set, dim, v, name)
	if err != nil {
		return nil, f.dsErr(name, err)
	}
	return d, nil
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
// is collective (op2.Map.Gather) and rank 0 writes.
func (f *File) WriteMap(m *op2.Map) error {
	v, err := m.Gather()
	if err != nil {
		return f.dsErr(m.Name(), err)
	}
	return f.WriteMapTable(m.Name(), m.Arity(), v)
}

// WriteDat writes the dat's values in the declared numbering, as
// op_dump_to_hdf5 writes each dat (op_fetch_data_hdf5_file for one). Under
// MPI it is collective (op2.Dat.Gather) and rank 0 writes.
func WriteDat[T op2.Scalar](f *File, d *op2.Dat[T]) error {
	v, err := d.Gather()
	if err != nil {
		return f.dsErr(d.Name(), err)
	}
	return WriteArray(f, d.Name(), d.Dim(), v)
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
