package op2

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/engine"
)

// The checkpoint file format and its reader and writer are
// internal/checkpoint's; the automatic checkpoints (Config.Checkpoint)
// are the engine's (internal/engine autockpt.go), which every loop that
// runs at once passes through and which the functions of the API that
// bring data to the host tell first (HostRead, HostWrote, HostProduct,
// HostReadAll, observe).

// Checkpoint saves what a run needs to continue from this point into the
// HDF5 file at path: the values of every dat the program still holds
// (but those Dat.SetNoCheckpoint leaves out), of every Global, of the
// default runtime's constants, and state, the
// program's own (a step counter, a time: whatever it needs to find its
// place again), which Restore returns. Dats are saved in the numbering
// the mesh was declared with, so a run on any number of ranks can restore
// them. The file is written under a temporary name (path + ".partial")
// and renamed over path once complete, so a run stopped while it writes
// leaves the previous checkpoint intact.
//
// A dat or Global the program no longer uses after the checkpoint is no
// longer held: Go collects it, and it is not saved. Keep what a later run
// restores reachable until Checkpoint returns (runtime.KeepAlive); a dat
// or Global collected since it was declared, and not left out, is named
// in a warning on the runtime's logger (standard error without one).
//
// It is collective under MPI (every rank calls it, after Partition, with
// the same state): with a parallel HDF5 library (Debian:
// libhdf5-openmpi-103-1) every rank writes its own rows of each dat
// through MPI-IO; without one they are gathered to rank 0, which writes
// them. Recorded loops run first. It needs the HDF5 library at run time
// (Debian: libhdf5-103-1).
func Checkpoint(path string, state map[string][]byte) error {
	// Collective: a rank that refuses its arguments says so to every
	// rank before any of them writes.
	var err error
	if path == "" {
		err = errors.New("op2: Checkpoint: the path is empty")
	} else {
		err = reservedKeys(state)
	}
	if err := agreeArgs("Checkpoint", err); err != nil {
		return err
	}
	runtime.GC() // dats the program no longer holds are not saved
	forced := lock(forCollective, "Checkpoint")
	defer unlock()
	if forced != nil {
		return forced
	}
	if err := rt.proc.HostReadAll("Checkpoint"); err != nil {
		return err
	}
	return rt.e.Checkpoint(path, state)
}

// SetNoCheckpoint(true) leaves the dat out of checkpoints, Checkpoint's
// and the automatic ones (Config.Checkpoint): its values are not saved,
// and Restore leaves them as the program has them, whether or not the
// file holds them. SetNoCheckpoint(false) puts it back (the default).
// It is for data a restarted program has again without the checkpoint:
// values it declares again (coordinates read from the mesh), or that the
// loops after the checkpoint write whole before reading them (output
// only). Restoring a file that left a dat out into a program that saves
// it is refused, naming the dat. An automatic restart skips the loops
// before the checkpoint, so a dat left out keeps the values it was
// declared with until a loop writes it. Under MPI every rank must make
// the same choice: Checkpoint and Restore refuse ranks whose dats differ.
func (d *Dat[T]) SetNoCheckpoint(omit bool) { d.keep.Omit.Store(omit) }

// own marks data GoOP2 declares for itself (a solver's vectors): a
// checkpoint that finds it dropped does not say so.
func own[D interface{ keepOf() *engine.Keep }](d D, err error) (D, error) {
	if err == nil {
		d.keepOf().Own.Store(true)
	}
	return d, err
}

func (d *Dat[T]) keepOf() *engine.Keep    { return d.keep }
func (g *Global[T]) keepOf() *engine.Keep { return g.keep }

// reservedKeys refuses state keys of automatic checkpoints.
func reservedKeys(state map[string][]byte) error {
	for k := range state {
		if strings.HasPrefix(k, engine.AutoKey) {
			return fmt.Errorf("op2: Checkpoint: state key %q: keys starting with %q are the automatic checkpoints'", k, engine.AutoKey)
		}
	}
	return nil
}

// Restore loads a checkpoint that Checkpoint wrote into the program's
// dats, Globals and constants, and returns the state saved with it. The
// program must have declared the same mesh, dats, Globals and constants
// (names, sets, dims and types; dats and Globals are matched by these,
// in declaration order; dats that Dat.SetNoCheckpoint leaves out are not
// looked for and keep their values), and under MPI partitioned it, on any
// number of ranks: each rank reads the rows of its own elements and their
// halo. A checkpoint that does not match is refused, naming what
// differs, and nothing is changed; so is one whose values changed after
// it was written (each entry holds a fingerprint of its values, checked
// before anything is changed). A file written by the automatic
// checkpoints (Config.Checkpoint) is refused: a run resumes from one by
// itself, at the loop it was written before. It is collective under MPI;
// recorded loops run first.
func Restore(path string) (map[string][]byte, error) {
	runtime.GC() // dats the program no longer holds are not restored
	forced := lock(forCollective, "Restore")
	defer unlock()
	if forced != nil {
		return nil, forced
	}
	return rt.e.Restore(path)
}

// observe takes the lock for HostRead, for a collective call (caller):
// the recorded loops before it run on every rank.
func observe(caller, op string, ss ...*core.Storage) error {
	forced := lock(forCollective, caller)
	defer unlock()
	if forced != nil {
		return forced
	}
	return rt.proc.HostRead(op, ss...)
}
