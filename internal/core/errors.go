package core

import (
	"errors"
	"fmt"
	"strings"
)

// Error messages: internal packages never start a message with "op2: ".
// Package op2 adds that prefix once, where an error leaves the public API,
// and turns the typed errors below (and the C JIT's) into its exported
// types.

// ErrBackendUnavailable marks errors saying that a backend cannot be opened
// on this machine or with this configuration: an unknown backend name, a
// missing driver library, no device of the requested kind. Package op2
// exports it as op2.ErrBackendUnavailable.
var ErrBackendUnavailable = errors.New("backend unavailable")

// Unavailable marks err as ErrBackendUnavailable for errors.Is, leaving its
// message unchanged. Openers use it for every failure that means "this
// backend cannot run here", and not for configuration errors that every
// backend would report (a cache directory that cannot be used).
func Unavailable(err error) error {
	if err == nil {
		return nil
	}
	return &marked{err: err, mark: ErrBackendUnavailable}
}

// marked is an error that also matches a sentinel, without printing it.
type marked struct {
	err  error
	mark error
}

func (e *marked) Error() string   { return e.err.Error() }
func (e *marked) Unwrap() []error { return []error{e.err, e.mark} }

// DeviceBuildError is a device program (OpenCL C now, CUDA later) that the
// device's compiler rejected. Device backends return it, with the loop's
// name added by wrapping; package op2 turns it into *op2.DeviceBuildError.
type DeviceBuildError struct {
	API        string // the device API, e.g. "OpenCL"
	Device     string // the device's name
	SourcePath string // where the generated source was written, or "" if it could not be
	Log        string // the device compiler's build log
	Output     string // what the driver printed on standard error when the failed build ran again
	Hint       string // what the log means, when GoOP2 recognises it ("" otherwise)
	// Missing are the library functions the kernel calls that the
	// device language lacks, which Hint names (not undeclared Consts:
	// Undeclared).
	Missing []string
	Err     error // the driver's error
}

func (e *DeviceBuildError) Error() string {
	src := e.SourcePath
	if src == "" {
		src = "not saved"
	}
	hint := ""
	if e.Hint != "" {
		hint = ": " + e.Hint
	}
	msg := fmt.Sprintf("building the %s program for device %q failed (generated source %s)%s; build log:\n%s",
		e.API, e.Device, src, hint, strings.TrimSpace(e.Log))
	if o := strings.TrimSpace(e.Output); o != "" {
		msg += "\ndriver output during the build:\n" + o
	}
	return msg
}

// Unwrap returns the driver's error.
func (e *DeviceBuildError) Unwrap() error { return e.Err }

// ConstWrittenError is a kernel that wrote to a constant (casting its
// const qualifier away), found in check mode by a host backend after the
// loop. The loop's later calls, and later loops, saw the declared value
// anyway; package op2 reports it as a *op2.LoopError.
type ConstWrittenError struct {
	Const    *Const
	Value    int    // the first value that changed
	Was, Now []byte // its bytes before and after
}

func (e *ConstWrittenError) Error() string {
	return fmt.Sprintf("the kernel wrote to const %q (value %d changed)", e.Const.Name, e.Value)
}
