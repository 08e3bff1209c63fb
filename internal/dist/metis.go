package dist

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

// METIS 5 with 32-bit idx_t and real_t (Debian's libmetis5); the width is
// checked before use (metisIdxWidth).
typedef int (*op2_metis_kway_fn)(int32_t *, int32_t *, int32_t *, int32_t *, int32_t *, int32_t *, int32_t *,
	int32_t *, float *, float *, int32_t *, int32_t *, int32_t *);
typedef int (*op2_metis_defaults_fn)(int32_t *);

static void *op2_metis_lib;
static op2_metis_kway_fn op2_metis_kway;
static op2_metis_defaults_fn op2_metis_defaults;

// op2_metis_load opens the library named path, or when path is NULL the
// system's libmetis.so.5 (or libmetis.so).
static const char *op2_metis_load(const char *path) {
	if (op2_metis_lib) return NULL;
	const char *names[] = {"libmetis.so.5", "libmetis.so"};
	void *h = NULL;
	if (path) h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	for (int i = 0; i < 2 && !h && !path; i++) h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!h) return dlerror();
	op2_metis_kway = (op2_metis_kway_fn)dlsym(h, "METIS_PartGraphKway");
	op2_metis_defaults = (op2_metis_defaults_fn)dlsym(h, "METIS_SetDefaultOptions");
	if (!op2_metis_kway || !op2_metis_defaults) { dlclose(h); return "the library lacks METIS_PartGraphKway or METIS_SetDefaultOptions"; }
	op2_metis_lib = h;
	return NULL;
}

// op2_metis_idx_width fills an array with a marker, lets METIS set its
// 40 default options (all -1) and counts the 32-bit words it changed.
static int op2_metis_idx_width(void) {
	int32_t opts[128];
	for (int i = 0; i < 128; i++) opts[i] = 12345;
	op2_metis_defaults(opts);
	int n = 0;
	while (n < 128 && opts[n] == -1) n++;
	return n == 40 ? 32 : n == 80 ? 64 : 0;
}

static int op2_metis_part(int32_t n, int32_t *xadj, int32_t *adj, int32_t parts, int32_t *cut, int32_t *part) {
	int32_t ncon = 1, opts[40];
	op2_metis_defaults(opts);
	opts[17] = 0; // METIS_OPTION_NUMBERING: C (0-based) numbering
	return op2_metis_kway(&n, &ncon, xadj, adj, NULL, NULL, NULL, &parts, NULL, NULL, opts, cut, part);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"
)

// ErrNoMETIS is wrapped by the error METISOwners returns when the METIS
// library cannot be loaded.
var ErrNoMETIS = errors.New("METIS is not available")

var metisOnce sync.Once
var metisErr error

// METISLibraryEnv names the environment variable that points GoOP2 at a
// METIS library other than the system's libmetis.so.5 (a path or a soname).
const METISLibraryEnv = "OP2_METIS_LIBRARY"

// LoadMETIS loads the METIS library, once; its error says what to
// install.
func LoadMETIS() error { return loadMETIS() }

func loadMETIS() error {
	metisOnce.Do(func() {
		var path *C.char
		name := "libmetis.so.5"
		if p := os.Getenv(METISLibraryEnv); p != "" {
			name = p
			path = C.CString(p)
			defer C.free(unsafe.Pointer(path))
		}
		if msg := C.op2_metis_load(path); msg != nil {
			metisErr = fmt.Errorf("%w: loading %s failed (Debian: apt-get install libmetis5; or point %s at a METIS 5 library): %s", ErrNoMETIS, name, METISLibraryEnv, C.GoString(msg))
			return
		}
		if w := C.op2_metis_idx_width(); w != 32 {
			metisErr = fmt.Errorf("%w: the METIS library uses %d-bit indices; GoOP2 needs a build with 32-bit idx_t (IDXTYPEWIDTH 32, as Debian's libmetis5)", ErrNoMETIS, int(w))
		}
	})
	return metisErr
}

// METISOwners partitions the graph (xadj, adj) of n vertices into ranks
// parts with METIS_PartGraphKway, returning each vertex's part and the
// edge cut METIS reports.
func METISOwners(n int, xadj, adj []int32, ranks int) ([]int32, int, error) {
	if err := loadMETIS(); err != nil {
		return nil, 0, err
	}
	part := make([]int32, n)
	if ranks == 1 || n == 0 {
		return part, 0, nil
	}
	if n < ranks {
		for i := range part {
			part[i] = int32(i)
		}
		return part, 0, nil
	}
	cx := C.malloc(C.size_t(4 * len(xadj)))
	ca := C.malloc(C.size_t(4*len(adj) + 4))
	cp := C.malloc(C.size_t(4 * n))
	defer C.free(cx)
	defer C.free(ca)
	defer C.free(cp)
	copy(unsafe.Slice((*int32)(cx), len(xadj)), xadj)
	copy(unsafe.Slice((*int32)(ca), len(adj)), adj)
	var cut C.int32_t
	rc := C.op2_metis_part(C.int32_t(n), (*C.int32_t)(cx), (*C.int32_t)(ca), C.int32_t(ranks), &cut, (*C.int32_t)(cp))
	if rc != 1 {
		return nil, 0, fmt.Errorf("METIS_PartGraphKway failed (status %d)", int(rc))
	}
	copy(part, unsafe.Slice((*int32)(cp), n))
	return part, int(cut), nil
}
