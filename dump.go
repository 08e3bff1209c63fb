package op2

import (
	"fmt"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dumpfile"
	"github.com/goop2/op2/internal/regfile"
)

// Dat dumps in OP2's two formats (op_print_dat_to_txtfile and
// op_print_dat_to_binfile) are described in internal/dumpfile. Under MPI
// every rank calls the functions together (they are collective): rank 0
// writes or reads the file, in the numbering the mesh was declared with,
// and every rank returns the same error.

// WriteText writes the dat's values to path in OP2's text format (see
// op_print_dat_to_txtfile): "size dim" on the first line, then one line
// per element. Doubles carry 16 significant digits, as OP2 writes them,
// which is exact for most values but not all; floats carry 6 decimals.
// Use WriteBinary for a bit-exact dump. On a device backend the values
// are first brought to the host (the device copy stays valid). Under MPI
// it is collective and rank 0 writes every element in the declared
// numbering.
func (d *Dat[T]) WriteText(path string) error {
	return d.dump(path, func(v []T) []byte { return dumpfile.FormatText(v, d.s.Type, d.s.Dim) })
}

// WriteBinary writes the dat's values to path in OP2's binary format (see
// op_print_dat_to_binfile): int32 size, int32 dim, then the raw values,
// little-endian. Like WriteText it works on every backend and, under MPI,
// writes the whole dat from rank 0 in the declared numbering.
func (d *Dat[T]) WriteBinary(path string) error {
	return d.dump(path, func(v []T) []byte { return dumpfile.FormatBinary(v, d.s.Type, d.s.Dim) })
}

// ReadText loads the dat's values from a file in OP2's text format, as
// WriteText and OP2's op_print_dat_to_txtfile write it. The file's size
// and dim must equal the dat's set size (over all ranks) and dim. A
// malformed file is refused with an error naming the file and the line,
// and the dat is left unchanged. Under MPI it is collective: rank 0 reads
// the file and every rank receives its elements, halo included.
func (d *Dat[T]) ReadText(path string) error {
	return d.load("Dat.ReadText", path, nil, func(b []byte, n int) ([]T, error) { return dumpfile.ParseText[T](b, d.s.Type, n, d.s.Dim) })
}

// ReadBinary loads the dat's values from a file in OP2's binary format, as
// WriteBinary and op_print_dat_to_binfile write it. The size and dim in
// the header must match the dat, and the file must hold exactly size×dim
// values of the dat's type. Like ReadText it is collective under MPI.
func (d *Dat[T]) ReadBinary(path string) error {
	return d.load("Dat.ReadBinary", path, dumpfile.BinaryTooLarge(d.s.Type, d.s.Dim), func(b []byte, n int) ([]T, error) {
		return dumpfile.ParseBinary[T](b, d.s.Type, n, d.s.Dim)
	})
}

// rawBytes views v's memory as bytes.
func rawBytes[T Scalar](v []T) []byte {
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*int(unsafe.Sizeof(z)))
}

// refuseUnpartitioned refuses dumps of a mesh declared on several ranks
// but not partitioned yet: each rank holds only its block.
func refuseUnpartitioned(what string, s *core.Storage) error {
	distributing, err := distributing()
	if err != nil {
		return err
	}
	if distributing {
		return fmt.Errorf("op2: %s %s: the mesh is declared on %d MPI ranks; call op2.Partition first", what, s.Describe(), rt.proc.Started().Size())
	}
	return nil
}

// dump gathers the dat on rank 0, which writes format(values) to path;
// every rank returns rank 0's result.
func (d *Dat[T]) dump(path string, format func([]T) []byte) error {
	if err := refuseUnpartitioned("writing", &d.s); err != nil {
		return err
	}
	v, err := d.Gather()
	if err != nil {
		return err
	}
	if Rank() == 0 {
		if werr := regfile.WriteFile(path, format(v)); werr != nil {
			err = fmt.Errorf("op2: writing %s: %w", d.s.Describe(), werr)
		}
	}
	return rt.proc.ShareError(fmt.Sprintf("writing dat %q", d.s.Name), err)
}

// load reads path on rank 0, parses it with parse (given the dat's global
// size) and puts the values into the dat; under MPI each rank gets its
// local elements' values. The path must name a regular file, read no
// further than its size; tooLarge, if not nil, refuses a file's size
// before it is read.
func (d *Dat[T]) load(api, path string, tooLarge func(size int64, n int) error, parse func(b []byte, n int) ([]T, error)) error {
	if err := refuseUnpartitioned("reading", &d.s); err != nil {
		return err
	}
	set := setOf(d.s.Set)
	var vals []T
	var err error
	if Rank() == 0 {
		var b []byte
		if b, err = dumpfile.Read(path, set.GlobalSize(), tooLarge); err != nil {
			err = fmt.Errorf("op2: reading %s: %w", d.s.Describe(), err)
		} else if vals, err = parse(b, set.GlobalSize()); err != nil {
			err = fmt.Errorf("op2: reading %s from %s: %w", d.s.Describe(), path, err)
		}
	}
	if err = rt.proc.ShareError(fmt.Sprintf("reading dat %q", d.s.Name), err); err != nil {
		return err
	}
	forced := lock(forCollective, api)
	defer unlock()
	if forced != nil {
		return forced
	}
	if err := rt.proc.HostWrote(&d.s); err != nil {
		return err
	}
	return rt.proc.LoadDat(&d.s, rawBytes(vals))
}
