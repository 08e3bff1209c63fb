// Package mpi is GoOP2's binding to the system's MPI library. Nothing of
// MPI is needed to build GoOP2: when a program runs under mpirun, a small
// C shim is compiled against the installed mpi.h with the MPI compiler
// wrapper (mpicc), through GoOP2's own compiler cache, and loaded with
// dlopen. Compiling against mpi.h, rather than calling libmpi's symbols
// directly, keeps the representation of MPI's handles (pointers in Open
// MPI, integers in MPICH) out of Go.
//
// MPI is initialised for calls from one thread at a time
// (MPI_THREAD_SERIALIZED): the calls loops make (messages, reductions,
// agreements) run on the calling goroutine's thread, one at a time, and
// allocate nothing. The calls made once (MPI_Init, MPI_Finalize, which
// must be on the thread that initialised MPI, and Do's) run on one locked
// OS thread, a goroutine started by Init that runs the calls it is
// handed; so does every call when the library provides only
// MPI_THREAD_FUNNELED (calls from that one thread).
package mpi

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

static struct op2mpi_table *T;
typedef struct op2mpi_table *(*op2mpi_get_fn)(void);
static int op2mpi_bind(void *get) { T = ((op2mpi_get_fn)get)(); return T->version; }
static int op2mpi_init(int *rank, int *size, int *serialized, char *lib, int liblen, double timeout) { return T->init(rank, size, serialized, lib, liblen, timeout); }
static int op2mpi_finalize(void) { return T->finalize(); }
static int op2mpi_abort(int code) { return T->abort(code); }
static int op2mpi_barrier(void) { return T->barrier(); }
static int op2mpi_bcast(uintptr_t buf, long long n, int root) { return T->bcast((void *)buf, n, root); }
static int op2mpi_allgather(uintptr_t send, long long n, uintptr_t recv) { return T->allgather((const void *)send, n, (void *)recv); }
static int op2mpi_alltoallv(uintptr_t send, uintptr_t sc, uintptr_t recv, uintptr_t rc) {
	return T->alltoallv((const void *)send, (const long long *)sc, (void *)recv, (const long long *)rc);
}
static int op2mpi_isend(uintptr_t buf, long long n, int dest, int tag) { return T->isend((const void *)buf, n, dest, tag); }
static int op2mpi_irecv(uintptr_t buf, long long n, int src, int tag) { return T->irecv((void *)buf, n, src, tag); }
static int op2mpi_waitall(void) { return T->waitall(); }
static int op2mpi_pending(uintptr_t idx, int cap) { return T->pending((int *)idx, cap); }
static int op2mpi_allreduce_or(uintptr_t buf, long long n) { return T->allreduce_or((void *)buf, n); }
static double op2mpi_wtime(void) { return T->wtime(); }
static int op2mpi_allreduce_i64(uintptr_t buf, long long n, int op) { return T->allreduce_i64((long long *)buf, n, op); }
static int op2mpi_cuda_aware(void) { return T->cuda_aware(); }

typedef struct { uintptr_t buf; long long bytes; int rank, tag; } op2mpi_msg;
// op2mpi_start posts the receives, then the sends, of one exchange.
static int op2mpi_start(uintptr_t recvs, int nr, uintptr_t sends, int ns) {
	const op2mpi_msg *r = (const op2mpi_msg *)recvs, *s = (const op2mpi_msg *)sends;
	for (int i = 0; i < nr; i++) { int rc = T->irecv((void *)r[i].buf, r[i].bytes, r[i].rank, r[i].tag); if (rc) return rc; }
	for (int i = 0; i < ns; i++) { int rc = T->isend((const void *)s[i].buf, s[i].bytes, s[i].rank, s[i].tag); if (rc) return rc; }
	return 0;
}

// op2mpi_pack copies the elements idx[0..n) of src (elem bytes each) to dst
// one after another; op2mpi_unpack is the reverse.
static void op2mpi_pack(uintptr_t dst, uintptr_t src, uintptr_t idx, long long n, long long elem) {
	char *d = (char *)dst; const char *s = (const char *)src; const int *x = (const int *)idx;
	for (long long i = 0; i < n; i++) memcpy(d + i * elem, s + (long long)x[i] * elem, (size_t)elem);
}
static void op2mpi_unpack(uintptr_t dst, uintptr_t src, uintptr_t idx, long long n, long long elem) {
	char *d = (char *)dst; const char *s = (const char *)src; const int *x = (const int *)idx;
	for (long long i = 0; i < n; i++) memcpy(d + (long long)x[i] * elem, s + i * elem, (size_t)elem);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/goop2/op2/internal/cache"
	"github.com/goop2/op2/internal/jit"
	"github.com/goop2/op2/internal/sigstack"
)

// Launched reports how many processes the MPI launcher started, read from
// the environment Open MPI, MPICH (Hydra) and PMIx launchers give their
// processes; 0 when the program was not started by a launcher.
func Launched() int {
	for _, v := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"} {
		if s := os.Getenv(v); s != "" {
			if n, err := strconv.Atoi(s); err == nil && n > 0 {
				return n
			}
		}
	}
	if os.Getenv("PMIX_RANK") != "" || os.Getenv("PMI_RANK") != "" {
		return 1
	}
	return 0
}

// LocalRanks is the number of processes the MPI launcher started on this
// machine (node), read from the environment Open MPI, MPICH (Hydra) and
// PMIx launchers give their processes; 0 when the program was not started
// by a launcher or the launcher does not say.
func LocalRanks() int {
	for _, v := range []string{"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "PMIX_LOCAL_SIZE"} {
		if s := os.Getenv(v); s != "" {
			if n, err := strconv.Atoi(s); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}

// LaunchedRank is this process's rank as the MPI launcher gave it in the
// environment (Open MPI, MPICH/Hydra, PMIx), readable before MPI is
// initialised; ok is false when no launcher started the process.
func LaunchedRank() (rank int, ok bool) {
	for _, v := range []string{"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"} {
		if s := os.Getenv(v); s != "" {
			if n, err := strconv.Atoi(s); err == nil && n >= 0 {
				return n, true
			}
		}
	}
	return 0, false
}

// LocalRank is this process's number among the processes the MPI
// launcher started on its machine (Open MPI, MPICH/Hydra, PMIx), readable
// before MPI is initialised; ok is false when the launcher does not say.
func LocalRank() (rank int, ok bool) {
	for _, v := range []string{"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMIX_LOCAL_RANK"} {
		if s := os.Getenv(v); s != "" {
			if n, err := strconv.Atoi(s); err == nil && n >= 0 {
				return n, true
			}
		}
	}
	return 0, false
}

// ErrUnavailable is wrapped by the errors that say the MPI library cannot
// be used.
var ErrUnavailable = errors.New("MPI is not available")

// World is MPI_COMM_WORLD (a duplicate of it): the processes of the job.
type World struct {
	rank, size int
	library    string
	timeout    time.Duration
	// The MPI thread runs each function sent on calls and then sends on
	// done; mu makes one call at a time, and req holds its arguments and
	// results, so that a call allocates nothing (see call). direct says
	// that the library takes calls from any thread, one at a time.
	calls     chan func(*World)
	done      chan struct{}
	mu        sync.Mutex
	req       request
	direct    bool
	lib       *jit.Library
	comp      *jit.Compiler
	finalized atomic.Bool // set by Finalize: run then runs nothing
	// cudaAware is the library's answer to the CUDA query (1, 0, or -1:
	// it cannot say), deviceMemory what OP2_GPU_DIRECT made of it.
	cudaAware    int
	deviceMemory bool
}

// Rank is this process's rank.
func (w *World) Rank() int { return w.rank }

// Size is the number of ranks.
func (w *World) Size() int { return w.size }

// Library is the MPI library's version string.
func (w *World) Library() string { return w.library }

// Timeout is how long a wait may last without completing (0: no bound);
// see TimeoutFromEnv.
func (w *World) Timeout() time.Duration { return w.timeout }

// CUDAAware reports what the MPI library says of CUDA device memory given
// as a message buffer: whether it reads and writes it (Open MPI's
// MPIX_Query_cuda_support, MPICH's MPIX_GPU_query_support), and known
// false when it has no such query (MVAPICH2, Cray MPICH).
func (w *World) CUDAAware() (aware, known bool) { return w.cudaAware == 1, w.cudaAware >= 0 }

// DeviceMemory reports whether halo messages may be device memory, handed
// to MPI as they are: OP2_GPU_DIRECT=on, or unset (auto) with a library
// that says it is CUDA-aware (CUDAAware).
func (w *World) DeviceMemory() bool { return w.deviceMemory }

// GPUDirectFromEnv reads OP2_GPU_DIRECT, which says whether halo messages
// of Dats on a CUDA device go to MPI as device memory (as OP2's
// -gpudirect): "auto" (or unset) where the library says it reads device
// memory, "on" also where it cannot say (an MPI that is CUDA-aware
// without a query: MVAPICH2, Cray MPICH with MPICH_GPU_SUPPORT_ENABLED=1;
// Init refuses it where the library says it is not), "off" never (they
// pass through pinned host buffers).
func GPUDirectFromEnv() (string, error) {
	switch v := strings.ToLower(strings.TrimSpace(os.Getenv("OP2_GPU_DIRECT"))); v {
	case "", "auto":
		return "auto", nil
	case "on", "1", "true":
		return "on", nil
	case "off", "0", "false":
		return "off", nil
	default:
		return "", fmt.Errorf("OP2_GPU_DIRECT=%q is not auto, on or off", v)
	}
}

// DefaultTimeout bounds every MPI wait unless OP2_MPI_TIMEOUT says
// otherwise.
const DefaultTimeout = 5 * time.Minute

// TimeoutFromEnv reads OP2_MPI_TIMEOUT: how long a rank may wait for
// other ranks (a message, a collective) without it completing before the
// wait fails with a *TimeoutError. It is a Go duration ("90s", "10m") or a
// number of seconds; 0 or "off" removes the bound; unset, it is
// DefaultTimeout.
func TimeoutFromEnv() (time.Duration, error) {
	v := strings.TrimSpace(os.Getenv("OP2_MPI_TIMEOUT"))
	switch {
	case v == "":
		return DefaultTimeout, nil
	case strings.EqualFold(v, "off"):
		return 0, nil
	}
	d, err := time.Duration(-1), error(nil)
	if f, ferr := strconv.ParseFloat(v, 64); ferr == nil && f >= 0 && f < 1e9 {
		d = time.Duration(f * float64(time.Second))
		if f > 0 && d == 0 {
			d = -2 // positive, but below a nanosecond
		}
	} else if pd, perr := time.ParseDuration(v); perr == nil && pd >= 0 {
		d = pd
		if pd == 0 && strings.ContainsAny(v, "123456789") {
			d = -2 // "0.5ns": positive, rounded to 0
		}
	}
	switch {
	case d == -2:
		err = fmt.Errorf("OP2_MPI_TIMEOUT=%q is below a nanosecond, which would mean no bound (0 or off)", v)
	case d < 0:
		err = fmt.Errorf("OP2_MPI_TIMEOUT=%q is neither a duration (90s, 10m) nor a number of seconds (0 or off: no bound)", v)
	}
	if err != nil {
		return 0, err
	}
	return d, nil
}

// TimeoutError says that a wait for other ranks lasted longer than the
// bound (World.Timeout) without completing: a rank that never sends, or
// never joins a collective, or a job whose ranks took different paths.
// MPI's state is then unusable; the caller reports it and aborts the job.
type TimeoutError struct {
	Rank    int           // the rank that waited
	Op      string        // what it waited in: "MPI_Allgather", "MPI_Waitall"...
	Waited  time.Duration // how long
	Pending []int         // for MPI_Waitall: the messages not complete, as indices into the receives then the sends started
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("rank %d waited %v in %s without it completing (OP2_MPI_TIMEOUT bounds every MPI wait): another rank has stopped, or took a different path through the program",
		e.Rank, e.Waited.Round(time.Millisecond), e.Op)
}

var (
	initOnce sync.Once
	world    *World
	initErr  error
	current  atomic.Pointer[World]
)

// Init initialises MPI once per process, compiling the shim with mpicc
// (the MPICC environment variable names another wrapper) into the cache
// directory cacheDir, each build of it and of the shims World.Build
// builds bounded by compileTimeout (Config.CompileTimeout; 0: jit's
// default). Later calls return the same World or error.
func Init(cacheDir string, compileTimeout time.Duration) (*World, error) {
	initOnce.Do(func() {
		world, initErr = initWorld(cacheDir, compileTimeout)
		current.Store(world)
	})
	return world, initErr
}

// Current returns the World Init started, or nil before Init succeeded.
// Packages that need MPI only when the program already uses it (parallel
// HDF5) ask for it here rather than starting MPI themselves.
func Current() *World { return current.Load() }

func initWorld(cacheDir string, compileTimeout time.Duration) (*World, error) {
	cc := os.Getenv("MPICC")
	if cc == "" {
		cc = "mpicc"
	}
	if _, err := exec.LookPath(strings.Fields(cc + " x")[0]); err != nil {
		return nil, fmt.Errorf("%w: the MPI compiler wrapper %q was not found; install Open MPI's development files (Debian: apt-get install openmpi-bin libopenmpi-dev) or set MPICC: %v", ErrUnavailable, cc, err)
	}
	dir, err := cache.Open(cacheDir)
	if err != nil {
		return nil, err
	}
	comp := &jit.Compiler{CC: cc, Flags: []string{"-O2"}, Cache: dir, Timeout: compileTimeout, Env: "MPICC", Package: "libopenmpi-dev"}
	src := strings.Replace(shimSource, "OP2MPI_VERSION", strconv.Itoa(tableVersion), 1)
	lib, err := comp.Build(src, []string{"op2mpi_get_table"})
	var ce *jit.CompileError
	switch {
	case errors.As(err, &ce) && ce.Err == nil: // the compiler refused the shim
		return nil, fmt.Errorf("%w: building GoOP2's MPI shim with %q failed (is mpi.h installed? Debian: apt-get install libopenmpi-dev): %v", ErrUnavailable, cc, err)
	case err != nil: // timed out, or the cache: nothing to install
		return nil, fmt.Errorf("%w: building GoOP2's MPI shim with %q: %v", ErrUnavailable, cc, err)
	}
	get, err := lib.Symbol("op2mpi_get_table")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if v := int(C.op2mpi_bind(get)); v != tableVersion {
		return nil, fmt.Errorf("%w: the MPI shim has table version %d, want %d", ErrUnavailable, v, tableVersion)
	}
	timeout, err := TimeoutFromEnv()
	if err != nil {
		return nil, err
	}
	gpuDirect, err := GPUDirectFromEnv()
	if err != nil {
		return nil, err
	}
	w := &World{calls: make(chan func(*World)), done: make(chan struct{}), lib: lib, comp: comp, timeout: timeout}
	go w.serve()
	var rank, size, serialized C.int
	var name [256]C.char
	var rc C.int
	w.do(func() {
		rc = C.op2mpi_init(&rank, &size, &serialized, &name[0], C.int(len(name)), C.double(timeout.Seconds()))
	})
	if rc != 0 {
		return nil, fmt.Errorf("%w: MPI_Init_thread failed (code %d)", ErrUnavailable, int(rc))
	}
	// Whatever MPI_Init loaded (the shim keeps hwloc from starting
	// OpenCL drivers; an MPI built differently may load others) must
	// leave handlers the Go run time can live with.
	sigstack.Repair()
	w.rank, w.size, w.direct = int(rank), int(size), serialized != 0
	w.library = strings.TrimSpace(C.GoString(&name[0]))
	w.do(func() { w.cudaAware = int(C.op2mpi_cuda_aware()) })
	if gpuDirect == "on" && w.cudaAware == 0 {
		w.Finalize()
		return nil, fmt.Errorf("OP2_GPU_DIRECT=on, but the MPI library (%s) says it does not read CUDA device memory: it would crash on the first halo message; unset OP2_GPU_DIRECT, or use an MPI built with CUDA support", w.library)
	}
	w.deviceMemory = gpuDirect == "on" || (gpuDirect == "auto" && w.cudaAware == 1)
	if n := Launched(); n > 1 && w.size != n {
		// A launcher of another MPI (say MPICH's mpiexec running a shim
		// built by Open MPI's mpicc) starts processes that each see a
		// world of one: they would all compute the whole mesh alone.
		w.Finalize()
		return nil, fmt.Errorf("%w: the launcher started %d processes but the MPI library GoOP2's shim was built against (%s, through %q) sees %d; the launcher and the compiler wrapper belong to different MPI installations: start the program with the mpirun of the MPI that %q wraps, or point MPICC at the wrapper of the launcher's MPI", ErrUnavailable, n, w.library, cc, w.size, cc)
	}
	return w, nil
}

// serve runs the calls handed to the MPI thread, on one locked OS thread.
func (w *World) serve() {
	runtime.LockOSThread()
	for f := range w.calls {
		f(w)
		w.done <- struct{}{}
	}
}

// request is the arguments and results of a call handed to the MPI
// thread through World.req.
type request struct {
	p0, p1  C.uintptr_t
	n       C.longlong
	i0, i1  C.int
	rc      C.int
	t       C.double
	pending []int // Wait's messages still incomplete after a timeout
}

// call runs f with the request r, on this thread when the library allows
// (direct), else on the MPI thread, and returns the request as f left it.
// f is a function that captures nothing, so that a call allocates
// nothing.
func (w *World) call(f func(*World), r request) request { return w.run(f, r, w.direct) }

// run runs f with the request r, on this thread with here, else on the
// MPI thread, one call at a time.
func (w *World) run(f func(*World), r request, here bool) request {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.finalized.Load() {
		r.rc = rcFinalized
		return r
	}
	w.req = r
	if here {
		f(w)
	} else {
		w.calls <- f
		<-w.done
	}
	r, w.req = w.req, request{}
	return r
}

// do runs f on the MPI thread and returns when it has (for the calls
// made once, which may allocate), or returns false without running it
// after Finalize.
func (w *World) do(f func()) bool {
	return w.run(func(*World) { f() }, request{}, false).rc != rcFinalized
}

// Do runs f on the locked OS thread that initialised MPI, while no other
// MPI call runs, and returns when f has. MPI was initialised with
// MPI_THREAD_SERIALIZED, so C code that calls MPI itself (a library built
// on MPI, such as a distributed partitioner, through a shim made by Build)
// must be called inside f. f must not call World's methods: they wait for
// the call f is in to end. A collective inside f is not bounded by
// OP2_MPI_TIMEOUT unless the code f calls bounds it.
//
// After Finalize it panics with ErrFinalized: the API refuses every call
// that would get here first.
func (w *World) Do(f func()) {
	if !w.do(f) {
		panic(fmt.Errorf("rank %d: %w", w.rank, ErrFinalized))
	}
}

// Build compiles C source that includes mpi.h with the MPI compiler
// wrapper and the cache directory Init was given, loads it and checks that
// it defines syms (see jit.Compiler.Build). The library shares this
// process's MPI; its functions that call MPI must run inside Do.
func (w *World) Build(src string, syms []string) (*jit.Library, error) {
	return w.comp.Build(src, syms)
}

func (w *World) check(what string, rc C.int) error {
	switch {
	case rc == 0:
		return nil
	case rc == rcFinalized:
		return fmt.Errorf("rank %d: %s: %w", w.rank, what, ErrFinalized)
	case rc == -3:
		return &TimeoutError{Rank: w.rank, Op: what, Waited: w.timeout}
	case rc == -1:
		return fmt.Errorf("%s: a message of more than 2 GiB (MPI counts are int)", what)
	case rc == -2:
		return fmt.Errorf("%s: out of memory", what)
	}
	return fmt.Errorf("%s failed (MPI error code %d)", what, int(rc))
}

func addr[T any](s []T) C.uintptr_t {
	if len(s) == 0 {
		return 0
	}
	return C.uintptr_t(uintptr(unsafe.Pointer(&s[0])))
}

// Finalized reports whether Finalize has ended MPI.
func (w *World) Finalized() bool { return w.finalized.Load() }

// ErrFinalized is the error of an MPI call asked for after Finalize:
// every method then returns it (Wtime returns 0), and none reaches MPI,
// which would abort the job.
var ErrFinalized = errors.New("MPI has ended (op2.Finalize was called); no loop, collective call or solve may run afterwards")

// rcFinalized is the return code of a call run did not make (Finalized).
const rcFinalized = -4

// beforeFinalize are the functions Finalize runs first, by key, in the
// order registered (BeforeFinalize).
var beforeFinalize struct {
	sync.Mutex
	next uint64
	fs   map[uint64]func() error
}

// BeforeFinalize registers f, which Finalize runs before it ends MPI,
// on every rank (collective, as Finalize is; functions registered
// earlier first): package hdf5 closes there the files every rank writes
// through MPI-IO, which cannot be closed afterwards. The function it
// returns removes f.
func BeforeFinalize(f func() error) (remove func()) {
	b := &beforeFinalize
	b.Lock()
	defer b.Unlock()
	if b.fs == nil {
		b.fs = map[uint64]func() error{}
	}
	b.next++
	key := b.next
	b.fs[key] = f
	return func() {
		b.Lock()
		defer b.Unlock()
		delete(b.fs, key)
	}
}

// runBeforeFinalize runs and removes the functions BeforeFinalize
// registered, in order.
func runBeforeFinalize() error {
	b := &beforeFinalize
	b.Lock()
	keys := make([]uint64, 0, len(b.fs))
	for k := range b.fs {
		keys = append(keys, k)
	}
	fs := b.fs
	b.fs = nil
	b.Unlock()
	slices.Sort(keys)
	var errs []error
	for _, k := range keys {
		errs = append(errs, fs[k]())
	}
	return errors.Join(errs...)
}

// Finalize ends MPI, after running what BeforeFinalize registered.
// Nothing else may be called afterwards; calling it again does nothing.
func (w *World) Finalize() error {
	if w.Finalized() {
		return nil
	}
	before := runBeforeFinalize()
	var rc C.int
	w.run(func(*World) {
		rc = C.op2mpi_finalize()
		w.finalized.Store(true)
	}, request{}, false)
	return errors.Join(before, w.check("MPI_Finalize", rc))
}

// Abort stops every rank of the job with code; after Finalize, this
// process only.
func (w *World) Abort(code int) {
	if !w.do(func() { C.op2mpi_abort(C.int(code)) }) {
		os.Exit(code)
	}
}

// Barrier waits for every rank.
func (w *World) Barrier() error {
	r := w.call(func(w *World) { w.req.rc = C.op2mpi_barrier() }, request{})
	return w.check("MPI_Barrier", r.rc)
}

// Bcast sends root's buf to every rank's buf (all the same length).
func (w *World) Bcast(buf []byte, root int) error {
	rc := C.int(rcFinalized)
	w.do(func() { rc = C.op2mpi_bcast(addr(buf), C.longlong(len(buf)), C.int(root)) })
	runtime.KeepAlive(buf)
	return w.check("MPI_Bcast", rc)
}

// Allgather gathers every rank's send (all the same length) into recv,
// in rank order; len(recv) = Size()*len(send).
func (w *World) Allgather(send, recv []byte) error {
	if len(recv) != w.size*len(send) {
		return fmt.Errorf("MPI_Allgather: receive buffer of %d bytes, want %d", len(recv), w.size*len(send))
	}
	r := w.call(func(w *World) { q := &w.req; q.rc = C.op2mpi_allgather(q.p0, q.n, q.p1) },
		request{p0: addr(send), n: C.longlong(len(send)), p1: addr(recv)})
	runtime.KeepAlive(send)
	runtime.KeepAlive(recv)
	return w.check("MPI_Allgather", r.rc)
}

// Alltoallv sends send[r] to rank r and returns what each rank sent here.
func (w *World) Alltoallv(send [][]byte) ([][]byte, error) {
	if len(send) != w.size {
		return nil, fmt.Errorf("MPI_Alltoallv: %d send buffers for %d ranks", len(send), w.size)
	}
	sc := make([]int64, w.size)
	sent := 0
	for r, b := range send {
		sc[r] = int64(len(b))
		sent += len(b)
	}
	flat := contiguous(send)
	if flat == nil {
		flat = make([]byte, 0, sent) // one copy, not one per growth
		for _, b := range send {
			flat = append(flat, b...)
		}
	}
	// Every rank learns how much each other rank sends it: an
	// all-to-all of one count per pair (8 bytes to and from each rank).
	sc8 := make([]byte, 8*w.size)
	rc8 := make([]byte, 8*w.size)
	eights := make([]int64, w.size)
	for r := range sc {
		putInt64(sc8[8*r:], sc[r])
		eights[r] = 8
	}
	crc := C.int(rcFinalized)
	w.do(func() { crc = C.op2mpi_alltoallv(addr(sc8), addr(eights), addr(rc8), addr(eights)) })
	runtime.KeepAlive(sc8)
	runtime.KeepAlive(rc8)
	runtime.KeepAlive(eights)
	if err := w.check("MPI_Alltoallv", crc); err != nil {
		return nil, err
	}
	rcounts := make([]int64, w.size)
	total := int64(0)
	for r := range rcounts {
		rcounts[r] = getInt64(rc8[8*r:])
		// A count no rank could send: rank r's message was another
		// collective call's, paired with this one.
		if rcounts[r] < 0 || rcounts[r] > maxAlltoallBytes || total > maxAlltoallBytes-rcounts[r] {
			return nil, fmt.Errorf("MPI_Alltoallv: rank %d would send %d bytes: the ranks are at different collective calls", r, rcounts[r])
		}
		total += rcounts[r]
	}
	recv := make([]byte, total)
	rc := C.int(rcFinalized)
	w.do(func() { rc = C.op2mpi_alltoallv(addr(flat), addr(sc), addr(recv), addr(rcounts)) })
	runtime.KeepAlive(flat)
	runtime.KeepAlive(sc)
	runtime.KeepAlive(recv)
	runtime.KeepAlive(rcounts)
	if err := w.check("MPI_Alltoallv", rc); err != nil {
		return nil, err
	}
	out := make([][]byte, w.size)
	off := int64(0)
	for r := range out {
		out[r] = recv[off : off+rcounts[r] : off+rcounts[r]]
		off += rcounts[r]
	}
	return out, nil
}

// maxAlltoallBytes bounds what Alltoallv receives in all (1 TiB): a
// count beyond it is another collective call's data.
const maxAlltoallBytes = 1 << 40

// contiguous returns the messages as one slice when each non-empty one
// follows the previous within its capacity (slices of one buffer, as a
// caller sending much builds them), so that they need no copy; nil
// otherwise.
func contiguous(send [][]byte) []byte {
	var all []byte
	for _, b := range send {
		if len(b) == 0 {
			continue
		}
		if all == nil {
			all = b
			continue
		}
		if cap(all)-len(all) < len(b) || unsafe.SliceData(all[len(all):cap(all)]) != unsafe.SliceData(b) {
			return nil
		}
		all = all[:len(all)+len(b)]
	}
	return all
}

func putInt64(b []byte, v int64) {
	for i := 0; i < 8; i++ {
		b[i] = byte(v >> (8 * i))
	}
}

func getInt64(b []byte) int64 {
	var v int64
	for i := 0; i < 8; i++ {
		v |= int64(b[i]) << (8 * i)
	}
	return v
}

// Wtime is MPI_Wtime.
func (w *World) Wtime() float64 {
	return float64(w.call(func(w *World) { w.req.t = C.op2mpi_wtime() }, request{}).t)
}

// Msg is one non-blocking message of an exchange: Bytes bytes at Buf
// (C memory or pinned memory that stays put until Wait returns) to or from
// Rank, with Tag.
type Msg struct {
	Buf   uintptr
	Bytes int64
	Rank  int32
	Tag   int32
}

// Start posts recvs, then sends, without waiting for them; Wait completes
// them. Messages between two ranks with one tag arrive in the order they
// were posted.
func (w *World) Start(recvs, sends []Msg) error {
	r := w.call(func(w *World) { q := &w.req; q.rc = C.op2mpi_start(q.p0, q.i0, q.p1, q.i1) },
		request{p0: addr(recvs), i0: C.int(len(recvs)), p1: addr(sends), i1: C.int(len(sends))})
	runtime.KeepAlive(recvs)
	runtime.KeepAlive(sends)
	return w.check("MPI_Isend/MPI_Irecv", r.rc)
}

// Wait completes every message started. A *TimeoutError lists the
// messages still incomplete.
func (w *World) Wait() error {
	r := w.call(waitall, request{})
	err := w.check("MPI_Waitall", r.rc)
	if te, ok := err.(*TimeoutError); ok {
		te.Pending = r.pending
	}
	return err
}

// waitall is Wait's call, made as call makes it.
func waitall(w *World) {
	q := &w.req
	if q.rc = C.op2mpi_waitall(); q.rc != -3 {
		return
	}
	idx := make([]C.int, 64)
	n := int(C.op2mpi_pending(addr(idx), C.int(len(idx))))
	for _, i := range idx[:min(n, len(idx))] {
		q.pending = append(q.pending, int(i))
	}
}

// AllreduceOr replaces buf with the bitwise OR of every rank's buf (all
// the same length).
func (w *World) AllreduceOr(buf []byte) error {
	r := w.call(func(w *World) { q := &w.req; q.rc = C.op2mpi_allreduce_or(q.p0, q.n) },
		request{p0: addr(buf), n: C.longlong(len(buf))})
	runtime.KeepAlive(buf)
	return w.check("MPI_Allreduce", r.rc)
}

// Reduction operations of AllreduceInt64.
const (
	Sum = iota
	Min
	Max
)

// AllreduceInt64 replaces buf with the element-wise sum (op Sum), minimum
// (Min) or maximum (Max) of every rank's buf (all the same length), in one
// MPI_Allreduce: what each rank sends and receives is buf's size,
// whatever the number of ranks.
func (w *World) AllreduceInt64(buf []int64, op int) error {
	r := w.call(func(w *World) { q := &w.req; q.rc = C.op2mpi_allreduce_i64(q.p0, q.n, q.i0) },
		request{p0: addr(buf), n: C.longlong(len(buf)), i0: C.int(op)})
	runtime.KeepAlive(buf)
	return w.check("MPI_Allreduce", r.rc)
}

// Pack copies elements idx of src (elem bytes each) one after another
// into dst.
func Pack(dst, src unsafe.Pointer, idx []int32, elem int) {
	C.op2mpi_pack(C.uintptr_t(uintptr(dst)), C.uintptr_t(uintptr(src)), addr(idx), C.longlong(len(idx)), C.longlong(elem))
}

// Unpack copies consecutive elements of src to elements idx of dst.
func Unpack(dst, src unsafe.Pointer, idx []int32, elem int) {
	C.op2mpi_unpack(C.uintptr_t(uintptr(dst)), C.uintptr_t(uintptr(src)), addr(idx), C.longlong(len(idx)), C.longlong(elem))
}
