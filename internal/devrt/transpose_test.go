package devrt

import (
	"bytes"
	"fmt"
	"testing"
)

// TestTranspose: every value size, aligned or not, gives the byte-by-byte
// transpose, both ways.
func TestTranspose(t *testing.T) {
	for _, size := range []int{1, 2, 3, 4, 8, 16} {
		for _, shape := range [][2]int{{0, 4}, {1, 1}, {7, 3}, {5, 1}, {1, 6}, {33, 4}} {
			for _, off := range []int{0, 1} {
				rows, cols := shape[0], shape[1]
				n := rows * cols * size
				buf := make([]byte, n+off)
				src := buf[off:]
				for i := range src {
					src[i] = byte(i*7 + 3)
				}
				want := make([]byte, n)
				for r := 0; r < rows; r++ {
					for c := 0; c < cols; c++ {
						copy(want[(c*rows+r)*size:], src[(r*cols+c)*size:(r*cols+c+1)*size])
					}
				}
				got := make([]byte, n+off)[off:]
				transpose(got, src, rows, cols, size)
				if !bytes.Equal(got, want) {
					t.Errorf("size %d, %d×%d, offset %d: transpose differs", size, rows, cols, off)
				}
				back := make([]byte, n)
				transpose(back, got, cols, rows, size)
				if !bytes.Equal(back, src) {
					t.Errorf("size %d, %d×%d, offset %d: transposing back differs", size, rows, cols, off)
				}
			}
		}
	}
}

// BenchmarkTranspose: Airfoil's q (720 000 cells × 4 doubles) into its
// structure-of-arrays image.
func BenchmarkTranspose(b *testing.B) {
	for _, size := range []int{8, 4} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			rows, cols := 720000, 4
			src, dst := make([]byte, rows*cols*size), make([]byte, rows*cols*size)
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				transpose(dst, src, rows, cols, size)
			}
		})
	}
}
