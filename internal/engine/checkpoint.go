package engine

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"runtime"
	"strings"

	"github.com/goop2/op2/internal/checkpoint"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/mpi"
)

// Checkpoints: what a runtime's checkpoints hold (the file format is
// internal/checkpoint's), and the run path of a loop that runs at once,
// through the automatic checkpoints (autockpt.go).

// AutoKey starts the keys of the state automatic checkpoints keep; the
// program's own state may not use it.
const AutoKey = checkpoint.AutoKey

// program is what r's checkpoints hold: every live dat but those left
// out (op2's SetNoCheckpoint), every live Global, and r's constants.
func (r *Runtime) program() checkpoint.Program {
	p := r.Proc
	prog := checkpoint.Program{Fatal: p.Fatal}
	if p.api != nil {
		prog.API = p.api.Internal
	}
	if w := p.Started(); w != nil && w.Size() > 1 {
		prog.World, prog.Partitioned = w, p.Partitioned()
	}
	for _, d := range p.LiveData() {
		if omitted(d) {
			prog.Omitted = append(prog.Omitted, d.Storage())
			continue // SetNoCheckpoint: neither saved nor restored
		}
		prog.Dats = append(prog.Dats, d.Storage())
	}
	prog.Globals = p.LiveGlobals()
	prog.MapPrints = func() ([]checkpoint.MapPrint, error) { return p.mapPrints(prog.World) }
	if r.Consts != nil {
		prog.Consts = r.Consts()
	}
	return prog
}

// mapPrints returns the fingerprints of the live maps (dist.MapPrint)
// whose name and sets no other live map of this rank shares, each summed
// over the ranks of w (nil: this process alone) that all hold it, in
// the order of rank 0's (or this process's) declarations. Under MPI it
// is collective: one Allgather. A map collected on some ranks only (Go
// collects a dropped one when it likes) is left out, so that the ranks
// need not hold the same maps.
func (p *Process) mapPrints(w *mpi.World) ([]checkpoint.MapPrint, error) {
	d := &p.declared
	d.Lock()
	maps := live(d.maps)
	d.Unlock()
	keyOf := func(name, from, to string) string { return fmt.Sprintf("%q %q %q", name, from, to) }
	count := map[string]int{}
	for _, m := range maps {
		count[keyOf(m.Name, m.From.Name, m.To.Name)]++
	}
	var mine []byte // this rank's part: per map its three names and parts
	for _, m := range maps {
		if count[keyOf(m.Name, m.From.Name, m.To.Name)] > 1 {
			continue // which is which may differ between ranks
		}
		for _, s := range []string{m.Name, m.From.Name, m.To.Name} {
			mine = binary.AppendUvarint(mine, uint64(len(s)))
			mine = append(mine, s...)
		}
		for _, v := range dist.MapPrint(m) {
			mine = binary.LittleEndian.AppendUint64(mine, uint64(v))
		}
	}
	all, ranks := [][]byte{mine}, 1
	if w != nil && w.Size() > 1 {
		var err error
		if all, err = dist.Allgather(w, mine); err != nil {
			return nil, err
		}
		ranks = w.Size()
	}
	// The parts of each map summed over the ranks that hold it, in the
	// order of rank 0's maps (then of the others').
	type entry struct {
		print checkpoint.MapPrint
		parts dist.Print
		ranks int
	}
	byKey := map[string]*entry{}
	var order []*entry
	for _, b := range all {
		for len(b) > 0 {
			var names [3]string
			for k := range names {
				n, u := binary.Uvarint(b)
				names[k], b = string(b[u:u+int(n)]), b[u+int(n):]
			}
			key := keyOf(names[0], names[1], names[2])
			e, ok := byKey[key]
			if !ok {
				e = &entry{print: checkpoint.MapPrint{Name: names[0], From: names[1], To: names[2]}}
				byKey[key], order = e, append(order, e)
			}
			e.ranks++
			for k := range e.parts {
				e.parts[k] += int64(binary.LittleEndian.Uint64(b))
				b = b[8:]
			}
		}
	}
	var out []checkpoint.MapPrint
	for _, e := range order {
		if e.ranks == ranks {
			e.print.Sum = e.parts.Sum()
			out = append(out, e.print)
		}
	}
	return out, nil
}

// omitted reports whether checkpoints leave d out: a MeshData with an
// Omitted method saying so.
func omitted(d MeshData) bool {
	o, ok := d.(interface{ Omitted() bool })
	return ok && o.Omitted()
}

// maxNamed is how many dropped dats and Globals a checkpoint's warning
// names: the last found.
const maxNamed = 8

// Checkpoint writes a checkpoint of r's program and state to path (see
// op2.Checkpoint). Caller holds the lock, with no recorded loop left.
func (r *Runtime) Checkpoint(path string, state map[string][]byte) error {
	prog := r.program()
	if err := checkpoint.Write(prog, path, state); err != nil {
		return err
	}
	// What prog holds stays alive, saved, until Dropped has looked.
	gone := r.Proc.Dropped()
	runtime.KeepAlive(prog)
	if len(gone) > 0 {
		if n := len(gone); n > maxNamed {
			gone = append(gone[n-maxNamed:], fmt.Sprintf("and %d declared before them", n-maxNamed))
		}
		r.Report(slog.LevelWarn, "op2: Checkpoint: not saved, as the program no longer holds them (Go collected them after their last use)",
			slog.String("file", path), slog.String("data", strings.Join(gone, ", ")),
			slog.String("hint", "a restart that declares them cannot restore this file: keep them reachable until Checkpoint returns (runtime.KeepAlive), or leave temporaries out with Dat.SetNoCheckpoint(true)"))
	}
	return nil
}

// Restore restores the checkpoint at path into r's program and returns
// the state saved with it (see op2.Restore). Caller holds the lock, with
// no recorded loop left.
func (r *Runtime) Restore(path string) (map[string][]byte, error) {
	return checkpoint.Restore(r.program(), path)
}

// restoreAuto restores the automatic checkpoint at path into r's
// program, before the loop it was written at. Caller holds the lock,
// with no recorded loop left.
func (r *Runtime) restoreAuto(path string) error {
	prog := r.program()
	prog.Automatic = true
	_, err := checkpoint.Restore(prog, path)
	return err
}

// RunNow runs loop l at once with backend b, with the automatic
// checkpoints' part: l may be skipped, or a checkpoint written or
// restored before it, and the Globals it reduced are logged after it.
// Caller holds the lock.
func (r *Runtime) RunNow(b *exec.Opened, l *core.Loop) error {
	skip, err := r.Proc.autoBefore(r, l)
	if err != nil || skip {
		return err
	}
	if err := r.Run(b, l); err != nil {
		return err
	}
	r.Proc.autoAfter(l)
	return nil
}

// AutoUnfinished is the error of a run that ends (op2.Finalize) while
// replaying an automatic checkpoint, before the loop it was written at,
// or after its restart was refused (that refusal); nil otherwise. Caller
// holds the lock.
func (p *Process) AutoUnfinished() error {
	if a := p.auto; a != nil && a.refused != nil {
		return a.refused // the restart was refused: that says why
	}
	if a := p.auto; a != nil && a.replayTo >= 0 {
		return p.api.Internal(fmt.Errorf("automatic checkpoint %q: the run ended after %d loops, before loop %d, where the checkpoint was written: the loops were skipped and their results are not this run's (run the program as it was run when the checkpoint was written, or remove the file)", a.path, a.n, a.replayTo))
	}
	return nil
}
