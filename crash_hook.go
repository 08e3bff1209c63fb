package op2

import (
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/crash"
	"github.com/goop2/op2/internal/exec"
)

// The running loop as internal/crash's fatal-signal handler sees it, so
// that a kernel that kills the process is named on stderr. Guarded by
// mu, like every loop run.
var (
	crashNames crash.Tracker
	// The backend last described: its id, name and whether it queues
	// loops (exec.Waiter) rather than running them before returning.
	crashBackendID   uint64
	crashBackendName string
	crashAsync       bool
)

// beginCrashReport publishes loop l on backend b as the running loop.
func beginCrashReport(b *exec.Opened, l *core.Loop) {
	if b.ID != crashBackendID || crashBackendName == "" {
		crashBackendID, crashBackendName = b.ID, b.Name()
		_, crashAsync = b.Backend.(exec.Waiter)
	}
	crashNames.Begin(l.Kernel.Name, l.Set.Name, crashBackendName, crashAsync)
}

// endCrashReport records that the loop beginCrashReport published has
// returned (on an asynchronous backend it stays named as the last loop
// started). run calls it without defer, which costs a few nanoseconds a
// loop: a Program.Run that panics leaves its loop named until the next
// loop starts, which matters only if the panic is recovered and non-Go
// code then faults.
func endCrashReport() { crashNames.End() }
