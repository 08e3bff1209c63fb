// Package crash names the running loop when a kernel kills the process.
//
// A kernel that faults (a bad pointer, a division by zero) raises SIGSEGV,
// SIGBUS, SIGFPE or SIGILL in code outside Go: in a compiled loop's shared
// library, on libgomp's worker threads or on the OpenCL runtime's. On a
// thread Go did not start, Go's handler re-raises the signal with the
// default action and the process dies without a word; on a Go thread Go
// prints a traceback that does not say which kernel ran. This package puts
// a C handler in front of Go's: when such a signal arrives while a loop
// runs and the faulting instruction lies outside the executable (so not in
// Go code), it writes one line to stderr naming the loop's kernel, set and
// backend, then hands the signal on to the handler that was there before,
// which ends the process as it would have. Faults in Go code, such as nil
// dereferences, go on to Go's handler and panic as usual.
//
// Limits: the faulting instruction is found on linux/amd64 and
// linux/arm64 only (elsewhere nothing is reported); a kernel that
// overflows a worker thread's stack leaves no stack to report on; a fault
// in other non-Go code while a loop runs (another cgo library on another
// goroutine) is blamed on the loop; and on asynchronous backends the
// report names the last loop started, which may not be the one at fault.
package crash

/*
#include <stdlib.h>
#include "crash.h"
*/
import "C"

import (
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

var (
	installOnce sync.Once
	installErr  error
)

// Install puts the handler in place; only the first call does anything.
// A failure leaves the previous handlers in place and is reported to every
// call: loops still run, without the report.
func Install() error {
	installOnce.Do(func() {
		if e := C.op2_crash_install(); e != 0 {
			installErr = syscall.Errno(e)
		}
	})
	return installErr
}

// codeMu serialises AddCode and RemoveCode.
var codeMu sync.Mutex

// AddCode records the code of the library whose dlopen handle is handle
// as a host loop's (GoOP2 compiled it): a fault there while a loop runs
// ends the process even where another library's handler (PoCL's) would
// have resumed it. RemoveCode forgets it; call it before dlclose.
func AddCode(handle unsafe.Pointer) {
	codeMu.Lock()
	C.op2_crash_add_code(handle)
	codeMu.Unlock()
}

// RemoveCode forgets the code AddCode recorded for handle.
func RemoveCode(handle unsafe.Pointer) {
	codeMu.Lock()
	C.op2_crash_remove_code(handle)
	codeMu.Unlock()
}

// maxNames bounds the C copies of names a Tracker keeps. Past it, the
// Tracker frees them all and starts again: programs that make many sets
// with distinct names do not accumulate C memory.
const maxNames = 1024

// maxNameLen is the most bytes of a name the report shows.
const maxNameLen = 200

// Tracker publishes the running loop's kernel, set and backend names to the
// handler. The names are C copies made on first use and kept (up to
// maxNames), so describing a loop already described allocates nothing, and
// a loop repeated with the same names costs a few compares and one store.
// A Tracker is not safe for concurrent use; the zero value is ready.
// Only one Tracker may be in use: the handler reads one description.
//
// The names are written with plain stores while the state is idle, and the
// state atomically. The handler reads them on the thread that wrote them or
// on a thread that the loop's runtime (libgomp, the OpenCL runtime) hands
// work to, through synchronisation that orders the stores before the
// kernel runs.
type Tracker struct {
	status int8 // 0: handler not installed yet; 1: installed; -1: failed

	names map[string]*C.char

	// The names published and their copies.
	kernel, set, backend    string
	ckernel, cset, cbackend *C.char
}

// Begin records that a loop of kernel over set starts on backend. async
// says the backend only queues the loop: the description then stays
// published after End, as the last loop started, until the next Begin.
// It installs the handler on first use; without one it records nothing.
func (t *Tracker) Begin(kernel, set, backend string, async bool) {
	if t.status <= 0 && !t.install() {
		return
	}
	if t.ckernel == nil || !same(kernel, t.kernel) || !same(set, t.set) || !same(backend, t.backend) {
		t.describe(kernel, set, backend)
	}
	state := int32(C.OP2_CRASH_RUNNING)
	if async {
		state = C.OP2_CRASH_QUEUED
	}
	atomic.StoreInt32(statePtr(), state)
}

// same is a == b, quick when both share their bytes (a loop repeated on
// the same kernel, set and backend objects).
func same(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}

// End records that the loop Begin described has returned. After a
// synchronous loop nothing is running; an asynchronous loop stays
// described as the last one started.
func (t *Tracker) End() {
	if p := statePtr(); atomic.LoadInt32(p) == C.OP2_CRASH_RUNNING {
		atomic.StoreInt32(p, C.OP2_CRASH_IDLE)
	}
}

// Running reports whether a loop is described as running or queued.
func Running() bool { return atomic.LoadInt32(statePtr()) != C.OP2_CRASH_IDLE }

// statePtr is the address of the published state, which the handler reads
// and Running may read on any goroutine: it is accessed atomically.
func statePtr() *int32 { return (*int32)(unsafe.Pointer(&C.op2_crash_cur.state)) }

func (t *Tracker) install() bool {
	if t.status == 0 {
		t.status = -1
		if Install() == nil {
			t.status = 1
		}
	}
	return t.status > 0
}

// describe publishes new names, copying those not seen before.
func (t *Tracker) describe(kernel, set, backend string) {
	// Idle while the names change, so the handler never pairs a state
	// with half-written names.
	atomic.StoreInt32(statePtr(), C.OP2_CRASH_IDLE)
	if len(t.names) >= maxNames {
		t.reset()
	}
	t.kernel, t.ckernel = kernel, t.intern(kernel)
	t.set, t.cset = set, t.intern(set)
	t.backend, t.cbackend = backend, t.intern(backend)
	cur := &C.op2_crash_cur
	cur.kernel, cur.set, cur.backend = t.ckernel, t.cset, t.cbackend
}

func (t *Tracker) intern(s string) *C.char {
	if p, ok := t.names[s]; ok {
		return p
	}
	if t.names == nil {
		t.names = make(map[string]*C.char)
	}
	c := s
	if len(c) > maxNameLen {
		c = c[:maxNameLen]
	}
	p := C.CString(c)
	t.names[s] = p
	return p
}

// reset unpublishes the description and frees every copy.
func (t *Tracker) reset() {
	atomic.StoreInt32(statePtr(), C.OP2_CRASH_IDLE)
	cur := &C.op2_crash_cur
	cur.kernel, cur.set, cur.backend = nil, nil, nil
	for _, p := range t.names {
		C.free(unsafe.Pointer(p))
	}
	clear(t.names)
	t.kernel, t.set, t.backend = "", "", ""
	t.ckernel, t.cset, t.cbackend = nil, nil, nil
}

// described returns the published description: the names (empty when
// unset) and the state (0 idle, 1 running, 2 queued).
func described() (kernel, set, backend string, state int) {
	cur := &C.op2_crash_cur
	str := func(p *C.char) string {
		if p == nil {
			return ""
		}
		return C.GoString(p)
	}
	return str(cur.kernel), str(cur.set), str(cur.backend), int(atomic.LoadInt32(statePtr()))
}
