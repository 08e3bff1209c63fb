// Package cfront is GoOP2's C front end: it reads the C (or C++) source
// of a kernel as the compiler would see it, without compiling it.
//
// It holds a preprocessor that evaluates conditionals (cppexpr.go) and
// expands macros (macros.go), the reader of a kernel's definition and
// parameters (csig.go: ParseKernel, which fills a core.KernelInfo; head.go
// for what C++ writes between a parameter list and a body, and extern "C"
// blocks), the
// kernel model the generators adapt a source with (kmodel.go: the
// functions, calls, typedefs, macros and includes of a source, the body
// with its macros expanded, the operations it counts), and the names C
// and OpenCL C reserve (openclnames.go, ConstNameProblem).
//
// Only code that reads or rewrites C imports it: the API's kernel and
// constant checks, the code generators, fusion and the device backends'
// builds. The data the reading produces (core.KernelInfo, core.Param)
// belongs to the data model in internal/core, which does not import this
// package; what the front end keeps of its own reading hangs on
// core.KernelInfo.Front.
package cfront
