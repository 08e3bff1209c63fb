// Package opencl is a small binding to the OpenCL runtime, loaded at run
// time with dlopen so that nothing about OpenCL is needed to build GoOP2 or
// to run its other backends. It covers what the opencl backend uses:
// platforms and devices, a context and an in-order queue, buffers, programs
// (from source or from a cached binary), kernels and launches.
package opencl

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
static void op2cl_flush_stdio(void) { fflush(NULL); }

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_bitfield;
typedef void *cl_handle;

static void *lib;
static cl_int (*pGetPlatformIDs)(cl_uint, cl_handle *, cl_uint *);
static cl_int (*pGetPlatformInfo)(cl_handle, cl_uint, size_t, void *, size_t *);
static cl_int (*pGetDeviceIDs)(cl_handle, cl_bitfield, cl_uint, cl_handle *, cl_uint *);
static cl_int (*pGetDeviceInfo)(cl_handle, cl_uint, size_t, void *, size_t *);
static cl_handle (*pCreateContext)(const intptr_t *, cl_uint, const cl_handle *, void *, void *, cl_int *);
static cl_handle (*pCreateCommandQueue)(cl_handle, cl_handle, cl_bitfield, cl_int *);
static cl_handle (*pCreateBuffer)(cl_handle, cl_bitfield, size_t, void *, cl_int *);
static cl_int (*pReleaseMemObject)(cl_handle);
static cl_int (*pEnqueueWriteBuffer)(cl_handle, cl_handle, cl_uint, size_t, size_t, const void *, cl_uint, const void *, void *);
static cl_int (*pEnqueueReadBuffer)(cl_handle, cl_handle, cl_uint, size_t, size_t, void *, cl_uint, const void *, void *);
static cl_int (*pEnqueueFillBuffer)(cl_handle, cl_handle, const void *, size_t, size_t, size_t, cl_uint, const void *, void *);
static cl_int (*pEnqueueCopyBuffer)(cl_handle, cl_handle, cl_handle, size_t, size_t, size_t, cl_uint, const void *, void *);
static cl_handle (*pCreateProgramWithSource)(cl_handle, cl_uint, const char **, const size_t *, cl_int *);
static cl_handle (*pCreateProgramWithBinary)(cl_handle, cl_uint, const cl_handle *, const size_t *, const unsigned char **, cl_int *, cl_int *);
static cl_int (*pBuildProgram)(cl_handle, cl_uint, const cl_handle *, const char *, void *, void *);
static cl_int (*pGetProgramBuildInfo)(cl_handle, cl_handle, cl_uint, size_t, void *, size_t *);
static cl_int (*pGetProgramInfo)(cl_handle, cl_uint, size_t, void *, size_t *);
static cl_handle (*pCreateKernel)(cl_handle, const char *, cl_int *);
static cl_int (*pSetKernelArg)(cl_handle, cl_uint, size_t, const void *);
static cl_int (*pGetKernelWorkGroupInfo)(cl_handle, cl_handle, cl_uint, size_t, void *, size_t *);
static cl_int (*pEnqueueNDRangeKernel)(cl_handle, cl_handle, cl_uint, const size_t *, const size_t *, const size_t *, cl_uint, const void *, void *);
static cl_int (*pFinish)(cl_handle);
static cl_int (*pReleaseProgram)(cl_handle);
static cl_int (*pReleaseKernel)(cl_handle);
static cl_int (*pWaitForEvents)(cl_uint, const cl_handle *);
static cl_int (*pReleaseEvent)(cl_handle);
// OpenCL 1.2's markers and event profiling, for Stamp; NULL where the
// library lacks them.
static cl_int (*pEnqueueMarkerWithWaitList)(cl_handle, cl_uint, const void *, cl_handle *);
static cl_int (*pGetEventProfilingInfo)(cl_handle, cl_uint, size_t, void *, size_t *);

#define LOAD(name) if (!(p##name = dlsym(h, "cl" #name))) { *missing = "cl" #name; dlclose(h); return NULL; }

// op2cl_load opens the ICD loader and resolves every entry point. It
// returns NULL on success; else the loader's message, or NULL with *missing
// set to the first entry point the library lacks (the library is closed
// again).
static const char *op2cl_load(const char *path, const char **missing) {
	*missing = NULL;
	if (lib) return NULL;
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) return dlerror();
	LOAD(GetPlatformIDs) LOAD(GetPlatformInfo) LOAD(GetDeviceIDs) LOAD(GetDeviceInfo)
	LOAD(CreateContext) LOAD(CreateCommandQueue) LOAD(CreateBuffer) LOAD(ReleaseMemObject)
	LOAD(EnqueueWriteBuffer) LOAD(EnqueueReadBuffer) LOAD(EnqueueFillBuffer) LOAD(EnqueueCopyBuffer)
	LOAD(CreateProgramWithSource) LOAD(CreateProgramWithBinary) LOAD(BuildProgram)
	LOAD(GetProgramBuildInfo) LOAD(GetProgramInfo) LOAD(CreateKernel) LOAD(SetKernelArg) LOAD(GetKernelWorkGroupInfo)
	LOAD(EnqueueNDRangeKernel) LOAD(Finish) LOAD(ReleaseProgram) LOAD(ReleaseKernel)
	LOAD(WaitForEvents) LOAD(ReleaseEvent)
	pEnqueueMarkerWithWaitList = dlsym(h, "clEnqueueMarkerWithWaitList");
	pGetEventProfilingInfo = dlsym(h, "clGetEventProfilingInfo");
	lib = h;
	return NULL;
}

static cl_int op2cl_platforms(cl_uint n, cl_handle *out, cl_uint *count) { return pGetPlatformIDs(n, out, count); }
static cl_int op2cl_platform_info(cl_handle p, cl_uint what, size_t n, void *v, size_t *ret) { return pGetPlatformInfo(p, what, n, v, ret); }
static cl_int op2cl_devices(cl_handle p, cl_bitfield type, cl_uint n, cl_handle *out, cl_uint *count) { return pGetDeviceIDs(p, type, n, out, count); }
static cl_int op2cl_device_info(cl_handle d, cl_uint what, size_t n, void *v, size_t *ret) { return pGetDeviceInfo(d, what, n, v, ret); }
static cl_handle op2cl_context(cl_handle dev, cl_int *err) { return pCreateContext(NULL, 1, &dev, NULL, NULL, err); }
// op2cl_queue makes an in-order queue, with profiling where the library
// can stamp it (CL_QUEUE_PROFILING_ENABLE).
static cl_handle op2cl_queue(cl_handle ctx, cl_handle dev, cl_int *err) {
	cl_bitfield props = pEnqueueMarkerWithWaitList && pGetEventProfilingInfo ? 2 : 0;
	return pCreateCommandQueue(ctx, dev, props, err);
}
static cl_handle op2cl_buffer(cl_handle ctx, size_t n, cl_int *err) { return pCreateBuffer(ctx, 1, n, NULL, err); }
static cl_int op2cl_release_buffer(cl_handle b) { return pReleaseMemObject(b); }
static cl_int op2cl_write(cl_handle q, cl_handle b, size_t off, size_t n, const void *src) { return pEnqueueWriteBuffer(q, b, 1, off, n, src, 0, NULL, NULL); }
static cl_int op2cl_read(cl_handle q, cl_handle b, size_t off, size_t n, void *dst) { return pEnqueueReadBuffer(q, b, 1, off, n, dst, 0, NULL, NULL); }
static cl_int op2cl_copy(cl_handle q, cl_handle src, cl_handle dst, size_t n) { return pEnqueueCopyBuffer(q, src, dst, 0, 0, n, 0, NULL, NULL); }
static cl_int op2cl_zero(cl_handle q, cl_handle b, size_t n) {
	const unsigned char zero = 0;
	return pEnqueueFillBuffer(q, b, &zero, 1, 0, n, 0, NULL, NULL);
}
static cl_handle op2cl_program_source(cl_handle ctx, const char *src, size_t len, cl_int *err) {
	return pCreateProgramWithSource(ctx, 1, &src, &len, err);
}
static cl_handle op2cl_program_binary(cl_handle ctx, cl_handle dev, const unsigned char *bin, size_t len, cl_int *status, cl_int *err) {
	return pCreateProgramWithBinary(ctx, 1, &dev, &len, &bin, status, err);
}
static cl_int op2cl_build(cl_handle prog, cl_handle dev, const char *opts) { return pBuildProgram(prog, 1, &dev, opts, NULL, NULL); }
static cl_int op2cl_build_log(cl_handle prog, cl_handle dev, size_t n, void *v, size_t *ret) { return pGetProgramBuildInfo(prog, dev, 0x1183, n, v, ret); }
static cl_int op2cl_binary_size(cl_handle prog, size_t *n) { return pGetProgramInfo(prog, 0x1165, sizeof(size_t), n, NULL); }
static cl_int op2cl_binary(cl_handle prog, unsigned char *dst) {
	unsigned char *ptrs[1] = {dst};
	return pGetProgramInfo(prog, 0x1166, sizeof(ptrs), ptrs, NULL);
}
static cl_int op2cl_release_program(cl_handle p) { return pReleaseProgram(p); }
static cl_int op2cl_release_kernel(cl_handle k) { return pReleaseKernel(k); }
static cl_handle op2cl_kernel(cl_handle prog, const char *name, cl_int *err) { return pCreateKernel(prog, name, err); }
static cl_int op2cl_kernel_wg_size(cl_handle k, cl_handle dev, size_t *n) { return pGetKernelWorkGroupInfo(k, dev, 0x11B0, sizeof(size_t), n, NULL); }
static cl_int op2cl_arg_mem(cl_handle k, cl_uint i, cl_handle m) { return pSetKernelArg(k, i, sizeof(m), &m); }
static cl_int op2cl_arg_int(cl_handle k, cl_uint i, int v) { return pSetKernelArg(k, i, sizeof(v), &v); }
static cl_int op2cl_arg_local(cl_handle k, cl_uint i, size_t n) { return pSetKernelArg(k, i, n, NULL); }
static cl_int op2cl_launch(cl_handle q, cl_handle k, size_t global, size_t local) {
	return pEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL);
}
static cl_int op2cl_finish(cl_handle q) { return pFinish(q); }
static int op2cl_can_stamp(void) { return pEnqueueMarkerWithWaitList && pGetEventProfilingInfo; }
// The stamps' calls return their results by value, so that the Go
// callers pass no pointer (which would escape to the heap).
typedef struct { cl_handle ev; cl_int err; } op2cl_stamped;
typedef struct { uint64_t ns; cl_int err; } op2cl_elapsed;
// op2cl_stamp queues a marker after the commands queued so far.
static op2cl_stamped op2cl_stamp(cl_handle q) {
	op2cl_stamped s = {NULL, 0};
	s.err = pEnqueueMarkerWithWaitList(q, 0, NULL, &s.ev);
	return s;
}
// op2cl_between waits for marker b and returns the device time from the
// end of marker a to the end of b (CL_PROFILING_COMMAND_END); it releases
// both.
static op2cl_elapsed op2cl_between(cl_handle a, cl_handle b) {
	uint64_t ta = 0, tb = 0;
	op2cl_elapsed e = {0, 0};
	e.err = pWaitForEvents(1, &b);
	if (e.err == 0) e.err = pGetEventProfilingInfo(a, 0x1283, sizeof ta, &ta, NULL);
	if (e.err == 0) e.err = pGetEventProfilingInfo(b, 0x1283, sizeof tb, &tb, NULL);
	pReleaseEvent(a);
	pReleaseEvent(b);
	e.ns = tb > ta ? tb - ta : 0;
	return e;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/goop2/op2/internal/sigstack"
)

// InstallHint says what to install when no OpenCL runtime is found.
const InstallHint = "install an OpenCL ICD loader and a driver, e.g. `apt-get install ocl-icd-libopencl1 pocl-opencl-icd` for CPUs, or your GPU vendor's OpenCL driver"

// ErrUnavailable is matched (errors.Is) by the errors that say no OpenCL
// runtime or platform is installed: the library does not load, or it
// finds no platform. Their text is unchanged by it.
var ErrUnavailable = errors.New("OpenCL is not available")

// unavailable marks err as matching ErrUnavailable.
type unavailable struct{ error }

func (u unavailable) Unwrap() error        { return u.error }
func (u unavailable) Is(target error) bool { return target == ErrUnavailable }

var (
	loadOnce sync.Once
	loadErr  error
)

// NoRank is Load's rank for a process that is not one of several an MPI
// launcher started.
const NoRank = -1

// Load opens the OpenCL ICD loader: $OP2_OPENCL_LIBRARY if set, else
// libOpenCL.so.1. It is safe to call more than once; the first call
// loads the library and later calls return its result.
//
// rank is this process's rank when an MPI launcher started it with more
// than one process, else NoRank (the caller knows; the driver does not
// ask MPI). With a rank, Load first gives PoCL a kernel cache directory
// of the rank's own (separateRankCache): PoCL's cache is not safe for
// several processes building the same program at once, which ranks on
// one node do.
func Load(rank int) error {
	loadOnce.Do(func() {
		separateRankCache(rank)
		var msgs []string
		names := []string{"libOpenCL.so.1", "libOpenCL.so"}
		if lib := os.Getenv("OP2_OPENCL_LIBRARY"); lib != "" {
			names = []string{lib}
		}
		for _, name := range names {
			cname := C.CString(name)
			var missing *C.char
			msg := C.op2cl_load(cname, &missing)
			C.free(unsafe.Pointer(cname))
			switch {
			case missing != nil:
				msgs = append(msgs, fmt.Sprintf("%s is not an OpenCL library: it does not define %s", name, C.GoString(missing)))
			case msg != nil:
				msgs = append(msgs, C.GoString(msg))
			default:
				return
			}
		}
		loadErr = unavailable{fmt.Errorf("opencl: cannot load the OpenCL library (%s); %s", strings.Join(msgs, "; "), InstallHint)}
	})
	return loadErr
}

// separateRankCache sets POCL_CACHE_DIR, before the OpenCL library (and
// so PoCL) is loaded, to a folder of this MPI rank's own under PoCL's
// cache directory ($POCL_CACHE_DIR, else $XDG_CACHE_HOME/pocl, else
// ~/.cache/pocl): rank-<n>. Ranks on one node building the same program
// in one PoCL cache at once can crash PoCL (pocl/pocl#430; seen here as a
// SIGSEGV in clGetProgramInfo on a cold cache). Each rank keeps its own
// cache across runs. Other OpenCL drivers ignore the variable. Nothing is
// changed for NoRank (a process outside a launcher-started job of more
// than one process).
func separateRankCache(rank int) {
	if rank < 0 {
		return
	}
	base := os.Getenv("POCL_CACHE_DIR")
	if base == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return // PoCL then uses its own default (a temporary folder)
		}
		base = filepath.Join(dir, "pocl")
	}
	dir := filepath.Join(base, fmt.Sprintf("rank-%d", rank))
	if os.MkdirAll(dir, 0o700) == nil {
		_ = os.Setenv("POCL_CACHE_DIR", dir)
	}
}

// Error is a failed OpenCL call.
type Error struct {
	Call string
	Code int
}

func (e *Error) Error() string {
	return fmt.Sprintf("opencl: %s failed with error %d (%s)", e.Call, e.Code, codeName(e.Code))
}

func codeName(code int) string {
	names := map[int]string{
		-1: "CL_DEVICE_NOT_FOUND", -2: "CL_DEVICE_NOT_AVAILABLE", -4: "CL_MEM_OBJECT_ALLOCATION_FAILURE",
		-5: "CL_OUT_OF_RESOURCES", -6: "CL_OUT_OF_HOST_MEMORY", -11: "CL_BUILD_PROGRAM_FAILURE",
		-30: "CL_INVALID_VALUE", -36: "CL_INVALID_COMMAND_QUEUE", -38: "CL_INVALID_MEM_OBJECT",
		-42: "CL_INVALID_BINARY", -46: "CL_INVALID_KERNEL_NAME", -48: "CL_INVALID_KERNEL",
		-49: "CL_INVALID_ARG_INDEX", -50: "CL_INVALID_ARG_VALUE", -51: "CL_INVALID_ARG_SIZE",
		-52: "CL_INVALID_KERNEL_ARGS", -54: "CL_INVALID_WORK_GROUP_SIZE", -61: "CL_INVALID_BUFFER_SIZE",
		-1001: "CL_PLATFORM_NOT_FOUND_KHR",
	}
	if n, ok := names[code]; ok {
		return n
	}
	return "see cl.h"
}

func check(call string, code C.cl_int) error {
	if code != 0 {
		return &Error{Call: call, Code: int(code)}
	}
	return nil
}

// Device types for Select.
const (
	TypeDefault     = 1 << 0
	TypeCPU         = 1 << 1
	TypeGPU         = 1 << 2
	TypeAccelerator = 1 << 3
	TypeAll         = 0xFFFFFFFF
)

// Device is one OpenCL device.
type Device struct {
	Platform       string // platform name
	Name           string
	Vendor         string
	Version        string // device OpenCL version
	Driver         string // driver version
	Type           uint64
	LocalMem       int // bytes of local memory per work group
	ConstMem       int // bytes of a __constant buffer at most (CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE)
	ConstArgs      int // __constant kernel arguments at most (CL_DEVICE_MAX_CONSTANT_ARGS)
	MaxWorkGroup   int // work items per work group at most (CL_DEVICE_MAX_WORK_GROUP_SIZE)
	HasDouble      bool
	platform, id   C.cl_handle
	PlatformVendor string
}

func platformString(p C.cl_handle, what C.cl_uint) string {
	var buf [1024]byte
	var n C.size_t
	if C.op2cl_platform_info(p, what, C.size_t(len(buf)), unsafe.Pointer(&buf[0]), &n) != 0 {
		return ""
	}
	return strings.TrimRight(string(buf[:n]), "\x00")
}

func deviceString(d C.cl_handle, what C.cl_uint) string {
	buf := make([]byte, 8192)
	var n C.size_t
	if C.op2cl_device_info(d, what, C.size_t(len(buf)), unsafe.Pointer(&buf[0]), &n) != 0 {
		return ""
	}
	return strings.TrimRight(string(buf[:n]), "\x00")
}

func deviceUint(d C.cl_handle, what C.cl_uint) uint64 {
	var v uint64
	C.op2cl_device_info(d, what, 8, unsafe.Pointer(&v), nil)
	return v
}

// Devices lists the devices of every platform whose type matches typ. It
// loads the library as Load(NoRank) does where no call to Load has.
func Devices(typ uint64) ([]Device, error) {
	if err := Load(NoRank); err != nil {
		return nil, err
	}
	var n C.cl_uint
	if code := C.op2cl_platforms(0, nil, &n); code != 0 || n == 0 {
		return nil, unavailable{fmt.Errorf("opencl: no OpenCL platform found (clGetPlatformIDs: %d platforms, error %d); %s", n, code, InstallHint)}
	}
	// The drivers start with the first platform query; PoCL installs a
	// SIGFPE handler without SA_ONSTACK, which the Go run time needs.
	sigstack.Repair()
	plats := make([]C.cl_handle, n)
	if err := check("clGetPlatformIDs", C.op2cl_platforms(n, &plats[0], &n)); err != nil {
		return nil, err
	}
	var out []Device
	for _, p := range plats {
		var nd C.cl_uint
		if C.op2cl_devices(p, C.cl_bitfield(typ), 0, nil, &nd) != 0 || nd == 0 {
			continue
		}
		ids := make([]C.cl_handle, nd)
		if C.op2cl_devices(p, C.cl_bitfield(typ), nd, &ids[0], &nd) != 0 {
			continue
		}
		for _, id := range ids {
			out = append(out, Device{
				Platform:       platformString(p, 0x0902),
				PlatformVendor: platformString(p, 0x0903),
				Name:           strings.TrimSpace(deviceString(id, 0x102B)),
				Vendor:         deviceString(id, 0x102C),
				Driver:         deviceString(id, 0x102D),
				Version:        deviceString(id, 0x102F),
				Type:           deviceUint(id, 0x1000),
				LocalMem:       int(deviceUint(id, 0x1023)),
				ConstMem:       int(deviceUint(id, 0x1020)),
				ConstArgs:      int(deviceUint(id, 0x1021)),
				MaxWorkGroup:   int(deviceUint(id, 0x1004)),
				HasDouble:      deviceUint(id, 0x1032) != 0 || strings.Contains(deviceString(id, 0x1030), "cl_khr_fp64"),
				platform:       p,
				id:             id,
			})
		}
	}
	return out, nil
}

// Context is a device with a context and an in-order command queue.
type Context struct {
	Device Device
	ctx    C.cl_handle
	queue  C.cl_handle
	// stamps says whether the queue can be timed (CanStamp).
	stamps bool
}

// NewContext opens a context and a queue on dev.
func NewContext(dev Device) (*Context, error) {
	var code C.cl_int
	ctx := C.op2cl_context(dev.id, &code)
	if err := check("clCreateContext", code); err != nil {
		return nil, err
	}
	q := C.op2cl_queue(ctx, dev.id, &code)
	if err := check("clCreateCommandQueue", code); err != nil {
		return nil, err
	}
	return &Context{Device: dev, ctx: ctx, queue: q, stamps: C.op2cl_can_stamp() != 0}, nil
}

// Buffer is device memory.
type Buffer struct {
	mem  C.cl_handle
	Size int
}

// Alloc allocates n bytes of device memory (at least 1).
func (c *Context) Alloc(n int) (*Buffer, error) {
	var code C.cl_int
	m := C.op2cl_buffer(c.ctx, C.size_t(max(n, 1)), &code)
	if err := check(fmt.Sprintf("clCreateBuffer(%d bytes)", n), code); err != nil {
		return nil, err
	}
	return &Buffer{mem: m, Size: n}, nil
}

// Free releases the buffer.
func (c *Context) Free(b *Buffer) {
	if b != nil && b.mem != nil {
		C.op2cl_release_buffer(b.mem)
		b.mem = nil
	}
}

// Write copies n bytes from host memory src to the start of b, blocking.
func (c *Context) Write(b *Buffer, src unsafe.Pointer, n int) error { return c.WriteAt(b, 0, src, n) }

// WriteAt copies n bytes from host memory src to byte offset off of b,
// blocking.
func (c *Context) WriteAt(b *Buffer, off int, src unsafe.Pointer, n int) error {
	if n == 0 {
		return nil
	}
	return check("clEnqueueWriteBuffer", C.op2cl_write(c.queue, b.mem, C.size_t(off), C.size_t(n), src))
}

// Read copies n bytes from the start of b to host memory dst, blocking.
func (c *Context) Read(b *Buffer, dst unsafe.Pointer, n int) error {
	if n == 0 {
		return nil
	}
	return check("clEnqueueReadBuffer", C.op2cl_read(c.queue, b.mem, 0, C.size_t(n), dst))
}

// ReadAt copies n bytes from byte offset off of b to host memory dst,
// blocking.
func (c *Context) ReadAt(b *Buffer, off int, dst unsafe.Pointer, n int) error {
	if n == 0 {
		return nil
	}
	return check("clEnqueueReadBuffer", C.op2cl_read(c.queue, b.mem, C.size_t(off), C.size_t(n), dst))
}

// Copy copies the first n bytes of src to the start of dst on the device,
// after every queued command.
func (c *Context) Copy(dst, src *Buffer, n int) error {
	if n == 0 {
		return nil
	}
	return check("clEnqueueCopyBuffer", C.op2cl_copy(c.queue, src.mem, dst.mem, C.size_t(n)))
}

// Zero fills the first n bytes of b with zeros on the device.
func (c *Context) Zero(b *Buffer, n int) error {
	if n == 0 {
		return nil
	}
	return check("clEnqueueFillBuffer", C.op2cl_zero(c.queue, b.mem, C.size_t(n)))
}

// Finish waits for every queued command.
func (c *Context) Finish() error { return check("clFinish", C.op2cl_finish(c.queue)) }

// CanStamp reports whether the library has what Stamp and Between use
// (OpenCL 1.2's markers and event profiling); the queue is then made
// with profiling on.
func (c *Context) CanStamp() bool { return c.stamps }

// Stamp queues a marker after the commands queued so far, for Between;
// the pointer is the marker's event. CanStamp must hold.
func (c *Context) Stamp() (unsafe.Pointer, error) {
	s := C.op2cl_stamp(c.queue)
	if err := check("clEnqueueMarkerWithWaitList", s.err); err != nil {
		return nil, err
	}
	return unsafe.Pointer(s.ev), nil
}

// Between waits for stamp to and returns the device time from the end of
// stamp from to the end of to; it releases both.
func (c *Context) Between(from, to unsafe.Pointer) (time.Duration, error) {
	e := C.op2cl_between(C.cl_handle(from), C.cl_handle(to))
	return time.Duration(e.ns), check("clGetEventProfilingInfo", e.err)
}

// BuildError is a program that failed to build; Log is the compiler's log
// and Output what the driver printed on standard error while building
// (some drivers, PoCL among them, print diagnostics there rather than in
// the log).
type BuildError struct {
	Log    string
	Output string
}

func (e *BuildError) Error() string {
	msg := "OpenCL program build failed; build log:\n" + strings.TrimSpace(e.Log)
	if o := strings.TrimSpace(e.Output); o != "" {
		msg += "\ndriver output during the build:\n" + o
	}
	return msg
}

// Program is a built OpenCL program.
type Program struct {
	prog C.cl_handle
}

// stderrMu serialises the builds that redirect the process's standard
// error.
var stderrMu sync.Mutex

// FlushStdio flushes the C library's output streams, where the OpenCL
// library writes what kernels print.
func FlushStdio() { C.op2cl_flush_stdio() }

// captureStderr runs f with file descriptor 2 redirected to a temporary
// file and returns what was written to it. Anything else the process
// writes to standard error meanwhile is captured too (other goroutines'
// output, a panic's message), so it is used only to build again a
// program whose build failed. If the redirection cannot be set up, f
// runs without it.
func captureStderr(f func()) string {
	stderrMu.Lock()
	defer stderrMu.Unlock()
	tmp, err := os.CreateTemp("", "goop2-opencl-build-*")
	if err != nil {
		f()
		return ""
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	C.op2cl_flush_stdio()
	saved, err := syscall.Dup(2)
	if err != nil {
		f()
		return ""
	}
	defer syscall.Close(saved)
	if err := syscall.Dup3(int(tmp.Fd()), 2, 0); err != nil {
		f()
		return ""
	}
	f()
	C.op2cl_flush_stdio()
	_ = syscall.Dup3(saved, 2, 0)
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return ""
	}
	out, _ := io.ReadAll(io.LimitReader(tmp, 1<<20))
	return string(out)
}

// BuildSource compiles src for the context's device.
func (c *Context) BuildSource(src, options string) (*Program, error) {
	csrc := C.CString(src)
	defer C.free(unsafe.Pointer(csrc))
	var code C.cl_int
	p := C.op2cl_program_source(c.ctx, csrc, C.size_t(len(src)), &code)
	if err := check("clCreateProgramWithSource", code); err != nil {
		return nil, err
	}
	return c.build(p, options)
}

// BuildBinary loads a program from a binary made by Binary on the same device.
func (c *Context) BuildBinary(bin []byte, options string) (*Program, error) {
	if len(bin) == 0 {
		return nil, fmt.Errorf("opencl: empty program binary")
	}
	cbin := C.CBytes(bin)
	defer C.free(cbin)
	var status, code C.cl_int
	p := C.op2cl_program_binary(c.ctx, c.Device.id, (*C.uchar)(cbin), C.size_t(len(bin)), &status, &code)
	if err := check("clCreateProgramWithBinary", code); err != nil {
		return nil, err
	}
	if err := check("clCreateProgramWithBinary (binary status)", status); err != nil {
		C.op2cl_release_program(p)
		return nil, err
	}
	return c.build(p, options)
}

func (c *Context) build(p C.cl_handle, options string) (*Program, error) {
	copts := C.CString(options)
	defer C.free(unsafe.Pointer(copts))
	// Built as is: the driver's standard error is the process's, which
	// other goroutines write too. PoCL prints some of a failed build's
	// diagnostics there rather than in the log ("1 error generated."),
	// so a build that fails is run again with them captured, for the
	// error.
	code := C.op2cl_build(p, c.Device.id, copts)
	var output string
	if code != 0 {
		output = captureStderr(func() { code = C.op2cl_build(p, c.Device.id, copts) })
	}
	if code != 0 {
		var n C.size_t
		C.op2cl_build_log(p, c.Device.id, 0, nil, &n)
		log := make([]byte, int(n)+1)
		C.op2cl_build_log(p, c.Device.id, C.size_t(len(log)), unsafe.Pointer(&log[0]), nil)
		C.op2cl_release_program(p)
		msg := strings.TrimRight(string(log), "\x00")
		if code != -11 {
			msg = fmt.Sprintf("clBuildProgram error %d (%s)\n%s", int(code), codeName(int(code)), msg)
		}
		return nil, &BuildError{Log: msg, Output: output}
	}
	return &Program{prog: p}, nil
}

// Binary returns the program's device binary, for the disk cache.
func (p *Program) Binary() ([]byte, error) {
	var n C.size_t
	if err := check("clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)", C.op2cl_binary_size(p.prog, &n)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("opencl: the driver returned no program binary")
	}
	buf := C.malloc(n)
	defer C.free(buf)
	if err := check("clGetProgramInfo(CL_PROGRAM_BINARIES)", C.op2cl_binary(p.prog, (*C.uchar)(buf))); err != nil {
		return nil, err
	}
	return C.GoBytes(buf, C.int(n)), nil
}

// Release frees the program. Kernels made from it stay valid until they
// are released themselves.
func (p *Program) Release() {
	if p.prog != nil {
		C.op2cl_release_program(p.prog)
		p.prog = nil
	}
}

// Release frees the kernel. Launches already enqueued still run.
func (k *Kernel) Release() {
	if k.k != nil {
		C.op2cl_release_kernel(k.k)
		k.k = nil
	}
}

// Kernel is a kernel of a program.
type Kernel struct {
	k    C.cl_handle
	Name string
}

// Kernel returns the named kernel.
func (p *Program) Kernel(name string) (*Kernel, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var code C.cl_int
	k := C.op2cl_kernel(p.prog, cname, &code)
	if err := check("clCreateKernel("+name+")", code); err != nil {
		return nil, err
	}
	return &Kernel{k: k, Name: name}, nil
}

// WorkGroupSize is the most work items a work group of kernel k may have
// on the context's device (CL_KERNEL_WORK_GROUP_SIZE: the device's limit,
// or less where the kernel needs more resources per item).
func (c *Context) WorkGroupSize(k *Kernel) (int, error) {
	var n C.size_t
	if err := check("clGetKernelWorkGroupInfo("+k.Name+")", C.op2cl_kernel_wg_size(k.k, c.Device.id, &n)); err != nil {
		return 0, err
	}
	return int(n), nil
}

// SetBuffer sets argument i to a buffer.
func (k *Kernel) SetBuffer(i int, b *Buffer) error {
	return check("clSetKernelArg", C.op2cl_arg_mem(k.k, C.cl_uint(i), b.mem))
}

// SetInt sets argument i to an int.
func (k *Kernel) SetInt(i int, v int) error {
	return check("clSetKernelArg", C.op2cl_arg_int(k.k, C.cl_uint(i), C.int(v)))
}

// SetLocal sets argument i to n bytes of local memory.
func (k *Kernel) SetLocal(i int, n int) error {
	return check("clSetKernelArg", C.op2cl_arg_local(k.k, C.cl_uint(i), C.size_t(max(n, 1))))
}

// Launch enqueues the kernel on groups work groups of local work items.
func (c *Context) Launch(k *Kernel, groups, local int) error {
	if groups == 0 {
		return nil
	}
	if code := C.op2cl_launch(c.queue, k.k, C.size_t(groups*local), C.size_t(local)); code != 0 {
		return check("clEnqueueNDRangeKernel("+k.Name+")", code)
	}
	return nil
}
