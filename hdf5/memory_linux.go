package hdf5

import "syscall"

// memoryBytes is this machine's memory, RAM and swap, in bytes (0 when
// unknown): no allocation larger than it can succeed.
var memoryBytes = func() uint64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	unit := uint64(max(si.Unit, 1))
	return (uint64(si.Totalram) + uint64(si.Totalswap)) * unit
}
