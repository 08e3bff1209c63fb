package hdf5

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"unsafe"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/h5"
	"github.com/goop2/op2/internal/mpi"
)

// A file created under MPI is written in parallel when the HDF5 library
// is a parallel build (Debian's libhdf5-openmpi-103-1): every rank opens
// it through MPI-IO and writes its own rows of each dataset, at their
// place in the declared numbering, in one collective write. Each
// collective call into HDF5 is preceded by an agreement through GoOP2's
// MPI (dist.AgreeStep, bounded by OP2_MPI_TIMEOUT), so ranks that call
// the writers differently get an error naming what each called instead of
// waiting in HDF5 for ever, and followed by one that gives every rank the
// same error when one failed.

// parallelWorld returns the MPI world when this process is one of several
// ranks, else nil.
func parallelWorld() *mpi.World {
	if op2.Ranks() < 2 {
		return nil
	}
	return mpi.Current()
}

// ended returns an error when the program runs under an MPI launcher
// and op2.Finalize has ended MPI: writing a file is collective there.
func ended(path string) error {
	if w := mpi.Current(); w != nil && w.Finalized() {
		return fmt.Errorf("hdf5: %s: rank %d: %w", path, w.Rank(), mpi.ErrFinalized)
	}
	return nil
}

// openParallel opens path for writing on every rank through MPI-IO
// (truncate: create it anew). ok is false when the ranks agree that the
// parallel library is missing: the caller then uses the gathering path.
func openParallel(w *mpi.World, path string, truncate bool) (f *File, ok bool, err error) {
	h, ok, err := h5.OpenOnRanks(w, path, truncate)
	switch {
	case err != nil:
		return nil, ok, fmt.Errorf("hdf5: %s: %w", path, err)
	case !ok:
		noParallel(w.Rank())
		return nil, false, nil
	}
	f = &File{h: h, path: path, size: -1, world: w}
	// MPI-IO cannot close the file once MPI has ended: Finalize closes it
	// first, if the program has not.
	f.unhook = mpi.BeforeFinalize(func() error {
		if f.h == nil {
			return nil
		}
		err := f.h.Close()
		f.h, f.unhook = nil, nil
		if err != nil {
			return f.errorf("closing it before MPI ends: %v", err)
		}
		return nil
	})
	return f, true, nil
}

var noParallelOnce sync.Once

// noParallel says once, on rank 0, that files are gathered to rank 0
// because no parallel HDF5 library is installed: at Warn on the default
// runtime's logger, or on standard error without one.
func noParallel(rank int) {
	if rank != 0 {
		return
	}
	noParallelOnce.Do(func() {
		msg := "hdf5: the HDF5 library is not a parallel build (" + h5.InstallParallel + "): rank 0 gathers and writes every file"
		if l := op2.Default().Logger(); l != nil {
			l.LogAttrs(context.Background(), slog.LevelWarn, msg)
			return
		}
		fmt.Fprintln(os.Stderr, msg)
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// rootShape gives every rank rank 0's n (the rows of a plain slice, which
// the other ranks need not pass).
func (f *File) rootShape(n int) (int, error) { return h5.RootInt(f.world, n) }

// writeRoot writes a dataset of rank 0's values (rows × dim of typ from
// buf, read on rank 0 only; see h5.File.WriteRoot).
func (f *File) writeRoot(name string, typ h5.Type, ndims, rows, dim int, buf unsafe.Pointer) error {
	return f.h.WriteRoot(name, typ, ndims, rows, dim, buf)
}

// writeAttrs writes a dataset's attributes (collectively in a parallel
// file: every rank writes the same values).
func (f *File) writeAttrs(name string, attrs func() error) error {
	return f.h.Collective(fmt.Sprintf("hdf5: attributes of %q", name), attrs)
}

// writeBlocks writes a dataset of rows × dim values of which this rank
// holds the rows [start, start+len(v)/dim) in v, every rank its block.
func writeBlocks[T op2.Scalar](f *File, name string, rows, dim, start int, v []T) error {
	typ, _, _ := elemType[T]()
	return f.h.WriteBlock(name, typ, rows, dim, start, len(v)/dim, ptr(v))
}
