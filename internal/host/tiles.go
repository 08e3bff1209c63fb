package host

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
typedef void *(*op2_begin_fn)(const long long *, void *const *);
typedef void (*op2_end_fn)(const long long *, void *const *);
typedef int (*op2_chain_fn)(int, const uintptr_t *, const uintptr_t *, const uintptr_t *, const int *, int, int);
typedef struct { uintptr_t dst, src, n; } op2_tile_const_copy;
static uintptr_t op2_call_begin(uintptr_t fn, uintptr_t iv, uintptr_t pv) {
	return (uintptr_t)((op2_begin_fn)fn)((const long long *)iv, (void *const *)pv);
}
static void op2_call_end(uintptr_t fn, uintptr_t iv, uintptr_t pv) {
	((op2_end_fn)fn)((const long long *)iv, (void *const *)pv);
}
static void op2_copy_consts(uintptr_t cc, int n) {
	const op2_tile_const_copy *c = (const op2_tile_const_copy *)cc;
	for (int i = 0; i < n; i++) memcpy((void *)c[i].dst, (const void *)c[i].src, c[i].n);
}
static int op2_call_chain(uintptr_t fn, int nloops, uintptr_t fns, uintptr_t ivs, uintptr_t pvs, uintptr_t colours, int ncolours, int nthreads) {
	return ((op2_chain_fn)fn)(nloops, (const uintptr_t *)fns, (const uintptr_t *)ivs, (const uintptr_t *)pvs, (const int *)colours, ncolours, nthreads);
}
*/
import "C"

import (
	"errors"
	"runtime"
	"unsafe"

	"github.com/goop2/op2/internal/codegen/hostc"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/jit"
)

// chainDriverSource is the chain driver: in one parallel region (built
// with OpenMP; without it, on the calling thread), for each
// colour in order, the colour's tiles are split statically among the
// threads (so that a run is repeatable for a thread count), and each
// thread runs each of its tiles through every loop of the chain in turn
// (hostc.TileRun), so that the tile's data stay in its cache.
const chainDriverSource = `#include <stdint.h>
#ifdef _OPENMP
#include <omp.h>
#endif
typedef int (*op2_tile_fn)(const long long *, void *const *, long long, long long, int);
static int op2_tiles(int nloops, const uintptr_t *fns, const uintptr_t *ivs, const uintptr_t *pvs, const int *colours, int ncolours, int tid, int parallel)
{
	int failed = 0;
	for (int c = 0; c < ncolours; c++) {
		if (parallel) {
			#pragma omp for schedule(static)
			for (int t = colours[c]; t < colours[c + 1]; t++)
				for (int j = 0; j < nloops; j++)
					failed |= ((op2_tile_fn)fns[j])((const long long *)ivs[j], (void *const *)pvs[j], t, t + 1, tid);
		} else {
			for (int t = colours[c]; t < colours[c + 1]; t++)
				for (int j = 0; j < nloops; j++)
					failed |= ((op2_tile_fn)fns[j])((const long long *)ivs[j], (void *const *)pvs[j], t, t + 1, tid);
		}
	}
	return failed;
}
__attribute__((visibility("default")))
int op2_chain(int nloops, const uintptr_t *fns, const uintptr_t *ivs, const uintptr_t *pvs, const int *colours, int ncolours, int nthreads)
{
	if (nthreads <= 1) return op2_tiles(nloops, fns, ivs, pvs, colours, ncolours, 0, 0);
	int failed = 0;
#ifdef _OPENMP
	#pragma omp parallel num_threads(nthreads) reduction(|:failed)
	failed |= op2_tiles(nloops, fns, ivs, pvs, colours, ncolours, omp_get_thread_num(), 1);
#else
	failed = op2_tiles(nloops, fns, ivs, pvs, colours, ncolours, 0, 0);
#endif
	return failed;
}
`

// ChainDriver runs every loop of a tiled chain in one OpenMP parallel
// region (chainDriverSource), or on the calling thread, with the tile
// forms of its loops (hostc.OpenMPTiles, hostc.SequentialTiles). Filling its arrays and calling it allocates
// nothing once they have grown to the chain's length.
type ChainDriver struct {
	lib           *jit.Library
	fn            unsafe.Pointer
	fns, ivs, pvs []C.uintptr_t // C memory, also held by mem
	mem           *driverMemory
}

// driverMemory is the C memory of a driver's arrays, freed when the
// driver is collected.
type driverMemory struct{ p [3]unsafe.Pointer }

func (m *driverMemory) free() {
	for _, p := range m.p {
		C.free(p)
	}
}

// NewChainDriver builds the chain driver with cc, with OpenMP when
// openmp is set (the openmp backend), else without it (the sequential
// backend, whose driver runs the tiles on the calling thread).
func NewChainDriver(cc *jit.Compiler, openmp bool) (*ChainDriver, error) {
	var flags []string
	if openmp {
		flags = []string{"-fopenmp"}
	}
	lib, err := cc.Build(chainDriverSource, []string{"op2_chain"}, flags...)
	if err != nil {
		return nil, err
	}
	fn, err := lib.Symbol("op2_chain")
	if err != nil {
		lib.Release()
		return nil, err
	}
	d := &ChainDriver{lib: lib, fn: fn, mem: new(driverMemory)}
	runtime.AddCleanup(d, func(m *driverMemory) { m.free() }, d.mem)
	return d, nil
}

// LazyChainDriver is a backend's chain driver, built the first time a
// tiled chain needs it (exec.TileChainRunner's TileChainReady and
// PrepareTileChain); Run is the driver's once it is built.
type LazyChainDriver struct{ *ChainDriver }

// Ready reports whether the driver is built.
func (d *LazyChainDriver) Ready() bool { return d.ChainDriver != nil }

// Prepare builds the driver (NewChainDriver) unless it is built.
func (d *LazyChainDriver) Prepare(cc *jit.Compiler, openmp bool) error {
	if d.ChainDriver != nil {
		return nil
	}
	cd, err := NewChainDriver(cc, openmp)
	if err != nil {
		return err
	}
	d.ChainDriver = cd
	return nil
}

// grow makes room for n loops in the driver's arrays.
func (d *ChainDriver) grow(n int) {
	if n <= len(d.fns) {
		return
	}
	n = max(n, 2*len(d.fns), 8)
	alloc := func() []C.uintptr_t {
		return unsafe.Slice((*C.uintptr_t)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(C.uintptr_t(0))))), n)
	}
	d.mem.free()
	d.fns, d.ivs, d.pvs = alloc(), alloc(), alloc()
	d.mem.p = [3]unsafe.Pointer{unsafe.Pointer(unsafe.SliceData(d.fns)), unsafe.Pointer(unsafe.SliceData(d.ivs)), unsafe.Pointer(unsafe.SliceData(d.pvs))}
}

// TileLoop is one loop of a chain for the driver: its program (the tile
// form) and the addresses of the form's functions.
type TileLoop struct {
	P                *Program
	Begin, Tile, End unsafe.Pointer // Begin and End nil for a loop without reductions
}

// NewTileLoop returns the tile-form functions of p, the tile form of
// loop l: TileRun, and TileBegin and TileEnd when l has Global
// reductions (hostc.TileBegin and the others).
func NewTileLoop(p *Program, l *core.Loop) (TileLoop, error) {
	tl := TileLoop{P: p}
	var err error
	if tl.Tile, err = p.Symbol(hostc.TileRun); err == nil && len(l.Sig.Reductions) > 0 {
		if tl.Begin, err = p.Symbol(hostc.TileBegin); err == nil {
			tl.End, err = p.Symbol(hostc.TileEnd)
		}
	}
	return tl, err
}

// ErrTileAlloc reports that a tile form could not allocate its working
// memory.
var ErrTileAlloc = errors.New("the generated code could not allocate its working memory (per-thread reduction results or map pointer arrays)")

// Run runs loops tile by tile over the tiles of colours (the tiles of
// colour c are [colours[c], colours[c+1]), pinned) on threads threads,
// the loops' programs bound and their tile lists set (PvTileRuns,
// PvTileOffsets). It must run on the master thread when threads > 1
// (OnMaster).
func (d *ChainDriver) Run(loops []TileLoop, colours []int32, threads int) error {
	d.grow(len(loops))
	var err error
	for j := range loops {
		tl := &loops[j]
		p := tl.P
		p.SetInt(hostc.IvThreads, threads)
		p.SetPtr(hostc.PvTileParts, nil)
		if tl.Begin != nil {
			parts := C.op2_call_begin(C.uintptr_t(uintptr(tl.Begin)), p.ivAddr(), p.pvAddr())
			if parts == 0 {
				err = ErrTileAlloc
			}
			p.pv[2*p.nargs+hostc.PvTileParts] = parts
		}
		if len(p.cc) > 0 {
			C.op2_copy_consts(C.uintptr_t(uintptr(unsafe.Pointer(unsafe.SliceData(p.cc)))), C.int(len(p.cc)))
		}
		d.fns[j], d.ivs[j], d.pvs[j] = C.uintptr_t(uintptr(tl.Tile)), p.ivAddr(), p.pvAddr()
	}
	if err == nil && C.op2_call_chain(C.uintptr_t(uintptr(d.fn)), C.int(len(loops)),
		C.uintptr_t(uintptr(unsafe.Pointer(unsafe.SliceData(d.fns)))), C.uintptr_t(uintptr(unsafe.Pointer(unsafe.SliceData(d.ivs)))),
		C.uintptr_t(uintptr(unsafe.Pointer(unsafe.SliceData(d.pvs)))), C.uintptr_t(uintptr(unsafe.Pointer(unsafe.SliceData(colours)))),
		C.int(len(colours)-1), C.int(threads)) != 0 {
		err = ErrTileAlloc
	}
	for j := range loops {
		tl := &loops[j]
		if tl.End != nil {
			C.op2_call_end(C.uintptr_t(uintptr(tl.End)), tl.P.ivAddr(), tl.P.pvAddr())
			tl.P.SetPtr(hostc.PvTileParts, nil)
		}
	}
	runtime.KeepAlive(colours)
	return err
}

// Symbol returns the address of a function of the program's library.
func (p *Program) Symbol(name string) (unsafe.Pointer, error) { return p.lib.Symbol(name) }

func (p *Program) ivAddr() C.uintptr_t {
	return C.uintptr_t(uintptr(unsafe.Pointer(unsafe.SliceData(p.iv))))
}

func (p *Program) pvAddr() C.uintptr_t {
	return C.uintptr_t(uintptr(unsafe.Pointer(unsafe.SliceData(p.pv))))
}
