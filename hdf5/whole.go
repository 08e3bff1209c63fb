package hdf5

import (
	"errors"
	"fmt"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/collective"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/regfile"
)

// WriteFile writes a new file at path whole or not at all: write gets a
// File created (as Create does) beside path, which is renamed over path
// once write has returned nil and the file is closed and on disk. When
// write or closing fails, or the program is killed on the way, path keeps
// what it held. A path that is a link stays a link and leads to the new
// file. Under MPI it is collective, as Create is (rank 0 names the new
// file and renames it), and every rank returns the same error: write
// must make the same collective calls (the package's writers) on every
// rank, as with Create, and fail only where one of them fails, which
// fails on every rank alike; a write that gives up on one rank alone
// leaves the others in the next collective call until OP2_MPI_TIMEOUT.
// Its errors name path.
func WriteFile(path string, write func(*File) error) error {
	if err := ended(path); err != nil {
		return err
	}
	w := parallelWorld()
	var p *regfile.Pending
	tmp, err := "", error(nil)
	if op2.Rank() == 0 {
		if p, err = regfile.Create(path); err == nil {
			tmp = p.TempPath()
		} else {
			err = fmt.Errorf("hdf5: %w", err)
		}
	}
	if w != nil {
		if err = dist.AgreeStep(w, fmt.Sprintf("hdf5: write %q", path), err); err == nil {
			var names [][]byte
			if names, err = collective.Allgather(w, []byte(tmp)); err == nil {
				tmp = string(names[0])
			}
		}
	}
	if err != nil {
		if p != nil {
			p.Abort()
		}
		return err
	}
	f, err := Create(tmp)
	if err == nil {
		err = errors.Join(write(f), f.Close())
	}
	if w != nil {
		err = dist.AgreeStep(w, fmt.Sprintf("hdf5: finish %q", path), err)
	}
	if err != nil {
		if p != nil {
			p.Abort()
		}
		return fmt.Errorf("%w (writing %s)", err, path)
	}
	if p != nil {
		if err = p.Commit(); err != nil {
			err = fmt.Errorf("hdf5: %w", err)
		}
	}
	if w != nil {
		err = dist.AgreeStep(w, fmt.Sprintf("hdf5: rename into %q", path), err)
	}
	return err
}
