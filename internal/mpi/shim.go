package mpi

// tableDecl is the function table the shim fills; the same text is in the
// shim's source and in this package's cgo preamble (mpi.go), so that both
// agree on its layout.
const tableDecl = `
struct op2mpi_table {
	int version;
	int (*init)(int *rank, int *size, int *serialized, char *lib, int liblen, double timeout);
	int (*finalize)(void);
	int (*abort)(int code);
	int (*barrier)(void);
	int (*bcast)(void *buf, long long n, int root);
	int (*allgather)(const void *send, long long n, void *recv);
	int (*alltoallv)(const void *send, const long long *scounts, void *recv, const long long *rcounts);
	int (*isend)(const void *buf, long long n, int dest, int tag);
	int (*irecv)(void *buf, long long n, int src, int tag);
	int (*waitall)(void);
	int (*pending)(int *idx, int cap);
	int (*allreduce_or)(void *buf, long long n);
	double (*wtime)(void);
	int (*allreduce_i64)(long long *buf, long long n, int op);
	int (*cuda_aware)(void);
};
`

// tableVersion changes whenever tableDecl does.
const tableVersion = 5

// shimSource is compiled with the MPI compiler wrapper (mpicc) against the
// installed mpi.h, so that the handles' representation (pointers in Open
// MPI, integers in MPICH) is the library's own business: Go only sees
// plain C functions. Every call happens on one OS thread (see World).
const shimSource = `#include <mpi.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#if defined(OPEN_MPI) && defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif
` + tableDecl + `
#define EXPORT __attribute__((visibility("default")))

static MPI_Comm comm = MPI_COMM_NULL;
static MPI_Request *reqs;
static int nreqs, capreqs;
static int *counts; /* 4 * size ints: send counts, send displs, recv counts, recv displs */
static double timeout; /* seconds a wait may last without completing; <= 0: no bound */
static MPI_Request creq = MPI_REQUEST_NULL; /* the collective in progress */

static int fits(long long n) { return n >= 0 && n <= INT_MAX; }

/* complete waits for the n requests r, polling (MPI_Testall progresses
   them) so that a wait can end: -3 when timeout seconds pass first, the
   requests then still pending. It yields the processor between polls, and
   after a tenth of a second sleeps between them, so that a long wait (a
   rank computing something alone) does not hold a core. */
static int complete(MPI_Request *r, int n) {
	double start = MPI_Wtime();
	for (long spins = 0;; spins++) {
		int done = 0;
		int rc = MPI_Testall(n, r, &done, MPI_STATUSES_IGNORE);
		if (rc != MPI_SUCCESS) return rc;
		if (done) return 0;
		if (spins % 16 != 15) continue;
		double waited = MPI_Wtime() - start;
		if (timeout > 0 && waited > timeout) return -3;
		if (waited > 0.1) {
			struct timespec ts = {0, waited > 2 ? 1000000 : 100000};
			nanosleep(&ts, NULL);
		} else {
			sched_yield();
		}
	}
}

static int op2mpi_init(int *rank, int *size, int *serialized, char *lib, int liblen, double limit) {
	int inited = 0, provided = 0, len = 0;
	/* Open MPI would install handlers for SIGSEGV, SIGBUS, SIGFPE and SIGILL
	   over the Go run time's; the Go run time needs its own. Its hwloc
	   would load its OpenCL plugin, which starts the OpenCL drivers (PoCL
	   installs a SIGFPE handler without SA_ONSTACK, fatal under Go): GoOP2
	   starts OpenCL itself when the opencl backend is chosen. */
	setenv("OMPI_MCA_opal_signal", "", 0);
	setenv("HWLOC_COMPONENTS", "-opencl,-cuda,-nvml,-rsmi,-levelzero,-gl", 0);
	timeout = limit;
	MPI_Initialized(&inited);
	if (!inited && MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) return 1;
	if (inited) MPI_Query_thread(&provided);
	*serialized = provided >= MPI_THREAD_SERIALIZED;
	if (MPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) return 2;
	MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
	MPI_Comm_rank(comm, rank);
	MPI_Comm_size(comm, size);
	char v[MPI_MAX_LIBRARY_VERSION_STRING];
	MPI_Get_library_version(v, &len);
	if (liblen > 0) { strncpy(lib, v, liblen - 1); lib[liblen - 1] = 0; }
	counts = calloc(4 * (size_t)*size + 4, sizeof(int));
	return counts ? 0 : 3;
}
static int op2mpi_finalize(void) {
	if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
	return MPI_Finalize();
}
static int op2mpi_abort(int code) { return MPI_Abort(MPI_COMM_WORLD, code); }
/* Each collective starts its non-blocking form and completes it like a
   message, so that it too ends after the timeout. */
static int collective(int rc) { return rc != MPI_SUCCESS ? rc : complete(&creq, 1); }
static int op2mpi_barrier(void) { return collective(MPI_Ibarrier(comm, &creq)); }
static int op2mpi_bcast(void *buf, long long n, int root) {
	if (!fits(n)) return -1;
	return collective(MPI_Ibcast(buf, (int)n, MPI_BYTE, root, comm, &creq));
}
static int op2mpi_allgather(const void *send, long long n, void *recv) {
	if (!fits(n)) return -1;
	return collective(MPI_Iallgather(send, (int)n, MPI_BYTE, recv, (int)n, MPI_BYTE, comm, &creq));
}
static int op2mpi_allreduce_or(void *buf, long long n) {
	if (!fits(n)) return -1;
	return collective(MPI_Iallreduce(MPI_IN_PLACE, buf, (int)n, MPI_BYTE, MPI_BOR, comm, &creq));
}
static int op2mpi_alltoallv(const void *send, const long long *sc, void *recv, const long long *rc) {
	int size; MPI_Comm_size(comm, &size);
	int *s = counts, *sd = counts + size, *r = counts + 2 * size, *rd = counts + 3 * size;
	long long so = 0, ro = 0;
	for (int i = 0; i < size; i++) {
		if (!fits(sc[i]) || !fits(rc[i]) || !fits(so) || !fits(ro)) return -1;
		s[i] = (int)sc[i]; sd[i] = (int)so; so += sc[i];
		r[i] = (int)rc[i]; rd[i] = (int)ro; ro += rc[i];
	}
	return collective(MPI_Ialltoallv(send, s, sd, MPI_BYTE, recv, r, rd, MPI_BYTE, comm, &creq));
}
static int grow(void) {
	if (nreqs < capreqs) return 0;
	int c = capreqs ? 2 * capreqs : 16;
	MPI_Request *p = realloc(reqs, (size_t)c * sizeof *p);
	if (!p) return -2;
	reqs = p; capreqs = c;
	return 0;
}
static int op2mpi_isend(const void *buf, long long n, int dest, int tag) {
	if (!fits(n)) return -1;
	if (grow()) return -2;
	return MPI_Isend(buf, (int)n, MPI_BYTE, dest, tag, comm, &reqs[nreqs++]);
}
static int op2mpi_irecv(void *buf, long long n, int src, int tag) {
	if (!fits(n)) return -1;
	if (grow()) return -2;
	return MPI_Irecv(buf, (int)n, MPI_BYTE, src, tag, comm, &reqs[nreqs++]);
}
static int op2mpi_waitall(void) {
	int rc = complete(reqs, nreqs);
	if (rc != -3) nreqs = 0;
	return rc;
}
/* op2mpi_pending writes the indices (in posting order) of the messages
   still incomplete after a wait timed out, at most cap of them, and
   returns how many there are. */
static int op2mpi_pending(int *idx, int cap) {
	int k = 0;
	for (int i = 0; i < nreqs; i++) {
		int done = 0;
		if (reqs[i] != MPI_REQUEST_NULL) MPI_Test(&reqs[i], &done, MPI_STATUS_IGNORE);
		else done = 1;
		if (!done) { if (k < cap) idx[k] = i; k++; }
	}
	return k;
}
static double op2mpi_wtime(void) { return MPI_Wtime(); }
/* op: 0 sum, 1 minimum, 2 maximum. */
static int op2mpi_allreduce_i64(long long *buf, long long n, int op) {
	if (!fits(n)) return -1;
	MPI_Op o = op == 1 ? MPI_MIN : op == 2 ? MPI_MAX : MPI_SUM;
	return collective(MPI_Iallreduce(MPI_IN_PLACE, buf, (int)n, MPI_LONG_LONG, o, comm, &creq));
}

/* op2mpi_cuda_aware reports whether the library reads and writes CUDA
   device memory given as a message buffer: 1 yes, 0 no, -1 it cannot say
   (an MPI without a query: MVAPICH2, Cray MPICH). */
static int op2mpi_cuda_aware(void) {
#if defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
	return MPIX_Query_cuda_support() ? 1 : 0;
#elif defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 40000000 && !defined(MVAPICH2_NUMVERSION)
	int yes = 0;
	if (MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &yes) != MPI_SUCCESS) return -1;
	return yes ? 1 : 0;
#else
	return -1;
#endif
}

static struct op2mpi_table table = {
	` + "OP2MPI_VERSION" + `, op2mpi_init, op2mpi_finalize, op2mpi_abort, op2mpi_barrier, op2mpi_bcast,
	op2mpi_allgather, op2mpi_alltoallv, op2mpi_isend, op2mpi_irecv, op2mpi_waitall,
	op2mpi_pending, op2mpi_allreduce_or, op2mpi_wtime, op2mpi_allreduce_i64, op2mpi_cuda_aware,
};
EXPORT struct op2mpi_table *op2mpi_get_table(void) { return &table; }
`
