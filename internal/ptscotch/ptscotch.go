// Package ptscotch is GoOP2's binding to PT-Scotch's distributed graph
// partitioner (SCOTCH_dgraphPart): every rank holds a block of the graph's
// vertices with their adjacency lists, and the ranks partition the whole
// graph together, no rank ever holding all of it.
//
// Nothing of PT-Scotch is needed to build GoOP2, not even its headers. Load
// opens the library at run time with dlopen: Debian's libptscotch-7.0
// (apt-get install libptscotch-7.0), or the library OP2_PTSCOTCH_LIBRARY
// names (a path or a soname; its error-handling library, libptscotcherr
// with the same suffix, is looked for next to it). The width of SCOTCH_Num
// (32 or 64 bits, chosen when PT-Scotch was built: Debian's default is 32,
// its scotch-int64 directory has a 64-bit build) is read from the library
// with SCOTCH_numSizeof, and the arrays are converted to it.
//
// PT-Scotch needs an MPI communicator, whose representation only mpi.h
// knows, so the calls go through a small C shim compiled against mpi.h with
// the MPI compiler wrapper, like internal/mpi's own (mpi.World.Build), and
// run on internal/mpi's MPI thread (mpi.World.Do). PT-Scotch must be built
// against the MPI the program runs with (Debian's is built against the
// default MPI, Open MPI on amd64). It works on its own duplicate of
// MPI_COMM_WORLD, made by the first Part, in one thread per rank (no
// threads started, no change to the CPU affinity), deterministically: the
// same graph on the same ranks gives the same parts.
//
// PT-Scotch's own collectives block without the OP2_MPI_TIMEOUT watchdog of
// internal/mpi. Before it calls PT-Scotch, Part agrees through
// internal/mpi's bounded collectives that every rank loaded PT-Scotch and
// built the shim, and that every rank's block passes the checks that cost
// no more than reading it (lengths, offsets, neighbour numbers in range,
// no self loops, the same number of parts); symmetry is the caller's to
// ensure. A rank that stops inside PT-Scotch leaves the others waiting
// until the job is killed.
package ptscotch

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

// op2scotch_open opens name; on failure it copies dlerror's message into
// err in the same call, since dlerror is per thread.
static void *op2scotch_open(const char *name, int global, char *err, size_t n) {
	void *h = dlopen(name, RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
	if (h == NULL) {
		const char *e = dlerror();
		snprintf(err, n, "%s", e ? e : "unknown dlopen error");
	}
	return h;
}
static void *op2scotch_sym(void *h, const char *name) { return dlsym(h, name); }
static void op2scotch_close(void *h) { dlclose(h); }
static int op2scotch_num_sizeof(void *f) { return ((int (*)(void))f)(); }
static void op2scotch_lib_version(void *f, int *a, int *b, int *c) { ((void (*)(int *, int *, int *))f)(a, b, c); }
static int op2scotch_shim_version(void *f) { return ((int (*)(void))f)(); }

typedef int (*op2scotch_part_fn)(void *const *, long long, void *, void *, long long, long long, void *, int, int *);
static int op2scotch_call_part(void *f, void *const *fns, long long n, void *xadj, void *adj, long long nedge,
		long long parts, void *part, int check, int *failed) {
	return ((op2scotch_part_fn)f)(fns, n, xadj, adj, nedge, parts, part, check, failed);
}
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"github.com/goop2/op2/internal/dynlib"
	"github.com/goop2/op2/internal/jit"
	"github.com/goop2/op2/internal/mpi"
)

// ErrUnavailable is wrapped by the errors that say PT-Scotch cannot be
// loaded; their message says what to install.
var ErrUnavailable = errors.New("PT-Scotch is not available")

// libraryEnv names the environment variable that points GoOP2 at a
// PT-Scotch library other than the system's libptscotch-7.0.so.
const libraryEnv = "OP2_PTSCOTCH_LIBRARY"

// install is what the errors of a failed load advise.
const install = "Debian: apt-get install libptscotch-7.0; or point " + libraryEnv + " at a PT-Scotch 7 library"

// checkGraph makes Part check the distributed graph with
// SCOTCH_dgraphCheck before partitioning it; the check is collective and
// costs about as much as building the graph, so only tests set it.
var checkGraph = false

// library is a loaded PT-Scotch.
type library struct {
	name    string         // what was asked for: OP2_PTSCOTCH_LIBRARY, or "" for the defaults
	path    string         // what was loaded
	bits    int            // the width of SCOTCH_Num
	version string         // SCOTCH_version's
	fns     unsafe.Pointer // C array of the functions named by symbols, in order
}

// shim is the compiled shim of a library.
type shim struct {
	lib  *jit.Library
	part unsafe.Pointer // op2scotch_part
}

var state = struct {
	sync.Mutex
	lib  dynlib.Once[library]
	shim *shim
}{lib: dynlib.Once[library]{What: "PT-Scotch", Env: libraryEnv, Unavailable: ErrUnavailable}}

// Load loads PT-Scotch on this rank only, without communicating, and
// returns nil when it can be used. A library once loaded stays loaded, and
// a failure is remembered, so later calls cost a look at the environment.
func Load() error {
	_, err := load()
	return err
}

func load() (*library, error) {
	name := os.Getenv(libraryEnv)
	state.Lock()
	defer state.Unlock()
	return state.lib.Load(name, func(name string) (*library, string, error) {
		l, err := open(name)
		if err != nil {
			return nil, "", err
		}
		return l, l.path, nil
	})
}

// candidate is a PT-Scotch library and its error-handling library (which
// defines the SCOTCH_errorPrint functions PT-Scotch calls).
type candidate struct{ lib, errlib string }

// candidates are the libraries tried for name (OP2_PTSCOTCH_LIBRARY's
// value, or "" for the system's).
func candidates(name string) []candidate {
	if name == "" {
		return []candidate{
			{"libptscotch-7.0.so", "libptscotcherr-7.0.so"}, // Debian, Ubuntu
			{"libptscotch.so.7", "libptscotcherr.so.7"},
			{"libptscotch.so", "libptscotcherr.so"},
		}
	}
	c := candidate{lib: name}
	dir, base := filepath.Split(name)
	if strings.HasPrefix(base, "libptscotch") && !strings.HasPrefix(base, "libptscotcherr") {
		c.errlib = dir + "libptscotcherr" + strings.TrimPrefix(base, "libptscotch")
	}
	return []candidate{c}
}

func dlopen(name string, global bool) (unsafe.Pointer, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var msg [512]C.char
	g := C.int(0)
	if global {
		g = 1
	}
	h := C.op2scotch_open(cname, g, &msg[0], C.size_t(len(msg)))
	if h == nil {
		return nil, errors.New(C.GoString(&msg[0]))
	}
	return h, nil
}

func open(name string) (*library, error) {
	var tried []string
	for _, c := range candidates(name) {
		// The error-handling library first, and global, so that a
		// PT-Scotch that does not name it as a dependency finds
		// SCOTCH_errorPrint; Debian's names it, and its absence is then
		// reported by the dlopen of PT-Scotch itself.
		var errh unsafe.Pointer
		if c.errlib != "" {
			errh, _ = dlopen(c.errlib, true)
		}
		h, err := dlopen(c.lib, false)
		if err != nil {
			if errh != nil {
				C.op2scotch_close(errh)
			}
			tried = append(tried, err.Error())
			continue
		}
		return bind(c.lib, name, h)
	}
	what := "libptscotch-7.0.so"
	if name != "" {
		what = name
	}
	return nil, fmt.Errorf("%w: loading %s failed (%s): %s", ErrUnavailable, what, install, strings.Join(tried, "; "))
}

// bind looks up symbols in the library h, opened from path.
func bind(path, name string, h unsafe.Pointer) (*library, error) {
	fns := (*[1 << 20]unsafe.Pointer)(C.calloc(C.size_t(len(symbols)), C.size_t(unsafe.Sizeof(uintptr(0)))))[:len(symbols):len(symbols)]
	var missing []string
	for i, s := range symbols {
		cs := C.CString(s)
		fns[i] = C.op2scotch_sym(h, cs)
		C.free(unsafe.Pointer(cs))
		if fns[i] == nil {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		C.free(unsafe.Pointer(&fns[0]))
		C.op2scotch_close(h)
		return nil, fmt.Errorf("%w: %s lacks %s: GoOP2 needs PT-Scotch 7 (%s)", ErrUnavailable, path, strings.Join(missing, ", "), install)
	}
	var major, minor, patch C.int
	C.op2scotch_lib_version(fns[1], &major, &minor, &patch)
	l := &library{name: name, path: path, fns: unsafe.Pointer(&fns[0]),
		version: fmt.Sprintf("%d.%d.%d", int(major), int(minor), int(patch))}
	switch size := int(C.op2scotch_num_sizeof(fns[0])); size {
	case 4, 8:
		l.bits = 8 * size
	default:
		C.free(l.fns)
		C.op2scotch_close(h)
		return nil, fmt.Errorf("%w: %s (PT-Scotch %s) has a SCOTCH_Num of %d bytes; GoOP2 handles 4 and 8", ErrUnavailable, path, l.version, size)
	}
	return l, nil
}

// buildShim compiles (or finds in the cache) the shim for l with w's MPI
// compiler wrapper.
func buildShim(w *mpi.World, l *library) (*shim, error) {
	state.Lock()
	defer state.Unlock()
	if state.shim != nil {
		return state.shim, nil
	}
	jl, err := w.Build(shimSource(l.bits), []string{"op2scotch_part", "op2scotch_version"})
	if err != nil {
		return nil, fmt.Errorf("%w: building GoOP2's PT-Scotch shim with the MPI compiler wrapper failed: %v", ErrUnavailable, err)
	}
	v, err := jl.Symbol("op2scotch_version")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if got := int(C.op2scotch_shim_version(v)); got != shimVersion {
		return nil, fmt.Errorf("%w: the PT-Scotch shim has version %d, want %d", ErrUnavailable, got, shimVersion)
	}
	p, err := jl.Symbol("op2scotch_part")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	state.shim = &shim{lib: jl, part: p}
	return state.shim, nil
}

// checkLocal checks what a rank can check of its block of the graph alone.
func checkLocal(xadj []int64, adj []int32, parts, bits int) error {
	if len(xadj) == 0 {
		return errors.New("xadj is empty; it has n+1 entries for n vertices (one, 0, for none)")
	}
	if parts < 1 {
		return fmt.Errorf("%d parts; at least 1 is needed", parts)
	}
	limit := int64(math.MaxInt64)
	if bits == 32 {
		limit = math.MaxInt32
	}
	if int64(parts) > limit {
		return fmt.Errorf("%d parts do not fit PT-Scotch's %d-bit SCOTCH_Num", parts, bits)
	}
	if xadj[0] != 0 {
		return fmt.Errorf("xadj[0] is %d, not 0", xadj[0])
	}
	for i := 1; i < len(xadj); i++ {
		if xadj[i] < xadj[i-1] {
			return fmt.Errorf("xadj decreases at vertex %d: xadj[%d] = %d, xadj[%d] = %d", i-1, i-1, xadj[i-1], i, xadj[i])
		}
	}
	if e := xadj[len(xadj)-1]; e != int64(len(adj)) {
		return fmt.Errorf("xadj ends at %d but adj has %d entries", e, len(adj))
	}
	if int64(len(adj)) > limit {
		return fmt.Errorf("%d adjacency entries on this rank do not fit PT-Scotch's %d-bit SCOTCH_Num", len(adj), bits)
	}
	for j, v := range adj {
		if v < 0 {
			return fmt.Errorf("adj[%d] (a neighbour of vertex %d) is %d", j, vertexOf(xadj, j), v)
		}
	}
	return nil
}

// vertexOf returns the local vertex whose adjacency list holds adj[j].
func vertexOf(xadj []int64, j int) int {
	lo, hi := 0, len(xadj)-1
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if xadj[mid] <= int64(j) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// agree gathers every rank's err (nil or not) and returns this rank's own
// error, or, when only other ranks failed, an error naming them; nil when
// no rank failed. Every rank returns an error or none alike.
func agree(w *mpi.World, what string, err error) error {
	flag := []byte{0}
	if err != nil {
		flag[0] = 1
	}
	all := make([]byte, w.Size())
	if gerr := w.Allgather(flag, all); gerr != nil {
		if err != nil {
			return fmt.Errorf("ptscotch.Part: rank %d: %v (and agreeing on it failed: %v)", w.Rank(), err, gerr)
		}
		return fmt.Errorf("ptscotch.Part: %s: %w", what, gerr)
	}
	if err != nil {
		return fmt.Errorf("ptscotch.Part: rank %d: %w", w.Rank(), err)
	}
	var bad []int
	for r, f := range all {
		if f != 0 {
			bad = append(bad, r)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("ptscotch.Part: %s failed on rank(s) %v (their errors say why); this rank %d stopped with them", what, bad, w.Rank())
	}
	return nil
}

// Part partitions a distributed graph into parts parts, collectively on
// every rank of w (every rank must call it). Rank r holds the vertices
// [first, first+n) of the global graph, numbered in rank order (first is
// the sum of the previous ranks' n), as xadj (n+1 offsets into adj) and adj
// (the global numbers of the neighbours): vertex first+i's neighbours are
// adj[xadj[i]:xadj[i+1]]. The graph must be symmetric over all ranks and
// without self loops; a rank may hold no vertex (n = 0, xadj = {0}). parts
// is usually w.Size(). Part returns the part, in [0, parts), of each of the
// rank's n vertices; every rank returns an error when any rank fails.
//
// The inputs, and whether every rank could load PT-Scotch and build its
// shim, are agreed through w's collectives (bounded by OP2_MPI_TIMEOUT)
// before PT-Scotch is called; PT-Scotch's own collectives are not bounded
// (see the package comment).
func Part(w *mpi.World, xadj []int64, adj []int32, parts int) ([]int32, error) {
	lib, err := load()
	var sh *shim
	if err == nil {
		sh, err = buildShim(w, lib)
	}
	if err == nil {
		err = checkLocal(xadj, adj, parts, lib.bits)
	}
	if err := agree(w, "loading PT-Scotch or checking the graph", err); err != nil {
		return nil, err
	}
	n := len(xadj) - 1

	// Every rank's vertex count, number of parts and SCOTCH_Num width:
	// ranks whose libraries differ would meet in PT-Scotch's collectives
	// with messages of different sizes (MPI aborts the job).
	mine := make([]byte, 24)
	binary.LittleEndian.PutUint64(mine, uint64(n))
	binary.LittleEndian.PutUint64(mine[8:], uint64(parts))
	binary.LittleEndian.PutUint64(mine[16:], uint64(lib.bits))
	all := make([]byte, 24*w.Size())
	if err := w.Allgather(mine, all); err != nil {
		return nil, fmt.Errorf("ptscotch.Part: gathering the ranks' vertex counts: %w", err)
	}
	var first, total int64
	for r := 0; r < w.Size(); r++ {
		if p := int64(binary.LittleEndian.Uint64(all[24*r+8:])); p != int64(parts) {
			return nil, fmt.Errorf("ptscotch.Part: the ranks ask for different numbers of parts: rank %d for %d, rank %d for %d", w.Rank(), parts, r, p)
		}
		if b := int(binary.LittleEndian.Uint64(all[24*r+16:])); b != lib.bits {
			return nil, fmt.Errorf("%w: the ranks loaded PT-Scotch builds of different SCOTCH_Num widths: rank %d %d-bit (%s), rank %d %d-bit (set %s alike on every rank)", ErrUnavailable, w.Rank(), lib.bits, lib.path, r, b, libraryEnv)
		}
		if r == w.Rank() {
			first = total
		}
		total += int64(binary.LittleEndian.Uint64(all[24*r:]))
	}
	limit := int64(math.MaxInt64)
	if lib.bits == 32 {
		limit = math.MaxInt32
	}
	if total > limit {
		return nil, fmt.Errorf("ptscotch.Part: %d vertices in all do not fit PT-Scotch's %d-bit SCOTCH_Num (%s; a 64-bit build, such as Debian's in scotch-int64/, through %s)", total, lib.bits, lib.path, libraryEnv)
	}
	err = nil
	for i := 0; i < n && err == nil; i++ {
		for j := xadj[i]; j < xadj[i+1]; j++ {
			if v := int64(adj[j]); v >= total {
				err = fmt.Errorf("adj[%d], a neighbour of vertex %d, is %d, beyond the %d vertices of the graph", j, first+int64(i), v, total)
				break
			} else if v == first+int64(i) {
				err = fmt.Errorf("vertex %d is its own neighbour (adj[%d]); the graph must have no self loops", v, j)
				break
			}
		}
	}
	if err := agree(w, "checking the graph's neighbours", err); err != nil {
		return nil, err
	}
	part := make([]int32, n)
	if total == 0 || parts == 1 {
		return part, nil
	}

	check := C.int(0)
	if checkGraph {
		check = 1
	}
	var rc, failed C.int
	call := func(x, a, p unsafe.Pointer) {
		w.Do(func() {
			rc = C.op2scotch_call_part(sh.part, (*unsafe.Pointer)(lib.fns), C.longlong(n), x, a,
				C.longlong(len(adj)), C.longlong(parts), p, check, &failed)
		})
	}
	if lib.bits == 32 {
		x := make([]int32, n+1)
		for i, v := range xadj {
			x[i] = int32(v)
		}
		a := adj
		if len(a) == 0 {
			a = []int32{0}
		}
		p := make([]int32, max(n, 1))
		call(unsafe.Pointer(&x[0]), unsafe.Pointer(&a[0]), unsafe.Pointer(&p[0]))
		copy(part, p)
	} else {
		a := make([]int64, max(len(adj), 1))
		for i, v := range adj {
			a[i] = int64(v)
		}
		p := make([]int64, max(n, 1))
		call(unsafe.Pointer(&xadj[0]), unsafe.Pointer(&a[0]), unsafe.Pointer(&p[0]))
		for i := range part {
			part[i] = int32(p[i])
		}
	}
	err = nil
	switch {
	case rc == 0:
		for i, p := range part {
			if p < 0 || int(p) >= parts {
				err = fmt.Errorf("SCOTCH_dgraphPart put vertex %d in part %d, outside [0, %d)", first+int64(i), p, parts)
				break
			}
		}
	case failed == -1:
		err = fmt.Errorf("MPI_Comm_dup failed (MPI error code %d)", int(rc))
	case rc == -2:
		err = fmt.Errorf("%s returned NULL (out of memory)", symbols[failed])
	default:
		err = fmt.Errorf("%s failed (SCOTCH return code %d; PT-Scotch printed why above)", symbols[failed], int(rc))
	}
	if err := agree(w, "partitioning with PT-Scotch", err); err != nil {
		return nil, err
	}
	return part, nil
}
