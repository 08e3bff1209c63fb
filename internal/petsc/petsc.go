// Package petsc is GoOP2's binding to PETSc's linear solvers (KSP and
// PC) and the matrices and vectors they need, for op2.Solver's Package
// "petsc".
//
// Nothing of PETSc is needed to build GoOP2, not even its headers. Init
// opens the library at run time with dlopen: Debian's libpetsc-real3.18
// (apt-get install libpetsc-real3.18 libopenmpi-dev), another real
// double-precision PETSc 3.18 or later found by its usual names, or the
// library OP2_PETSC_LIBRARY names (a path or a soname). Complex and
// single-precision builds are refused (by their name, and by a check of
// PetscScalar's width once initialised); the width of PetscInt (4 or 8
// bytes) is read from the library with PetscDataTypeGetSize before it is
// initialised, and the shim is compiled for it.
//
// PETSc is built on MPI and needs an MPI communicator, whose
// representation only mpi.h knows, so the calls go through a small C shim
// compiled against mpi.h with the MPI compiler wrapper, like
// internal/ptscotch's, and run on internal/mpi's MPI thread
// (mpi.World.Do). MPI is initialised first (by internal/mpi, also in a
// program not started by a launcher: a world of one), so PETSc neither
// starts nor ends it. PETSc is initialised with -no_signal_handler (it
// would replace the Go run time's handlers) and with an error handler
// that returns the error code without printing: errors become Go errors
// carrying PETSc's message. Finalize ends PETSc before MPI ends.
//
// Every object lives on PETSC_COMM_WORLD (MPI_COMM_WORLD): creating one,
// assembling a matrix, solving and destroying are collective, and every
// rank must make the same calls in the same order.
package petsc

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

// op2petsc_open opens name; on failure it copies dlerror's message into
// err in the same call, since dlerror is per thread.
static void *op2petsc_open(const char *name, char *err, size_t n) {
	void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		snprintf(err, n, "%s", e ? e : "unknown dlopen error");
	}
	return h;
}
static void *op2petsc_sym(void *h, const char *name) { return dlsym(h, name); }
// op2petsc_file returns the path of the shared object that defines the
// symbol at addr, or NULL.
static const char *op2petsc_file(void *addr) {
	Dl_info info;
	if (dladdr(addr, &info) == 0) return NULL;
	return info.dli_fname;
}
static void op2petsc_close(void *h) { dlclose(h); }

// Calls of the library before it is initialised.
static int op2petsc_int_size(void *f, int type, size_t *size) { return ((int (*)(int, size_t *))f)(type, size); }
static int op2petsc_get_version(void *f, char *buf, size_t n) { return ((int (*)(char *, size_t))f)(buf, n); }

// Calls of the shim's entry points.
static int call_version(void *f) { return ((int (*)(void))f)(); }
static int call_init(void *f, void *const *t, int *failed) { return ((int (*)(void *const *, int *))f)(t, failed); }
static int call_finalize(void *f) { return ((int (*)(void))f)(); }
static void call_error(void *f, int rc, char *buf, int n) { ((void (*)(int, char *, int))f)(rc, buf, n); }
static int call_options(void *f, const char *prefix, const char *opts, int *failed) {
	return ((int (*)(const char *, const char *, int *))f)(prefix, opts, failed);
}
static int call_clear(void *f, const char *name, int *failed) { return ((int (*)(const char *, int *))f)(name, failed); }
static int call_left(void *f, const char *prefix, char *buf, int n, int *failed) { return ((int (*)(const char *, char *, int, int *))f)(prefix, buf, n, failed); }
static int call_mat_create(void *f, const char *prefix, long long n, long long N, int bs, const int32_t *rowptr,
		const int32_t *colidx, void **out, int *failed) {
	return ((int (*)(const char *, long long, long long, int, const int32_t *, const int32_t *, void **, int *))f)(
		prefix, n, N, bs, rowptr, colidx, out, failed);
}
static int call_mat_set(void *f, void *A, long long n, int bs, const int32_t *rowptr, const int32_t *colidx,
		const int64_t *gcol, long long rstart, const double *vals, int *failed) {
	return ((int (*)(void *, long long, int, const int32_t *, const int32_t *, const int64_t *, long long,
		const double *, int *))f)(A, n, bs, rowptr, colidx, gcol, rstart, vals, failed);
}
static int call_mat_info(void *f, void *A, double *info, int *failed) {
	return ((int (*)(void *, double *, int *))f)(A, info, failed);
}
static int call_mat_type(void *f, void *A, const char **type, int *failed) {
	return ((int (*)(void *, const char **, int *))f)(A, type, failed);
}
static int call_destroy1(void *f, void *A) { return ((int (*)(void *))f)(A); }
static int call_ksp_create(void *f, const char *prefix, void *A, long long n, long long N, int bs, const char *ksptype,
		const char *pctype, double rtol, double atol, long long maxits, int guess, int norm, void **ksp, void **x,
		void **b, int *failed) {
	return ((int (*)(const char *, void *, long long, long long, int, const char *, const char *, double, double,
		long long, int, int, void **, void **, void **, int *))f)(prefix, A, n, N, bs, ksptype, pctype, rtol, atol,
		maxits, guess, norm, ksp, x, b, failed);
}
static int call_ksp_solve(void *f, void *k, void *x, void *b, double *xa, const double *ba, long long *its,
		double *rnorm, int *reason, int *norm, int *failed) {
	return ((int (*)(void *, void *, void *, double *, const double *, long long *, double *, int *, int *, int *))f)(
		k, x, b, xa, ba, its, rnorm, reason, norm, failed);
}
static const char *call_reason_name(void *f, int reason) { return ((const char *(*)(int))f)(reason); }
static int call_ksp_types(void *f, void *k, const char **kt, const char **pt, int *failed) {
	return ((int (*)(void *, const char **, const char **, int *))f)(k, kt, pt, failed);
}
static int call_ksp_destroy(void *f, void *k, void *x, void *b) { return ((int (*)(void *, void *, void *))f)(k, x, b); }
*/
import "C"

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unsafe"

	"github.com/goop2/op2/internal/dynlib"
	"github.com/goop2/op2/internal/mpi"
	"github.com/goop2/op2/internal/sigstack"
)

// ErrUnavailable is wrapped by the errors that say PETSc cannot be loaded
// or initialised; their message says what to install.
var ErrUnavailable = errors.New("PETSc is not available")

// LibraryEnv names the environment variable that points GoOP2 at a PETSc
// library other than the system's.
const LibraryEnv = "OP2_PETSC_LIBRARY"

// Install is what the errors of a failed load advise.
const Install = "Debian: apt-get install libpetsc-real3.18 libopenmpi-dev; or point " + LibraryEnv + " at a real double-precision PETSc 3.18 or later"

// minMinor is the oldest PETSc 3 minor version the shim knows: the enum
// values it passes are those of 3.18 onwards.
const minMinor = 18

// library is a loaded PETSc.
type library struct {
	name     string         // what was asked for: OP2_PETSC_LIBRARY, or "" for the defaults
	path     string         // what was loaded
	version  string         // PetscGetVersion's, as "3.18.5"
	intBytes int            // sizeof(PetscInt)
	fns      unsafe.Pointer // C array of the symbols' addresses, in order
}

// shim is the compiled shim's entry points.
type shim struct {
	init, finalize, errmsg, options           unsafe.Pointer
	matCreate, matSet, matInfo, matType       unsafe.Pointer
	matDestroy, kspCreate, kspSolve, kspTypes unsafe.Pointer
	kspDestroy, reasonName, clear, left       unsafe.Pointer
}

var state = struct {
	sync.Mutex
	lib       dynlib.Once[library]
	sh        *shim
	w         *mpi.World
	initErr   error // a failed initialisation: PETSc cannot be initialised again
	finalized bool
}{lib: dynlib.Once[library]{What: "PETSc", Env: LibraryEnv, Unavailable: ErrUnavailable}}

// candidates are the libraries tried for name (OP2_PETSC_LIBRARY's value,
// or "" for the system's), newest first after Debian's.
func candidates(name string) []string {
	if name != "" {
		return []string{name}
	}
	c := []string{"libpetsc_real.so.3.18"}
	for minor := 30; minor > minMinor; minor-- {
		c = append(c, fmt.Sprintf("libpetsc_real.so.3.%d", minor))
	}
	// Debian's alternatives link (real or complex: checked), and the
	// names of a PETSc built from source.
	return append(c, "libpetsc_real.so", "libpetsc.so.3.18", "libpetsc.so")
}

// Load loads the PETSc library on this rank, without initialising it, and
// returns nil when it looks usable (real, double precision, a version the
// shim knows). A library once loaded stays loaded, and a failure is
// remembered, so later calls cost a look at the environment.
func Load() error {
	_, err := load()
	return err
}

func load() (*library, error) {
	name := os.Getenv(LibraryEnv)
	state.Lock()
	defer state.Unlock()
	return loadLocked(name)
}

func loadLocked(name string) (*library, error) {
	return state.lib.Load(name, func(name string) (*library, string, error) {
		l, err := open(name)
		if err != nil {
			return nil, "", err
		}
		return l, l.path, nil
	})
}

func open(name string) (*library, error) {
	var tried []string
	for _, c := range candidates(name) {
		if strings.Contains(filepath.Base(c), "complex") {
			return nil, fmt.Errorf("%w: %s is a complex build of PETSc; GoOP2 needs a real double-precision one (%s)", ErrUnavailable, c, Install)
		}
		cname := C.CString(c)
		var msg [512]C.char
		h := C.op2petsc_open(cname, &msg[0], C.size_t(len(msg)))
		C.free(unsafe.Pointer(cname))
		if h == nil {
			tried = append(tried, C.GoString(&msg[0]))
			continue
		}
		l, err := bind(c, name, h)
		if err != nil {
			C.op2petsc_close(h)
		}
		return l, err
	}
	what := "libpetsc_real.so.3.18"
	if name != "" {
		what = name
	}
	return nil, fmt.Errorf("%w: loading %s failed (%s): %s", ErrUnavailable, what, Install, strings.Join(tried, "; "))
}

var versionRE = regexp.MustCompile(`(\d+)\.(\d+)\.(\d+)`)

// bind looks up the symbols in the library h, opened as path, and
// checks its version and index width.
func bind(path, name string, h unsafe.Pointer) (*library, error) {
	fns := (*[1 << 20]unsafe.Pointer)(C.calloc(C.size_t(len(symbols)), C.size_t(unsafe.Sizeof(uintptr(0)))))[:len(symbols):len(symbols)]
	var missing []string
	for i, s := range symbols {
		cs := C.CString(s)
		fns[i] = C.op2petsc_sym(h, cs)
		C.free(unsafe.Pointer(cs))
		if fns[i] == nil {
			missing = append(missing, s)
		}
	}
	fail := func(err error) (*library, error) {
		C.free(unsafe.Pointer(&fns[0]))
		return nil, err
	}
	if len(missing) > 0 {
		return fail(fmt.Errorf("%w: %s lacks %s: GoOP2 needs PETSc 3.%d or later (%s)", ErrUnavailable, path, strings.Join(missing, ", "), minMinor, Install))
	}
	// The file loaded, through links (Debian's libpetsc.so.3.18 is an
	// alternative, real or complex).
	if f := C.op2petsc_file(fns[0]); f != nil {
		file := C.GoString(f)
		if real, err := filepath.EvalSymlinks(file); err == nil {
			file = real
		}
		if strings.Contains(filepath.Base(file), "complex") {
			return fail(fmt.Errorf("%w: %s is a complex build of PETSc (%s); GoOP2 needs a real double-precision one (%s)", ErrUnavailable, path, file, Install))
		}
		path = file
	}
	var buf [256]C.char
	if rc := C.op2petsc_get_version(fns[symbolIndex("PetscGetVersion")], &buf[0], C.size_t(len(buf))); rc != 0 {
		return fail(fmt.Errorf("%w: %s: PetscGetVersion failed (PETSc error code %d)", ErrUnavailable, path, int(rc)))
	}
	full := C.GoString(&buf[0])
	m := versionRE.FindStringSubmatch(full)
	if m == nil {
		return fail(fmt.Errorf("%w: %s: no version number in PetscGetVersion's %q", ErrUnavailable, path, full))
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	if major != 3 || minor < minMinor {
		return fail(fmt.Errorf("%w: %s is PETSc %s; GoOP2 needs 3.%d or later, with 3.x's enum values (%s)", ErrUnavailable, path, m[0], minMinor, Install))
	}
	var size C.size_t
	if rc := C.op2petsc_int_size(fns[symbolIndex("PetscDataTypeGetSize")], petscInt, &size); rc != 0 {
		return fail(fmt.Errorf("%w: %s: PetscDataTypeGetSize(PETSC_INT) failed (PETSc error code %d)", ErrUnavailable, path, int(rc)))
	}
	if size != 4 && size != 8 {
		return fail(fmt.Errorf("%w: %s (PETSc %s) has a PetscInt of %d bytes; GoOP2 handles 4 and 8", ErrUnavailable, path, m[0], int(size)))
	}
	return &library{name: name, path: path, version: m[0], intBytes: int(size), fns: unsafe.Pointer(&fns[0])}, nil
}

// Version is the loaded library's version ("3.18.5") and path, or
// empty strings when none is loaded.
func Version() (version, path string) {
	state.Lock()
	defer state.Unlock()
	l := state.lib.Loaded()
	if l == nil {
		return "", ""
	}
	return l.version, l.path
}

// IntBytes is the loaded library's sizeof(PetscInt), or 0.
func IntBytes() int {
	state.Lock()
	defer state.Unlock()
	l := state.lib.Loaded()
	if l == nil {
		return 0
	}
	return l.intBytes
}

// Init loads PETSc, builds the shim with w's MPI compiler wrapper and
// initialises PETSc on w's thread, once per process (w is the process's
// MPI world, initialised). Later calls return nil, or the error of the
// first; after Finalize they fail.
func Init(w *mpi.World) error {
	state.Lock()
	defer state.Unlock()
	if state.finalized {
		return fmt.Errorf("%w: PETSc was finalised (op2.Finalize) and cannot start again", ErrUnavailable)
	}
	if state.w != nil {
		return nil
	}
	if state.initErr != nil {
		return state.initErr
	}
	l, err := loadLocked(os.Getenv(LibraryEnv))
	if err != nil {
		return err
	}
	if state.sh == nil {
		sh, err := buildShim(w, l)
		if err != nil {
			return err
		}
		state.sh = sh
	}
	var rc, failed C.int
	w.Do(func() { rc = C.call_init(state.sh.init, (*unsafe.Pointer)(l.fns), &failed) })
	// -no_signal_handler keeps PETSc's handlers out; what its
	// dependencies install when they start must run on the alternate
	// stack.
	sigstack.Repair()
	switch {
	case rc == 0:
		state.w = w
		return nil
	case failed == -1:
		state.initErr = fmt.Errorf("%w: %s (PETSc %s) is not a real double-precision build (its PetscScalar is not a double); GoOP2 needs one (%s)", ErrUnavailable, l.path, l.version, Install)
	default:
		state.initErr = fmt.Errorf("%w: initialising %s (PETSc %s): %v", ErrUnavailable, l.path, l.version, callError(state.sh, symbols[failed], rc))
	}
	return state.initErr
}

// callError is the error of PETSc function fn failing with code rc. Only
// inside w.Do (the message is read from PETSc through sh).
func callError(sh *shim, fn string, rc C.int) error {
	if rc == -2 {
		return fmt.Errorf("%s: out of memory", fn)
	}
	var buf [1024]C.char
	C.call_error(sh.errmsg, rc, &buf[0], C.int(len(buf)))
	msg := strings.TrimSpace(C.GoString(&buf[0]))
	if msg == "" {
		msg = "no message"
	}
	return fmt.Errorf("%s: %s (PETSc error code %d)", fn, msg, int(rc))
}

// failure returns the error of a shim call that returned rc with failed
// the index of the function that failed (-1: an allocation). Only inside
// w.Do.
func failure(sh *shim, rc, failed C.int) error {
	if failed < 0 || int(failed) >= len(symbols) {
		return callError(sh, "the GoOP2 shim", rc)
	}
	return callError(sh, symbols[failed], rc)
}

// buildShim compiles (or finds in the cache) the shim for l with w's MPI
// compiler wrapper.
func buildShim(w *mpi.World, l *library) (*shim, error) {
	names := []string{"op2petsc_version", "op2petsc_init", "op2petsc_finalize", "op2petsc_error", "op2petsc_options",
		"op2petsc_mat_create", "op2petsc_mat_set", "op2petsc_mat_info", "op2petsc_mat_type", "op2petsc_mat_destroy",
		"op2petsc_ksp_create", "op2petsc_ksp_solve", "op2petsc_ksp_types", "op2petsc_ksp_destroy", "op2petsc_reason_name", "op2petsc_clear",
		"op2petsc_left"}
	jl, err := w.Build(shimSource(l.intBytes), names)
	if err != nil {
		return nil, fmt.Errorf("%w: building GoOP2's PETSc shim with the MPI compiler wrapper failed (Debian: apt-get install libopenmpi-dev): %v", ErrUnavailable, err)
	}
	p := make([]unsafe.Pointer, len(names))
	for i, n := range names {
		if p[i], err = jl.Symbol(n); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
	}
	if got := int(C.call_version(p[0])); got != shimVersion {
		return nil, fmt.Errorf("%w: the PETSc shim has version %d, want %d", ErrUnavailable, got, shimVersion)
	}
	keep = append(keep, jl)
	return &shim{init: p[1], finalize: p[2], errmsg: p[3], options: p[4], matCreate: p[5], matSet: p[6], matInfo: p[7],
		matType: p[8], matDestroy: p[9], kspCreate: p[10], kspSolve: p[11], kspTypes: p[12], kspDestroy: p[13], reasonName: p[14], clear: p[15], left: p[16]}, nil
}

// keep holds the shim's library for the life of the process.
var keep []any

// Initialized reports whether PETSc is initialised (and not finalised).
func Initialized() bool {
	state.Lock()
	defer state.Unlock()
	return state.w != nil && !state.finalized
}

// Finalize ends PETSc (collectively) if Init started it; MPI is the
// caller's to end afterwards. Nothing of this package may be used
// afterwards.
func Finalize() error {
	state.Lock()
	defer state.Unlock()
	if state.w == nil || state.finalized {
		return nil
	}
	state.finalized = true
	var rc C.int
	var err error
	state.w.Do(func() {
		if rc = C.call_finalize(state.sh.finalize); rc != 0 {
			err = fmt.Errorf("petsc: %w", callError(state.sh, "PetscFinalize", rc))
		}
	})
	return err
}

// ready returns the world PETSc runs on, or an error when it is not
// initialised.
func ready() (*mpi.World, *shim, error) {
	state.Lock()
	defer state.Unlock()
	switch {
	case state.finalized:
		return nil, nil, fmt.Errorf("%w: PETSc was finalised", ErrUnavailable)
	case state.w == nil:
		return nil, nil, fmt.Errorf("%w: PETSc is not initialised (petsc.Init)", ErrUnavailable)
	}
	return state.w, state.sh, nil
}

// cstr returns s as C memory, and its release.
func cstr(s string) (*C.char, func()) {
	c := C.CString(s)
	return c, func() { C.free(unsafe.Pointer(c)) }
}

// SetOptions inserts options, in PETSc's command-line syntax ("-ksp_type
// gmres -pc_type gamg"), into PETSc's options database with every name
// under prefix ("op2_1_": -op2_1_ksp_type gmres), so that only the
// objects with that prefix see them.
func SetOptions(prefix, options string) error {
	w, sh, err := ready()
	if err != nil {
		return err
	}
	p, freep := cstr(prefix)
	defer freep()
	o, freeo := cstr(options)
	defer freeo()
	w.Do(func() {
		var failed C.int
		if rc := C.call_options(sh.options, p, o, &failed); rc != 0 {
			err = fmt.Errorf("petsc: options %q: %w", options, failure(sh, rc, failed))
		}
	})
	return err
}

// optionNames returns the names in options, PETSc's command-line
// syntax: the words -letters... (not values such as -1e-8 or -.5).
func optionNames(options string) []string {
	var names []string
	for _, f := range strings.Fields(options) {
		if len(f) >= 2 && f[0] == '-' && (f[1] == '_' || unicode.IsLetter(rune(f[1]))) {
			names = append(names, f)
		}
	}
	return names
}

// UnusedOptions returns the names of the options under prefix that no
// PETSc object has looked up, without the prefix ("-ksp_typ"): names
// PETSc does not know (misspelt), or that no object of the solver's
// kinds reads; options a file named by -options_file put there too.
func UnusedOptions(prefix string) ([]string, error) {
	w, sh, err := ready()
	if err != nil {
		return nil, err
	}
	p, freep := cstr(prefix)
	defer freep()
	buf := make([]byte, 4096)
	w.Do(func() {
		var failed C.int
		if rc := C.call_left(sh.left, p, (*C.char)(unsafe.Pointer(&buf[0])), C.int(len(buf)), &failed); rc != 0 {
			err = fmt.Errorf("petsc: listing the options under %s no object used: %w", prefix, failure(sh, rc, failed))
		}
	})
	if err != nil {
		return nil, err
	}
	n := bytes.IndexByte(buf, 0)
	return strings.Fields(string(buf[:n])), nil
}

// ClearOptions removes from PETSc's options database what SetOptions
// inserted with the same prefix and options: every name of options under
// prefix. PETSc's database holds 512 options at most, so that a program
// making solver after solver, each with its options, would run out.
func ClearOptions(prefix, options string) error {
	w, sh, err := ready()
	if err != nil {
		return err
	}
	for _, f := range optionNames(options) {
		name, free := cstr("-" + prefix + f[1:])
		w.Do(func() {
			var failed C.int
			if rc := C.call_clear(sh.clear, name, &failed); rc != 0 {
				err = errors.Join(err, fmt.Errorf("petsc: clearing option %s%s: %w", prefix, f, failure(sh, rc, failed)))
			}
		})
		free()
	}
	return err
}

// Mat is a square PETSc matrix (AIJ unless its options choose another
// type) of bs×bs blocks on a fixed pattern: each rank holds a contiguous
// range of block rows.
type Mat struct {
	h      unsafe.Pointer
	n      int // this rank's block rows
	bs     int
	rowptr []int32
	colidx []int32
	gcol   []int64 // global block column of each local column
	rstart int64   // global number of this rank's first block row
}

// NewMat creates (collectively) the matrix of this rank's n =
// len(rowptr)-1 block rows of a square matrix of N block rows, each block
// bs×bs, on the pattern rowptr/colidx in local block columns: columns
// below n are this rank's rows in order, the others elements held from
// other ranks; gcol gives every local column's global block number (for
// c < n, rstart+c). The options under prefix apply (its type, say
// -<prefix>mat_type baij). The preallocation is exact: no allocation
// when values are set.
func NewMat(prefix string, bs int, rowptr, colidx []int32, gcol []int64, rstart, N int64) (*Mat, error) {
	w, sh, err := ready()
	if err != nil {
		return nil, err
	}
	n := len(rowptr) - 1
	if n < 0 || bs < 1 {
		return nil, fmt.Errorf("petsc: NewMat: %d block rows of %d×%d", n, bs, bs)
	}
	for k, c := range colidx {
		if c < 0 || int(c) >= len(gcol) || gcol[c] < 0 || gcol[c] >= N {
			return nil, fmt.Errorf("petsc: NewMat: column index %d (entry %d) has no global number in [0, %d)", c, k, N)
		}
	}
	m := &Mat{n: n, bs: bs, rowptr: rowptr, colidx: colidx, gcol: gcol, rstart: rstart}
	p, freep := cstr(prefix)
	defer freep()
	rp, ci := ptr(rowptr), ptr(colidx)
	w.Do(func() {
		var failed C.int
		if rc := C.call_mat_create(sh.matCreate, p, C.longlong(n), C.longlong(N), C.int(bs), (*C.int32_t)(rp), (*C.int32_t)(ci), &m.h, &failed); rc != 0 {
			err = fmt.Errorf("petsc: creating the matrix: %w", failure(sh, rc, failed))
		}
	})
	runtime.KeepAlive(rowptr)
	runtime.KeepAlive(colidx)
	if err != nil {
		return nil, err
	}
	// The values set are both triangles, preallocated so: a symmetric
	// type (sbaij), which stores one, would refuse them at the first
	// solve. The options are the same on every rank, and so the type.
	t, err := m.Type()
	if err == nil && strings.Contains(t, "sbaij") {
		err = fmt.Errorf("petsc: matrix type %s (-mat_type) is not supported: GoOP2 gives PETSc both triangles of the matrix; use aij or baij (a Cholesky factorisation, -pc_type cholesky, works on them)", t)
	}
	if err != nil {
		return nil, errors.Join(err, m.Destroy())
	}
	return m, nil
}

// ptr returns the address of s's first element, or of a zero when s is
// empty.
func ptr[T any](s []T) unsafe.Pointer {
	if len(s) == 0 {
		var z [8]byte
		return unsafe.Pointer(&z[0])
	}
	return unsafe.Pointer(&s[0])
}

// SetValues replaces the matrix's values (collectively) with vals: the
// blocks in the pattern's order, each bs×bs row-major, and assembles it.
func (m *Mat) SetValues(vals []float64) error {
	w, sh, err := ready()
	if err != nil {
		return err
	}
	if want := len(m.colidx) * m.bs * m.bs; len(vals) != want {
		return fmt.Errorf("petsc: Mat.SetValues: %d values, want %d", len(vals), want)
	}
	rp, ci, gc, v := ptr(m.rowptr), ptr(m.colidx), ptr(m.gcol), ptr(vals)
	w.Do(func() {
		var failed C.int
		if rc := C.call_mat_set(sh.matSet, m.h, C.longlong(m.n), C.int(m.bs), (*C.int32_t)(rp), (*C.int32_t)(ci),
			(*C.int64_t)(gc), C.longlong(m.rstart), (*C.double)(v), &failed); rc != 0 {
			err = fmt.Errorf("petsc: setting the matrix's values: %w", failure(sh, rc, failed))
		}
	})
	runtime.KeepAlive(vals)
	runtime.KeepAlive(m)
	return err
}

// MatInfo is what PETSc's MatGetInfo says of this rank's part of a
// matrix.
type MatInfo struct {
	NonzerosAllocated, NonzerosUsed, NonzerosUnneeded float64
	Mallocs                                           float64 // allocations made while values were set
}

// Info is MatGetInfo(MAT_LOCAL).
func (m *Mat) Info() (MatInfo, error) {
	w, sh, err := ready()
	if err != nil {
		return MatInfo{}, err
	}
	var info [10]C.double // MatInfo: block_size, nz_allocated, nz_used, nz_unneeded, memory, assemblies, mallocs, ...
	w.Do(func() {
		var failed C.int
		if rc := C.call_mat_info(sh.matInfo, m.h, &info[0], &failed); rc != 0 {
			err = fmt.Errorf("petsc: %w", failure(sh, rc, failed))
		}
	})
	return MatInfo{NonzerosAllocated: float64(info[1]), NonzerosUsed: float64(info[2]), NonzerosUnneeded: float64(info[3]), Mallocs: float64(info[6])}, err
}

// Type is the matrix's PETSc type ("seqaij", "mpiaij", "mpibaij"...).
func (m *Mat) Type() (string, error) {
	w, sh, err := ready()
	if err != nil {
		return "", err
	}
	var t *C.char
	w.Do(func() {
		var failed C.int
		if rc := C.call_mat_type(sh.matType, m.h, &t, &failed); rc != 0 {
			err = fmt.Errorf("petsc: %w", failure(sh, rc, failed))
		}
	})
	if err != nil {
		return "", err
	}
	return C.GoString(t), nil
}

// finalized reports whether Finalize ended PETSc (and with it what
// Destroy would free).
func finalized() bool {
	state.Lock()
	defer state.Unlock()
	return state.finalized
}

// Destroy frees the matrix (collectively); after Finalize it does
// nothing.
func (m *Mat) Destroy() error {
	if finalized() {
		m.h = nil
	}
	if m.h == nil {
		return nil
	}
	w, sh, err := ready()
	if err != nil {
		return err
	}
	w.Do(func() {
		if rc := C.call_destroy1(sh.matDestroy, m.h); rc != 0 {
			err = fmt.Errorf("petsc: %w", callError(sh, "MatDestroy", rc))
		}
	})
	m.h = nil
	return err
}

// NormType is the norm of the residual a KSP's convergence test
// measures (PETSc's KSPNormType), in the order of op2.NormType.
type NormType int

// The norms; NormDefault leaves the KSP type's own choice.
const (
	NormDefault          NormType = iota // KSP_NORM_DEFAULT
	NormPreconditioned                   // KSP_NORM_PRECONDITIONED
	NormUnpreconditioned                 // KSP_NORM_UNPRECONDITIONED
	NormNatural                          // KSP_NORM_NATURAL
	NormNone                             // KSP_NORM_NONE
)

// kspNorm holds PETSc's KSPNormType values, by NormType.
var kspNorm = [...]C.int{NormDefault: -1, NormPreconditioned: 1, NormUnpreconditioned: 2, NormNatural: 3, NormNone: 0}

// String is the norm's name in PETSc's options (-ksp_norm_type).
func (n NormType) String() string {
	switch n {
	case NormDefault:
		return "default"
	case NormPreconditioned:
		return "preconditioned"
	case NormUnpreconditioned:
		return "unpreconditioned"
	case NormNatural:
		return "natural"
	case NormNone:
		return "none"
	}
	return fmt.Sprintf("NormType(%d)", int(n))
}

// normOf returns the NormType of PETSc's KSPNormType value v.
func normOf(v C.int) NormType {
	for n, k := range kspNorm {
		if k == v {
			return NormType(n)
		}
	}
	return NormType(-1)
}

// KSPConfig is how NewKSP sets a solver up before its options apply.
type KSPConfig struct {
	Prefix  string  // the options prefix of the solver (and its preconditioner)
	KSPType string  // "cg", "bcgs", "gmres"...; "" leaves PETSc's default
	PCType  string  // "jacobi", "none", "gamg"...; "" leaves PETSc's default
	RTol    float64 // relative tolerance
	ATol    float64 // absolute tolerance
	MaxIts  int     // iterations at most
	// Norm is the norm the convergence test measures (KSPSetNormType;
	// NormDefault leaves the KSP type's default).
	Norm NormType
	// InitialGuessNonzero makes solves start from x's values
	// (KSPSetInitialGuessNonzero); without it they start from zero.
	InitialGuessNonzero bool
}

// KSP is a PETSc Krylov solver of systems with one matrix, with the
// vectors of its solutions and right-hand sides.
type KSP struct {
	h, x, b unsafe.Pointer
	n       int // values of this rank
}

// NewKSP creates (collectively) a solver of A x = b set up by c, then by
// the options under c.Prefix.
func NewKSP(A *Mat, N int64, c KSPConfig) (*KSP, error) {
	w, sh, err := ready()
	if err != nil {
		return nil, err
	}
	if c.Norm < 0 || int(c.Norm) >= len(kspNorm) {
		return nil, fmt.Errorf("petsc: NewKSP: norm type %d", int(c.Norm))
	}
	guess := C.int(0)
	if c.InitialGuessNonzero {
		guess = 1
	}
	p, freep := cstr(c.Prefix)
	defer freep()
	kt, freek := cstr(c.KSPType)
	defer freek()
	pt, freept := cstr(c.PCType)
	defer freept()
	k := &KSP{n: A.n * A.bs}
	w.Do(func() {
		var failed C.int
		if rc := C.call_ksp_create(sh.kspCreate, p, A.h, C.longlong(A.n), C.longlong(N), C.int(A.bs), kt, pt,
			C.double(c.RTol), C.double(c.ATol), C.longlong(c.MaxIts), guess, kspNorm[c.Norm], &k.h, &k.x, &k.b, &failed); rc != 0 {
			err = fmt.Errorf("petsc: creating the solver: %w", failure(sh, rc, failed))
		}
	})
	if err != nil {
		return nil, err
	}
	return k, nil
}

// Result is how a solve ended.
type Result struct {
	Iterations int
	Residual   float64  // the norm PETSc's convergence test measured
	Norm       NormType // which norm that was (never NormDefault)
	Reason     int      // KSPConvergedReason: > 0 converged, < 0 diverged
	ReasonName string   // its name: "CONVERGED_RTOL", "DIVERGED_ITS"...
}

// Solve solves (collectively) A x = b with this rank's values of x and
// b, starting from x's values with KSPConfig.InitialGuessNonzero, else
// from zero; PETSc holds the slices only during the call. A diverged
// solve is not an error here: Result.Reason says it.
func (k *KSP) Solve(x, b []float64) (Result, error) {
	w, sh, err := ready()
	if err != nil {
		return Result{}, err
	}
	if len(x) != k.n || len(b) != k.n {
		return Result{}, fmt.Errorf("petsc: KSP.Solve: x has %d values and b %d, want %d", len(x), len(b), k.n)
	}
	var its C.longlong
	var rnorm C.double
	var reason, norm C.int
	var name string
	xa, ba := ptr(x), ptr(b)
	w.Do(func() {
		var failed C.int
		if rc := C.call_ksp_solve(sh.kspSolve, k.h, k.x, k.b, (*C.double)(xa), (*C.double)(ba), &its, &rnorm, &reason, &norm, &failed); rc != 0 {
			err = fmt.Errorf("petsc: %w", failure(sh, rc, failed))
			return
		}
		name = C.GoString(C.call_reason_name(sh.reasonName, reason))
	})
	runtime.KeepAlive(x)
	runtime.KeepAlive(b)
	return Result{Iterations: int(its), Residual: float64(rnorm), Norm: normOf(norm), Reason: int(reason), ReasonName: name}, err
}

// Types returns the solver's KSP and PC types, as its options left them.
func (k *KSP) Types() (ksp, pc string, err error) {
	w, sh, err := ready()
	if err != nil {
		return "", "", err
	}
	var kt, pt *C.char
	w.Do(func() {
		var failed C.int
		if rc := C.call_ksp_types(sh.kspTypes, k.h, &kt, &pt, &failed); rc != 0 {
			err = fmt.Errorf("petsc: %w", failure(sh, rc, failed))
			return
		}
		ksp, pc = C.GoString(kt), C.GoString(pt)
	})
	return ksp, pc, err
}

// Destroy frees the solver and its vectors (collectively); after
// Finalize it does nothing.
func (k *KSP) Destroy() error {
	if finalized() {
		k.h = nil
	}
	if k.h == nil {
		return nil
	}
	w, sh, err := ready()
	if err != nil {
		return err
	}
	w.Do(func() {
		if rc := C.call_ksp_destroy(sh.kspDestroy, k.h, k.x, k.b); rc != 0 {
			err = fmt.Errorf("petsc: %w", callError(sh, "KSPDestroy", rc))
		}
	})
	k.h, k.x, k.b = nil, nil, nil
	return err
}
