// Package cgns is a small binding to the CGNS mid-level library (libcgns
// 3.4 or later), loaded at run time with dlopen so that nothing of CGNS is
// needed to build GoOP2 or to run programs that do not read CGNS files. It
// covers what package mesh/cgns uses: opening a file, its bases and
// zones, coordinates and element sections (whole or a range of them),
// boundary conditions, families and
// family names, and writing a flow solution's fields.
//
// The width of cgsize_t (4 bytes in Debian's legacy build, 8 in a 64-bit
// build) is not told by the library: it is found on the first zone read,
// whose three sizes a 4-byte build writes into 12 bytes only (see
// File.ZoneRead). Every other call that passes cgsize_t values uses that
// width; they are int64 on the Go side.
//
// The library is not thread-safe: every call holds one lock. Errors carry
// cg_get_error's message.
package cgns

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void *cglib;
static int (*p_cg_is_cgns)(const char *, int *);
static int (*p_cg_open)(const char *, int, int *);
static int (*p_cg_close)(int);
static const char *(*p_cg_get_error)(void);
static int (*p_cg_nbases)(int, int *);
static int (*p_cg_base_read)(int, int, char *, int *, int *);
static int (*p_cg_nzones)(int, int, int *);
static int (*p_cg_zone_type)(int, int, int, int *);
static int (*p_cg_zone_read)(int, int, int, char *, void *);
static int (*p_cg_ncoords)(int, int, int, int *);
static int (*p_cg_coord_info)(int, int, int, int, int *, char *);
static int (*p_cg_coord_read)(int, int, int, const char *, int, const void *, const void *, void *);
static int (*p_cg_nsections)(int, int, int, int *);
static int (*p_cg_section_read)(int, int, int, int, char *, int *, void *, void *, int *, int *);
static int (*p_cg_ElementDataSize)(int, int, int, int, void *);
static int (*p_cg_elements_read)(int, int, int, int, void *, void *);
static int (*p_cg_poly_elements_read)(int, int, int, int, void *, void *, void *);
static void *p_cg_elements_partial_read; // cgsize_t start, end by value: called through a type per width
static int (*p_cg_get_cgio)(int, int *);
static int (*p_cg_root_id)(int, double *);
static int (*p_cgio_get_node_id)(int, double, const char *, double *);
static int (*p_cgio_get_data_type)(int, double, char *);
static int (*p_cgio_get_dimensions)(int, double, int *, void *);
static int (*p_cgio_error_message)(char *);
static void *p_cgio_read_block_data; // cgsize_t b_start, b_end by value: called through a type per width
static int (*p_cg_npe)(int, int *);
static int (*p_cg_nbocos)(int, int, int, int *);
static int (*p_cg_boco_info)(int, int, int, int, char *, int *, int *, void *, int *, void *, int *, int *);
static int (*p_cg_boco_read)(int, int, int, int, void *, void *);
static int (*p_cg_boco_gridlocation_read)(int, int, int, int, int *);
static int (*p_cg_nfamilies)(int, int, int *);
static int (*p_cg_family_read)(int, int, int, char *, int *, int *);
static int (*p_cg_goto)(int, int, ...);
static int (*p_cg_famname_read)(char *);
static int (*p_cg_nsols)(int, int, int, int *);
static int (*p_cg_sol_info)(int, int, int, int, char *, int *);
static int (*p_cg_sol_write)(int, int, int, const char *, int, int *);
static int (*p_cg_field_write)(int, int, int, int, int, const char *, const void *, int *);
static int (*p_cg_field_read)(int, int, int, int, const char *, int, const void *, const void *, void *);
static const char *(*p_cg_ElementTypeName)(int);
static int (*p_cg_family_write)(int, int, const char *, int *);
static int (*p_cg_famname_write)(const char *);
static void *p_cg_boco_write; // cgsize_t npnts by value: called through a type per width

#define LOAD(name) if (!(p_##name = dlsym(h, #name))) { *missing = #name; dlclose(h); return NULL; }

// op2cg_load opens the library and resolves every entry point. It
// returns NULL on success; else dlopen's message, or NULL with *missing
// set to the first symbol the library lacks.
static const char *op2cg_load(const char *path, const char **missing) {
	*missing = NULL;
	if (cglib) return NULL;
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) return dlerror();
	LOAD(cg_is_cgns) LOAD(cg_open) LOAD(cg_close) LOAD(cg_get_error)
	LOAD(cg_nbases) LOAD(cg_base_read) LOAD(cg_nzones) LOAD(cg_zone_type) LOAD(cg_zone_read)
	LOAD(cg_ncoords) LOAD(cg_coord_info) LOAD(cg_coord_read)
	LOAD(cg_nsections) LOAD(cg_section_read) LOAD(cg_ElementDataSize) LOAD(cg_elements_read)
	LOAD(cg_poly_elements_read) LOAD(cg_npe)
	LOAD(cg_elements_partial_read)
	LOAD(cg_get_cgio) LOAD(cg_root_id) LOAD(cgio_get_node_id) LOAD(cgio_get_data_type) LOAD(cgio_get_dimensions)
	LOAD(cgio_error_message) LOAD(cgio_read_block_data)
	LOAD(cg_nbocos) LOAD(cg_boco_info) LOAD(cg_boco_read) LOAD(cg_boco_gridlocation_read)
	LOAD(cg_nfamilies) LOAD(cg_family_read) LOAD(cg_goto) LOAD(cg_famname_read)
	LOAD(cg_nsols) LOAD(cg_sol_info) LOAD(cg_sol_write) LOAD(cg_field_write) LOAD(cg_field_read) LOAD(cg_ElementTypeName)
	LOAD(cg_family_write) LOAD(cg_famname_write) LOAD(cg_boco_write)
	cglib = h;
	return NULL;
}

static int op2cg_is_cgns(const char *p, int *t) { return p_cg_is_cgns(p, t); }
static int op2cg_open(const char *p, int mode, int *fn) { return p_cg_open(p, mode, fn); }
static int op2cg_close(int fn) { return p_cg_close(fn); }
static const char *op2cg_error(void) { return p_cg_get_error(); }
static int op2cg_nbases(int fn, int *n) { return p_cg_nbases(fn, n); }
static int op2cg_base_read(int fn, int B, char *name, int *cd, int *pd) { return p_cg_base_read(fn, B, name, cd, pd); }
static int op2cg_nzones(int fn, int B, int *n) { return p_cg_nzones(fn, B, n); }
static int op2cg_zone_type(int fn, int B, int Z, int *t) { return p_cg_zone_type(fn, B, Z, t); }
static int op2cg_zone_read(int fn, int B, int Z, char *name, void *size) { return p_cg_zone_read(fn, B, Z, name, size); }
static int op2cg_ncoords(int fn, int B, int Z, int *n) { return p_cg_ncoords(fn, B, Z, n); }
static int op2cg_coord_info(int fn, int B, int Z, int C, int *t, char *name) { return p_cg_coord_info(fn, B, Z, C, t, name); }
static int op2cg_coord_read(int fn, int B, int Z, const char *name, const void *rmin, const void *rmax, double *x) {
	return p_cg_coord_read(fn, B, Z, name, 4, rmin, rmax, x); // RealDouble
}
static int op2cg_nsections(int fn, int B, int Z, int *n) { return p_cg_nsections(fn, B, Z, n); }
static int op2cg_section_read(int fn, int B, int Z, int S, char *name, int *t, void *start, void *end, int *nb, int *pf) {
	return p_cg_section_read(fn, B, Z, S, name, t, start, end, nb, pf);
}
static int op2cg_data_size(int fn, int B, int Z, int S, void *n) { return p_cg_ElementDataSize(fn, B, Z, S, n); }
static int op2cg_elements_read(int fn, int B, int Z, int S, void *e) { return p_cg_elements_read(fn, B, Z, S, e, NULL); }
static int op2cg_poly_elements_read(int fn, int B, int Z, int S, void *e, void *off) {
	return p_cg_poly_elements_read(fn, B, Z, S, e, off, NULL);
}
// op2cg_coord_range reads coordinate name of vertices lo to hi (from 1).
static int op2cg_coord_range(int fn, int B, int Z, const char *name, long long lo, long long hi, int width, double *x) {
	int32_t l32 = (int32_t)lo, h32 = (int32_t)hi;
	int64_t l64 = lo, h64 = hi;
	if (width == 4) return p_cg_coord_read(fn, B, Z, name, 4, &l32, &h32, x);
	return p_cg_coord_read(fn, B, Z, name, 4, &l64, &h64, x);
}
static int op2cg_elements_partial_read(int fn, int B, int Z, int S, long long start, long long end, int width, void *e) {
	if (width == 4)
		return ((int (*)(int, int, int, int, int32_t, int32_t, void *, void *))p_cg_elements_partial_read)(fn, B, Z, S, (int32_t)start, (int32_t)end, e, NULL);
	return ((int (*)(int, int, int, int, int64_t, int64_t, void *, void *))p_cg_elements_partial_read)(fn, B, Z, S, (int64_t)start, (int64_t)end, e, NULL);
}
// op2cg_array_node finds the node at path (from the file's root) through
// the file's cgio handle and returns its data type (2 characters and a
// NUL) and its length, of which one dimension at most is above 1. It
// returns 0, or -1 with msg (80 characters and a NUL) set to cgio's
// message, or -2 for an array of several dimensions above 1.
static int op2cg_array_node(int fn, const char *path, int width, int *cgio, double *id, char *type, long long *n, char *msg) {
	double root;
	int nd = 0;
	int64_t dims[12];
	if (p_cg_get_cgio(fn, cgio) || p_cg_root_id(fn, &root)) { strcpy(msg, p_cg_get_error()); return -1; }
	if (p_cgio_get_node_id(*cgio, root, path, id) || p_cgio_get_data_type(*cgio, *id, type) || p_cgio_get_dimensions(*cgio, *id, &nd, dims)) {
		p_cgio_error_message(msg);
		return -1;
	}
	*n = 1;
	int big = 0;
	for (int i = 0; i < nd && i < 12; i++) {
		long long d = width == 4 ? (long long)((int32_t *)dims)[i] : (long long)dims[i];
		if (d > 1) big++;
		*n *= d;
	}
	if (nd < 1 || nd > 12 || big > 1) return -2;
	return 0;
}
// op2cg_read_block reads values lo to hi (from 1) of the 1-D array node
// id, in its own type; -1 with msg set on failure.
static int op2cg_read_block(int cgio, double id, long long lo, long long hi, int width, void *data, char *msg) {
	int rc = width == 4
		? ((int (*)(int, double, int32_t, int32_t, void *))p_cgio_read_block_data)(cgio, id, (int32_t)lo, (int32_t)hi, data)
		: ((int (*)(int, double, int64_t, int64_t, void *))p_cgio_read_block_data)(cgio, id, (int64_t)lo, (int64_t)hi, data);
	if (rc) { p_cgio_error_message(msg); return -1; }
	return 0;
}
static int op2cg_npe(int t, int *n) { return p_cg_npe(t, n); }
static int op2cg_nbocos(int fn, int B, int Z, int *n) { return p_cg_nbocos(fn, B, Z, n); }
static int op2cg_boco_info(int fn, int B, int Z, int BC, char *name, int *type, int *pst, void *npnts, int *ni,
		void *nls, int *ndt, int *nds) {
	return p_cg_boco_info(fn, B, Z, BC, name, type, pst, npnts, ni, nls, ndt, nds);
}
static int op2cg_boco_read(int fn, int B, int Z, int BC, void *pnts, void *normals) {
	return p_cg_boco_read(fn, B, Z, BC, pnts, normals);
}
static int op2cg_boco_location(int fn, int B, int Z, int BC, int *loc) { return p_cg_boco_gridlocation_read(fn, B, Z, BC, loc); }
static int op2cg_nfamilies(int fn, int B, int *n) { return p_cg_nfamilies(fn, B, n); }
static int op2cg_family_read(int fn, int B, int F, char *name, int *nb, int *ng) { return p_cg_family_read(fn, B, F, name, nb, ng); }

// op2cg_famname reads the FamilyName under the node: the zone (kind 0)
// or its boundary condition S (2). It returns
// cg_goto's or cg_famname_read's code (CG_NODE_NOT_FOUND, 2, when the
// node has no FamilyName).
static int op2cg_famname(int fn, int B, int Z, int kind, int S, char *name) {
	int rc;
	switch (kind) {
	case 0: rc = p_cg_goto(fn, B, "Zone_t", Z, "end"); break;
	default: rc = p_cg_goto(fn, B, "Zone_t", Z, "ZoneBC_t", 1, "BC_t", S, "end"); break;
	}
	if (rc != 0) return rc;
	return p_cg_famname_read(name);
}
static int op2cg_nsols(int fn, int B, int Z, int *n) { return p_cg_nsols(fn, B, Z, n); }
static int op2cg_sol_info(int fn, int B, int Z, int S, char *name, int *loc) { return p_cg_sol_info(fn, B, Z, S, name, loc); }
static int op2cg_sol_write(int fn, int B, int Z, const char *name, int loc, int *S) { return p_cg_sol_write(fn, B, Z, name, loc, S); }
static int op2cg_field_write(int fn, int B, int Z, int S, const char *name, const double *v, int *F) {
	return p_cg_field_write(fn, B, Z, S, 4, name, v, F); // RealDouble
}
static int op2cg_field_read(int fn, int B, int Z, int S, const char *name, const void *rmin, const void *rmax, double *v) {
	return p_cg_field_read(fn, B, Z, S, name, 4, rmin, rmax, v); // RealDouble
}
static int op2cg_family_write(int fn, int B, const char *name, int *F) { return p_cg_family_write(fn, B, name, F); }
// op2cg_famname_write writes a FamilyName under the zone (kind 0) or its
// boundary condition S (kind 2), as op2cg_famname reads it.
static int op2cg_famname_write(int fn, int B, int Z, int kind, int S, const char *name) {
	int rc = kind == 0 ? p_cg_goto(fn, B, "Zone_t", Z, "end") : p_cg_goto(fn, B, "Zone_t", Z, "ZoneBC_t", 1, "BC_t", S, "end");
	if (rc != 0) return rc;
	return p_cg_famname_write(name);
}
static int op2cg_boco_write(int fn, int B, int Z, const char *name, int type, int pst, long long n, const void *pts, int width, int *BC) {
	if (width == 4)
		return ((int (*)(int, int, int, const char *, int, int, int32_t, const void *, int *))p_cg_boco_write)(fn, B, Z, name, type, pst, (int32_t)n, pts, BC);
	return ((int (*)(int, int, int, const char *, int, int, int64_t, const void *, int *))p_cg_boco_write)(fn, B, Z, name, type, pst, (int64_t)n, pts, BC);
}
static const char *op2cg_type_name(int t) { return p_cg_ElementTypeName(t); }
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"unsafe"

	"github.com/goop2/op2/internal/dynlib"
	"github.com/goop2/op2/internal/spawn"
)

// ErrUnavailable is wrapped by the errors that say the CGNS library cannot
// be loaded; their message says what to install.
var ErrUnavailable = errors.New("the CGNS library is not available")

// LibraryEnv names the environment variable that points GoOP2 at a CGNS
// library (a path or a soname) other than the system's.
const LibraryEnv = "OP2_CGNS_LIBRARY"

// Install says what provides the library on Debian.
const Install = "apt-get install libcgns3.4"

// sonames are tried in order: Debian's, then upstream's names.
var sonames = []string{"libcgns.so.3.4", "libcgns.so.4.4", "libcgns.so.4.3", "libcgns.so.4.2", "libcgns.so"}

// library is a loaded libcgns; its entry points live in the C globals.
type library struct{}

var (
	mu   sync.Mutex
	once = dynlib.Once[library]{What: "CGNS", Env: LibraryEnv, Unavailable: ErrUnavailable}
	// width is sizeof(cgsize_t), 0 until the first zone read tells it.
	width int
)

// Load opens the library once (the one $OP2_CGNS_LIBRARY names, else the
// system's) and reports why it cannot be used.
func Load() error {
	mu.Lock()
	defer mu.Unlock()
	return load()
}

func load() error {
	_, err := once.Load(os.Getenv(LibraryEnv), open)
	return err
}

func open(name string) (*library, string, error) {
	names := sonames
	if name != "" {
		names = []string{name}
	}
	var msgs []string
	for _, n := range names {
		cn := C.CString(n)
		var missing *C.char
		msg := C.op2cg_load(cn, &missing)
		C.free(unsafe.Pointer(cn))
		switch {
		case msg == nil && missing == nil:
			return &library{}, n, nil
		case msg != nil:
			msgs = append(msgs, C.GoString(msg))
		default:
			return nil, "", fmt.Errorf("%w: %s lacks %s; is it CGNS 3.4 or later? (Debian: %s, or point %s at libcgns)", ErrUnavailable, n, C.GoString(missing), Install, LibraryEnv)
		}
	}
	what := "no CGNS library found"
	if len(names) == 1 {
		what = "loading " + names[0] + " failed"
	}
	return nil, "", fmt.Errorf("%w: %s (Debian: %s; or point %s at libcgns): %s", ErrUnavailable, what, Install, LibraryEnv, msgs[len(msgs)-1])
}

// Error is a call of the library that failed, with its message.
type Error struct {
	Call string // the function, "cg_open"
	Msg  string // cg_get_error's message
}

func (e *Error) Error() string { return e.Call + ": " + e.Msg }

// fail returns the library's error for call; the lock is held.
func fail(call string) error {
	return &Error{Call: call, Msg: C.GoString(C.op2cg_error())}
}

// Mode is how a file is opened.
type Mode int

// The modes of Open (CG_MODE_READ, CG_MODE_MODIFY).
const (
	Read   Mode = 0
	Modify Mode = 2
)

// File is an open CGNS file.
type File struct {
	fn C.int
}

// IsCGNS reports whether the library recognises path as a CGNS file
// (cg_is_cgns).
func IsCGNS(path string) (bool, error) {
	mu.Lock()
	defer mu.Unlock()
	if err := load(); err != nil {
		return false, err
	}
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	var t C.int
	defer spawn.Opening()() // the library's descriptors are not close-on-exec
	return C.op2cg_is_cgns(cp, &t) == 0, nil
}

// Open opens the file at path.
func Open(path string, mode Mode) (*File, error) {
	mu.Lock()
	defer mu.Unlock()
	if err := load(); err != nil {
		return nil, err
	}
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	var fn C.int
	release := spawn.Opening() // the library's descriptors are not close-on-exec
	ok := C.op2cg_open(cp, C.int(mode), &fn) == 0
	release()
	if !ok {
		err := fail("cg_open").(*Error)
		if strings.Contains(err.Msg, "more recent version") {
			err.Msg += fmt.Sprintf(" (the CGNS library loaded is %s; point %s at a newer libcgns)", once.Path(), LibraryEnv)
		}
		return nil, err
	}
	return &File{fn: fn}, nil
}

// Close closes f (for a file opened to modify, writing it out).
func (f *File) Close() error {
	mu.Lock()
	defer mu.Unlock()
	if C.op2cg_close(f.fn) != 0 {
		return fail("cg_close")
	}
	return nil
}

// name32 is a buffer for a CGNS name (32 characters and a NUL).
type name32 [33]C.char

func (n *name32) String() string { return C.GoString(&n[0]) }

// count calls a cg_n* function.
func count(call string, f func(*C.int) C.int) (int, error) {
	mu.Lock()
	defer mu.Unlock()
	var n C.int
	if f(&n) != 0 {
		return 0, fail(call)
	}
	if n < 0 {
		return 0, &Error{Call: call, Msg: fmt.Sprintf("negative count %d", n)}
	}
	return int(n), nil
}

// NBases is the number of bases.
func (f *File) NBases() (int, error) {
	return count("cg_nbases", func(n *C.int) C.int { return C.op2cg_nbases(f.fn, n) })
}

// Base reads base B (from 1): its name, cell and physical dimensions.
func (f *File) Base(B int) (name string, cellDim, physDim int, err error) {
	mu.Lock()
	defer mu.Unlock()
	var nm name32
	var cd, pd C.int
	if C.op2cg_base_read(f.fn, C.int(B), &nm[0], &cd, &pd) != 0 {
		return "", 0, 0, fail("cg_base_read")
	}
	return nm.String(), int(cd), int(pd), nil
}

// NZones is the number of zones of base B.
func (f *File) NZones(B int) (int, error) {
	return count("cg_nzones", func(n *C.int) C.int { return C.op2cg_nzones(f.fn, C.int(B), n) })
}

// ZoneType values.
const (
	Structured   = 2
	Unstructured = 3
)

// ZoneType is zone Z's type: Structured, Unstructured or another value.
func (f *File) ZoneType(B, Z int) (int, error) {
	mu.Lock()
	defer mu.Unlock()
	var t C.int
	if C.op2cg_zone_type(f.fn, C.int(B), C.int(Z), &t) != 0 {
		return 0, fail("cg_zone_type")
	}
	return int(t), nil
}

// ZoneRead reads unstructured zone Z's name and sizes: vertices, cells and
// boundary vertices. The first call finds cgsize_t's width: the buffer is
// filled with -1 bytes, and a 4-byte build leaves the high half of the
// second 8-byte word as it was (negative), where an 8-byte build writes
// the count of cells there.
func (f *File) ZoneRead(B, Z int) (name string, size [3]int64, err error) {
	mu.Lock()
	defer mu.Unlock()
	var nm name32
	buf := [9]int64{-1, -1, -1, -1, -1, -1, -1, -1, -1}
	if C.op2cg_zone_read(f.fn, C.int(B), C.int(Z), &nm[0], unsafe.Pointer(&buf[0])) != 0 {
		return "", size, fail("cg_zone_read")
	}
	if width == 0 {
		width = 8
		if buf[1] < 0 {
			width = 4
		}
	}
	if width == 8 {
		copy(size[:], buf[:3])
	} else {
		v := unsafe.Slice((*int32)(unsafe.Pointer(&buf[0])), 3)
		for i := range size {
			size[i] = int64(v[i])
		}
	}
	return nm.String(), size, nil
}

// sizes is a buffer of n cgsize_t values.
type sizes struct {
	i32 []int32
	i64 []int64
}

func newSizes(n int64) (*sizes, error) {
	if width == 0 {
		return nil, &Error{Call: "cgsize_t", Msg: "its width is not known before a zone is read"}
	}
	if width == 4 {
		return &sizes{i32: make([]int32, max(n, 1))}, nil
	}
	return &sizes{i64: make([]int64, max(n, 1))}, nil
}

// wholeRange is the range 1 to n that a read of a whole array takes.
func wholeRange(n int64) (lo, hi *sizes, err error) {
	if lo, err = newSizes(1); err != nil {
		return nil, nil, err
	}
	hi, _ = newSizes(1)
	if width == 4 {
		lo.i32[0], hi.i32[0] = 1, int32(n)
	} else {
		lo.i64[0], hi.i64[0] = 1, n
	}
	return lo, hi, nil
}

func (s *sizes) ptr() unsafe.Pointer {
	if s.i32 != nil {
		return unsafe.Pointer(&s.i32[0])
	}
	return unsafe.Pointer(&s.i64[0])
}

// values returns the first n values as int64.
func (s *sizes) values(n int64) []int64 {
	if s.i64 != nil {
		return s.i64[:n]
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(s.i32[i])
	}
	return out
}

// NCoords is the number of coordinate arrays of zone Z.
func (f *File) NCoords(B, Z int) (int, error) {
	return count("cg_ncoords", func(n *C.int) C.int { return C.op2cg_ncoords(f.fn, C.int(B), C.int(Z), n) })
}

// CoordName is the name of coordinate array C (from 1) of zone Z.
func (f *File) CoordName(B, Z, c int) (string, error) {
	mu.Lock()
	defer mu.Unlock()
	var nm name32
	var t C.int
	if C.op2cg_coord_info(f.fn, C.int(B), C.int(Z), C.int(c), &t, &nm[0]) != 0 {
		return "", fail("cg_coord_info")
	}
	return nm.String(), nil
}

// Coord reads coordinate array name of zone Z, n vertices, as float64.
func (f *File) Coord(B, Z int, name string, n int64) ([]float64, error) {
	mu.Lock()
	defer mu.Unlock()
	lo, hi, err := wholeRange(n)
	if err != nil {
		return nil, err
	}
	x := make([]float64, max(n, 1))
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	if C.op2cg_coord_read(f.fn, C.int(B), C.int(Z), cn, lo.ptr(), hi.ptr(), (*C.double)(unsafe.Pointer(&x[0]))) != 0 {
		return nil, fail("cg_coord_read")
	}
	return x[:n], nil
}

// CoordRange reads vertices lo to hi (from 1, inclusive) of coordinate
// array name of zone Z, as float64: cg_coord_read with a range, so that
// a process reads its block of a large zone without the rest.
func (f *File) CoordRange(B, Z int, name string, lo, hi int64) ([]float64, error) {
	mu.Lock()
	defer mu.Unlock()
	if width == 0 {
		return nil, &Error{Call: "cg_coord_read", Msg: "cgsize_t's width is not known before a zone is read"}
	}
	if lo < 1 || hi < lo {
		return nil, &Error{Call: "cg_coord_read", Msg: fmt.Sprintf("vertex range [%d, %d] is not a range from 1", lo, hi)}
	}
	x := make([]float64, hi-lo+1)
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	if C.op2cg_coord_range(f.fn, C.int(B), C.int(Z), cn, C.longlong(lo), C.longlong(hi), C.int(width), (*C.double)(unsafe.Pointer(&x[0]))) != 0 {
		return nil, fail("cg_coord_read")
	}
	return x, nil
}

// NSections is the number of element sections of zone Z.
func (f *File) NSections(B, Z int) (int, error) {
	return count("cg_nsections", func(n *C.int) C.int { return C.op2cg_nsections(f.fn, C.int(B), C.int(Z), n) })
}

// Section is what cg_section_read tells of a section.
type Section struct {
	Name       string
	Type       int   // ElementType_t
	Start, End int64 // the range of its element numbers
	NBndry     int
	ParentFlag int
}

// SectionRead reads section S (from 1) of zone Z.
func (f *File) SectionRead(B, Z, S int) (Section, error) {
	mu.Lock()
	defer mu.Unlock()
	var nm name32
	var t, nb, pf C.int
	lo, err := newSizes(1)
	if err != nil {
		return Section{}, err
	}
	hi, _ := newSizes(1)
	if C.op2cg_section_read(f.fn, C.int(B), C.int(Z), C.int(S), &nm[0], &t, lo.ptr(), hi.ptr(), &nb, &pf) != 0 {
		return Section{}, fail("cg_section_read")
	}
	return Section{Name: nm.String(), Type: int(t), Start: lo.values(1)[0], End: hi.values(1)[0], NBndry: int(nb), ParentFlag: int(pf)}, nil
}

// ElementDataSize is the number of values in section S's connectivity.
func (f *File) ElementDataSize(B, Z, S int) (int64, error) {
	mu.Lock()
	defer mu.Unlock()
	n, err := newSizes(1)
	if err != nil {
		return 0, err
	}
	if C.op2cg_data_size(f.fn, C.int(B), C.int(Z), C.int(S), n.ptr()) != 0 {
		return 0, fail("cg_ElementDataSize")
	}
	return n.values(1)[0], nil
}

// Elements reads section S's connectivity, size values (ElementDataSize:
// the caller checks it before asking for that much).
func (f *File) Elements(B, Z, S int, size int64) ([]int64, error) {
	mu.Lock()
	defer mu.Unlock()
	e, err := newSizes(size)
	if err != nil {
		return nil, err
	}
	if C.op2cg_elements_read(f.fn, C.int(B), C.int(Z), C.int(S), e.ptr()) != 0 {
		return nil, fail("cg_elements_read")
	}
	return e.values(size), nil
}

// PolyElements reads a MIXED (or polygonal) section S's connectivity,
// size values, and its n+1 offsets.
func (f *File) PolyElements(B, Z, S int, size, n int64) (conn, offsets []int64, err error) {
	mu.Lock()
	defer mu.Unlock()
	e, err := newSizes(size)
	if err != nil {
		return nil, nil, err
	}
	o, _ := newSizes(n + 1)
	if C.op2cg_poly_elements_read(f.fn, C.int(B), C.int(Z), C.int(S), e.ptr(), o.ptr()) != 0 {
		return nil, nil, fail("cg_poly_elements_read")
	}
	return e.values(size), o.values(n + 1), nil
}

// checkRange refuses an element range the library would not read.
func checkRange(call string, start, end int64) error {
	if width == 0 {
		return &Error{Call: call, Msg: "cgsize_t's width is not known before a zone is read"}
	}
	if start < 1 || end < start {
		return &Error{Call: call, Msg: fmt.Sprintf("element range [%d, %d] is not a range from 1", start, end)}
	}
	return nil
}

// ElementsPartial reads the connectivity of elements start to end
// (element numbers, inclusive) of a section S of one element type, size
// values (the caller computes them from the type and checks them first):
// cg_elements_partial_read.
func (f *File) ElementsPartial(B, Z, S int, start, end, size int64) ([]int64, error) {
	mu.Lock()
	defer mu.Unlock()
	if err := checkRange("cg_elements_partial_read", start, end); err != nil {
		return nil, err
	}
	e, err := newSizes(size)
	if err != nil {
		return nil, err
	}
	if C.op2cg_elements_partial_read(f.fn, C.int(B), C.int(Z), C.int(S), C.longlong(start), C.longlong(end), C.int(width), e.ptr()) != 0 {
		return nil, fail("cg_elements_partial_read")
	}
	return e.values(size), nil
}

// IntArray is a 1-D integer array node of a file (such as a section's
// ElementConnectivity), read a block at a time with ReadBlock.
type IntArray struct {
	cgio C.int
	id   C.double
	i8   bool
	// Len is the array's number of values.
	Len int64
}

// IntArray opens the 1-D array of 32- or 64-bit integers at path, a node
// path from the file's root ("/Base/Zone/Elements/ElementConnectivity"),
// through the library's cgio layer, which reads ADF and HDF5 files alike.
// An array of one row or column (a boundary condition's PointList, 1 by
// n) is read as 1-D.
func (f *File) IntArray(path string) (*IntArray, error) {
	mu.Lock()
	defer mu.Unlock()
	if width == 0 {
		return nil, &Error{Call: "cgio_get_node_id", Msg: "cgsize_t's width is not known before a zone is read"}
	}
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	var typ [3]C.char
	var msg [81]C.char
	var n C.longlong
	a := &IntArray{}
	switch C.op2cg_array_node(f.fn, cp, C.int(width), &a.cgio, &a.id, &typ[0], &n, &msg[0]) {
	case 0:
	case -2:
		return nil, &Error{Call: "cgio_get_dimensions", Msg: path + ": not a 1-D array (nor one of 1 row or column)"}
	default:
		return nil, &Error{Call: "cgio_get_node_id", Msg: path + ": " + C.GoString(&msg[0])}
	}
	switch t := C.GoString(&typ[0]); t {
	case "I4":
	case "I8":
		a.i8 = true
	default:
		return nil, &Error{Call: "cgio_get_data_type", Msg: fmt.Sprintf("%s: data type %q, not I4 or I8", path, t)}
	}
	a.Len = int64(n)
	return a, nil
}

// ReadBlock reads values lo to hi (from 1, inclusive) of a
// (cgio_read_block_data).
func (a *IntArray) ReadBlock(lo, hi int64) ([]int64, error) {
	mu.Lock()
	defer mu.Unlock()
	if lo < 1 || hi < lo || hi > a.Len {
		return nil, &Error{Call: "cgio_read_block_data", Msg: fmt.Sprintf("values [%d, %d] of an array of %d", lo, hi, a.Len)}
	}
	n := hi - lo + 1
	out := make([]int64, n)
	var buf unsafe.Pointer
	var i32 []int32
	if a.i8 {
		buf = unsafe.Pointer(&out[0])
	} else {
		i32 = make([]int32, n)
		buf = unsafe.Pointer(&i32[0])
	}
	var msg [81]C.char
	if C.op2cg_read_block(a.cgio, a.id, C.longlong(lo), C.longlong(hi), C.int(width), buf, &msg[0]) != 0 {
		return nil, &Error{Call: "cgio_read_block_data", Msg: C.GoString(&msg[0])}
	}
	for i, v := range i32 {
		out[i] = int64(v)
	}
	return out, nil
}

// NodesPerElement is the number of nodes of an element of type t
// (cg_npe), 0 for MIXED and polygons, or an error for an unknown type.
func NodesPerElement(t int) (int, error) {
	mu.Lock()
	defer mu.Unlock()
	if err := load(); err != nil {
		return 0, err
	}
	var n C.int
	if C.op2cg_npe(C.int(t), &n) != 0 {
		return 0, fail("cg_npe")
	}
	return int(n), nil
}

// TypeName is the library's name of element type t ("TETRA_4").
func TypeName(t int) string {
	mu.Lock()
	defer mu.Unlock()
	if load() != nil {
		return fmt.Sprintf("element type %d", t)
	}
	s := C.op2cg_type_name(C.int(t))
	if s == nil {
		return fmt.Sprintf("element type %d", t)
	}
	return C.GoString(s)
}

// NBocos is the number of boundary conditions of zone Z.
func (f *File) NBocos(B, Z int) (int, error) {
	return count("cg_nbocos", func(n *C.int) C.int { return C.op2cg_nbocos(f.fn, C.int(B), C.int(Z), n) })
}

// Boco is what cg_boco_info and cg_boco_gridlocation_read tell of a
// boundary condition.
type Boco struct {
	Name           string
	Type           int // BCType_t
	PointSet       int // PointSetType_t
	NPoints        int64
	NormalListSize int64
	NormalDataType int
	Location       int // GridLocation_t
}

// BocoInfo reads boundary condition BC (from 1) of zone Z.
func (f *File) BocoInfo(B, Z, BC int) (Boco, error) {
	mu.Lock()
	defer mu.Unlock()
	var nm name32
	var typ, pst, ni, ndt, nds, loc C.int
	np, err := newSizes(1)
	if err != nil {
		return Boco{}, err
	}
	nl, _ := newSizes(1)
	if C.op2cg_boco_info(f.fn, C.int(B), C.int(Z), C.int(BC), &nm[0], &typ, &pst, np.ptr(), &ni, nl.ptr(), &ndt, &nds) != 0 {
		return Boco{}, fail("cg_boco_info")
	}
	if C.op2cg_boco_location(f.fn, C.int(B), C.int(Z), C.int(BC), &loc) != 0 {
		return Boco{}, fail("cg_boco_gridlocation_read")
	}
	return Boco{Name: nm.String(), Type: int(typ), PointSet: int(pst), NPoints: np.values(1)[0],
		NormalListSize: nl.values(1)[0], NormalDataType: int(ndt), Location: int(loc)}, nil
}

// BocoRead reads boundary condition BC's points, b.NPoints values (the
// caller checks them first); its normals, when it has some, are read into
// a buffer and dropped.
func (f *File) BocoRead(B, Z, BC int, b Boco) ([]int64, error) {
	mu.Lock()
	defer mu.Unlock()
	p, err := newSizes(b.NPoints)
	if err != nil {
		return nil, err
	}
	normals := make([]float64, max(b.NormalListSize, 1)) // 8 bytes: wide enough for RealSingle or RealDouble
	if C.op2cg_boco_read(f.fn, C.int(B), C.int(Z), C.int(BC), p.ptr(), unsafe.Pointer(&normals[0])) != 0 {
		return nil, fail("cg_boco_read")
	}
	return p.values(b.NPoints), nil
}

// NFamilies is the number of families of base B.
func (f *File) NFamilies(B int) (int, error) {
	return count("cg_nfamilies", func(n *C.int) C.int { return C.op2cg_nfamilies(f.fn, C.int(B), n) })
}

// Family is the name of family F (from 1) of base B.
func (f *File) Family(B, F int) (string, error) {
	mu.Lock()
	defer mu.Unlock()
	var nm name32
	var nb, ng C.int
	if C.op2cg_family_read(f.fn, C.int(B), C.int(F), &nm[0], &nb, &ng) != 0 {
		return "", fail("cg_family_read")
	}
	return nm.String(), nil
}

// The nodes whose FamilyName FamName reads and FamNameWrite writes.
const (
	OfZone = 0
	OfBoco = 2
)

// FamName reads the FamilyName under zone Z (kind OfZone) or its
// boundary condition S (OfBoco); found is false when the node has none.
func (f *File) FamName(B, Z, kind, S int) (name string, found bool, err error) {
	mu.Lock()
	defer mu.Unlock()
	var nm [C.int(256)]C.char // family names may be longer than 32 in newer files
	switch rc := C.op2cg_famname(f.fn, C.int(B), C.int(Z), C.int(kind), C.int(S), &nm[0]); rc {
	case 0:
		return C.GoString(&nm[0]), true, nil
	case 2: // CG_NODE_NOT_FOUND
		return "", false, nil
	default:
		return "", false, fail("cg_famname_read")
	}
}

// GridLocation values.
const (
	Vertex     = 2
	CellCenter = 3
	FaceCenter = 4
	EdgeCenter = 8
)

// PointSetType values.
const (
	PointList    = 2
	PointRange   = 4
	ElementRange = 6
	ElementList  = 7
)

// NSols is the number of flow solutions of zone Z.
func (f *File) NSols(B, Z int) (int, error) {
	return count("cg_nsols", func(n *C.int) C.int { return C.op2cg_nsols(f.fn, C.int(B), C.int(Z), n) })
}

// SolInfo is flow solution S's name and grid location.
func (f *File) SolInfo(B, Z, S int) (string, int, error) {
	mu.Lock()
	defer mu.Unlock()
	var nm name32
	var loc C.int
	if C.op2cg_sol_info(f.fn, C.int(B), C.int(Z), C.int(S), &nm[0], &loc) != 0 {
		return "", 0, fail("cg_sol_info")
	}
	return nm.String(), int(loc), nil
}

// SolWrite creates flow solution name at location in zone Z and returns
// its index (an existing one of that name is replaced).
func (f *File) SolWrite(B, Z int, name string, location int) (int, error) {
	mu.Lock()
	defer mu.Unlock()
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	var s C.int
	if C.op2cg_sol_write(f.fn, C.int(B), C.int(Z), cn, C.int(location), &s) != 0 {
		return 0, fail("cg_sol_write")
	}
	return int(s), nil
}

// FieldWrite writes field name of flow solution S as RealDouble; values
// must hold as many values as the solution's location has.
func (f *File) FieldWrite(B, Z, S int, name string, values []float64) error {
	mu.Lock()
	defer mu.Unlock()
	if len(values) == 0 {
		return &Error{Call: "cg_field_write", Msg: "no values"}
	}
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	var fi C.int
	if C.op2cg_field_write(f.fn, C.int(B), C.int(Z), C.int(S), cn, (*C.double)(unsafe.Pointer(&values[0])), &fi) != 0 {
		return fail("cg_field_write")
	}
	return nil
}

// FieldRead reads field name of flow solution S, n values, as float64.
func (f *File) FieldRead(B, Z, S int, name string, n int64) ([]float64, error) {
	mu.Lock()
	defer mu.Unlock()
	lo, hi, err := wholeRange(n)
	if err != nil {
		return nil, err
	}
	v := make([]float64, max(n, 1))
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	if C.op2cg_field_read(f.fn, C.int(B), C.int(Z), C.int(S), cn, lo.ptr(), hi.ptr(), (*C.double)(unsafe.Pointer(&v[0]))) != 0 {
		return nil, fail("cg_field_read")
	}
	return v[:n], nil
}

// FamilyWrite adds family name to base B.
func (f *File) FamilyWrite(B int, name string) error {
	mu.Lock()
	defer mu.Unlock()
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	var fi C.int
	if C.op2cg_family_write(f.fn, C.int(B), cn, &fi) != 0 {
		return fail("cg_family_write")
	}
	return nil
}

// FamNameWrite writes the FamilyName name under zone Z (kind OfZone) or
// its boundary condition S (OfBoco).
func (f *File) FamNameWrite(B, Z, kind, S int, name string) error {
	mu.Lock()
	defer mu.Unlock()
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	if C.op2cg_famname_write(f.fn, C.int(B), C.int(Z), C.int(kind), C.int(S), cn) != 0 {
		return fail("cg_famname_write")
	}
	return nil
}

// BocoWrite adds the boundary condition name of BCType typ to zone Z,
// given as pts of point set type pointSet (at the library's default
// location for it: Vertex for PointList and PointRange).
func (f *File) BocoWrite(B, Z int, name string, typ, pointSet int, pts []int64) (int, error) {
	mu.Lock()
	defer mu.Unlock()
	p, err := newSizes(int64(len(pts)))
	if err != nil {
		return 0, err
	}
	for i, v := range pts {
		if width == 4 {
			p.i32[i] = int32(v)
		} else {
			p.i64[i] = v
		}
	}
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	var bc C.int
	if C.op2cg_boco_write(f.fn, C.int(B), C.int(Z), cn, C.int(typ), C.int(pointSet), C.longlong(len(pts)), p.ptr(), C.int(width), &bc) != 0 {
		return 0, fail("cg_boco_write")
	}
	return int(bc), nil
}
