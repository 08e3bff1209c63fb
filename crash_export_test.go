package op2

import "github.com/goop2/op2/internal/crash"

// LoopRunning reports whether the crash handler sees a loop as running
// (or, on an asynchronous backend, as the last one queued).
func LoopRunning() bool { return crash.Running() }
