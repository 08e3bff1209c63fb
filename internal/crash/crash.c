// The fatal-signal handler. Everything it calls is async-signal-safe:
// write(2), sigaction(2), sigprocmask(2), raise(3) and plain loads and
// stores. It runs with every signal blocked, like Go's handlers, since it
// calls Go's handler on the same signal stack (see op2_crash_install).

#define _GNU_SOURCE
#include <errno.h>

#include "crash.h"

struct op2_crash_loop op2_crash_cur;

#if !defined(__linux__)

// Elsewhere the handler is not built: loops run without the report.
int op2_crash_install(void) { return ENOSYS; }
int op2_crash_add_code(void *handle) { (void)handle; return ENOSYS; }
void op2_crash_remove_code(void *handle) { (void)handle; }

#else

#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

static const int op2_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
#define OP2_NSIGS ((int)(sizeof op2_sigs / sizeof op2_sigs[0]))

// The handlers found at install time (Go's, normally).
static struct sigaction op2_old[OP2_NSIGS];
// op2_foreign[i]: the handler found for op2_sigs[i] belongs to neither Go
// nor the system default. Such handlers (LLVM's, which PoCL installs) mostly
// clean up and let the fault recur, but PoCL's SIGFPE handler recovers from
// integer division by zero on its own device threads: a SIGFPE during an
// OpenCL loop is left to it without a report.
static int op2_foreign[OP2_NSIGS];

// The main executable's code: Go code, and the C code linked into it.
#define OP2_MAXTEXT 16
static uintptr_t op2_text_lo[OP2_MAXTEXT], op2_text_hi[OP2_MAXTEXT];
static int op2_ntext;

static int op2_reported;

// The code of the libraries GoOP2 compiled and loaded (its host loops):
// slots of executable ranges, each with the load address of its library
// (0: free). The handler reads them with plain loads; Go adds and removes
// them one call at a time.
#define OP2_MAXCODE 4096
static struct {
	uintptr_t lo, hi, base;
} op2_code[OP2_MAXCODE];
static int op2_ncode;    // slots in use so far (some freed)
static int op2_overflow; // a library's code found no slot: any code may be a loop's

struct op2_find {
	uintptr_t base;
	const char *name;
	int added;
};

static int op2_code_cb(struct dl_phdr_info *info, size_t size, void *data) {
	(void)size;
	struct op2_find *f = data;
	if (info->dlpi_addr != f->base || info->dlpi_name == NULL || strcmp(info->dlpi_name, f->name) != 0) {
		return 0;
	}
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) {
			continue;
		}
		int k = 0;
		while (k < op2_ncode && op2_code[k].base != 0) {
			k++;
		}
		if (k == OP2_MAXCODE) {
			__atomic_store_n(&op2_overflow, 1, __ATOMIC_RELEASE);
			break;
		}
		__atomic_store_n(&op2_code[k].lo, info->dlpi_addr + ph->p_vaddr, __ATOMIC_RELAXED);
		__atomic_store_n(&op2_code[k].hi, info->dlpi_addr + ph->p_vaddr + ph->p_memsz, __ATOMIC_RELAXED);
		__atomic_store_n(&op2_code[k].base, f->base, __ATOMIC_RELEASE);
		if (k == op2_ncode) {
			__atomic_store_n(&op2_ncode, k + 1, __ATOMIC_RELEASE);
		}
		f->added++;
	}
	return 1;
}

int op2_crash_add_code(void *handle) {
	struct link_map *lm = NULL;
	if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || lm == NULL || lm->l_addr == 0) {
		return -1;
	}
	struct op2_find f = {lm->l_addr, lm->l_name, 0};
	dl_iterate_phdr(op2_code_cb, &f);
	return f.added > 0 ? 0 : -1;
}

void op2_crash_remove_code(void *handle) {
	struct link_map *lm = NULL;
	if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || lm == NULL || lm->l_addr == 0) {
		return;
	}
	for (int k = 0; k < op2_ncode; k++) {
		if (op2_code[k].base == lm->l_addr) {
			__atomic_store_n(&op2_code[k].base, 0, __ATOMIC_RELEASE);
		}
	}
}

// op2_in_code reports whether pc is in the code of a library GoOP2
// compiled (op2_crash_add_code).
static int op2_in_code(uintptr_t pc) {
	if (__atomic_load_n(&op2_overflow, __ATOMIC_ACQUIRE)) {
		return 1; // some library's code is not recorded: take any fault as a loop's
	}
	int n = __atomic_load_n(&op2_ncode, __ATOMIC_ACQUIRE);
	for (int k = 0; k < n; k++) {
		uintptr_t base = __atomic_load_n(&op2_code[k].base, __ATOMIC_ACQUIRE);
		if (base != 0 && pc >= op2_code[k].lo && pc < op2_code[k].hi) {
			return 1;
		}
	}
	return 0;
}

static int op2_text_cb(struct dl_phdr_info *info, size_t size, void *data) {
	(void)size;
	(void)data;
	for (int i = 0; i < info->dlpi_phnum && op2_ntext < OP2_MAXTEXT; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			op2_text_lo[op2_ntext] = info->dlpi_addr + ph->p_vaddr;
			op2_text_hi[op2_ntext] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
			op2_ntext++;
		}
	}
	return 1; // the first object is the executable: stop there
}

static int op2_in_exe(uintptr_t pc) {
	for (int i = 0; i < op2_ntext; i++) {
		if (pc >= op2_text_lo[i] && pc < op2_text_hi[i]) {
			return 1;
		}
	}
	return 0;
}

// op2_fault_pc is the address of the faulting instruction, or 0 where the
// architecture's context layout is not known here.
static uintptr_t op2_fault_pc(void *ctx) {
	ucontext_t *uc = ctx;
	if (uc == NULL) {
		return 0;
	}
#if defined(__x86_64__)
	return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	return (uintptr_t)uc->uc_mcontext.pc;
#else
	return 0;
#endif
}

// A message under construction in a fixed buffer.
struct op2_msg {
	char b[1024];
	size_t n;
};

static void op2_put(struct op2_msg *m, const char *s) {
	for (; s != NULL && *s != 0 && m->n < sizeof m->b - 1; s++) {
		m->b[m->n++] = *s;
	}
}

// op2_put_name appends a user-chosen name, at most 200 bytes of it, with
// control characters and quotes replaced.
static void op2_put_name(struct op2_msg *m, const char *s) {
	if (s == NULL) {
		op2_put(m, "?");
		return;
	}
	for (int i = 0; s[i] != 0 && i < 200 && m->n < sizeof m->b - 1; i++) {
		char c = s[i];
		if ((unsigned char)c < 0x20 || c == 0x7f || c == '"') {
			c = '?';
		}
		m->b[m->n++] = c;
	}
}

static void op2_put_hex(struct op2_msg *m, uintptr_t v) {
	char d[2 + 2 * sizeof v];
	int n = 0;
	do {
		d[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v != 0);
	op2_put(m, "0x");
	while (n > 0 && m->n < sizeof m->b - 1) {
		m->b[m->n++] = d[--n];
	}
}

// op2_report is kept out of op2_handler so that its message buffer is on
// the signal stack only while a report is written: Go's handler, which
// op2_handler calls, runs on the same stack below op2_handler's frame.
static __attribute__((noinline)) void op2_report(int sig, siginfo_t *info, int state) {
	struct op2_msg m;
	m.n = 0;
	op2_put(&m, "op2: fatal signal ");
	switch (sig) {
	case SIGSEGV:
		op2_put(&m, "SIGSEGV (segmentation violation)");
		break;
	case SIGBUS:
		op2_put(&m, "SIGBUS (bus error)");
		break;
	case SIGFPE:
		op2_put(&m, "SIGFPE (arithmetic exception)");
		break;
	default:
		op2_put(&m, "SIGILL (illegal instruction)");
		break;
	}
	op2_put(&m, " at address ");
	op2_put_hex(&m, (uintptr_t)info->si_addr);
	if (state == OP2_CRASH_RUNNING) {
		op2_put(&m, " while running loop \"");
	} else {
		op2_put(&m, " outside Go code; the last loop started was loop \"");
	}
	op2_put_name(&m, op2_crash_cur.kernel);
	op2_put(&m, "\" over set \"");
	op2_put_name(&m, op2_crash_cur.set);
	op2_put(&m, "\" on backend ");
	op2_put_name(&m, op2_crash_cur.backend);
	if (state == OP2_CRASH_RUNNING) {
		op2_put(&m, "; the kernel or code it calls is at fault");
	} else {
		op2_put(&m, ", which runs loops asynchronously: its kernel, or that of a loop queued before it, is the likely cause");
	}
	m.b[m.n++] = '\n';
	for (size_t off = 0; off < m.n;) {
		ssize_t w = write(2, m.b + off, m.n - off);
		if (w <= 0) {
			if (w < 0 && errno == EINTR) {
				continue;
			}
			break;
		}
		off += (size_t)w;
	}
}

// op2_is_foreign reports whether handler o belongs to neither Go (whose
// handler is in the executable) nor the system (SIG_DFL, SIG_IGN).
static int op2_is_foreign(const struct sigaction *o) {
	if (o->sa_handler == SIG_DFL || o->sa_handler == SIG_IGN) {
		return 0;
	}
	void *fn = (o->sa_flags & SA_SIGINFO) ? (void *)o->sa_sigaction : (void *)o->sa_handler;
	return !op2_in_exe((uintptr_t)fn);
}

// Our own disposition, as installed.
static struct sigaction op2_ours[OP2_NSIGS];

// op2_default sets sig's default action and raises it. The signal is
// blocked while its handler runs: it is delivered, with the default
// action, when the handler returns (and a fault recurs).
static __attribute__((noinline)) void op2_default(int sig) {
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	raise(sig);
}

// op2_chain hands the signal to the handler that was there before. It
// returns 1 when that handler was a function that returned.
//
// The handler runs with every signal blocked, as op2_handler does (see
// op2_crash_install), and the mask is put back when it returns: LLVM's
// handler, which PoCL installs, unblocks every signal on its way, and a
// signal taken on top of op2_handler's frame would run Go's handler
// nested inside Go's handler on the signal stack, which Go does not
// support ("fatal: morestack on gsignal").
static int op2_chain(int i, int sig, siginfo_t *info, void *ctx) {
	struct sigaction *o = &op2_old[i];
	if (o->sa_handler == SIG_IGN) {
		// A fault raised by the kernel cannot be ignored: returning would
		// repeat the instruction. Fall through to the default action, as
		// the kernel would with no handler. A sent signal is ignored.
		if (info == NULL || info->si_code <= 0) {
			return 0;
		}
	} else if (o->sa_handler != SIG_DFL) {
		sigset_t mask;
		int have = sigprocmask(SIG_SETMASK, NULL, &mask) == 0;
		if (o->sa_flags & SA_SIGINFO) {
			o->sa_sigaction(sig, info, ctx);
		} else {
			o->sa_handler(sig);
		}
		if (have) {
			sigprocmask(SIG_SETMASK, &mask, NULL);
		}
		return 1;
	}
	op2_default(sig);
	return 0;
}

static void op2_handler(int sig, siginfo_t *info, void *ctx) {
	int saved = errno;
	int i = 0;
	while (i < OP2_NSIGS - 1 && op2_sigs[i] != sig) {
		i++;
	}
	int state = __atomic_load_n(&op2_crash_cur.state, __ATOMIC_ACQUIRE);
	// Report only a fault (si_code > 0: raised by the kernel, not sent)
	// while a loop runs, outside the executable's code: a fault in Go code
	// is Go's business (a nil dereference panics).
	uintptr_t pc = op2_fault_pc(ctx);
	int ours = pc != 0 && op2_in_code(pc);
	// A SIGFPE outside GoOP2's loops with a foreign handler below (PoCL's,
	// which recovers from an integer division by zero in an OpenCL
	// kernel on its threads) is left to it without a report.
	int quiet = sig == SIGFPE && op2_foreign[i] && (state == OP2_CRASH_QUEUED || !ours);
	if (state != OP2_CRASH_IDLE && info != NULL && info->si_code > 0 && !quiet && pc != 0 && !op2_in_exe(pc)) {
		if (!__atomic_exchange_n(&op2_reported, 1, __ATOMIC_ACQ_REL)) {
			op2_report(sig, info, state);
		}
		if (state == OP2_CRASH_RUNNING && op2_foreign[i] && ours) {
			// A host loop's kernel faulted: the process ends, as
			// without a foreign handler. PoCL's (LLVM's) would skip an
			// integer division by zero and let the loop go on with a
			// wrong value.
			op2_default(sig);
			errno = saved;
			return;
		}
	}
	if (op2_chain(i, sig, info, ctx)) {
		// The handler below returned. Some replace themselves on the way:
		// LLVM's (which PoCL installs) puts back the handler it found and
		// lets the fault recur, so a Go nil dereference that passes
		// through it would remove this handler for good. Chain to what
		// it left instead, and stay on top.
		struct sigaction now;
		if (sigaction(sig, NULL, &now) == 0 && now.sa_sigaction != op2_handler) {
			op2_old[i] = now;
			op2_foreign[i] = op2_is_foreign(&now);
			sigaction(sig, &op2_ours[i], NULL);
		}
	}
	errno = saved;
}

int op2_crash_install(void) {
	dl_iterate_phdr(op2_text_cb, NULL);
	if (op2_ntext == 0) {
		return ENOENT;
	}
	for (int i = 0; i < OP2_NSIGS; i++) {
		struct sigaction sa;
		if (sigaction(op2_sigs[i], NULL, &op2_old[i]) != 0) {
			int err = errno;
			for (int j = 0; j < i; j++) {
				sigaction(op2_sigs[j], &op2_old[j], NULL);
			}
			return err;
		}
		struct sigaction *o = &op2_old[i];
		op2_foreign[i] = op2_is_foreign(o);
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = op2_handler;
		// SA_ONSTACK: Go threads run handlers on their signal stacks (see
		// os/signal, "Go programs that use cgo or SWIG"). Every signal is
		// blocked while the handler runs, whatever the handler found asked
		// for (LLVM's, which PoCL installs, asks for none): op2_handler
		// calls Go's handler, which Go installs with every signal blocked
		// and which must not be interrupted by another signal on the same
		// signal stack, where the nested Go handler would run Go code on
		// the signal goroutine past its stack guard ("fatal: morestack on
		// gsignal"). A chained handler gets at least the mask it asked for.
		sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
		sigfillset(&sa.sa_mask);
		op2_ours[i] = sa;
		if (sigaction(op2_sigs[i], &sa, NULL) != 0) {
			int err = errno;
			for (int j = 0; j < i; j++) {
				sigaction(op2_sigs[j], &op2_old[j], NULL);
			}
			return err;
		}
	}
	return 0;
}

#endif // __linux__
