package core

import (
	"fmt"
	"sync/atomic"
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

// HostAccess makes the host copy current before the host uses it: it is
// allocated if it never was, and copied from the device if the device holds
// the only current values. write says the host may change the values, which
// makes the device copy stale. Host backends call it for every argument;
// Data and DataRO call it too.
func (s *Storage) HostAccess(write bool) error {
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
// BOTH (or DEVICE when there is no host copy).
func (s *Storage) DeviceAccess(owner any, read, modifies bool, alloc func(zeroed bool) (DeviceBuffer, error)) error {
	if s.Dev != nil && s.Dev.Owner() != owner {
		// A buffer of an earlier backend: bring its values home, drop it.
		if err := s.HostAccess(false); err != nil {
			return err
		}
		s.Dev.Free()
		s.Dev = nil
		s.State = StateDeviceUnallocated
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
		if read {
			if err := s.upload(); err != nil {
				return err
			}
		}
		s.State = StateBoth
	case StateHost:
		if read {
			if err := s.upload(); err != nil {
				return err
			}
		}
		s.State = StateBoth
	}
	if modifies {
		s.State = StateDevice
	}
	return nil
}
