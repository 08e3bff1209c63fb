package checkpoint

import (
	"fmt"
	"strconv"
	"unsafe"

	"github.com/goop2/op2/internal/collective"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/h5"
	"github.com/goop2/op2/internal/mpi"
)

// Every dataset of values in a checkpoint (each dat's, Global's,
// constant's and state entry's) carries a fingerprint of them, sumAttr:
// for a dat, a dist.Print of its rows in the declared numbering, the
// same however many ranks wrote it; for the others, of their bytes. A
// restore recomputes them from the file before it changes anything and
// refuses a file whose values differ (a byte changed on the disk, or by
// hand), where it would otherwise restore them silently. Files of an
// earlier GoOP2 have no fingerprints and are read unchecked.

// checkDatsChunk is the most bytes checkDats reads at once.
var checkDatsChunk = 8 << 20

// damaged is the error for a dataset whose values differ from their
// fingerprint.
func damaged(name string) error {
	return fmt.Errorf("%s: its values differ from the fingerprint written with them: the file was damaged or changed after it was written", name)
}

// savedSum returns the fingerprint written with dataset name, if any.
func (r *restore) savedSum(name string) (sum uint64, found bool, err error) {
	v, found, err := r.f.StringAttr(name, sumAttr)
	if err != nil || !found {
		return 0, false, err
	}
	sum, err = strconv.ParseUint(v, 16, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%s: its %s attribute %q is not a fingerprint", name, sumAttr, v)
	}
	return sum, true, nil
}

// checkSum compares fingerprint got of dataset name's values with the
// one written with them.
func (r *restore) checkSum(name string, got uint64) error {
	want, found, err := r.savedSum(name)
	if err != nil || !found {
		return err
	}
	if got != want {
		return damaged(name)
	}
	return nil
}

// checkValues reads the dim values of type t of a Global or constant's
// dataset name and compares them with their fingerprint.
func (r *restore) checkValues(name string, t core.ScalarType, dim int) error {
	if _, found, err := r.savedSum(name); err != nil || !found {
		return err
	}
	b := make([]byte, dim*t.Size())
	if err := r.read(name, h5Type(t), 1, 0, dim, 1, ptr(b)); err != nil {
		return err
	}
	return r.checkSum(name, valuesSum(b))
}

// checkDats reads the dats' datasets and compares them with their
// fingerprints, before apply changes anything; under MPI each rank reads
// an even block of each (collective: every rank calls it, and every rank
// gets the same answer for a damaged file).
func (r *restore) checkDats() error {
	c := r.c
	for k, s := range c.dats {
		name := r.dats[k]
		if name == "" {
			continue
		}
		want, found, err := r.savedSum(name)
		if !found && err == nil {
			continue // the same file on every rank: all skip it
		}
		var print dist.Print
		if err == nil {
			err = r.sumBlock(name, s.Dim, h5Type(s.Type), s.Dim*s.Type.Size(), GlobalSize(s.Set), &print)
		}
		// The parts and whether any rank failed, in one reduction.
		v := append(print[:], 0)
		if err != nil {
			v[3] = 1
		}
		if c.w != nil {
			if rerr := c.w.AllreduceInt64(v, mpi.Sum); rerr != nil {
				return c.fatal(rerr)
			}
		}
		switch {
		case err != nil:
			return fmt.Errorf("dat %q on set %q: %w", s.Name, s.Set.Name, err)
		case v[3] > 0:
			return fmt.Errorf("dat %q on set %q: %s could not be read on another rank", s.Name, s.Set.Name, name)
		case dist.Print(v[:3]).Sum() != want:
			return fmt.Errorf("dat %q on set %q: %w", s.Name, s.Set.Name, damaged(name))
		}
	}
	return nil
}

// sumBlock adds this rank's block of the rows of dataset name (rows rows
// of dim values of typ, elem bytes each) to print, reading at most
// checkDatsChunk bytes at once.
func (r *restore) sumBlock(name string, dim int, typ h5.Type, elem, rows int, print *dist.Print) error {
	if elem == 0 {
		return nil
	}
	rank, ranks := 0, 1
	if r.c.w != nil {
		rank, ranks = r.c.w.Rank(), r.c.w.Size()
	}
	start, count := collective.Block(rows, rank, ranks)
	step := max(1, checkDatsChunk/elem)
	buf := make([]byte, min(step, count)*elem)
	for from := start; from < start+count; from += step {
		n := min(step, start+count-from)
		b := buf[:n*elem]
		if err := r.read(name, typ, 2, from, n, dim, unsafe.Pointer(unsafe.SliceData(b))); err != nil {
			return err
		}
		print.AddRows(b, elem, nil, 0, int64(from))
	}
	return nil
}
