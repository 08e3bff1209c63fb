package core

import (
	"errors"
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

// RowOps moves chosen elements of a device copy to and from host memory
// on the device: one gathering (or scattering) launch and one copy,
// instead of copying the whole Dat. Device buffers may implement it; one
// that cannot move the rows of a given Storage returns ErrNoRowOps.
type RowOps interface {
	// GatherRows copies the values of elements rows.Idx to dst, one
	// element after another, each as the host lays it out.
	GatherRows(s *Storage, dst unsafe.Pointer, rows *RowList) error
	// ScatterRows copies consecutive elements of src, laid out as on
	// the host, to elements rows.Idx of the device copy.
	ScatterRows(s *Storage, src unsafe.Pointer, rows *RowList) error
}

// ErrNoRowOps says that a device copy cannot move chosen rows itself; the
// caller moves them through the host copy.
var ErrNoRowOps = errors.New("the device copy cannot move chosen rows")

// rowOps returns s's row operations when the device copy can move rows
// and holds current values: alone, to gather rows from it (else the host
// copy is read, with no wait for the device), or with the host copy too,
// to scatter rows into it (which then makes the device copy the only
// current one).
func (s *Storage) rowOps(scatter bool) (RowOps, bool) {
	if s.State != StateDevice && (!scatter || s.State != StateBoth) {
		return nil, false
	}
	ops, ok := s.Dev.(RowOps)
	return ops, ok
}

// GatherRowsOnDevice copies the values of elements rows.Idx to dst, one
// element after another, on the device when only the device copy is
// current. It reports false, copying nothing, when the rows must come
// from the host copy instead (no device copy, or host values current).
// No state changes.
func (s *Storage) GatherRowsOnDevice(dst unsafe.Pointer, rows *RowList) (bool, error) {
	return s.rowsOnDevice(dst, rows, false)
}

// ScatterRowsOnDevice copies consecutive elements of src to elements
// rows.Idx of the device copy when the device copy is current (alone or
// with the host copy), which is then the only current one. It reports
// false, copying nothing, when the rows must go to the host copy instead.
func (s *Storage) ScatterRowsOnDevice(src unsafe.Pointer, rows *RowList) (bool, error) {
	return s.rowsOnDevice(src, rows, true)
}

// rowsOnDevice gathers (or scatters) rows through host memory at on the
// device, counting the copy.
func (s *Storage) rowsOnDevice(at unsafe.Pointer, rows *RowList, scatter bool) (bool, error) {
	if err := s.Settle(); err != nil {
		return false, err
	}
	ops, ok := s.rowOps(scatter)
	if !ok || len(rows.Idx) == 0 {
		return false, nil
	}
	var err error
	dir, count, bytes := "from", &downloads, &downloadBytes
	if scatter {
		dir, count, bytes = "to", &uploads, &uploadBytes
		err = ops.ScatterRows(s, at, rows)
	} else {
		err = ops.GatherRows(s, at, rows)
	}
	if err != nil {
		if errors.Is(err, ErrNoRowOps) {
			return false, nil
		}
		return false, fmt.Errorf("copying %d elements of %s %s the device: %w", len(rows.Idx), s.Describe(), dir, err)
	}
	if scatter {
		s.State = StateDevice
	}
	count.Add(1)
	bytes.Add(uint64(len(rows.Idx) * s.Dim * s.Type.Size()))
	return true, nil
}
