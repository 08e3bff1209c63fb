package devrt

import (
	"bytes"
	"fmt"
	"testing"
	"unsafe"
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

// TestStructureOfArraysCopies: a structure-of-arrays device copy written
// and read through the staging buffers, in one slice of elements or in
// several, or with elements larger than a staging buffer, holds component
// k of element e at k*n+e and reads back whole or by ranges.
func TestStructureOfArraysCopies(t *testing.T) {
	for _, tc := range []struct{ n, dim, esize int }{
		{5, 3, 8},
		{300001, 3, 8},              // 7.2 MB: two slices
		{stagingBytes/12 + 7, 3, 4}, // one element past a slice
		{3, stagingBytes/8 + 1, 8},  // elements larger than a staging buffer
	} {
		name := fmt.Sprintf("%d×%d×%d", tc.n, tc.dim, tc.esize)
		drv := newMock(0)
		row := tc.dim * tc.esize
		buf, _ := drv.Alloc(tc.n * row)
		d := &devBuf{drv: drv, buf: buf, soa: true, n: tc.n, dim: tc.dim, esize: tc.esize}
		host := make([]byte, tc.n*row)
		for i := range host {
			host[i] = byte(i*31 + i/251)
		}
		if err := d.soaRows(host, 0, true); err != nil {
			t.Fatalf("%s: upload: %v", name, err)
		}
		dev := buf.(*mockBuf).data
		for _, e := range []int{0, tc.n / 2, tc.n - 1} {
			for _, k := range []int{0, tc.dim - 1} {
				got := dev[(k*tc.n+e)*tc.esize : (k*tc.n+e+1)*tc.esize]
				want := host[e*row+k*tc.esize : e*row+(k+1)*tc.esize]
				if !bytes.Equal(got, want) {
					t.Fatalf("%s: component %d of element %d on the device is %v, want %v", name, k, e, got, want)
				}
			}
		}
		back := make([]byte, len(host))
		if err := d.soaRows(back, 0, false); err != nil || !bytes.Equal(back, host) {
			t.Fatalf("%s: reading the whole copy back differs (%v)", name, err)
		}
		first, count := tc.n/3, tc.n-tc.n/3-tc.n/5
		part := make([]byte, count*row)
		if err := d.DownloadRange(unsafe.Pointer(&part[0]), first*row, len(part)); err != nil || !bytes.Equal(part, host[first*row:(first+count)*row]) {
			t.Fatalf("%s: elements [%d, %d) read back differ (%v)", name, first, first+count, err)
		}
	}
}
