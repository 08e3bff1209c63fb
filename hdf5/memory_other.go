//go:build !linux

package hdf5

// memoryBytes is this machine's memory in bytes, unknown (0) here.
var memoryBytes = func() uint64 { return 0 }
