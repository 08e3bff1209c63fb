package core

import (
	"fmt"
	"slices"
	"unsafe"
)

// RowList is a fixed list of element numbers whose values move together
// between ranks: a halo's send rows, or the rows it receives. A device
// backend keeps its own copy of the list (DeviceCopy), made the first
// time the list moves rows of one of its device copies.
type RowList struct {
	Idx []int32
	// lo and hi are the smallest and largest element of Idx.
	lo, hi int
	// owner and dev are the device copy of Idx and the backend instance
	// it belongs to.
	owner, dev any
}

// NewRowList returns the list of the elements idx.
func NewRowList(idx []int32) *RowList {
	r := &RowList{Idx: idx}
	if len(idx) > 0 {
		r.lo, r.hi = int(slices.Min(idx)), int(slices.Max(idx))
	}
	return r
}

// Bounds returns the smallest and largest element of the list (0 and 0
// for an empty list).
func (r *RowList) Bounds() (lo, hi int) { return r.lo, r.hi }

// DeviceCopy returns the device copy of the list that backend owner
// stored with SetDeviceCopy, if any.
func (r *RowList) DeviceCopy(owner any) (any, bool) {
	if r.dev == nil || r.owner != owner {
		return nil, false
	}
	return r.dev, true
}

// SetDeviceCopy stores backend owner's device copy of the list.
func (r *RowList) SetDeviceCopy(owner, dev any) { r.owner, r.dev = owner, dev }

// RowStage is a device's memory for halo messages. Rows of its device
// copies are gathered into its send memory, each list at the byte offset
// the message layout gives it, and scattered from its receive memory, by
// launches queued on the device; the send memory then goes to the host in
// one copy, and received rows come the other way. An MPI library that
// reads and writes device memory itself (a CUDA-aware MPI) takes the send
// and receive memory directly (Addresses), and nothing passes through the
// host. A device copy offers its device's stage through RowStager.
type RowStage interface {
	// Reserve makes the send and receive memory at least send and recv
	// bytes long. It may replace them, so no message may be in flight.
	Reserve(send, recv int) error
	// Gather queues the copy of elements rows.Idx of s's device copy,
	// one after another as the host lays them out, to byte offset off
	// of the send memory.
	Gather(s *Storage, off int, rows *RowList) error
	// Scatter queues the copy of consecutive elements at byte offset
	// off of the receive memory to elements rows.Idx of s's device copy.
	Scatter(s *Storage, off int, rows *RowList) error
	// ReadSend copies n bytes at offset off of the send memory to dst,
	// once the gathers queued before have written them.
	ReadSend(dst unsafe.Pointer, off, n int) error
	// WriteRecv copies n bytes from src to offset off of the receive
	// memory; src may be reused once it returns.
	WriteRecv(src unsafe.Pointer, off, n int) error
	// Addresses returns the device addresses of the send and receive
	// memory, as an MPI library that reads device memory takes them; ok
	// is false when the device's memory has none (OpenCL).
	Addresses() (send, recv uintptr, ok bool)
	// Finish waits until the queued gathers have written the send
	// memory (before an MPI library reads it at its address).
	Finish() error
}

// HostMessages is a RowStage that gives host memory for the messages that
// its copies move faster than other memory (page-locked memory, which a
// CUDA copy moves at the bus's full rate): at least send and recv bytes,
// reused from one exchange to the next; ok is false when it has none.
type HostMessages interface {
	HostMessages(send, recv int) (sendBuf, recvBuf []byte, ok bool)
}

// RowStager is a device copy whose rows move through its device's
// RowStage; ok is false when this copy's rows cannot (say, elements whose
// size is not a multiple of 4 bytes).
type RowStager interface {
	RowStage() (stage RowStage, ok bool)
}

// SendStage returns the stage through which the rows s sends move: its
// device's, when only the device copy is current (nil when the rows are
// to be read from the host copy, with no wait for the device). No state
// changes.
func (s *Storage) SendStage() (RowStage, error) {
	return s.stage(false)
}

// RecvStage returns the stage through which the rows s receives move,
// for a loop whose program reads s on a device (device) or on the host:
// on a device, its device's, when its device copy is current, alone or
// with the host copy; else nil, the rows to be written to the host copy
// (a host loop binds the host copy, which the device's would not reach).
func (s *Storage) RecvStage(device bool) (RowStage, error) {
	if !device {
		return nil, s.Settle()
	}
	return s.stage(true)
}

func (s *Storage) stage(recv bool) (RowStage, error) {
	if err := s.Settle(); err != nil {
		return nil, err
	}
	if s.State != StateDevice && (!recv || s.State != StateBoth) {
		return nil, nil
	}
	if st, ok := s.Dev.(RowStager); ok {
		if stage, ok := st.RowStage(); ok {
			return stage, nil
		}
	}
	return nil, nil
}

// GatherRows queues the gathering of elements rows.Idx of s's device
// copy into stage's send memory at byte offset off (stage is s's
// SendStage).
func (s *Storage) GatherRows(stage RowStage, off int, rows *RowList) error {
	if len(rows.Idx) == 0 {
		return nil
	}
	if err := stage.Gather(s, off, rows); err != nil {
		return fmt.Errorf("gathering %d elements of %s on the device: %w", len(rows.Idx), s.Describe(), err)
	}
	return nil
}

// ScatterRows queues the scattering of consecutive elements at byte
// offset off of stage's receive memory to elements rows.Idx of s's device
// copy (stage is s's RecvStage), which is then the only current copy.
func (s *Storage) ScatterRows(stage RowStage, off int, rows *RowList) error {
	if len(rows.Idx) == 0 {
		return nil
	}
	if err := stage.Scatter(s, off, rows); err != nil {
		return fmt.Errorf("scattering %d elements of %s on the device: %w", len(rows.Idx), s.Describe(), err)
	}
	s.State = StateDevice
	return nil
}

// CountCopy counts one copy of n bytes between host and device made
// outside a Storage's own copies (a stage's message memory), in
// TransferStats: to the device when up is set, else from it.
func CountCopy(up bool, n int) {
	if up {
		uploads.Add(1)
		uploadBytes.Add(uint64(n))
		return
	}
	downloads.Add(1)
	downloadBytes.Add(uint64(n))
}
