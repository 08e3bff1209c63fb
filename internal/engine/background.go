package engine

import (
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
)

// Fused loops and tile forms built in the background.
//
// A fused loop's program and a loop's tile form only make recorded loops
// faster: the loops can always run one by one with the programs Commit
// built. On a first run (nothing in the disk cache) compiling them when
// the queue is first forced would add their compile time to the
// program's, so under the defaults they are built in the background
// (exec.Executor.ProgramSoon, TileProgramSoon): until they are, the
// forcings run the loops one by one, and the first forcing after they
// are uses them. A setting that asks for them (Config.Fusion "on",
// Config.Tile) builds them at once, as the user expects to see them run
// at the first forcing (and a failure to build them at once). So do
// several MPI ranks running a chain: they must run the same loops, and a
// build in the background would end at another time on each rank (the
// loops lazy mode records there send nothing, so each rank may run them
// fused or not: chain_mpi.go). So does a runtime
// that tunes (Config.Tune): the loops it measures are then the ones that
// keep running, rather than loops run apart until their fused program is
// built, which would get too few calls to be tuned and be measured again
// by every run.

// BuildMode says when the programs that only make recorded loops faster
// (fused loops' programs, tile forms) are built (Process.Builds).
type BuildMode uint8

const (
	// BuildDefaults builds those the defaults use (Config.Fusion
	// "auto"; tiles of a size the library chose) in the background and
	// those a setting asks for (Config.Fusion "on", Config.Tile) at once.
	BuildDefaults BuildMode = iota
	// BuildAtOnce builds every one when it is first wanted.
	BuildAtOnce
	// BuildInBackground builds every one in the background (tests).
	BuildInBackground
)

// atOnce reports whether r builds a fused loop's program or a tile form
// at once: always for a chain on several MPI ranks (they must run the
// same loops, and a build in the background ends when it ends on each
// rank; not for the loops lazy mode records there, Process.ahead) and when r
// tunes (its measurements are of the loops that keep running), always or
// never under the process's Builds, else when a setting asked for it
// (explicit).
func (r *Runtime) atOnce(explicit bool) bool {
	if r.Proc.multiRank() && !r.Proc.ahead || r.X.Tuner != nil {
		return true
	}
	switch r.Proc.Builds {
	case BuildAtOnce:
		return true
	case BuildInBackground:
		return false
	}
	return explicit
}

// fusedProgram returns the program of l, the fused loop of recorded loops
// r runs on b, or nil while it is built in the background (atOnce).
// Caller holds the lock.
func (r *Runtime) fusedProgram(b *exec.Opened, l *core.Loop) (exec.Program, error) {
	if r.atOnce(r.Cfg.Fusion == "on") {
		return r.X.Program(b, l)
	}
	return r.X.ProgramSoon(b, l)
}

// tileProgram returns the tile form of l, a recorded loop r runs on b,
// or nil while it is built in the background (atOnce). Caller holds the
// lock.
func (r *Runtime) tileProgram(b *exec.Opened, l *core.Loop) (exec.TileProgram, error) {
	if r.atOnce(!r.tileSizeChosen()) {
		return r.X.TileProgram(b, l)
	}
	return r.X.TileProgramSoon(b, l)
}

// tileSizeChosen reports whether r's loops run in tiles of a size the
// library chose, rather than the one Config.Tile names: then their tile
// forms are built in the background (Config.Tile TileAuto).
func (r *Runtime) tileSizeChosen() bool { return r.Cfg.Tile == exec.TileAuto }

// WaitBuilds waits until the programs being built in the background are
// built (exec.WaitBuilds): the next forcing finds them. For measurements
// of the steady state and tests; it takes no lock.
func WaitBuilds() { exec.WaitBuilds() }
