package devrt

import (
	"fmt"
	"unsafe"

	"github.com/goop2/op2/internal/codegen/device"
	"github.com/goop2/op2/internal/core"
)

// Rows moves chosen elements of a backend's device copies to and from
// host memory on the device (core.RowOps), for halo exchanges: a kernel
// built from device.RowsSource gathers them into a staging buffer, which
// is copied in one piece (scattering is the reverse). A backend's driver
// offers it through RowMover.
type Rows struct {
	// Build compiles device.RowsSource in the backend's dialect; it is
	// called once, the first time rows move.
	Build   func() (Kernel, error)
	k       Kernel
	err     error
	staging Buffer
	size    int
	args    []Arg
}

// RowMover is a Driver whose device copies move rows on the device.
type RowMover interface {
	Rows() *Rows
}

// kernel returns the rows kernel, building it the first time.
func (r *Rows) kernel() (Kernel, error) {
	if r.k == nil && r.err == nil {
		if r.Build == nil {
			r.err = core.ErrNoRowOps
		} else if r.k, r.err = r.Build(); r.err != nil {
			r.err = fmt.Errorf("building the halo rows kernel: %w", r.err)
		}
	}
	return r.k, r.err
}

// stage returns the staging buffer, of at least n bytes.
func (r *Rows) stage(drv Driver, n int) (Buffer, error) {
	if r.staging != nil && r.size >= n {
		return r.staging, nil
	}
	if r.staging != nil {
		drv.Free(r.staging)
		r.staging, r.size = nil, 0
	}
	b, err := drv.Alloc(max(n, 4096))
	if err != nil {
		return nil, err
	}
	r.staging, r.size = b, max(n, 4096)
	return b, nil
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

// move gathers (or, with scatter, scatters) the elements rows.Idx of d
// through host memory at.
func (d *devBuf) move(s *core.Storage, at unsafe.Pointer, rows *core.RowList, scatter bool) error {
	rm, ok := d.drv.(RowMover)
	if !ok || d.esize%4 != 0 {
		return core.ErrNoRowOps
	}
	r := rm.Rows()
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
	idx, err := index(d.drv, d.owner, rows)
	if err != nil {
		return err
	}
	n := nrows * row
	st, err := r.stage(d.drv, n)
	if err != nil {
		return err
	}
	soa, sc := 0, 0
	if d.soa {
		soa = 1
	}
	if scatter {
		sc = 1
		if err := d.drv.Write(st, at, n); err != nil {
			return err
		}
	}
	r.args = append(r.args[:0], Arg{Kind: ArgInt, Int: nrows}, Arg{Kind: ArgBuffer, Buf: idx}, Arg{Kind: ArgBuffer, Buf: d.buf},
		Arg{Kind: ArgInt, Int: d.n}, Arg{Kind: ArgBuffer, Buf: st}, Arg{Kind: ArgInt, Int: row / 4}, Arg{Kind: ArgInt, Int: d.esize / 4},
		Arg{Kind: ArgInt, Int: soa}, Arg{Kind: ArgInt, Int: sc})
	wg := device.RowsWorkGroupSize
	err = d.drv.Launch(k, r.args, min((n/4+wg-1)/wg, device.MaxDirectGroups), wg)
	clear(r.args) // keep no buffer alive
	if err != nil {
		return err
	}
	if scatter {
		return nil
	}
	return d.drv.Read(st, at, n)
}

// GatherRows and ScatterRows are core.RowOps.
func (d *devBuf) GatherRows(s *core.Storage, dst unsafe.Pointer, rows *core.RowList) error {
	return d.move(s, dst, rows, false)
}
func (d *devBuf) ScatterRows(s *core.Storage, src unsafe.Pointer, rows *core.RowList) error {
	return d.move(s, src, rows, true)
}
