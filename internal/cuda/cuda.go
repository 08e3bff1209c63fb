// Package cuda is the part of NVIDIA's CUDA driver API that GoOP2 uses,
// loaded from libcuda.so.1 with dlopen, so that nothing of CUDA is needed
// to build GoOP2 or to run its other backends.
//
// Every call makes the device's primary context current on the OS thread
// that issues it (the C wrapper calls cuCtxSetCurrent first): Go moves
// goroutines between threads, and a CUDA context is current per thread.
package cuda

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void op2cu_flush_stdio(void) { fflush(NULL); }

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;
typedef unsigned long long CUdeviceptr;
typedef void *CUevent;
typedef void *CUstream;
typedef void *CUgraph;
typedef void *CUgraphExec;
typedef void *CUgraphNode;
// CUDA_KERNEL_NODE_PARAMS_v2; its first fields are the v1 structure, and
// kern and ctx are ignored when func is set, so that it serves both.
typedef struct {
	CUfunction func;
	unsigned gridDimX, gridDimY, gridDimZ;
	unsigned blockDimX, blockDimY, blockDimZ;
	unsigned sharedMemBytes;
	void **kernelParams;
	void **extra;
	void *kern;
	CUcontext ctx;
} op2_kernel_node;
// op2_launch is a queued launch: the layout of Go's launch (batch.go).
typedef struct { CUfunction f; unsigned groups, local, shared, nparams; } op2_launch;

static CUresult (*p_init)(unsigned);
static CUresult (*p_driverVersion)(int *);
static CUresult (*p_deviceCount)(int *);
static CUresult (*p_deviceGet)(CUdevice *, int);
static CUresult (*p_deviceName)(char *, int, CUdevice);
static CUresult (*p_deviceAttr)(int *, int, CUdevice);
static CUresult (*p_totalMem)(size_t *, CUdevice);
static CUresult (*p_retain)(CUcontext *, CUdevice);
static CUresult (*p_release)(CUdevice);
static CUresult (*p_setCurrent)(CUcontext);
static CUresult (*p_sync)(void);
static CUresult (*p_alloc)(CUdeviceptr *, size_t);
static CUresult (*p_free)(CUdeviceptr);
static CUresult (*p_allocHost)(void **, size_t); // optional
static CUresult (*p_freeHost)(void *);           // optional
static CUresult (*p_htod)(CUdeviceptr, const void *, size_t);
static CUresult (*p_dtoh)(void *, CUdeviceptr, size_t);
static CUresult (*p_memset)(CUdeviceptr, unsigned char, size_t);
static CUresult (*p_dtod)(CUdeviceptr, CUdeviceptr, size_t);
static CUresult (*p_load)(CUmodule *, const void *);
static CUresult (*p_unload)(CUmodule);
static CUresult (*p_function)(CUfunction *, CUmodule, const char *);
static CUresult (*p_funcAttr)(CUfunction, int, int);
static CUresult (*p_launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **, void **);
static CUresult (*p_eventCreate)(CUevent *, unsigned);
static CUresult (*p_eventRecord)(CUevent, CUstream);
static CUresult (*p_eventSync)(CUevent);
static CUresult (*p_eventDestroy)(CUevent);
static CUresult (*p_eventElapsed)(float *, CUevent, CUevent); // optional
static CUresult (*p_errName)(CUresult, const char **);
// Graphs, optional (CUDA 11.4 on).
static CUresult (*p_graphCreate)(CUgraph *, unsigned);
static CUresult (*p_graphAddKernel)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, const op2_kernel_node *);
static CUresult (*p_graphInstantiate)(CUgraphExec *, CUgraph, unsigned long long);
static CUresult (*p_graphLaunch)(CUgraphExec, CUstream);
static CUresult (*p_graphExecDestroy)(CUgraphExec);
static CUresult (*p_graphDestroy)(CUgraph);
static CUresult (*p_errString)(CUresult, const char **);

static const char *op2_cuda_open(const char *path) {
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) return dlerror();
#define SYM(var, name) if (!(*(void **)(&var) = dlsym(h, name))) { dlclose(h); return "the library lacks " name; }
	SYM(p_init, "cuInit")
	SYM(p_driverVersion, "cuDriverGetVersion")
	SYM(p_deviceCount, "cuDeviceGetCount")
	SYM(p_deviceGet, "cuDeviceGet")
	SYM(p_deviceName, "cuDeviceGetName")
	SYM(p_deviceAttr, "cuDeviceGetAttribute")
	SYM(p_totalMem, "cuDeviceTotalMem_v2")
	SYM(p_retain, "cuDevicePrimaryCtxRetain")
	SYM(p_release, "cuDevicePrimaryCtxRelease_v2")
	SYM(p_setCurrent, "cuCtxSetCurrent")
	SYM(p_sync, "cuCtxSynchronize")
	SYM(p_alloc, "cuMemAlloc_v2")
	SYM(p_free, "cuMemFree_v2")
	SYM(p_htod, "cuMemcpyHtoD_v2")
	SYM(p_dtoh, "cuMemcpyDtoH_v2")
	SYM(p_memset, "cuMemsetD8_v2")
	SYM(p_dtod, "cuMemcpyDtoD_v2")
	SYM(p_load, "cuModuleLoadData")
	SYM(p_unload, "cuModuleUnload")
	SYM(p_function, "cuModuleGetFunction")
	SYM(p_funcAttr, "cuFuncSetAttribute")
	SYM(p_launch, "cuLaunchKernel")
	SYM(p_eventCreate, "cuEventCreate")
	SYM(p_eventRecord, "cuEventRecord")
	SYM(p_eventSync, "cuEventSynchronize")
	SYM(p_eventDestroy, "cuEventDestroy_v2")
	SYM(p_errName, "cuGetErrorName")
	SYM(p_errString, "cuGetErrorString")
#undef SYM
	*(void **)(&p_eventElapsed) = dlsym(h, "cuEventElapsedTime");
	*(void **)(&p_allocHost) = dlsym(h, "cuMemAllocHost_v2");
	*(void **)(&p_freeHost) = dlsym(h, "cuMemFreeHost");
	*(void **)(&p_graphCreate) = dlsym(h, "cuGraphCreate");
	if (!(*(void **)(&p_graphAddKernel) = dlsym(h, "cuGraphAddKernelNode_v2")))
		*(void **)(&p_graphAddKernel) = dlsym(h, "cuGraphAddKernelNode");
	*(void **)(&p_graphInstantiate) = dlsym(h, "cuGraphInstantiateWithFlags");
	*(void **)(&p_graphLaunch) = dlsym(h, "cuGraphLaunch");
	*(void **)(&p_graphExecDestroy) = dlsym(h, "cuGraphExecDestroy");
	*(void **)(&p_graphDestroy) = dlsym(h, "cuGraphDestroy");
	return NULL;
}

static CUresult op2_cuda_init(void) { return p_init(0); }
static CUresult op2_cuda_driver_version(int *v) { return p_driverVersion(v); }
static CUresult op2_cuda_count(int *n) { return p_deviceCount(n); }
static CUresult op2_cuda_device(int ordinal, CUdevice *d, char *name, int len, size_t *mem) {
	CUresult r = p_deviceGet(d, ordinal);
	if (!r) r = p_deviceName(name, len, *d);
	if (!r) r = p_totalMem(mem, *d);
	return r;
}
static CUresult op2_cuda_attr(CUdevice d, int attr, int *v) { return p_deviceAttr(v, attr, d); }
static CUresult op2_cuda_retain(CUdevice d, CUcontext *ctx) { return p_retain(ctx, d); }
static CUresult op2_cuda_release(CUdevice d) { return p_release(d); }

#define CURRENT(ctx) { CUresult r0 = p_setCurrent(ctx); if (r0) return r0; }
static CUresult op2_cuda_sync(CUcontext c) { CURRENT(c) return p_sync(); }
static CUresult op2_cuda_alloc(CUcontext c, CUdeviceptr *p, size_t n) { CURRENT(c) return p_alloc(p, n); }
static CUresult op2_cuda_free(CUcontext c, CUdeviceptr p) { CURRENT(c) return p_free(p); }
static CUresult op2_cuda_alloc_host(CUcontext c, void **p, size_t n) {
	if (!p_allocHost || !p_freeHost) return 801; // CUDA_ERROR_NOT_SUPPORTED
	CURRENT(c) return p_allocHost(p, n);
}
static CUresult op2_cuda_free_host(CUcontext c, void *p) { CURRENT(c) return p_freeHost(p); }
static CUresult op2_cuda_htod(CUcontext c, CUdeviceptr d, const void *s, size_t n) { CURRENT(c) return p_htod(d, s, n); }
static CUresult op2_cuda_dtoh(CUcontext c, void *d, CUdeviceptr s, size_t n) { CURRENT(c) return p_dtoh(d, s, n); }
static CUresult op2_cuda_dtod(CUcontext c, CUdeviceptr d, CUdeviceptr s, size_t n) { CURRENT(c) return p_dtod(d, s, n); }
static CUresult op2_cuda_zero(CUcontext c, CUdeviceptr d, size_t n) { CURRENT(c) return p_memset(d, 0, n); }
static CUresult op2_cuda_event_destroy(CUcontext c, CUevent e) { CURRENT(c) return p_eventDestroy(e); }
static int op2_cuda_can_stamp(void) { return p_eventElapsed != NULL; }
// The stamps' calls return their results by value, so that the Go
// callers pass no pointer (which would escape to the heap).
typedef struct { CUevent ev; CUresult err; } op2_cuda_stamped;
typedef struct { float ms; CUresult err; } op2_cuda_elapsed;
// op2_cuda_stamp records e, an event that times (flags 0; made here when
// e is NULL), on the legacy default stream after the work queued so far.
static op2_cuda_stamped op2_cuda_stamp(CUcontext c, CUevent e) {
	op2_cuda_stamped s = {e, 0};
	if ((s.err = p_setCurrent(c))) return s;
	if (s.ev == NULL && (s.err = p_eventCreate(&s.ev, 0))) return s;
	s.err = p_eventRecord(s.ev, NULL);
	return s;
}
// op2_cuda_between waits for b and returns the milliseconds from a to b.
static op2_cuda_elapsed op2_cuda_between(CUcontext c, CUevent a, CUevent b) {
	op2_cuda_elapsed e = {0, 0};
	if ((e.err = p_setCurrent(c))) return e;
	if ((e.err = p_eventSync(b))) return e;
	e.err = p_eventElapsed(&e.ms, a, b);
	return e;
}
static CUresult op2_cuda_load(CUcontext c, const void *image, CUmodule *m, const char *name, CUfunction *f) {
	CURRENT(c)
	CUresult r = p_load(m, image);
	if (r) return r;
	r = p_function(f, *m, name);
	if (r) p_unload(*m);
	return r;
}
static CUresult op2_cuda_unload(CUcontext c, CUmodule m) { CURRENT(c) return p_unload(m); }
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
static CUresult op2_cuda_max_shared(CUcontext c, CUfunction f, int n) { CURRENT(c) return p_funcAttr(f, 8, n); }
static CUresult op2_cuda_launch(CUcontext c, CUfunction f, unsigned groups, unsigned local, unsigned shared, void **params) {
	CURRENT(c)
	return p_launch(f, groups, 1, 1, local, 1, 1, shared, NULL, params, NULL);
}
// op2_cuda_params points p (room for n) at n parameter slots from v, or
// at a new array when n exceeds the room (freed by the caller when it is
// not p).
static void **op2_cuda_params(void **p, unsigned room, unsigned long long *v, unsigned n) {
	if (n > room && !(p = malloc(n * sizeof *p))) return NULL;
	for (unsigned k = 0; k < n; k++) p[k] = v + k;
	return p;
}
// op2_cuda_launch_all launches n kernels in order, the parameters of each
// following those of the one before in vals; *failed is the launch that
// failed.
static CUresult op2_cuda_launch_all(CUcontext c, int n, const op2_launch *ls, unsigned long long *vals, int *failed) {
	CURRENT(c)
	void *room[64];
	for (int i = 0; i < n; i++) {
		void **p = op2_cuda_params(room, 64, vals, ls[i].nparams);
		CUresult r = p ? p_launch(ls[i].f, ls[i].groups, 1, 1, ls[i].local, 1, 1, ls[i].shared, NULL, p, NULL) : 2; // CUDA_ERROR_OUT_OF_MEMORY
		if (p != room) free(p);
		if (r) { *failed = i; return r; }
		vals += ls[i].nparams;
	}
	return 0;
}
static int op2_cuda_can_graph(void) {
	return p_graphCreate && p_graphAddKernel && p_graphInstantiate && p_graphLaunch && p_graphExecDestroy && p_graphDestroy;
}
// op2_cuda_graph makes the graph of n kernels run one after another (as
// op2_cuda_launch_all would launch them) and instantiates it.
static CUresult op2_cuda_graph(CUcontext c, int n, const op2_launch *ls, unsigned long long *vals, CUgraphExec *exec) {
	CURRENT(c)
	CUgraph g;
	CUresult r = p_graphCreate(&g, 0);
	if (r) return r;
	CUgraphNode prev = NULL;
	void *room[64];
	for (int i = 0; i < n && !r; i++) {
		void **p = op2_cuda_params(room, 64, vals, ls[i].nparams);
		if (!p) { r = 2; break; }
		op2_kernel_node kn = {ls[i].f, ls[i].groups, 1, 1, ls[i].local, 1, 1, ls[i].shared, p, NULL, NULL, NULL};
		CUgraphNode node;
		r = p_graphAddKernel(&node, g, prev ? &prev : NULL, prev ? 1 : 0, &kn);
		if (p != room) free(p);
		prev = node;
		vals += ls[i].nparams;
	}
	if (!r) r = p_graphInstantiate(exec, g, 0);
	p_graphDestroy(g);
	return r;
}
static CUresult op2_cuda_graph_launch(CUcontext c, CUgraphExec e) { CURRENT(c) return p_graphLaunch(e, NULL); }
static CUresult op2_cuda_graph_destroy(CUcontext c, CUgraphExec e) { CURRENT(c) return p_graphExecDestroy(e); }
// op2_cuda_error writes r's name and description into buf (n bytes).
static void op2_cuda_error(CUresult r, char *buf, int n) {
	const char *name = NULL, *text = NULL;
	if (p_errName) p_errName(r, &name);
	if (p_errString) p_errString(r, &text);
	snprintf(buf, n, "%s: %s", name ? name : "CUDA error", text ? text : "unknown");
}
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
	"unsafe"
)

// FlushStdio flushes the C library's output streams, where the driver
// writes what kernels print once the device has run them.
func FlushStdio() { C.op2cu_flush_stdio() }

// LibraryEnv names the environment variable that points GoOP2 at the CUDA
// driver library (a path or a soname) instead of libcuda.so.1.
const LibraryEnv = "OP2_CUDA_LIBRARY"

// InstallHint says how to get the driver.
const InstallHint = "the cuda backend needs an NVIDIA GPU and its driver (libcuda.so.1, installed with the NVIDIA driver: Debian's nvidia-driver package, or NVIDIA's)"

// ErrUnavailable is wrapped by the errors that say CUDA cannot be used
// here: no driver library, no device.
var ErrUnavailable = errors.New("CUDA is not available")

var (
	loadOnce sync.Once
	loadErr  error
)

// load loads the driver library and initialises it once per process.
func load() error {
	loadOnce.Do(func() {
		path := "libcuda.so.1"
		if p := os.Getenv(LibraryEnv); p != "" {
			path = p
		}
		cp := C.CString(path)
		defer C.free(unsafe.Pointer(cp))
		if msg := C.op2_cuda_open(cp); msg != nil {
			loadErr = fmt.Errorf("%w: loading %s: %s (%s)", ErrUnavailable, path, C.GoString(msg), InstallHint)
			return
		}
		if r := C.op2_cuda_init(); r != 0 {
			loadErr = fmt.Errorf("%w: cuInit: %s (is an NVIDIA GPU present and its driver loaded?)", ErrUnavailable, errString(r))
		}
	})
	return loadErr
}

func errString(r C.CUresult) string {
	var buf [256]C.char
	C.op2_cuda_error(r, &buf[0], C.int(len(buf)))
	return C.GoString(&buf[0])
}

func check(what string, r C.CUresult) error {
	if r == 0 {
		return nil
	}
	return fmt.Errorf("cuda: %s: %s", what, errString(r))
}

// Device attributes (CUdevice_attribute).
const (
	attrMaxThreadsPerBlock     = 1
	attrMaxSharedPerBlock      = 8
	attrTotalConstantMemory    = 9
	attrMultiprocessors        = 16
	attrComputeMajor           = 75
	attrComputeMinor           = 76
	attrMaxSharedPerBlockOptin = 97
)

// Device is a CUDA device with its primary context.
type Device struct {
	Ordinal int
	Name    string
	// Arch is the compute capability × 10 (90 for an H100).
	Arch int
	// SharedMem is the shared memory a block may use by default, and
	// SharedMemOptin the most it may use after opting in.
	SharedMem, SharedMemOptin int
	// MaxThreads is the most threads a block may have.
	MaxThreads int
	ConstMem   int
	SMs        int
	Memory     int64 // bytes
	Driver     int   // driver version, e.g. 13000
	dev        C.CUdevice
	// stamps are timing events Between is done with (Stamp reuses them).
	stamps []C.CUevent
	// timed says whether the driver times events (CanStamp).
	timed bool
	ctx   C.CUcontext
	// batch holds launches queued on the host (Batch); nil: each
	// launch goes to the device at once. mu guards it: a buffer's
	// cleanup frees it (Free, which sends the batch) from the
	// collector's goroutine.
	mu    sync.Mutex
	batch *batch
	// idle sends a batch that has waited batchDelay since its first
	// launch, in case the host does nothing more with the device.
	idle *time.Timer
}

// batchDelay is the longest a queued launch waits for the host to ask
// the device for something more: a program busy elsewhere does not keep
// the device idle for longer. A variable for tests.
var batchDelay = time.Millisecond

// SetBatchDelay sets how long a queued launch waits (Batch) and returns
// the delay it replaces: for tests whose batches must not depend on how
// busy the machine is. Call it before batching starts.
func SetBatchDelay(d time.Duration) time.Duration {
	old := batchDelay
	batchDelay = d
	return old
}

// Batch turns batching of launches on or off (off by default). With it
// on, kernel launches wait on the host until 32 are queued, anything else
// is asked of the device, or the first has waited batchDelay; the device
// then gets them in order, in one call. A batch seen before (the same
// kernels, grids and parameters) goes as a CUDA graph, one launch for all
// of them, where the driver has graphs. An error of a queued launch comes
// back from the call that sent the batch, naming the launch's loop
// (Function.Label). Turning it off sends what is queued. graphsOff, if
// not nil, learns why when graphs go off (the driver failed to make them
// batchMakeFail times): batches then go kernel by kernel.
func (d *Device) Batch(on bool, graphsOff func(error)) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if on {
		if d.batch == nil {
			d.batch = newBatch(graphs{d})
		}
		if d.idle == nil {
			d.idle = time.AfterFunc(time.Hour, func() { d.flushLater(false) })
			d.idle.Stop()
		}
		d.batch.graphsOff = graphsOff
		return nil
	}
	if d.batch == nil {
		return nil
	}
	d.idle.Stop()
	err := d.batch.flush()
	d.batch.forget()
	d.batch = nil
	return err
}

// Batching reports whether launches are batched (Batch).
func (d *Device) Batching() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.batch != nil
}

// Flush sends the queued launches to the device (Batch): every other
// call on the device does first, and a caller about to do something long
// on the host (building a kernel) does, so that the device works
// meanwhile.
func (d *Device) Flush() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.batch == nil {
		return nil
	}
	return d.batch.flush()
}

// flushLater sends the queued launches for a caller that returns no
// error: one is kept for the next flush. With forget, the graphs go too.
func (d *Device) flushLater(forget bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.batch == nil {
		return
	}
	if err := d.batch.flush(); err != nil && d.batch.late == nil {
		d.batch.late = err
	}
	if forget {
		d.batch.forget()
	}
}

// graphs is the device's graphAPI.
type graphs struct{ d *Device }

func (g graphs) launchAll(ls []launch, vals []uint64) (int, error) {
	var failed C.int
	r := C.op2_cuda_launch_all(g.d.ctx, C.int(len(ls)), (*C.op2_launch)(unsafe.Pointer(&ls[0])), cVals(vals), &failed)
	return int(failed), check("cuLaunchKernel", r)
}

func (g graphs) canGraph() bool { return C.op2_cuda_can_graph() != 0 }

func (g graphs) instantiate(ls []launch, vals []uint64) (unsafe.Pointer, error) {
	var exec C.CUgraphExec
	r := C.op2_cuda_graph(g.d.ctx, C.int(len(ls)), (*C.op2_launch)(unsafe.Pointer(&ls[0])), cVals(vals), &exec)
	return unsafe.Pointer(exec), check("making a CUDA graph", r)
}

func (g graphs) launchGraph(exec unsafe.Pointer) error {
	return check("cuGraphLaunch", C.op2_cuda_graph_launch(g.d.ctx, C.CUgraphExec(exec)))
}

func (g graphs) destroyGraph(exec unsafe.Pointer) {
	C.op2_cuda_graph_destroy(g.d.ctx, C.CUgraphExec(exec))
}

// cVals is vals for C (nil when empty).
func cVals(vals []uint64) *C.ulonglong {
	if len(vals) == 0 {
		return nil
	}
	return (*C.ulonglong)(unsafe.Pointer(&vals[0]))
}

func init() {
	// launch must have op2_launch's layout.
	if unsafe.Sizeof(launch{}) != unsafe.Sizeof(C.op2_launch{}) || unsafe.Offsetof(launch{}.nparams) != unsafe.Offsetof(C.op2_launch{}.nparams) {
		panic("cuda: launch and op2_launch differ")
	}
}

// Count loads the driver and returns the number of devices it sees.
func Count() (int, error) {
	if err := load(); err != nil {
		return 0, err
	}
	var n C.int
	if err := check("cuDeviceGetCount", C.op2_cuda_count(&n)); err != nil {
		return 0, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return int(n), nil
}

// Open loads the driver and opens device ordinal (its primary context).
func Open(ordinal int) (*Device, error) {
	if err := load(); err != nil {
		return nil, err
	}
	var n C.int
	if err := check("cuDeviceGetCount", C.op2_cuda_count(&n)); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: the CUDA driver sees no device", ErrUnavailable)
	}
	if ordinal < 0 || ordinal >= int(n) {
		return nil, fmt.Errorf("cuda: device %d does not exist (the driver sees %d, numbered from 0)", ordinal, int(n))
	}
	d := &Device{Ordinal: ordinal, timed: C.op2_cuda_can_stamp() != 0}
	var name [256]C.char
	var mem C.size_t
	if err := check("cuDeviceGet", C.op2_cuda_device(C.int(ordinal), &d.dev, &name[0], C.int(len(name)), &mem)); err != nil {
		return nil, err
	}
	d.Name, d.Memory = C.GoString(&name[0]), int64(mem)
	attr := func(a int) int {
		var v C.int
		if C.op2_cuda_attr(d.dev, C.int(a), &v) != 0 {
			return 0
		}
		return int(v)
	}
	d.Arch = 10*attr(attrComputeMajor) + attr(attrComputeMinor)
	d.SharedMem, d.SharedMemOptin = attr(attrMaxSharedPerBlock), attr(attrMaxSharedPerBlockOptin)
	d.ConstMem, d.SMs = attr(attrTotalConstantMemory), attr(attrMultiprocessors)
	d.MaxThreads = attr(attrMaxThreadsPerBlock)
	var v C.int
	if C.op2_cuda_driver_version(&v) == 0 {
		d.Driver = int(v)
	}
	if err := check("cuDevicePrimaryCtxRetain", C.op2_cuda_retain(d.dev, &d.ctx)); err != nil {
		return nil, err
	}
	return d, nil
}

// Close releases the device's primary context.
func (d *Device) Close() error {
	err := d.Batch(false, nil)
	for _, ev := range d.stamps {
		C.op2_cuda_event_destroy(d.ctx, ev)
	}
	d.stamps = nil
	return errors.Join(err, check("cuDevicePrimaryCtxRelease", C.op2_cuda_release(d.dev)))
}

// Synchronize waits for every queued launch and copy.
func (d *Device) Synchronize() error {
	if err := d.Flush(); err != nil {
		return err
	}
	return check("cuCtxSynchronize", C.op2_cuda_sync(d.ctx))
}

// Buffer is device memory.
type Buffer struct {
	Ptr  uint64 // CUdeviceptr
	Size int
}

// Alloc allocates n bytes (at least 1) of device memory.
func (d *Device) Alloc(n int) (*Buffer, error) {
	var p C.CUdeviceptr
	if err := check(fmt.Sprintf("cuMemAlloc(%d bytes) on %s", n, d.Name), C.op2_cuda_alloc(d.ctx, &p, C.size_t(max(n, 1)))); err != nil {
		return nil, err
	}
	return &Buffer{Ptr: uint64(p), Size: n}, nil
}

// Free frees b, after sending the queued launches, which may use it (an
// error of theirs comes back from the next call that sends a batch).
func (d *Device) Free(b *Buffer) {
	d.flushLater(false)
	C.op2_cuda_free(d.ctx, C.CUdeviceptr(b.Ptr))
}

// AllocHost allocates n bytes (at least 1) of page-locked host memory,
// which copies to and from the device move at the bus's full rate
// (pageable memory passes through a staging buffer of the driver's). A
// driver without cuMemAllocHost gives an error.
func (d *Device) AllocHost(n int) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	if err := check(fmt.Sprintf("cuMemAllocHost(%d bytes) for %s", n, d.Name), C.op2_cuda_alloc_host(d.ctx, &p, C.size_t(max(n, 1)))); err != nil {
		return nil, err
	}
	return p, nil
}

// FreeHost frees memory AllocHost returned, after sending the queued
// launches (a copy may still use it).
func (d *Device) FreeHost(p unsafe.Pointer) {
	d.flushLater(false)
	C.op2_cuda_free_host(d.ctx, p)
}

// Write copies n bytes from host memory src to b.
func (d *Device) Write(b *Buffer, src unsafe.Pointer, n int) error { return d.WriteAt(b, 0, src, n) }

// WriteAt copies n bytes from host memory src to byte offset off of b.
func (d *Device) WriteAt(b *Buffer, off int, src unsafe.Pointer, n int) error {
	if n == 0 {
		return nil
	}
	if err := d.Flush(); err != nil {
		return err
	}
	return check("cuMemcpyHtoD", C.op2_cuda_htod(d.ctx, C.CUdeviceptr(b.Ptr+uint64(off)), src, C.size_t(n)))
}

// Read copies n bytes from b to host memory dst, after every queued
// launch.
func (d *Device) Read(b *Buffer, dst unsafe.Pointer, n int) error {
	if n == 0 {
		return nil
	}
	if err := d.Flush(); err != nil {
		return err
	}
	return check("cuMemcpyDtoH", C.op2_cuda_dtoh(d.ctx, dst, C.CUdeviceptr(b.Ptr), C.size_t(n)))
}

// ReadAt copies n bytes from byte offset off of b to host memory dst,
// after every queued launch.
func (d *Device) ReadAt(b *Buffer, off int, dst unsafe.Pointer, n int) error {
	if n == 0 {
		return nil
	}
	if err := d.Flush(); err != nil {
		return err
	}
	return check("cuMemcpyDtoH", C.op2_cuda_dtoh(d.ctx, dst, C.CUdeviceptr(b.Ptr+uint64(off)), C.size_t(n)))
}

// Copy copies the first n bytes of src to dst on the device.
func (d *Device) Copy(dst, src *Buffer, n int) error {
	if n == 0 {
		return nil
	}
	if err := d.Flush(); err != nil {
		return err
	}
	return check("cuMemcpyDtoD", C.op2_cuda_dtod(d.ctx, C.CUdeviceptr(dst.Ptr), C.CUdeviceptr(src.Ptr), C.size_t(n)))
}

// Zero sets n bytes of b to zero.
func (d *Device) Zero(b *Buffer, n int) error {
	if n == 0 {
		return nil
	}
	if err := d.Flush(); err != nil {
		return err
	}
	return check("cuMemsetD8", C.op2_cuda_zero(d.ctx, C.CUdeviceptr(b.Ptr), C.size_t(n)))
}

// Function is a loaded kernel.
type Function struct {
	mod C.CUmodule
	f   C.CUfunction
	// Label names the kernel's loop in the error of a batched launch.
	Label string
}

// CanStamp reports whether the driver times events (cuEventElapsedTime),
// which Stamp and Between use.
func (d *Device) CanStamp() bool { return d.timed }

// Stamp records a timing event after the work queued so far, for Between:
// one of the device's stamps no longer in use, or a new one. Device is
// not safe for concurrent Stamp and Between calls.
func (d *Device) Stamp() (unsafe.Pointer, error) {
	if err := d.Flush(); err != nil {
		return nil, err
	}
	var ev C.CUevent
	if n := len(d.stamps); n > 0 {
		ev, d.stamps = d.stamps[n-1], d.stamps[:n-1]
	}
	s := C.op2_cuda_stamp(d.ctx, ev)
	if err := check("cuEventRecord", s.err); err != nil {
		if s.ev != nil {
			C.op2_cuda_event_destroy(d.ctx, s.ev)
		}
		return nil, err
	}
	return unsafe.Pointer(s.ev), nil
}

// Between waits for stamp to and returns the device time from stamp from
// to it; both go back to the device's stamps for reuse.
func (d *Device) Between(from, to unsafe.Pointer) (time.Duration, error) {
	e := C.op2_cuda_between(d.ctx, C.CUevent(from), C.CUevent(to))
	d.stamps = append(d.stamps, C.CUevent(from), C.CUevent(to))
	return time.Duration(float64(e.ms) * float64(time.Millisecond)), check("cuEventElapsedTime", e.err)
}

// Load loads a module image (a CUBIN) and finds kernel name in it; label
// names its loop in errors (Function.Label).
func (d *Device) Load(image []byte, name, label string) (*Function, error) {
	if len(image) == 0 {
		return nil, errors.New("cuda: empty module image")
	}
	img := C.CBytes(image)
	defer C.free(img)
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	fn := &Function{Label: label}
	if err := check("loading the module of "+name, C.op2_cuda_load(d.ctx, img, &fn.mod, cn, &fn.f)); err != nil {
		return nil, err
	}
	return fn, nil
}

// Unload unloads the function's module, after sending the queued
// launches; the graphs made so far go, since they may launch it.
func (d *Device) Unload(f *Function) {
	d.flushLater(true)
	C.op2_cuda_unload(d.ctx, f.mod)
}

// AllowShared lets f use up to n bytes of dynamic shared memory (beyond
// the default 48 KiB needs opting in).
func (d *Device) AllowShared(f *Function, n int) error {
	if err := d.Flush(); err != nil {
		return err
	}
	return check("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", C.op2_cuda_max_shared(d.ctx, f.f, C.int(n)))
}

// Params is C memory holding kernel parameters: one 8-byte slot per
// parameter and the array of pointers to the slots that cuLaunchKernel
// takes. It is reused from launch to launch.
type Params struct {
	slots unsafe.Pointer // n × 8 bytes
	ptrs  unsafe.Pointer // n pointers
	n     int
	used  int // the parameters of the last Slots call
}

// Slots returns room for n parameters, valid until the next call.
func (p *Params) Slots(n int) []uint64 {
	if n > p.n {
		C.free(p.slots)
		C.free(p.ptrs)
		p.n = max(n, 2*p.n)
		p.slots = C.calloc(C.size_t(p.n), 8)
		p.ptrs = C.calloc(C.size_t(p.n), C.size_t(unsafe.Sizeof(uintptr(0))))
		ptrs := unsafe.Slice((*unsafe.Pointer)(p.ptrs), p.n)
		for i := range ptrs {
			ptrs[i] = unsafe.Add(p.slots, 8*i)
		}
	}
	p.used = n
	return unsafe.Slice((*uint64)(p.slots), p.n)[:n]
}

// Launch queues f on groups blocks of local threads with shared bytes of
// dynamic shared memory, the parameters in the slots of p's last Slots
// call (batched: copied).
func (d *Device) Launch(f *Function, groups, local, shared int, p *Params) error {
	if groups == 0 {
		return nil
	}
	d.mu.Lock()
	if d.batch != nil {
		defer d.mu.Unlock()
		l := launch{fn: uintptr(unsafe.Pointer(f.f)), groups: uint32(groups), local: uint32(local), shared: uint32(shared), nparams: uint32(p.used)}
		if len(d.batch.launches) == 0 {
			d.idle.Reset(batchDelay)
		}
		return d.batch.add(l, unsafe.Slice((*uint64)(p.slots), p.used), f.Label)
	}
	d.mu.Unlock()
	return check("cuLaunchKernel", C.op2_cuda_launch(d.ctx, f.f, C.uint(groups), C.uint(local), C.uint(shared), (*unsafe.Pointer)(p.ptrs)))
}
