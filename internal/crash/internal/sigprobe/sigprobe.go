// Package sigprobe is a test aid for package crash: a fault-signal
// handler that stands where LLVM's (which PoCL installs) stands below
// crash's handler, asking for no signal to be blocked, and records the
// signal mask it runs with.
package sigprobe

/*
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <string.h>

static sigset_t sigprobe_mask;
static volatile int sigprobe_calls;

static void sigprobe_handler(int sig, siginfo_t *info, void *ctx) {
	(void)sig;
	(void)info;
	(void)ctx;
	sigprocmask(SIG_SETMASK, NULL, &sigprobe_mask);
	sigprobe_calls++;
}

// sigprobe_install installs the handler for sig as LLVM installs its own:
// no signal blocked while it runs, SA_NODEFER, on the signal stack.
static int sigprobe_install(int sig) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = sigprobe_handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL);
}

static void sigprobe_send(int sig) { pthread_kill(pthread_self(), sig); }

static int sigprobe_blocked(int sig) { return sigismember(&sigprobe_mask, sig) == 1; }

static int sigprobe_count(void) { return sigprobe_calls; }
*/
import "C"

import (
	"fmt"
	"syscall"
)

// Install makes the probe the handler of sig.
func Install(sig syscall.Signal) error {
	if C.sigprobe_install(C.int(sig)) != 0 {
		return fmt.Errorf("sigprobe: sigaction(%v) failed", sig)
	}
	return nil
}

// Send sends sig to the calling thread; the handlers have run when it
// returns.
func Send(sig syscall.Signal) { C.sigprobe_send(C.int(sig)) }

// Calls is the number of times the probe has run.
func Calls() int { return int(C.sigprobe_count()) }

// Blocked reports whether sig was blocked the last time the probe ran.
func Blocked(sig syscall.Signal) bool { return C.sigprobe_blocked(C.int(sig)) != 0 }
