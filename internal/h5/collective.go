package h5

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/goop2/op2/internal/collective"
	"github.com/goop2/op2/internal/mpi"
)

// A file opened by OpenMPIO is written by every rank of the job together.
// Each collective call into HDF5 is preceded by an agreement through
// GoOP2's own MPI calls (collective.AgreeStep, bounded by OP2_MPI_TIMEOUT), so
// ranks that call the writers differently get an error naming what each
// called instead of waiting in HDF5 for ever, and followed by one that
// gives every rank the same error when one failed.

// World is the job that writes a file opened by OpenMPIO; nil for a file
// of one process.
func (f *File) World() *mpi.World { return f.world }

// Collective runs write, a collective call into HDF5 named what, on every
// rank of the file's job: the ranks first agree that they are all at
// what, and afterwards every rank returns the error any rank had. For a
// file of one process it runs write.
func (f *File) Collective(what string, write func() error) error {
	if f.world == nil {
		return write()
	}
	if err := collective.AgreeStep(f.world, what, nil); err != nil {
		return err
	}
	return collective.AgreeStep(f.world, what, write())
}

// RootInt gives every rank of w rank 0's n.
func RootInt(w *mpi.World, n int) (int, error) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	if err := w.Bcast(b[:], 0); err != nil {
		return 0, err
	}
	return int(binary.LittleEndian.Uint64(b[:])), nil
}

// WriteRoot creates the dataset name (rows × dim values of typ, rank
// ndims) and writes rank 0's values from buf: in a file of the job every
// rank calls it, and the others' rows, dim and buf are not looked at
// (rank 0's shape is sent to them). For a file of one process it is
// Write.
func (f *File) WriteRoot(name string, typ Type, ndims, rows, dim int, buf unsafe.Pointer) error {
	if f.world == nil {
		return f.Write(name, typ, ndims, rows, dim, buf)
	}
	// The ranks agree first that they are all here (a rank at another
	// collective call would take rank 0's shape for its own data).
	if err := collective.AgreeStep(f.world, fmt.Sprintf("hdf5: write %q from rank 0", name), nil); err != nil {
		return err
	}
	shape := [2]int{rows, dim}
	for i := range shape {
		var err error
		if shape[i], err = RootInt(f.world, shape[i]); err != nil {
			return err
		}
	}
	rows, dim = shape[0], shape[1]
	count := rows
	if f.world.Rank() != 0 {
		count, buf = 0, nil
	}
	return f.Collective(fmt.Sprintf("hdf5: write %q (%d × %d)", name, rows, dim), func() error {
		return f.WriteRows(name, typ, ndims, rows, dim, 0, count, buf)
	})
}

// WriteBlock creates the dataset name (rows × dim values of typ, rank 2)
// and writes this rank's rows [start, start+count) from buf, every rank
// its own, in one collective write (for a file of one process: one
// write).
func (f *File) WriteBlock(name string, typ Type, rows, dim, start, count int, buf unsafe.Pointer) error {
	return f.Collective(fmt.Sprintf("hdf5: write %q (%d × %d) in blocks", name, rows, dim), func() error {
		return f.WriteRows(name, typ, 2, rows, dim, start, count, buf)
	})
}

// OpenOnRanks opens the file at path for writing on every rank of w
// through MPI-IO (truncate: created anew), when every rank has a parallel
// library (Parallel). ok is false when a rank lacks one: nothing is
// opened, and the caller writes another way (gathered to rank 0). It is
// collective, and an error is every rank's.
func OpenOnRanks(w *mpi.World, path string, truncate bool) (f *File, ok bool, err error) {
	// The ranks agree first that they are all here (a rank at another
	// collective call would take the count below for its own).
	what := fmt.Sprintf("hdf5: open %q for writing through MPI-IO", path)
	if err := collective.AgreeStep(w, what, nil); err != nil {
		return nil, true, err
	}
	have := []int64{0}
	if Parallel() {
		have[0] = 1
	}
	if err := w.AllreduceInt64(have, mpi.Min); err != nil {
		return nil, false, err
	}
	if have[0] == 0 {
		return nil, false, nil
	}
	f, err = OpenMPIO(path, truncate)
	if err = collective.AgreeStep(w, what, err); err != nil {
		if f != nil {
			f.Close()
		}
		return nil, true, err
	}
	return f, true, nil
}
