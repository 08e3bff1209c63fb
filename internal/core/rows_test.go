package core

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// hostStage is a RowStage whose device memory is host memory.
type hostStage struct {
	send, recv []byte
	err        error
}

func (h *hostStage) Reserve(send, recv int) error {
	h.send, h.recv = make([]byte, send), make([]byte, recv)
	return nil
}
func (h *hostStage) Gather(s *Storage, off int, rows *RowList) error {
	return h.move(s, h.send, off, rows, false)
}
func (h *hostStage) Scatter(s *Storage, off int, rows *RowList) error {
	return h.move(s, h.recv, off, rows, true)
}

// move copies rows of s's device copy (dim 2) to mem at off, or back.
func (h *hostStage) move(s *Storage, mem []byte, off int, rows *RowList, scatter bool) error {
	if h.err != nil {
		return h.err
	}
	vals := s.Dev.(*rowBuf).vals
	packed := unsafe.Slice((*int32)(unsafe.Pointer(&mem[off])), 2*len(rows.Idx))
	for r, e := range rows.Idx {
		if scatter {
			copy(vals[2*e:2*e+2], packed[2*r:2*r+2])
		} else {
			copy(packed[2*r:2*r+2], vals[2*e:2*e+2])
		}
	}
	return nil
}
func (h *hostStage) ReadSend(dst unsafe.Pointer, off, n int) error {
	copy(unsafe.Slice((*byte)(dst), n), h.send[off:])
	return nil
}
func (h *hostStage) WriteRecv(src unsafe.Pointer, off, n int) error {
	copy(h.recv[off:], unsafe.Slice((*byte)(src), n))
	return nil
}
func (h *hostStage) Addresses() (uintptr, uintptr, bool) { return 0, 0, false }
func (h *hostStage) Finish() error                       { return nil }

// rowBuf is a device copy kept in host memory (dim 2) whose rows move
// through a stage, or that has none.
type rowBuf struct {
	vals  []int32
	stage *hostStage
}

func (b *rowBuf) Upload(*Storage) error   { return nil }
func (b *rowBuf) Download(*Storage) error { return nil }
func (b *rowBuf) Owner() any              { return b }
func (b *rowBuf) Free()                   {}
func (b *rowBuf) RowStage() (RowStage, bool) {
	return b.stage, b.stage != nil
}

// TestRowStages: the rows a Dat sends move through its device's stage
// only when the device copy alone is current, the rows it receives when
// the device copy is current (alone or with the host's, which it then is
// no longer); a device copy without a stage moves none; a failure names
// the data.
func TestRowStages(t *testing.T) {
	rows := NewRowList([]int32{3, 0, 2})
	if lo, hi := rows.Bounds(); lo != 0 || hi != 3 {
		t.Fatalf("Bounds = %d, %d, want 0, 3", lo, hi)
	}
	for _, c := range []struct {
		name       string
		state      DataState
		stage      bool
		err        error
		send, recv bool // the stage each way
	}{
		{"device", StateDevice, true, nil, true, true},
		{"both", StateBoth, true, nil, false, true},
		{"host", StateHost, true, nil, false, false},
		{"no stage", StateDevice, false, nil, false, false},
		{"failed", StateDevice, true, errors.New("launch failed"), true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &rowBuf{vals: []int32{0, 1, 10, 11, 20, 21, 30, 31}}
			if c.stage {
				b.stage = &hostStage{err: c.err}
			}
			s := &Storage{Name: "q", Type: Int32, Dim: 2, Len: 8, State: c.state, Dev: b}
			send, err := s.SendStage()
			if err != nil || (send != nil) != c.send {
				t.Fatalf("SendStage = %v, %v; want a stage %v", send, err, c.send)
			}
			recv, err := s.RecvStage(true)
			if err != nil || (recv != nil) != c.recv {
				t.Fatalf("RecvStage(device) = %v, %v; want a stage %v", recv, err, c.recv)
			}
			// A loop on the host binds the host copy: its rows go there.
			if host, err := s.RecvStage(false); err != nil && c.err == nil || host != nil {
				t.Fatalf("RecvStage(host) = %v, %v; want none", host, err)
			}
			if !c.send {
				return
			}
			check(t, send.Reserve(32, 32))
			err = s.GatherRows(send, 8, rows)
			if c.err != nil {
				if want := `gathering 3 elements of global "q"`; err == nil || !strings.Contains(err.Error(), want) || !strings.HasSuffix(err.Error(), "on the device: launch failed") {
					t.Errorf("gather error %v does not say %q", err, want)
				}
				if err := s.ScatterRows(recv, 0, rows); err == nil || s.State != StateDevice {
					t.Errorf("scatter: error %v, state %v; want an error", err, s.State)
				}
				return
			}
			check(t, err)
			got := make([]int32, 6)
			check(t, send.ReadSend(unsafe.Pointer(&got[0]), 8, 24))
			if want := []int32{30, 31, 0, 1, 20, 21}; !slices.Equal(got, want) {
				t.Errorf("gathered %v, want %v", got, want)
			}
			src := []int32{-1, -2, -3, -4, -5, -6}
			check(t, recv.WriteRecv(unsafe.Pointer(&src[0]), 4, 24))
			check(t, s.ScatterRows(recv, 4, rows))
			if want := []int32{-3, -4, 10, 11, -5, -6, -1, -2}; !slices.Equal(b.vals, want) {
				t.Errorf("scattered into %v, want %v", b.vals, want)
			}
			if s.State != StateDevice {
				t.Errorf("state after scattering %v, want DEVICE", s.State)
			}
		})
	}
}

// TestCountCopy: a stage's copies count in TransferStats.
func TestCountCopy(t *testing.T) {
	up0, down0, upB0, downB0 := TransferStats()
	CountCopy(true, 40)
	CountCopy(false, 24)
	up1, down1, upB1, downB1 := TransferStats()
	if up1-up0 != 1 || down1-down0 != 1 || upB1-upB0 != 40 || downB1-downB0 != 24 {
		t.Errorf("TransferStats moved by %d, %d, %d, %d; want 1, 1, 40, 24", up1-up0, down1-down0, upB1-upB0, downB1-downB0)
	}
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
