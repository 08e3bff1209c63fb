package core

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// rowBuf is a device copy kept in host memory that moves rows itself, or
// refuses to (ErrNoRowOps), or fails.
type rowBuf struct {
	vals []int32 // dim 2
	err  error
}

func (b *rowBuf) Upload(*Storage) error   { return nil }
func (b *rowBuf) Download(*Storage) error { return nil }
func (b *rowBuf) Owner() any              { return b }
func (b *rowBuf) Free()                   {}
func (b *rowBuf) GatherRows(s *Storage, dst unsafe.Pointer, rows *RowList) error {
	if b.err != nil {
		return b.err
	}
	out := unsafe.Slice((*int32)(dst), 2*len(rows.Idx))
	for r, e := range rows.Idx {
		copy(out[2*r:2*r+2], b.vals[2*e:2*e+2])
	}
	return nil
}
func (b *rowBuf) ScatterRows(s *Storage, src unsafe.Pointer, rows *RowList) error {
	if b.err != nil {
		return b.err
	}
	in := unsafe.Slice((*int32)(src), 2*len(rows.Idx))
	for r, e := range rows.Idx {
		copy(b.vals[2*e:2*e+2], in[2*r:2*r+2])
	}
	return nil
}

// TestRowsOnDevice: rows are gathered on the device only when the device
// copy alone is current, and scattered there when it is current (alone or
// with the host's, which it then is no longer), and when it can move them;
// a device that cannot says so with ErrNoRowOps and the caller falls back;
// another failure names the data.
func TestRowsOnDevice(t *testing.T) {
	rows := NewRowList([]int32{3, 0, 2})
	if lo, hi := rows.Bounds(); lo != 0 || hi != 3 {
		t.Fatalf("Bounds = %d, %d, want 0, 3", lo, hi)
	}
	for _, c := range []struct {
		name      string
		state     DataState
		err       error
		moved     bool // gathered
		scattered bool
		errors    bool
	}{
		{"device", StateDevice, nil, true, true, false},
		{"both", StateBoth, nil, false, true, false},
		{"host", StateHost, nil, false, false, false},
		{"refused", StateDevice, ErrNoRowOps, false, false, false},
		{"failed", StateDevice, errors.New("launch failed"), false, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &rowBuf{vals: []int32{0, 1, 10, 11, 20, 21, 30, 31}, err: c.err}
			s := &Storage{Name: "q", Type: Int32, Dim: 2, Len: 8, State: c.state, Dev: b}
			_, down0, _, _ := TransferStats()
			dst := make([]int32, 6)
			moved, err := s.GatherRowsOnDevice(unsafe.Pointer(&dst[0]), rows)
			if moved != c.moved || (err != nil) != c.errors {
				t.Fatalf("gather: moved %v, err %v; want %v, error %v", moved, err, c.moved, c.errors)
			}
			if c.errors {
				if want := `3 elements of global "q"`; err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("gather error %q does not name %q", err, want)
				}
				return
			}
			_, down1, _, _ := TransferStats()
			if moved {
				if want := []int32{30, 31, 0, 1, 20, 21}; !slices.Equal(dst, want) {
					t.Errorf("gathered %v, want %v", dst, want)
				}
				if down1 != down0+1 {
					t.Errorf("downloads %d → %d, want one more", down0, down1)
				}
			}
			src := []int32{-1, -2, -3, -4, -5, -6}
			moved, err = s.ScatterRowsOnDevice(unsafe.Pointer(&src[0]), rows)
			if moved != c.scattered || err != nil {
				t.Fatalf("scatter: moved %v, err %v; want %v, nil", moved, err, c.scattered)
			}
			if moved {
				if want := []int32{-3, -4, 10, 11, -5, -6, -1, -2}; !slices.Equal(b.vals, want) {
					t.Errorf("scattered into %v, want %v", b.vals, want)
				}
				if s.State != StateDevice {
					t.Errorf("state after scattering %v, want DEVICE", s.State)
				}
			}
		})
	}
}
