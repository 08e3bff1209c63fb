package op2

import (
	"errors"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/engine"
	"github.com/goop2/op2/internal/jit"
)

// Every error the package returns has a message that starts with "op2: ",
// once. The types and sentinels below let callers inspect errors without
// matching messages:
//
//	var ce *op2.CompileError
//	if errors.As(err, &ce) {
//		fmt.Println(ce.SourcePath) // the generated C file the compiler rejected
//	}
//	if errors.Is(err, op2.ErrBackendUnavailable) {
//		op2.Use("sequential") // fall back to a host backend
//	}

// ErrBackendUnavailable is matched (errors.Is) by the errors of Configure,
// Use and the first loop when the configured backend cannot be opened:
// an unknown backend name, no OpenCL library, no OpenCL device or none of
// the requested platform or type, or for cuda no CUDA driver, no GPU or
// no NVRTC. Other backends may still work.
var ErrBackendUnavailable = core.ErrBackendUnavailable

// ErrNoCompiler is matched (errors.Is) by the error of Configure,
// NewRuntime or Use when a host backend (sequential, openmp) is chosen and
// the C compiler command (Config.CC, $CC, else "cc") is empty, is not found
// or does not run `CC --version`; the message says what to install. The
// check runs once per command and PATH in a process. The first loop of a
// C++ kernel (Kernel.CXX) on a host backend returns an error matching it
// when the C++ compiler command (Config.CXX, $CXX, else "g++") cannot be
// used; a loop on the openmp backend whose build fails returns an error
// matching it (and a *CompileError) when the compiler cannot build
// OpenMP code at all (Clang without libomp-dev), saying what to install.
var ErrNoCompiler = jit.ErrNoCompiler

// CompileError reports that the C compiler rejected the code generated for
// a loop, exited successfully without writing a library, or was still
// running at Config.CompileTimeout (then it matches
// context.DeadlineExceeded). The generated source is kept at SourcePath
// for inspection.
type CompileError struct {
	Compiler   string // the compiler command line, without input and output files
	SourcePath string // the generated C source
	Output     string // the compiler's messages
	err        error  // the internal error, with the loop's name
}

// Error returns the message: the loop, the compiler command, the source
// path and the compiler's output.
func (e *CompileError) Error() string {
	if e.err == nil {
		return prefix + (&jit.CompileError{Compiler: e.Compiler, SourcePath: e.SourcePath, Output: e.Output}).Error()
	}
	return prefix + e.err.Error()
}

// Unwrap returns the underlying error.
func (e *CompileError) Unwrap() error { return e.err }

// LoadError reports that a library the C compiler built for a loop cannot
// be loaded, or lacks a symbol the loop needs.
type LoadError struct {
	Path       string // the library
	SourcePath string // the generated C source it was built from
	Compiler   string // the compiler command line that built it
	Reason     string // the dynamic loader's message, or the missing symbol
	Warnings   string // the compiler's messages for this build
	err        error
}

// Error returns the message: the loop, the library, the reason and the
// compiler's warnings.
func (e *LoadError) Error() string {
	if e.err == nil {
		return prefix + (&jit.LoadError{Path: e.Path, SourcePath: e.SourcePath, Compiler: e.Compiler, Reason: e.Reason, Warnings: e.Warnings}).Error()
	}
	return prefix + e.err.Error()
}

// Unwrap returns the underlying error.
func (e *LoadError) Unwrap() error { return e.err }

// DeviceBuildError reports that a device backend's compiler (the OpenCL
// driver on opencl, NVRTC on cuda) rejected the device code generated for
// a loop.
type DeviceBuildError struct {
	Device     string // the device's name
	SourcePath string // the generated device source, or "" if it could not be saved
	Log        string // the device compiler's build log
	Output     string // what the driver printed on standard error when the failed build ran again, if anything
	err        error
}

// Error returns the message: the loop, the device, the source path and the
// build log.
func (e *DeviceBuildError) Error() string {
	if e.err == nil {
		return prefix + (&core.DeviceBuildError{API: "device", Device: e.Device, SourcePath: e.SourcePath, Log: e.Log, Output: e.Output}).Error()
	}
	return prefix + e.err.Error()
}

// Unwrap returns the underlying error.
func (e *DeviceBuildError) Unwrap() error { return e.err }

// prefix starts every message the package returns.
const prefix = "op2: "

// apiError is the one place that prefixes errors from the internal
// packages (which never add "op2: " themselves) and turns their typed
// errors into this package's exported ones. Errors this package makes
// itself carry the prefix already and are not passed here.
func apiError(err error) error {
	if err == nil {
		return nil
	}
	var ce *jit.CompileError
	if errors.As(err, &ce) {
		return &CompileError{Compiler: ce.Compiler, SourcePath: ce.SourcePath, Output: ce.Output, err: err}
	}
	var le *jit.LoadError
	if errors.As(err, &le) {
		return &LoadError{Path: le.Path, SourcePath: le.SourcePath, Compiler: le.Compiler, Reason: le.Reason, Warnings: le.Warnings, err: err}
	}
	var de *core.DeviceBuildError
	if errors.As(err, &de) {
		return &DeviceBuildError{Device: de.Device, SourcePath: de.SourcePath, Log: de.Log, Output: de.Output, err: err}
	}
	return &prefixed{err}
}

// prefixed is an internal error as the API returns it.
type prefixed struct{ err error }

func (e *prefixed) Error() string { return prefix + e.err.Error() }
func (e *prefixed) Unwrap() error { return e.err }

// apiErrors makes this package's errors for the engine (engine.API).
type apiErrors struct{}

func (apiErrors) Loop(kernel, set string, arg int, msg string) error {
	return &LoopError{Kernel: kernel, Set: set, Arg: arg, Msg: msg}
}

func (apiErrors) Chain(kernel, set string, index, recorded int, ranAfter bool, err error) error {
	return &ChainError{Kernel: kernel, Set: set, Index: index, Recorded: recorded, RanAfter: ranAfter, Err: err}
}

func (apiErrors) ChainAccess(accessor, data string, rank, ranks, recorded int) error {
	return &ChainAccessError{Accessor: accessor, Data: data, Rank: rank, Ranks: ranks, Recorded: recorded}
}

func (apiErrors) Internal(err error) error { return apiError(err) }

func (apiErrors) IndexData(s *core.Set) *core.Storage { return engine.IndexData(s) }

func (apiErrors) LayerData(x *core.Extrusion) *core.Storage { return extrudedOf(x).layerData() }

func (apiErrors) RefillIndex(s *core.Set) { engine.FillIndex(s) }
