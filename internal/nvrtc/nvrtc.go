// Package nvrtc compiles CUDA C++ to device code (CUBIN) with NVIDIA's
// run-time compiler, loaded with dlopen so that nothing of CUDA is needed
// to build GoOP2 or to run its other backends. Compiling needs no GPU.
//
// The library is looked for, in order: the file or name in
// OP2_NVRTC_LIBRARY; libnvrtc.so.13, .12 and .11.2 on the loader's path;
// then those names under $CUDA_HOME/lib64, /usr/local/cuda/lib64 and the
// folders where NVIDIA's Python wheels install NVRTC
// (site-packages/nvidia/cu13/lib and site-packages/nvidia/cuda_nvrtc/lib).
// NVRTC loads its builtins library (libnvrtc-builtins.so.*) by name; one
// beside the chosen library is loaded first, so a private copy works
// without LD_LIBRARY_PATH.
package nvrtc

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

typedef int nvrtcResult;
typedef void *nvrtcProgram;

static nvrtcResult (*p_version)(int *, int *);
static const char *(*p_error)(nvrtcResult);
static nvrtcResult (*p_create)(nvrtcProgram *, const char *, const char *, int, const char *const *, const char *const *);
static nvrtcResult (*p_compile)(nvrtcProgram, int, const char *const *);
static nvrtcResult (*p_logsize)(nvrtcProgram, size_t *);
static nvrtcResult (*p_log)(nvrtcProgram, char *);
static nvrtcResult (*p_cubinsize)(nvrtcProgram, size_t *);
static nvrtcResult (*p_cubin)(nvrtcProgram, char *);
static nvrtcResult (*p_destroy)(nvrtcProgram *);
static nvrtcResult (*p_narchs)(int *);
static nvrtcResult (*p_archs)(int *);

// op2_nvrtc_preload loads a builtins library with RTLD_GLOBAL, so that
// NVRTC's own dlopen of it by name finds it.
static void op2_nvrtc_preload(const char *path) { dlopen(path, RTLD_NOW | RTLD_GLOBAL); }

// op2_nvrtc_open loads NVRTC from path and resolves its functions; it
// returns NULL, or why it could not.
static const char *op2_nvrtc_open(const char *path) {
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) return dlerror();
#define SYM(var, name) if (!(*(void **)(&var) = dlsym(h, name))) { dlclose(h); return "the library lacks " name; }
	SYM(p_version, "nvrtcVersion")
	SYM(p_error, "nvrtcGetErrorString")
	SYM(p_create, "nvrtcCreateProgram")
	SYM(p_compile, "nvrtcCompileProgram")
	SYM(p_logsize, "nvrtcGetProgramLogSize")
	SYM(p_log, "nvrtcGetProgramLog")
	SYM(p_cubinsize, "nvrtcGetCUBINSize")
	SYM(p_cubin, "nvrtcGetCUBIN")
	SYM(p_destroy, "nvrtcDestroyProgram")
	SYM(p_narchs, "nvrtcGetNumSupportedArchs")
	SYM(p_archs, "nvrtcGetSupportedArchs")
#undef SYM
	return NULL;
}

static nvrtcResult op2_nvrtc_version(int *major, int *minor) { return p_version(major, minor); }
static const char *op2_nvrtc_error(nvrtcResult r) { return p_error(r); }

static nvrtcResult op2_nvrtc_archs(int *out, int max, int *n) {
	nvrtcResult r = p_narchs(n);
	if (r || *n > max) return r;
	return p_archs(out);
}

// op2_nvrtc_compile compiles src; *log (malloc'd) gets the log and *cubin
// (malloc'd) the code. stage says which call failed: 0 create, 1 compile,
// 2 fetching the results.
static nvrtcResult op2_nvrtc_compile(const char *src, const char *name, int nopts, const char **opts,
		char **log, char **cubin, size_t *cubinSize, int *stage) {
	nvrtcProgram prog;
	*log = NULL; *cubin = NULL; *cubinSize = 0;
	*stage = 0;
	nvrtcResult r = p_create(&prog, src, name, 0, NULL, NULL);
	if (r) return r;
	*stage = 1;
	nvrtcResult rc = p_compile(prog, nopts, opts);
	size_t n = 0;
	if (p_logsize(prog, &n) == 0 && n > 0) {
		*log = malloc(n + 1);
		if (*log && p_log(prog, *log) != 0) (*log)[0] = 0;
		if (*log) (*log)[n] = 0;
	}
	if (rc == 0) {
		*stage = 2;
		rc = p_cubinsize(prog, cubinSize);
		if (rc == 0) {
			*cubin = malloc(*cubinSize ? *cubinSize : 1);
			rc = p_cubin(prog, *cubin);
		}
	}
	p_destroy(&prog);
	return rc;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"unsafe"
)

// LibraryEnv names the environment variable that points GoOP2 at an NVRTC
// library (a path or a soname).
const LibraryEnv = "OP2_NVRTC_LIBRARY"

// InstallHint says how to get NVRTC.
const InstallHint = "install the CUDA toolkit's NVRTC (NVIDIA's cuda-nvrtc package, the nvidia-cuda-nvrtc Python wheel, or Debian's libnvrtc11.2 and libnvrtc-builtins11.8 from non-free) or point " + LibraryEnv + " at libnvrtc.so"

// ErrUnavailable is wrapped by the errors that say NVRTC cannot be loaded.
var ErrUnavailable = errors.New("NVRTC is not available")

// Library is the loaded NVRTC.
type Library struct {
	// Path is the file or name it was loaded from.
	Path string
	// Major and Minor are its version (CUDA's).
	Major, Minor int
	mu           sync.Mutex // NVRTC programs are independent, but keep one compile at a time to bound memory
}

var (
	loadOnce sync.Once
	lib      *Library
	loadErr  error
)

// Load loads NVRTC once per process and returns it, or an error wrapping
// ErrUnavailable that lists where it looked and what to install.
func Load() (*Library, error) {
	loadOnce.Do(func() { lib, loadErr = load() })
	return lib, loadErr
}

// candidates lists where NVRTC is looked for, in order.
func candidates() []string {
	if p := os.Getenv(LibraryEnv); p != "" {
		return []string{p}
	}
	names := []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"}
	out := append([]string(nil), names...)
	var dirs []string
	if h := os.Getenv("CUDA_HOME"); h != "" {
		dirs = append(dirs, filepath.Join(h, "lib64"))
	}
	dirs = append(dirs, "/usr/local/cuda/lib64")
	for _, pattern := range []string{
		"/usr/lib/python3*/site-packages/nvidia", "/usr/local/lib/python3*/site-packages/nvidia",
		"/usr/lib/python3*/dist-packages/nvidia", "/usr/local/lib/python3*/dist-packages/nvidia",
		"/opt/conda/lib/python3*/site-packages/nvidia", os.ExpandEnv("$HOME/.local/lib/python3*/site-packages/nvidia"),
	} {
		found, _ := filepath.Glob(pattern)
		sort.Sort(sort.Reverse(sort.StringSlice(found)))
		for _, f := range found {
			dirs = append(dirs, filepath.Join(f, "cu13", "lib"), filepath.Join(f, "cuda_nvrtc", "lib"))
		}
	}
	for _, d := range dirs {
		for _, n := range names {
			if p := filepath.Join(d, n); fileExists(p) {
				out = append(out, p)
			}
		}
	}
	return out
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

func load() (*Library, error) {
	var tried []string
	for _, path := range candidates() {
		if strings.Contains(path, "/") {
			// NVRTC dlopens its builtins by name: load the one beside it.
			builtins, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "libnvrtc-builtins.so.*"))
			for _, b := range builtins {
				cb := C.CString(b)
				C.op2_nvrtc_preload(cb)
				C.free(unsafe.Pointer(cb))
			}
		}
		cp := C.CString(path)
		msg := C.op2_nvrtc_open(cp)
		C.free(unsafe.Pointer(cp))
		if msg != nil {
			tried = append(tried, fmt.Sprintf("%s: %s", path, C.GoString(msg)))
			continue
		}
		var major, minor C.int
		if r := C.op2_nvrtc_version(&major, &minor); r != 0 {
			return nil, fmt.Errorf("%w: nvrtcVersion from %s failed: %s", ErrUnavailable, path, errorString(r))
		}
		return &Library{Path: path, Major: int(major), Minor: int(minor)}, nil
	}
	return nil, fmt.Errorf("%w (%s); tried %s", ErrUnavailable, InstallHint, strings.Join(tried, "; "))
}

func errorString(r C.nvrtcResult) string {
	return fmt.Sprintf("%s (%d)", C.GoString(C.op2_nvrtc_error(r)), int(r))
}

// Version is the library's version as "major.minor".
func (l *Library) Version() string { return fmt.Sprintf("%d.%d", l.Major, l.Minor) }

// Archs lists the real GPU architectures (compute capability × 10, e.g.
// 80 and 90) the library compiles for.
func (l *Library) Archs() ([]int, error) {
	var buf [128]C.int
	var n C.int
	if r := C.op2_nvrtc_archs(&buf[0], C.int(len(buf)), &n); r != 0 {
		return nil, fmt.Errorf("nvrtcGetSupportedArchs: %s", errorString(r))
	}
	if int(n) > len(buf) {
		return nil, fmt.Errorf("nvrtcGetSupportedArchs: %d architectures", int(n))
	}
	out := make([]int, n)
	for i := range out {
		out[i] = int(buf[i])
	}
	return out, nil
}

// CompileError is a failed compilation: NVRTC's log names the lines.
type CompileError struct {
	Arch int
	Log  string
	Err  string // NVRTC's result
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("NVRTC (sm_%d): %s:\n%s", e.Arch, e.Err, strings.TrimRight(e.Log, "\n"))
}

// Compile compiles src (CUDA C++) into a CUBIN for the real architecture
// sm_<arch> with every function a device function by default; opts are
// more NVRTC options. It returns the code and NVRTC's log, which holds
// warnings even when compilation succeeds.
func (l *Library) Compile(src, name string, arch int, opts ...string) (cubin []byte, log string, err error) {
	all := append([]string{fmt.Sprintf("--gpu-architecture=sm_%d", arch), "--device-as-default-execution-space"}, opts...)
	copts := make([]*C.char, len(all))
	for i, o := range all {
		copts[i] = C.CString(o)
	}
	csrc, cname := C.CString(src), C.CString(name)
	defer func() {
		for _, o := range copts {
			C.free(unsafe.Pointer(o))
		}
		C.free(unsafe.Pointer(csrc))
		C.free(unsafe.Pointer(cname))
	}()
	var clog, ccubin *C.char
	var size C.size_t
	var stage C.int
	l.mu.Lock()
	r := C.op2_nvrtc_compile(csrc, cname, C.int(len(copts)), &copts[0], &clog, &ccubin, &size, &stage)
	l.mu.Unlock()
	if clog != nil {
		log = C.GoString(clog)
		C.free(unsafe.Pointer(clog))
	}
	if ccubin != nil {
		if r == 0 {
			cubin = C.GoBytes(unsafe.Pointer(ccubin), C.int(size))
		}
		C.free(unsafe.Pointer(ccubin))
	}
	if r != 0 {
		switch stage {
		case 0:
			return nil, log, fmt.Errorf("nvrtcCreateProgram: %s", errorString(r))
		case 2:
			return nil, log, fmt.Errorf("nvrtcGetCUBIN: %s", errorString(r))
		}
		return nil, log, &CompileError{Arch: arch, Log: log, Err: errorString(r)}
	}
	return cubin, log, nil
}
