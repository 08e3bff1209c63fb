package core

import "log/slog"

// MaxDeviceElementMatrixBytes bounds the element matrices of a loop's
// matrix arguments on a device backend (rows × columns × value size,
// summed over the arguments): every work item keeps them privately.
// codegen/device refuses a loop past it (device.MaxElementMatrixBytes);
// the engine names it when it binds one. It is here so that both see it.
const MaxDeviceElementMatrixBytes = 8192

// LevelTrace is the log level (below Debug) of the events of every loop:
// its start and end and, under MPI, each halo exchange, with the rank
// (OP2_LOG=trace). exec.LevelTrace is this level; it is here so that the
// halo exchange (internal/dist) logs at it without importing the executor.
const LevelTrace = slog.LevelDebug - 4
