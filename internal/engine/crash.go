package engine

import (
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
)

// beginCrashReport publishes loop l on backend b as the running loop.
func (p *Process) beginCrashReport(b *exec.Opened, l *core.Loop) {
	p.beginCrashNames(b, l.Kernel.Name, l.Set.Name)
}

// beginCrashNames publishes the loop of kernel over set on backend b as
// the running loop (kernel and set may name several: a tiled chain's).
func (p *Process) beginCrashNames(b *exec.Opened, kernel, set string) {
	if b.ID != p.crashBackendID || p.crashBackendName == "" {
		p.crashBackendID, p.crashBackendName = b.ID, b.Name()
		_, p.crashAsync = b.Backend.(exec.Waiter)
	}
	p.crashNames.Begin(kernel, set, p.crashBackendName, p.crashAsync)
}

// endCrashReport records that the loop beginCrashReport published has
// returned (on an asynchronous backend it stays named as the last loop
// started). RunProgram calls it without defer, which costs a few nanoseconds a
// loop: a Program.Run that panics leaves its loop named until the next
// loop starts, which matters only if the panic is recovered and non-Go
// code then faults.
func (p *Process) endCrashReport() { p.crashNames.End() }
