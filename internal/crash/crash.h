#ifndef OP2_CRASH_H
#define OP2_CRASH_H

/* The loop a fatal signal is blamed on. Go writes it around every loop
 * (the run time runs one loop at a time); the signal handler only reads it.
 * The strings are C copies owned by the Go side's name cache. */
struct op2_crash_loop {
	const char *kernel, *set, *backend;
	/* OP2_CRASH_IDLE, OP2_CRASH_RUNNING or OP2_CRASH_QUEUED. */
	int state;
};

enum {
	OP2_CRASH_IDLE = 0,    /* no loop is running */
	OP2_CRASH_RUNNING = 1, /* the loop runs until Go clears the state */
	OP2_CRASH_QUEUED = 2,  /* the last loop started on an asynchronous backend */
};

extern struct op2_crash_loop op2_crash_cur;

/* op2_crash_install records the executable's code ranges and installs the
 * handler for SIGSEGV, SIGBUS, SIGFPE and SIGILL, chaining to the handlers
 * found. It returns 0, or the errno of the sigaction call that failed
 * (after putting back the handlers it had replaced). Call it once. */
int op2_crash_install(void);

/* op2_crash_add_code records the code of the library dlopen returned
 * handle for (a loop's, compiled by GoOP2) as a host loop's: a fault
 * there during a loop ends the process, whatever handler was there
 * before. op2_crash_remove_code forgets it before the library is closed.
 * The caller serialises them. */
int op2_crash_add_code(void *handle);
void op2_crash_remove_code(void *handle);

#endif
