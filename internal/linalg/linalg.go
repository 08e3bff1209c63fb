// Package linalg holds the sparse matrix kernels the run time calls
// itself, in C (compiled with the package, not generated per loop):
// the product of a block compressed-row matrix with a vector, on one
// thread or split by rows between threads.
//
// The threads are goroutines, not OpenMP's: a package linked with
// -fopenmp would load libgomp with every GoOP2 program, and libgomp reads
// its environment (OMP_WAIT_POLICY, GOMP_SPINCOUNT) once, when it is
// loaded; the openmp backend sets their defaults before it loads libgomp
// with its first loop (internal/backend/openmp).
package linalg

/*
#cgo CFLAGS: -O3
#include <stddef.h>
#include <stdint.h>

// OP2_AHEAD is how far ahead, in bytes, the product prefetches the
// values and column indices it streams through: the next 4 KiB page
// and beyond, where the hardware prefetchers do not go by themselves.
// Measured on AMD EPYC (Zen 3, 2 vCPU) for a P1 stiffness matrix of
// 502 681 rows: 3.3-3.5 ms without, 1.9-2.1 ms with, on one thread.
// Prefetches never fault, so running past the arrays' ends is harmless.
#define OP2_AHEAD 4096
#define OP2_PREFETCH(p) __builtin_prefetch((const char *)(p) + OP2_AHEAD, 0, 0)

#define SPMV(name, T) \
static void name(int64_t r0, int64_t r1, const int32_t *rowptr, const int32_t *colidx, const T *vals, \
		int rdim, int cdim, const T *restrict x, T *restrict y) { \
	const int64_t bs = (int64_t)rdim * cdim; \
	if (rdim == 1 && cdim == 1) { \
		for (int64_t r = r0; r < r1; r++) { \
			T s = 0; \
			const int64_t k0 = rowptr[r]; \
			OP2_PREFETCH(vals + k0); \
			OP2_PREFETCH(colidx + k0); \
			for (int64_t k = k0; k < rowptr[r + 1]; k++) s += vals[k] * x[colidx[k]]; \
			y[r] = s; \
		} \
		return; \
	} \
	for (int64_t r = r0; r < r1; r++) { \
		T *yr = y + r * rdim; \
		for (int a = 0; a < rdim; a++) yr[a] = 0; \
		OP2_PREFETCH(colidx + rowptr[r]); \
		for (int64_t k = rowptr[r]; k < rowptr[r + 1]; k++) { \
			OP2_PREFETCH(vals + k * bs); \
			const T *blk = vals + k * bs; \
			const T *xc = x + (int64_t)colidx[k] * cdim; \
			for (int a = 0; a < rdim; a++) { \
				T s = 0; \
				for (int b = 0; b < cdim; b++) s += blk[a * cdim + b] * xc[b]; \
				yr[a] += s; \
			} \
		} \
	} \
}
SPMV(op2_spmv_d, double)
SPMV(op2_spmv_f, float)

// op2_split is the first row of piece t of nt when the rows are cut into
// pieces of about equal numbers of blocks: the first row r with
// rowptr[r] >= blocks * t / nt.
static int64_t op2_split(const int32_t *rowptr, int64_t nrows, int t, int nt) {
	if (t >= nt) return nrows;
	const int64_t want = (int64_t)rowptr[nrows] * t / nt;
	int64_t lo = 0, hi = nrows;
	while (lo < hi) {
		const int64_t mid = lo + (hi - lo) / 2;
		if (rowptr[mid] < want) lo = mid + 1; else hi = mid;
	}
	return lo;
}

static void op2_spmv_rows(int f32, int64_t r0, int64_t r1, uintptr_t rowptr, uintptr_t colidx, uintptr_t vals,
		int rdim, int cdim, uintptr_t x, uintptr_t y) {
	if (f32)
		op2_spmv_f(r0, r1, (const int32_t *)rowptr, (const int32_t *)colidx, (const float *)vals, rdim, cdim,
			(const float *)x, (float *)y);
	else
		op2_spmv_d(r0, r1, (const int32_t *)rowptr, (const int32_t *)colidx, (const double *)vals, rdim, cdim,
			(const double *)x, (double *)y);
}

*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// parallelMin is the fewest values per thread for which MulBlockThreads
// uses more than one thread: below it, starting the threads costs more
// than they save.
var parallelMin = 1 << 15

// Threads is how many of threads threads MulBlockThreads uses for a
// matrix of nrows block rows and nvals values: at least 1, at most one
// per row, and none that would get fewer than 32 768 values (below
// that, waking a thread costs more than it saves).
func Threads(threads, nrows, nvals int) int {
	return max(1, min(threads, nvals/max(parallelMin, 1), nrows))
}

// MulBlock sets y = A x for the block compressed-row matrix A of len(rowptr)-1
// block rows: the blocks of row r are at columns colidx[rowptr[r]:rowptr[r+1]],
// each rdim×cdim values of vals, row-major. x holds cdim values per block
// column, y rdim per block row; x and y must not overlap. The sums of each
// scalar row are made in the order of the row's blocks, then its columns.
// The column indices must be within x (cdim values per block column):
// patterns built by package sparsity are, and only their sizes are
// checked here, so that a product costs no pass over the pattern in Go.
func MulBlock[T float32 | float64](rowptr, colidx []int32, vals []T, rdim, cdim int, x, y []T) error {
	return MulBlockThreads(1, rowptr, colidx, vals, rdim, cdim, x, y)
}

// MulBlockThreads is MulBlock on up to threads threads (the caller's
// and threads-1 goroutines), each computing a contiguous piece of the
// rows with about as many blocks as the others (fewer threads when the
// matrix is small: Threads). Every row's sum is made as MulBlock makes
// it, so the result does not depend on the thread count.
func MulBlockThreads[T float32 | float64](threads int, rowptr, colidx []int32, vals []T, rdim, cdim int, x, y []T) error {
	nrows := len(rowptr) - 1
	switch {
	case nrows < 0:
		return fmt.Errorf("linalg: no row offsets")
	case rdim < 1 || cdim < 1:
		return fmt.Errorf("linalg: block dims %d×%d", rdim, cdim)
	case len(colidx) != int(rowptr[nrows]) || len(vals) != len(colidx)*rdim*cdim:
		return fmt.Errorf("linalg: %d blocks, %d column indices and %d values of %d×%d", rowptr[nrows], len(colidx), len(vals), rdim, cdim)
	case len(y) != nrows*rdim:
		return fmt.Errorf("linalg: y has %d values, want %d", len(y), nrows*rdim)
	case threads < 1:
		return fmt.Errorf("linalg: %d threads", threads)
	}
	if nrows == 0 {
		return nil
	}
	threads = Threads(threads, nrows, len(vals))
	var z T
	f32 := C.int(0)
	if unsafe.Sizeof(z) == 4 {
		f32 = 1
	}
	p := func(v unsafe.Pointer) C.uintptr_t { return C.uintptr_t(uintptr(v)) }
	var xp, cp, vp unsafe.Pointer
	if len(x) > 0 {
		xp = unsafe.Pointer(&x[0])
	}
	if len(colidx) > 0 {
		cp, vp = unsafe.Pointer(&colidx[0]), unsafe.Pointer(&vals[0])
	}
	rows := func(t int) {
		r0 := C.op2_split((*C.int32_t)(unsafe.Pointer(&rowptr[0])), C.int64_t(nrows), C.int(t), C.int(threads))
		r1 := C.op2_split((*C.int32_t)(unsafe.Pointer(&rowptr[0])), C.int64_t(nrows), C.int(t+1), C.int(threads))
		C.op2_spmv_rows(f32, r0, r1, p(unsafe.Pointer(&rowptr[0])), p(cp), p(vp), C.int(rdim), C.int(cdim), p(xp), p(unsafe.Pointer(&y[0])))
	}
	var wg sync.WaitGroup
	for t := 1; t < threads; t++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows(t)
		}()
	}
	rows(0)
	wg.Wait()
	runtime.KeepAlive(rowptr)
	runtime.KeepAlive(colidx)
	runtime.KeepAlive(vals)
	runtime.KeepAlive(x)
	runtime.KeepAlive(y)
	return nil
}
