package linalg

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// mulRef is MulBlock in Go, summing in the same order.
func mulRef[T float32 | float64](rowptr, colidx []int32, vals []T, rdim, cdim int, x []T) []T {
	y := make([]T, (len(rowptr)-1)*rdim)
	for r := 0; r+1 < len(rowptr); r++ {
		for k := rowptr[r]; k < rowptr[r+1]; k++ {
			for a := 0; a < rdim; a++ {
				var s T
				for b := 0; b < cdim; b++ {
					s += vals[int(k)*rdim*cdim+a*cdim+b] * x[int(colidx[k])*cdim+b]
				}
				y[r*rdim+a] += s
			}
		}
	}
	return y
}

func randomBlockCSR(rng *rand.Rand, nrows, ncols int) (rowptr, colidx []int32) {
	rowptr = []int32{0}
	for range nrows {
		for c := range ncols {
			if rng.IntN(3) == 0 {
				colidx = append(colidx, int32(c))
			}
		}
		rowptr = append(rowptr, int32(len(colidx)))
	}
	return rowptr, colidx
}

func testMul[T float32 | float64](t *testing.T) {
	// Every product is split between threads, however small.
	defer func(n int) { parallelMin = n }(parallelMin)
	parallelMin = 1
	rng := rand.New(rand.NewPCG(9, 9))
	for trial := range 50 {
		nrows, ncols, rdim, cdim := rng.IntN(20), 1+rng.IntN(20), 1+rng.IntN(3), 1+rng.IntN(3)
		rowptr, colidx := randomBlockCSR(rng, nrows, ncols)
		vals := make([]T, len(colidx)*rdim*cdim)
		for i := range vals {
			vals[i] = T(rng.IntN(17)) - 8
		}
		x := make([]T, ncols*cdim)
		for i := range x {
			x[i] = T(rng.IntN(9)) * 0.5
		}
		want := mulRef(rowptr, colidx, vals, rdim, cdim, x)
		for _, threads := range []int{1, 2, 3, 7} {
			y := make([]T, nrows*rdim)
			for i := range y {
				y[i] = -1 // every value must be set
			}
			if err := MulBlockThreads(threads, rowptr, colidx, vals, rdim, cdim, x, y); err != nil {
				t.Fatal(err)
			}
			for i := range y {
				if y[i] != want[i] {
					t.Fatalf("trial %d, %d threads: y[%d] = %v, want %v", trial, threads, i, y[i], want[i])
				}
			}
		}
	}
}

func TestMulBlock(t *testing.T) {
	t.Run("float64", testMul[float64])
	t.Run("float32", testMul[float32])
}

func TestMulBlockErrors(t *testing.T) {
	rowptr, colidx := []int32{0, 1}, []int32{2}
	vals := []float64{1}
	tests := []struct {
		name string
		x, y []float64
		want string
	}{
		{"short y", []float64{1, 2, 3}, nil, "y has 0 values, want 1"},
	}
	for _, tc := range tests {
		if err := MulBlock(rowptr, colidx, vals, 1, 1, tc.x, tc.y); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if err := MulBlockThreads(0, rowptr, colidx, vals, 1, 1, []float64{1, 2, 3}, []float64{0}); err == nil || !strings.Contains(err.Error(), "0 threads") {
		t.Errorf("0 threads: %v", err)
	}
}

// gridPattern is the pattern of P1 elements on an n×n grid of squares
// cut into triangles along one diagonal: each node coupled with itself,
// its 4 axis neighbours and 2 diagonal ones, as a stiffness matrix is.
func gridPattern(n int) (rowptr, colidx []int32) {
	rowptr = []int32{0}
	for j := 0; j <= n; j++ {
		for i := 0; i <= n; i++ {
			for _, d := range [][2]int{{-1, -1}, {0, -1}, {-1, 0}, {0, 0}, {1, 0}, {0, 1}, {1, 1}} {
				a, b := i+d[0], j+d[1]
				if a >= 0 && a <= n && b >= 0 && b <= n {
					colidx = append(colidx, int32(b*(n+1)+a))
				}
			}
			rowptr = append(rowptr, int32(len(colidx)))
		}
	}
	return rowptr, colidx
}

// BenchmarkMulBlock multiplies a P1 stiffness pattern of 502 681 rows
// (the matrix of cmd/poisson -n 708) by a vector, on 1 and 2 threads,
// and reports the bytes the product must move per second (values,
// column indices and row offsets once, x and y once).
func BenchmarkMulBlock(b *testing.B) {
	rowptr, colidx := gridPattern(708)
	n := len(rowptr) - 1
	vals := make([]float64, len(colidx))
	for i := range vals {
		vals[i] = float64(i%7) - 3
	}
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = 1
	}
	bytes := float64(12*len(colidx) + 4*(n+1) + 16*n)
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			for b.Loop() {
				if err := MulBlockThreads(threads, rowptr, colidx, vals, 1, 1, x, y); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(bytes*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

// TestNoOpenMPRuntimeLinked: the package does not link the OpenMP run
// time, so that a GoOP2 program loads libgomp only with its first openmp
// loop, after the openmp backend has set libgomp's waiting defaults
// (libgomp reads its environment once, when it is loaded).
func TestNoOpenMPRuntimeLinked(t *testing.T) {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skipf("no /proc/self/maps: %v", err)
	}
	if strings.Contains(string(maps), "libgomp") {
		t.Errorf("libgomp is loaded at start-up:\n%s", maps)
	}
}
