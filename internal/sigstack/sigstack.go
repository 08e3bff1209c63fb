// Package sigstack keeps the signal handlers of C libraries loaded into a
// Go process usable: the Go run time needs every handler to run on the
// alternate signal stack (SA_ONSTACK), since a signal may arrive while a
// goroutine runs on a small stack. Libraries GoOP2 loads at run time
// install handlers without it: PoCL a SIGFPE handler when OpenCL starts
// (also when Open MPI's hwloc starts OpenCL drivers during MPI_Init).
// Repair adds the flag to every such handler, keeping the handler itself.
package sigstack

/*
#include <signal.h>
#include <string.h>

// sigstack_repair adds SA_ONSTACK to the handler of every signal below
// NSIG that has a handler function without it, and returns how many it
// changed; sigstack_missing returns the first such signal (0: none).
static int sigstack_repair(int fix) {
	int changed = 0;
	for (int sig = 1; sig < 32; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP) continue;
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		if (sigaction(sig, NULL, &sa) != 0) continue;
		void *h = (sa.sa_flags & SA_SIGINFO) ? (void *)sa.sa_sigaction : (void *)sa.sa_handler;
		if (h == (void *)SIG_DFL || h == (void *)SIG_IGN || (sa.sa_flags & SA_ONSTACK)) continue;
		if (!fix) return sig;
		sa.sa_flags |= SA_ONSTACK;
		if (sigaction(sig, &sa, NULL) == 0) changed++;
	}
	return changed;
}

// sigstack_handlers writes the handler address and flags of signals
// 1..31 into h and flags (index sig-1).
static void sigstack_handlers(unsigned long long *h, int *flags) {
	for (int sig = 1; sig < 32; sig++) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		h[sig - 1] = 0;
		flags[sig - 1] = 0;
		if (sigaction(sig, NULL, &sa) != 0) continue;
		void *p = (sa.sa_flags & SA_SIGINFO) ? (void *)sa.sa_sigaction : (void *)sa.sa_handler;
		h[sig - 1] = (unsigned long long)(unsigned long)p;
		flags[sig - 1] = sa.sa_flags;
	}
}
*/
import "C"

// Repair adds SA_ONSTACK to every installed signal handler that lacks it
// and returns how many it changed.
func Repair() int { return int(C.sigstack_repair(1)) }

// Missing returns the first signal whose handler lacks SA_ONSTACK, or 0.
func Missing() int { return int(C.sigstack_repair(0)) }

// Handler is a signal's disposition: its handler's address (0 for the
// default, 1 for ignored) and sigaction flags.
type Handler struct {
	Addr  uint64
	Flags int
}

// Handlers returns the dispositions of signals 1 to 31 (index sig-1), so
// that a test can check that loading a library changed none.
func Handlers() [31]Handler {
	var h [31]C.ulonglong
	var f [31]C.int
	C.sigstack_handlers(&h[0], &f[0])
	var out [31]Handler
	for i := range out {
		out[i] = Handler{Addr: uint64(h[i]), Flags: int(f[i])}
	}
	return out
}
