package hdf5

import (
	"fmt"
	"math"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/h5"
)

// declareMap64 is DeclareMap for a dataset of 64-bit integers: the rows of
// this rank's block of from (or, on one rank, of its elements in the
// declared numbering) declared with op2.NewMap64, whose entries may be
// global numbers beyond int32 under MPI.
func (f *File) declareMap64(from, to *op2.Set, arity int, name string) (*op2.Map, error) {
	v, err := readElements[int64](f, name, arity, from)
	if err != nil {
		return nil, err
	}
	if f.mapBase != 0 {
		for i := range v {
			if v[i] < int64(f.mapBase) {
				return nil, f.dsErr(name, fmt.Errorf("entry %d of this rank's rows is %d, but the file's map tables are %d-based (SetMapBase)", i, v[i], f.mapBase))
			}
			v[i] -= int64(f.mapBase)
		}
	}
	if op2.Ranks() == 1 {
		if inv := inverse(declared(to)); inv != nil {
			// Entries outside the target set stay as they are, for
			// op2.NewMap64 to refuse by their value in the file.
			for i, t := range v {
				if t >= 0 && t < int64(len(inv)) {
					v[i] = int64(inv[t])
				}
			}
		}
	}
	m, err := op2.NewMap64(from, to, arity, v, name)
	if err != nil {
		return nil, f.dsErr(name, err)
	}
	return m, nil
}

// wideMap reports whether map m's entries, written with the file's map
// base, may exceed int32: its target set is numbered beyond 2³¹ (the same
// answer on every rank).
func wideMap(m *op2.Map, mapBase int32) bool {
	last := dist.NumberBase() + int64(m.To().GlobalSize()) - 1 + int64(mapBase)
	return last > math.MaxInt32
}

// writeMap64 is WriteMap for a map whose entries may exceed int32: a
// dataset of 64-bit integers ("long long"), which DeclareMap reads back
// with op2.NewMap64.
func (f *File) writeMap64(m *op2.Map) error {
	name, arity := m.Name(), m.Arity()
	if f.world != nil {
		start, v, err := m.GatherBlock64()
		if err != nil {
			return f.dsErr(name, err)
		}
		for i := range v {
			v[i] += int64(f.mapBase)
		}
		rows := m.From().GlobalSize()
		if err := sizeAttr(rows); err != nil {
			return f.dsErr(name, err)
		}
		if err := writeBlocks(f, name, rows, arity, start, v); err != nil {
			return f.dsErr(name, err)
		}
		return f.attrs(name, int32(rows), arity, "long long", 9)
	}
	v, err := m.Gather64()
	if err != nil {
		return f.dsErr(name, err)
	}
	if !f.writable() {
		return nil
	}
	for i := range v {
		v[i] += int64(f.mapBase)
	}
	rows := len(v) / arity
	if err := sizeAttr(rows); err != nil {
		return f.dsErr(name, err)
	}
	if err := f.writeRoot(name, h5.Int64, 2, rows, arity, ptr(v)); err != nil {
		return f.dsErr(name, err)
	}
	return f.attrs(name, int32(rows), arity, "long long", 9)
}

// sizeAttr refuses a map of rows elements that OP2's size attribute (an
// int) cannot hold.
func sizeAttr(rows int) error {
	if rows > math.MaxInt32 {
		return fmt.Errorf("%d elements exceed an int (OP2's size attribute)", rows)
	}
	return nil
}

// declaredRows is each owned element's row in the file: its declared
// number less the numbering's first (dist.NumberBase, 0 but in tests).
func declaredRows(set *op2.Set) []int64 {
	d := set.DeclaredNumbers64()
	if b := dist.NumberBase(); b != 0 {
		for i := range d {
			d[i] -= b
		}
	}
	return d
}

// widen is rows in 64 bits.
func widen(rows []int32) []int64 {
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = int64(r)
	}
	return out
}
