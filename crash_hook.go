package op2

import (
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
)

// beginCrashReport publishes loop l on backend b as the running loop.
func beginCrashReport(b *exec.Opened, l *core.Loop) {
	if b.ID != rt.proc.crashBackendID || rt.proc.crashBackendName == "" {
		rt.proc.crashBackendID, rt.proc.crashBackendName = b.ID, b.Name()
		_, rt.proc.crashAsync = b.Backend.(exec.Waiter)
	}
	rt.proc.crashNames.Begin(l.Kernel.Name, l.Set.Name, rt.proc.crashBackendName, rt.proc.crashAsync)
}

// endCrashReport records that the loop beginCrashReport published has
// returned (on an asynchronous backend it stays named as the last loop
// started). run calls it without defer, which costs a few nanoseconds a
// loop: a Program.Run that panics leaves its loop named until the next
// loop starts, which matters only if the panic is recovered and non-Go
// code then faults.
func endCrashReport() { rt.proc.crashNames.End() }
