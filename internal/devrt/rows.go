package devrt

import (
	"fmt"
	"unsafe"

	"github.com/goop2/op2/internal/codegen/device"
	"github.com/goop2/op2/internal/core"
)

// Rows is a device's stage for halo messages (core.RowStage): a kernel
// built from device.RowsSource gathers chosen elements of a device copy
// into the send memory, at the offset the message layout gives them, or
// scatters them from the receive memory; the memory moves to and from
// the host in one copy each way, or, where the driver has device
// addresses (Addresser), goes to an MPI library that reads device memory
// as it is. A backend's driver offers it through RowMover.
type Rows struct {
	drv   Driver
	build func() (Kernel, error)
	k     Kernel
	err   error
	// The send and receive memory and their sizes in bytes.
	send, recv         Buffer
	sendSize, recvSize int
	args               []Arg
	// The host's message memory, page-locked (HostAllocator), its sizes,
	// and whether the driver could give none.
	hostSend, hostRecv         unsafe.Pointer
	hostSendSize, hostRecvSize int
	noHost                     bool
}

// NewRows returns the stage of driver drv, whose rows kernel build
// compiles from device.RowsSource in the backend's dialect (called once,
// the first time rows move).
func NewRows(drv Driver, build func() (Kernel, error)) Rows {
	return Rows{drv: drv, build: build}
}

// RowMover is a Driver whose device copies move rows on the device.
type RowMover interface {
	Rows() *Rows
}

// Addresser is a Driver whose buffers have device addresses that other
// libraries take as they are: CUDA's, which a CUDA-aware MPI reads and
// writes.
type Addresser interface {
	// Address is b's device address.
	Address(b Buffer) uintptr
	// Finish waits until everything queued on the device is done.
	Finish() error
}

// HostAllocator is a Driver that allocates page-locked host memory, which
// its copies to and from the device move at the bus's full rate.
type HostAllocator interface {
	AllocHost(n int) (unsafe.Pointer, error)
	FreeHost(p unsafe.Pointer)
}

var (
	_ core.RowStage     = (*Rows)(nil)
	_ core.HostMessages = (*Rows)(nil)
)

// RowStage returns the stage of d's device (core.RowStager), which moves
// d's rows when its driver can and its elements are whole 32-bit words.
func (d *devBuf) RowStage() (core.RowStage, bool) {
	rm, ok := d.drv.(RowMover)
	if !ok || d.esize%4 != 0 {
		return nil, false
	}
	return rm.Rows(), true
}

// kernel returns the rows kernel, building it the first time.
func (r *Rows) kernel() (Kernel, error) {
	if r.k == nil && r.err == nil {
		if r.build == nil {
			r.err = fmt.Errorf("%s moves no rows on the device", r.drv.Describe())
		} else if r.k, r.err = r.build(); r.err != nil {
			r.err = fmt.Errorf("building the halo rows kernel: %w", r.err)
		}
	}
	return r.k, r.err
}

// Reserve makes the send and receive memory at least send and recv bytes
// long, replacing a shorter one (regrow).
func (r *Rows) Reserve(send, recv int) error {
	if err := regrow(&r.send, &r.sendSize, send, r.drv.Alloc, r.drv.Free); err != nil {
		return err
	}
	return regrow(&r.recv, &r.recvSize, recv, r.drv.Alloc, r.drv.Free)
}

// HostMessages returns page-locked host memory for the send and receive
// messages, at least send and recv bytes (core.HostMessages), replacing a
// shorter one; ok is false when the driver gives none.
func (r *Rows) HostMessages(send, recv int) (sendBuf, recvBuf []byte, ok bool) {
	a, ok := r.drv.(HostAllocator)
	if !ok || r.noHost {
		return nil, nil, false
	}
	if regrow(&r.hostSend, &r.hostSendSize, send, a.AllocHost, a.FreeHost) != nil ||
		regrow(&r.hostRecv, &r.hostRecvSize, recv, a.AllocHost, a.FreeHost) != nil {
		r.noHost = true // the next exchange uses Go's memory; this one too
		return nil, nil, false
	}
	return unsafe.Slice((*byte)(r.hostSend), r.hostSendSize), unsafe.Slice((*byte)(r.hostRecv), r.hostRecvSize), true
}

// regrow replaces *b, of *size bytes, by a new allocation when it is
// shorter than n: of n bytes, 4 KiB and twice the old size at least, so
// that exchanges that grow little by little allocate seldom.
func regrow[B comparable](b *B, size *int, n int, alloc func(int) (B, error), free func(B)) error {
	var none B
	if *b != none && *size >= n {
		return nil
	}
	n = max(n, 4096, 2*(*size))
	nb, err := alloc(n)
	if err != nil {
		return err
	}
	if *b != none {
		free(*b)
	}
	*b, *size = nb, n
	return nil
}

// index returns the device copy of rows' element numbers, made the first
// time.
func index(drv Driver, owner any, rows *core.RowList) (Buffer, error) {
	if b, ok := rows.DeviceCopy(owner); ok {
		return b.(Buffer), nil
	}
	n := len(rows.Idx) * 4
	b, err := drv.Alloc(n)
	if err != nil {
		return nil, err
	}
	if err := drv.Write(b, unsafe.Pointer(unsafe.SliceData(rows.Idx)), n); err != nil {
		drv.Free(b)
		return nil, err
	}
	rows.SetDeviceCopy(owner, b)
	return b, nil
}

// Gather and Scatter are core.RowStage's.
func (r *Rows) Gather(s *core.Storage, off int, rows *core.RowList) error {
	return r.move(s, off, rows, false)
}
func (r *Rows) Scatter(s *core.Storage, off int, rows *core.RowList) error {
	return r.move(s, off, rows, true)
}

// move gathers (or, with scatter, scatters) the elements rows.Idx of s's
// device copy to (from) byte offset off of the send (receive) memory.
func (r *Rows) move(s *core.Storage, off int, rows *core.RowList, scatter bool) error {
	d, ok := s.Dev.(*devBuf)
	if !ok || d.drv != r.drv {
		return fmt.Errorf("the data is not on %s", r.drv.Describe())
	}
	k, err := r.kernel()
	if err != nil {
		return err
	}
	nrows, row := len(rows.Idx), d.dim*d.esize
	if row != s.Dim*s.Type.Size() {
		return fmt.Errorf("the device copy has %d-byte elements, the data %d", row, s.Dim*s.Type.Size())
	}
	if lo, hi := rows.Bounds(); lo < 0 || hi >= d.n {
		return fmt.Errorf("elements %d to %d are not all among the %d elements of the device copy", lo, hi, d.n)
	}
	mem, size := r.send, r.sendSize
	if scatter {
		mem, size = r.recv, r.recvSize
	}
	n := nrows * row
	if off < 0 || off%4 != 0 || off+n > size {
		return fmt.Errorf("%d bytes at offset %d do not fit the %d bytes of message memory reserved", n, off, size)
	}
	idx, err := index(d.drv, d.owner, rows)
	if err != nil {
		return err
	}
	soa, sc := 0, 0
	if d.soa {
		soa = 1
	}
	if scatter {
		sc = 1
	}
	r.args = append(r.args[:0], Arg{Kind: ArgInt, Int: nrows}, Arg{Kind: ArgBuffer, Buf: idx}, Arg{Kind: ArgBuffer, Buf: d.buf},
		Arg{Kind: ArgInt, Int: d.n}, Arg{Kind: ArgBuffer, Buf: mem}, Arg{Kind: ArgInt, Int: off / 4}, Arg{Kind: ArgInt, Int: row / 4},
		Arg{Kind: ArgInt, Int: d.esize / 4}, Arg{Kind: ArgInt, Int: soa}, Arg{Kind: ArgInt, Int: sc})
	wg := device.RowsWorkGroupSize
	err = r.drv.Launch(k, r.args, min((n/4+wg-1)/wg, device.MaxDirectGroups), wg)
	clear(r.args) // keep no buffer alive
	return err
}

// ReadSend copies n bytes at offset off of the send memory to dst.
func (r *Rows) ReadSend(dst unsafe.Pointer, off, n int) error {
	if n == 0 {
		return nil
	}
	return r.drv.ReadAt(r.send, off, dst, n)
}

// WriteRecv copies n bytes from src to offset off of the receive memory.
func (r *Rows) WriteRecv(src unsafe.Pointer, off, n int) error {
	if n == 0 {
		return nil
	}
	return r.drv.WriteAt(r.recv, off, src, n)
}

// Addresses returns the send and receive memory's device addresses when
// the driver has them (Addresser).
func (r *Rows) Addresses() (send, recv uintptr, ok bool) {
	a, ok := r.drv.(Addresser)
	if !ok || r.send == nil || r.recv == nil {
		return 0, 0, false
	}
	return a.Address(r.send), a.Address(r.recv), true
}

// Finish waits for the queued gathers where the driver queues work
// (Addresser); a driver without addresses has its send memory read by
// ReadSend, which waits for them.
func (r *Rows) Finish() error {
	if a, ok := r.drv.(Addresser); ok {
		return a.Finish()
	}
	return nil
}
