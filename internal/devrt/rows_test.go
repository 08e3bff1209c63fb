package devrt

import (
	"errors"
	"testing"
	"unsafe"
)

// hostMock is a mockDriver that allocates host memory, page-locked as far
// as the tests care, failing once fail is set.
type hostMock struct {
	*mockDriver
	allocs, frees int
	fail          bool
}

func (d *hostMock) AllocHost(n int) (unsafe.Pointer, error) {
	if d.fail {
		return nil, errors.New("out of page-locked memory")
	}
	d.allocs++
	return unsafe.Pointer(&make([]byte, n)[0]), nil
}

func (d *hostMock) FreeHost(unsafe.Pointer) { d.frees++ }

// TestRowsHostMessages: a driver that allocates page-locked memory gives
// the halo messages theirs, grown as exchanges grow and reused
// otherwise; once it fails, messages use other memory and it is not
// asked again; a driver without it gives none.
func TestRowsHostMessages(t *testing.T) {
	d := &hostMock{mockDriver: newMock(1 << 15)}
	r := &Rows{drv: d}
	send, recv, ok := r.HostMessages(100, 5000)
	if !ok || len(send) < 100 || len(recv) < 5000 || d.allocs != 2 {
		t.Fatalf("first: %d and %d bytes, ok %v, %d allocations; want ≥ 100, ≥ 5000, true, 2", len(send), len(recv), ok, d.allocs)
	}
	s2, r2, ok := r.HostMessages(90, 5000)
	if !ok || &s2[0] != &send[0] || &r2[0] != &recv[0] || d.allocs != 2 {
		t.Errorf("a smaller exchange: new memory (%d allocations), want the same", d.allocs)
	}
	if _, r3, _ := r.HostMessages(100, 20000); len(r3) < 20000 || d.allocs != 3 || d.frees != 1 {
		t.Errorf("a larger exchange: %d bytes, %d allocations, %d frees; want ≥ 20000, 3, 1", len(r3), d.allocs, d.frees)
	}
	d.fail = true
	if _, _, ok := r.HostMessages(1e6, 10); ok {
		t.Error("memory given when the driver failed to allocate it")
	}
	d.fail = false
	if _, _, ok := r.HostMessages(10, 10); ok || d.allocs != 3 {
		t.Errorf("after a failure: ok %v, %d allocations; want false, 3 (not asked again)", ok, d.allocs)
	}
	if _, _, ok := (&Rows{drv: newMock(1 << 15)}).HostMessages(10, 10); ok {
		t.Error("memory given by a driver without AllocHost")
	}
}
