package core

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"
)

// DataState says where the current values of a Dat or Global are.
type DataState uint8

// The five states of seed 000. The zero value is StateDeviceUnallocated.
const (
	StateDeviceUnallocated DataState = iota // no device copy; the host copy is current
	StateHostUnallocated                    // no host copy yet: declared without values (zeros), never used
	StateDevice                             // the device copy is current, the host copy stale
	StateHost                               // the host copy is current, the device copy stale
	StateBoth                               // both copies are current
)

func (s DataState) String() string {
	switch s {
	case StateDeviceUnallocated:
		return "DEVICE_UNALLOCATED"
	case StateHostUnallocated:
		return "HOST_UNALLOCATED"
	case StateDevice:
		return "DEVICE"
	case StateHost:
		return "HOST"
	case StateBoth:
		return "BOTH"
	}
	return fmt.Sprintf("DataState(%d)", uint8(s))
}

// DeviceBuffer is a device backend's copy of a Storage.
type DeviceBuffer interface {
	// Upload copies the host values to the device.
	Upload(s *Storage) error
	// Download copies the device values to the host.
	Download(s *Storage) error
	// Owner identifies the backend instance the buffer belongs to.
	Owner() any
	// Free releases the device memory.
	Free()
}

// Transfer counters, for tests and statistics.
var (
	uploads, downloads         atomic.Uint64
	uploadBytes, downloadBytes atomic.Uint64
)

// TransferStats returns the number of host-to-device and device-to-host
// copies of Dats and Globals made so far, and their bytes.
func TransferStats() (up, down, upBytes, downBytes uint64) {
	return uploads.Load(), downloads.Load(), uploadBytes.Load(), downloadBytes.Load()
}

// EnsureHost allocates the host copy if it does not exist yet.
func (s *Storage) EnsureHost() {
	if s.AllocHost != nil {
		s.AllocHost()
		s.AllocHost = nil
	}
}

func (s *Storage) download() error {
	if err := s.Dev.Download(s); err != nil {
		return fmt.Errorf("copying %s from the device: %w", s.Describe(), err)
	}
	downloads.Add(1)
	downloadBytes.Add(uint64(s.Bytes()))
	return nil
}

func (s *Storage) upload() error {
	if err := s.Dev.Upload(s); err != nil {
		return fmt.Errorf("copying %s to the device: %w", s.Describe(), err)
	}
	uploads.Add(1)
	uploadBytes.Add(uint64(s.Bytes()))
	return nil
}

// Pending is a step the next access to a Storage runs first
// (SetPending): a device reduction whose partial results are on their
// way, which Settle folds into the host values once they arrive. Drop
// forgets it, without waiting for the device, when the host overwrites
// every value (HostOverwrite), or when a step before it failed.
type Pending interface {
	Settle() error
	Drop()
}

// SetPending adds p to the steps the next access to s runs first, in the
// order they were added, so that the host waits for a reduction's results
// only when it needs them. Steps may queue up: a loop that only reduces
// into s need not wait for the steps of the loops before it
// (DeviceAccess, HostWillChange).
func (s *Storage) SetPending(p Pending) { s.pending = append(s.pending, p) }

// Settle runs the pending steps, if any (SetPending), in order; the first
// error stops them (the later ones are dropped). Every access below
// settles first.
func (s *Storage) Settle() error {
	if len(s.pending) == 0 {
		return nil
	}
	var err error
	for i, p := range s.pending {
		if err == nil {
			err = p.Settle()
		} else {
			p.Drop()
		}
		s.pending[i] = nil
	}
	s.pending = s.pending[:0]
	return err
}

// HostOverwrite is HostAccess(true) for a host write of every value (a
// Global's SetValue): the pending steps, whose results the write would
// replace, are dropped without waiting for them.
func (s *Storage) HostOverwrite() error {
	for i, p := range s.pending {
		p.Drop()
		s.pending[i] = nil
	}
	s.pending = s.pending[:0]
	return s.HostAccess(true)
}

// HostWillChange prepares the host copy for a pending step that will
// change it (SetPending): as HostAccess(true), except that when the host
// copy is current already the steps pending before are left pending (they
// run first, in order, at the next access).
func (s *Storage) HostWillChange() error {
	switch {
	case len(s.pending) == 0 || s.State == StateDevice || s.State == StateHostUnallocated || s.AllocHost != nil:
		return s.HostAccess(true)
	case s.State == StateBoth:
		s.State = StateHost
	}
	return nil
}

// HostAccess makes the host copy current before the host uses it: it is
// allocated if it never was, and copied from the device if the device holds
// the only current values. write says the host may change the values, which
// makes the device copy stale. Host backends call it for every argument;
// Data and DataRO call it too.
func (s *Storage) HostAccess(write bool) error {
	if err := s.Settle(); err != nil {
		return err
	}
	s.EnsureHost()
	switch s.State {
	case StateDeviceUnallocated, StateHost:
		return nil
	case StateHostUnallocated:
		s.EnsureHost()
		s.State = StateDeviceUnallocated
		return nil
	case StateDevice:
		s.EnsureHost()
		if err := s.download(); err != nil {
			return err
		}
		s.State = StateBoth
	}
	if write {
		s.State = StateHost
	}
	return nil
}

// DeviceAccess makes the device copy of owner's backend current before a
// loop: read says the loop needs the present values (anything but a WRITE
// of every element), modifies that it changes them. alloc creates a device
// buffer; zeroed says it must be filled with zeros (for data never
// allocated on the host). Only stale data is copied, following seed 000's
// table; the state afterwards is DEVICE if the loop modifies the data, else
// BOTH (or DEVICE when there is no host copy). Data neither read nor
// modified (a Global a loop only increments: its partial results start
// from zero) gets a device buffer and nothing copied: the host copy stays
// the current one.
func (s *Storage) DeviceAccess(owner any, read, modifies bool, alloc func(zeroed bool) (DeviceBuffer, error)) error {
	// Data the loop neither reads nor modifies, with a device copy of
	// this backend already, is not touched: its pending steps stay
	// pending (a Global the loop only reduces into).
	if read || modifies || s.Dev == nil || s.Dev.Owner() != owner {
		if err := s.Settle(); err != nil {
			return err
		}
	}
	if s.Dev != nil && s.Dev.Owner() != owner {
		// A buffer of an earlier backend.
		if err := s.dropDevice(); err != nil {
			return err
		}
	}
	switch s.State {
	case StateDeviceUnallocated, StateHostUnallocated:
		noHost := s.State == StateHostUnallocated
		buf, err := alloc(noHost)
		if err != nil {
			return fmt.Errorf("allocating %s on the device: %w", s.Describe(), err)
		}
		s.Dev = buf
		if noHost {
			s.State = StateDevice
			return nil
		}
		s.State = StateHost // the new device copy holds nothing yet
		fallthrough
	case StateHost:
		if read {
			if err := s.upload(); err != nil {
				return err
			}
			s.State = StateBoth
		}
	}
	if modifies {
		s.State = StateDevice
	}
	return nil
}

// KeepAoSOnDevice makes device backends store s element by element from
// now on (DeviceAoS), for a loop that cannot read it structure-of-arrays.
// A device copy stored otherwise is dropped, its values brought home
// first, so that the next loop copies them up again in the new layout.
func (s *Storage) KeepAoSOnDevice() error {
	if s.DeviceAoS {
		return nil
	}
	if s.Dev != nil {
		if err := s.dropDevice(); err != nil {
			return err
		}
	} else if err := s.Settle(); err != nil {
		return err
	}
	s.DeviceAoS = true
	return nil
}

// dropDevice brings s's values home from its device copy, if only the
// device has them, and frees the device copy; on error s is unchanged.
func (s *Storage) dropDevice() error {
	if err := s.HostAccess(false); err != nil {
		return err
	}
	s.Dev.Free()
	s.Dev, s.State = nil, StateDeviceUnallocated
	return nil
}

// DeviceOps are the operations on a device copy that need no host copy.
// The device buffers of device backends implement them; the Storage
// methods below fall back to the host copy for buffers that do not.
type DeviceOps interface {
	// Zero fills the device copy of s with zeros.
	Zero(s *Storage) error
	// CopyTo copies the first n bytes of this buffer to dst, a buffer of
	// the same owner.
	CopyTo(dst DeviceBuffer, n int) error
	// DownloadRange copies n bytes from byte offset off of the device
	// copy to host memory dst.
	DownloadRange(dst unsafe.Pointer, off, n int) error
	// AllocLike allocates a device copy for s, of the same owner, with
	// undefined contents.
	AllocLike(s *Storage) (DeviceBuffer, error)
}

// deviceOps returns s's device operations when its device copy is
// current and supports them.
func (s *Storage) deviceOps() (DeviceOps, bool) {
	if s.State != StateDevice && s.State != StateBoth {
		return nil, false
	}
	ops, ok := s.Dev.(DeviceOps)
	return ops, ok
}

// hostBytes is the host copy as bytes (the host copy must exist).
func (s *Storage) hostBytes() []byte {
	if s.Host == nil {
		return nil
	}
	return unsafe.Slice((*byte)(s.Host), s.Bytes())
}

// WriteOnly makes the host copy current without copying anything from the
// device, for a caller that overwrites the values: the device copy becomes
// stale. The host keeps whatever values it held before (stale ones, if
// the device held the current values).
func (s *Storage) WriteOnly() {
	s.EnsureHost()
	switch s.State {
	case StateHostUnallocated:
		s.State = StateDeviceUnallocated
	case StateDevice, StateBoth:
		s.State = StateHost
	}
}

// Zero sets every value (halos included) to zero: on the device when its
// copy is current there, which leaves the device copy current and the host
// copy stale; else on the host. Data declared without values is zero
// already and stays unallocated.
func (s *Storage) Zero() error {
	if err := s.Settle(); err != nil {
		return err
	}
	switch s.State {
	case StateHostUnallocated:
	case StateDevice, StateBoth:
		if ops, ok := s.deviceOps(); ok {
			if err := ops.Zero(s); err != nil {
				return fmt.Errorf("zeroing %s on the device: %w", s.Describe(), err)
			}
			s.State = StateDevice
			break
		}
		fallthrough
	default:
		s.WriteOnly()
		clear(s.hostBytes())
	}
	return nil
}

// CopyFrom copies every value of src (halos included) to s, which has the
// same type and length. When src's current values are on the device, and
// either only there or s has a device copy of the same backend, the copy is
// made on the device (allocating s's device copy if needed) and s ends
// DEVICE; otherwise it is made on the host and s's host copy becomes the
// current one. Nothing is copied between host and device, unless the two
// are stored in different device layouts (DeviceAoS): then src's values
// come to the host, if only the device has them, and are copied there.
func (s *Storage) CopyFrom(src *Storage) error {
	if err := errors.Join(s.Settle(), src.Settle()); err != nil {
		return err
	}
	if s == src {
		return nil
	}
	if src.State == StateHostUnallocated {
		return s.Zero()
	}
	// Data stored in different device layouts (DeviceAoS) is copied
	// through the host.
	if ops, ok := src.deviceOps(); ok && s.DeviceAoS == src.DeviceAoS && (src.State == StateDevice || (s.Dev != nil && s.Dev.Owner() == src.Dev.Owner())) {
		if s.Dev != nil && s.Dev.Owner() != src.Dev.Owner() {
			// A buffer of an earlier backend (s keeps its values if
			// what follows fails).
			if err := s.dropDevice(); err != nil {
				return err
			}
		}
		fresh := false
		if s.Dev == nil {
			buf, err := ops.AllocLike(s)
			if err != nil {
				return fmt.Errorf("allocating %s on the device: %w", s.Describe(), err)
			}
			s.Dev, fresh = buf, true
		}
		if err := ops.CopyTo(s.Dev, src.Bytes()); err != nil {
			if fresh {
				s.Dev.Free()
				s.Dev = nil
			}
			return fmt.Errorf("copying %s to %s on the device: %w", src.Describe(), s.Describe(), err)
		}
		s.State = StateDevice
		return nil
	}
	if err := src.HostAccess(false); err != nil {
		return err
	}
	s.WriteOnly()
	copy(s.hostBytes(), src.hostBytes())
	return nil
}

// ReadRange copies n bytes from byte offset off of the current values to
// dst: from the device copy alone when only it is current (counted as one
// download of n bytes), else from the host copy. No state changes. Data
// declared without values reads as zeros: dst must hold zeros.
func (s *Storage) ReadRange(dst unsafe.Pointer, off, n int) error {
	if err := s.Settle(); err != nil {
		return err
	}
	if n == 0 || s.State == StateHostUnallocated {
		return nil
	}
	if ops, ok := s.deviceOps(); ok && s.State == StateDevice {
		if err := ops.DownloadRange(dst, off, n); err != nil {
			return fmt.Errorf("copying part of %s from the device: %w", s.Describe(), err)
		}
		downloads.Add(1)
		downloadBytes.Add(uint64(n))
		return nil
	}
	if err := s.HostAccess(false); err != nil {
		return err
	}
	copy(unsafe.Slice((*byte)(dst), n), s.hostBytes()[off:off+n])
	return nil
}
