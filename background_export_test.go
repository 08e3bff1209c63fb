package op2

import (
	"github.com/goop2/op2/internal/engine"
	"github.com/goop2/op2/internal/exec"
)

// WaitBuilds waits until the programs being built in the background
// (fused loops, tile forms) are built: the next forcing uses them.
func WaitBuilds() { engine.WaitBuilds() }

// PendingBuilds is the number of programs queued or being built in the
// background.
func PendingBuilds() int { return exec.PendingBuilds() }

// When fused loops' programs and tile forms are built (SetBuilds).
const (
	BuildDefaults     = engine.BuildDefaults
	BuildAtOnce       = engine.BuildAtOnce
	BuildInBackground = engine.BuildInBackground
)

// SetBuilds sets when fused loops' programs and tile forms are built,
// for a test, and returns a function that restores the setting.
func SetBuilds(m engine.BuildMode) (restore func()) {
	rt.proc.Lock(forNoData, "test")
	defer rt.proc.Unlock()
	old := rt.proc.Builds
	rt.proc.Builds = m
	return func() {
		rt.proc.Lock(forNoData, "test")
		defer rt.proc.Unlock()
		rt.proc.Builds = old
	}
}
