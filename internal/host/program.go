// Package host is the run-time side of the host backends (sequential and
// openmp): it builds a generated wrapper (package hostc) with the C JIT,
// fills the wrapper's argument arrays and calls it.
package host

/*
#include <stdlib.h>
#include <string.h>
typedef int (*op2_loop_fn)(const long long *, void *const *);
#include <stdint.h>
// A constant's copy: n bytes from the declared value (src) to the
// library's variable (dst).
typedef struct { uintptr_t dst, src, n; } op2_const_copy;
// The argument arrays are C memory, passed as integers so that cgo does not
// inspect them on every call. Every call first copies the constants'
// declared values into the library, outside the library's own code, so
// that its compiler (which sees the constants as const) cannot move its
// reads of them across the copy.
static int op2_call(uintptr_t fn, uintptr_t iv, uintptr_t pv, uintptr_t cc, int ncc) {
	const op2_const_copy *c = (const op2_const_copy *)cc;
	for (int i = 0; i < ncc; i++) memcpy((void *)c[i].dst, (const void *)c[i].src, c[i].n);
	return ((op2_loop_fn)fn)((const long long *)iv, (void *const *)pv);
}
*/
import "C"

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"unsafe"

	"github.com/goop2/op2/internal/cache"
	"github.com/goop2/op2/internal/clex"
	"github.com/goop2/op2/internal/codegen/hostc"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/jit"
)

// Program is a compiled host wrapper together with the C-allocated argument
// arrays it is called with. Filling them and calling the wrapper allocates
// nothing.
type Program struct {
	src    string
	lib    *jit.Library
	fn     unsafe.Pointer
	iv     []C.longlong       // C memory
	pv     []C.uintptr_t      // C memory; addresses kept as integers so that the GC never sees (possibly stale) pointers stored in C memory
	cc     []C.op2_const_copy // C memory, like pv: the constants' copies before every call
	consts []constSlot
	nargs  int
	// constErr is the first write to a constant found in check mode
	// since Bind, reported by Finish.
	constErr error
}

// constSlot is a constant's global variable in the library. op2_call sets
// it from the declared value before every call, so a kernel that casts the
// const away and writes to it changes nothing for later calls; Go only
// reads it, in check mode, to find such kernels.
type constSlot struct {
	c    *core.Const
	addr unsafe.Pointer
}

// Compilers are a host backend's compilers: the C compiler (CC) for the
// wrappers of C kernels and the C++ compiler (CXX) for those of C++
// kernels (core.Kernel.CXX), sharing one disk cache and flags.
type Compilers struct {
	C   *jit.Compiler
	CXX *jit.Compiler // checked the first time a C++ kernel needs it
}

// NewCompiler returns the compilers of a configuration, with the disk
// cache they keep libraries in. It checks that the C compiler runs (once
// per command, see jit.Compiler.Check), so that a missing compiler is
// reported when the backend is opened, with what to install; the C++
// compiler is checked when a C++ kernel first needs it.
func NewCompiler(cfg *exec.Config) (*Compilers, error) {
	dir, err := cache.Open(cfg.CacheDir)
	if err != nil {
		return nil, err
	}
	cc := &jit.Compiler{CC: cfg.CC, Flags: cfg.CFlags, Cache: dir, Timeout: cfg.CompileTimeout}
	if err := cc.Check(); err != nil {
		return nil, err
	}
	cxx := cfg.CXX
	if cxx == "" {
		cxx = "g++"
	}
	return &Compilers{C: cc, CXX: &jit.Compiler{CC: cxx, Flags: cfg.CFlags, Cache: dir, CXX: true, Timeout: cfg.CompileTimeout}}, nil
}

// For returns the compiler of loop l's kernel: C++ for a C++ kernel.
func (c *Compilers) For(l *core.Loop) *jit.Compiler {
	if l.Kernel.CXX {
		return c.CXX
	}
	return c.C
}

// checked returns the compiler of loop l's kernel (For), checked first
// when it is the C++ compiler.
func (c *Compilers) checked(l *core.Loop) (*jit.Compiler, error) {
	cc := c.For(l)
	if l.Kernel.CXX {
		if err := cc.Check(); err != nil {
			return nil, fmt.Errorf("%s: kernel %q is C++: %w", l.Name(), l.Kernel.Name, err)
		}
	}
	return cc, nil
}

// symbols are the names NewProgram looks up in the library of a program
// of l: the entry point and each constant's variable.
func symbols(l *core.Loop) []string {
	s := []string{hostc.EntryPoint}
	for _, c := range l.Consts {
		s = append(s, hostc.ConstSymbol(c))
	}
	return s
}

// loopFlags returns flags with what loop l's program needs besides:
// -fno-strict-aliasing when the loop has 64-bit integer data, which a
// kernel may spell long or int64_t (long on Linux) and the generated code
// long long, different types to the compiler's aliasing rules (an int64
// Global reduced through an int64_t parameter came back 0 from the
// scalar code). Other loops keep type-based aliasing, which the scalar
// code of loops through maps is faster with.
func loopFlags(l *core.Loop, flags []string) []string {
	for i := range l.Args {
		if d := l.Args[i].Data; d != nil && d.Type == core.Int64 {
			return append(slices.Clip(flags), "-fno-strict-aliasing")
		}
	}
	return flags
}

// libraryNameHint says, when the compiler refused the kernel because one
// of its functions has the name of a function the C headers declare (a
// kernel named exp: "conflicting types for 'exp'"), what to do: the
// device generators rename a kernel's functions and take it, the host
// compilers do not.
func libraryNameHint(l *core.Loop, err error) string {
	var ce *jit.CompileError
	if !errors.As(err, &ce) || l.Kernel.Info == nil {
		return ""
	}
	names := []string{l.Kernel.Name}
	for f := range l.Kernel.Info.Functions {
		if f != l.Kernel.Name {
			names = append(names, f)
		}
	}
	slices.Sort(names[1:])
	conflicts := func(name string) bool {
		for _, q := range [][2]string{{"‘", "’"}, {"'", "'"}} {
			if strings.Contains(ce.Output, "conflicting types for "+q[0]+name+q[1]) {
				return true
			}
		}
		return false
	}
	for _, f := range names {
		if conflicts(f) {
			return fmt.Sprintf("\n(the kernel's function %q has the name of a C library function that the headers of the generated code declare: name it otherwise; the opencl and cuda backends rename a kernel's functions, the host compilers take them as they are)", f)
		}
	}
	for _, name := range clex.Identifiers(l.Kernel.Source) {
		if headerTypes[name] && conflicts(name) {
			return fmt.Sprintf("\n(the kernel's source declares the type %q, which the headers of the generated code (<stddef.h>, <stdint.h>) declare already, otherwise: include the header instead of declaring it)", name)
		}
	}
	return ""
}

// headerTypes are the types of <stddef.h> and <stdint.h>, which the
// generated host code includes before a kernel's source.
var headerTypes = map[string]bool{
	"size_t": true, "ptrdiff_t": true, "int8_t": true, "uint8_t": true, "int16_t": true, "uint16_t": true,
	"int32_t": true, "uint32_t": true, "int64_t": true, "uint64_t": true, "intptr_t": true, "uintptr_t": true,
	"intmax_t": true, "uintmax_t": true,
}

// NewProgram compiles src (or takes it from the cache) with the compiler
// of l's kernel and prepares argument arrays with room for extraPtrs
// pointers after the per-argument ones.
func NewProgram(ccs *Compilers, l *core.Loop, src string, extraPtrs int, extraFlags ...string) (*Program, error) {
	cc, err := ccs.checked(l)
	if err != nil {
		return nil, err
	}
	lib, err := cc.Build(src, symbols(l), loopFlags(l, extraFlags)...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w%s", l.Name(), err, libraryNameHint(l, err))
	}
	fn, err := lib.Symbol(hostc.EntryPoint)
	if err != nil {
		lib.Release()
		return nil, fmt.Errorf("%s: %w", l.Name(), err)
	}
	p := &Program{src: src, lib: lib, fn: fn, nargs: len(l.Args)}
	for _, c := range l.Consts {
		addr, err := lib.Symbol(hostc.ConstSymbol(c))
		if err != nil {
			lib.Release()
			return nil, fmt.Errorf("%s: constant %q: %w", l.Name(), c.Name, err)
		}
		p.consts = append(p.consts, constSlot{c: c, addr: addr})
	}
	np := 2*len(l.Args) + extraPtrs
	p.pv = unsafe.Slice((*C.uintptr_t)(C.calloc(C.size_t(np+1), C.size_t(unsafe.Sizeof(C.uintptr_t(0))))), np+1)[:np]
	p.iv = unsafe.Slice((*C.longlong)(C.calloc(C.size_t(hostc.IvCount+8), 8)), hostc.IvCount+8)
	nc := len(p.consts)
	p.cc = unsafe.Slice((*C.op2_const_copy)(C.calloc(C.size_t(nc+1), C.size_t(unsafe.Sizeof(C.op2_const_copy{})))), nc+1)[:nc]
	for j, s := range p.consts {
		p.cc[j] = C.op2_const_copy{dst: addr(s.addr), n: C.uintptr_t(s.c.Bytes())}
	}
	runtime.AddCleanup(p, func(mem [3]unsafe.Pointer) {
		C.free(mem[0])
		C.free(mem[1])
		C.free(mem[2])
	}, [3]unsafe.Pointer{unsafe.Pointer(unsafe.SliceData(p.pv)), unsafe.Pointer(unsafe.SliceData(p.iv)), unsafe.Pointer(unsafe.SliceData(p.cc))})
	return p, nil
}

// Source is the generated C source.
func (p *Program) Source() string { return p.src }

// Release unloads the program's library once no other program uses it.
// The run time calls it when it drops the program; p is not used again.
func (p *Program) Release() {
	if p.lib != nil {
		p.lib.Release()
		p.lib, p.fn = nil, nil
	}
}

// SetInt stores integer slot of the wrapper's iv array.
func (p *Program) SetInt(slot int, v int) { p.iv[slot] = C.longlong(v) }

// SetPtr stores extra pointer i (after the per-argument pointers).
func (p *Program) SetPtr(i int, ptr unsafe.Pointer) { p.pv[2*p.nargs+i] = addr(ptr) }

// addr is the address ptr holds. The argument arrays live in C memory and
// outlive what they point to (a dropped plan, a freed Dat): storing them as
// pointers would make the GC's write barrier follow stale addresses.
func addr(ptr unsafe.Pointer) C.uintptr_t { return C.uintptr_t(uintptr(ptr)) }

// Bind makes the host copy of every argument current (allocating data
// declared without values, copying back data a device backend left on the
// device), and stores the data and map pointers and the addresses of the
// constants' declared values, which every call copies into the library
// first.
func (p *Program) Bind(l *core.Loop) error {
	p.constErr = nil
	for i := range l.Args {
		a := &l.Args[i]
		if a.Data.State != core.StateDeviceUnallocated {
			if err := a.Data.HostAccess(a.Access.Modifies()); err != nil {
				return fmt.Errorf("%s: argument %d: %w", l.Name(), i, err)
			}
		}
		p.pv[i] = addr(a.Data.Host)
		if a.Map != nil {
			p.pv[p.nargs+i] = addr(a.MapPtr())
		} else {
			p.pv[p.nargs+i] = 0
		}
	}
	for j, c := range l.Consts {
		p.cc[j].src = addr(c.Host) // pinned Go memory
	}
	return nil
}

// LaunchFailed returns err, a failed call of loop l's wrapper (a launch),
// marked exec.PartlyRan where the loop's range function can fail
// (hostc.RangeFails: a thread, a block or a run of tiles that cannot
// allocate its pointer arrays leaves those before it, or the other
// threads', run); else the only failure is the allocation of the
// reductions' partial results, before any element runs.
func LaunchFailed(l *core.Loop, err error) error {
	if err != nil && hostc.RangeFails(l) {
		return exec.PartlyRan(err)
	}
	return err
}

// Call runs the wrapper with the current argument arrays.
func (p *Program) Call(l *core.Loop) error {
	if C.op2_call(C.uintptr_t(uintptr(p.fn)), C.uintptr_t(uintptr(unsafe.Pointer(unsafe.SliceData(p.iv)))), C.uintptr_t(uintptr(unsafe.Pointer(unsafe.SliceData(p.pv)))),
		C.uintptr_t(uintptr(unsafe.Pointer(unsafe.SliceData(p.cc)))), C.int(len(p.cc))) != 0 {
		return fmt.Errorf("%s: the generated code could not allocate its working memory (per-thread reduction results or map pointer arrays)", l.Name())
	}
	if l.Check && p.constErr == nil {
		p.constErr = p.constWritten(l)
	}
	return nil
}

// constWritten compares the constants' variables in the library with
// their declared values after a call, and returns the first that the
// kernel changed.
func (p *Program) constWritten(l *core.Loop) error {
	for j, c := range l.Consts {
		n, size := c.Bytes(), c.Type.Size()
		lib := unsafe.Slice((*byte)(p.consts[j].addr), n)
		decl := unsafe.Slice((*byte)(c.Host), n)
		for off := 0; off < n; off += size {
			if !bytes.Equal(lib[off:off+size], decl[off:off+size]) {
				return &core.ConstWrittenError{Const: c, Value: off / size,
					Was: bytes.Clone(decl[off : off+size]), Now: bytes.Clone(lib[off : off+size])}
			}
		}
	}
	return nil
}

// Finish reports, in check mode, a kernel that wrote to a constant during
// the calls since Bind. Backends call it from their own Finish.
func (p *Program) Finish(l *core.Loop) error {
	err := p.constErr
	p.constErr = nil
	if err != nil {
		return fmt.Errorf("%s: %w", l.Name(), err)
	}
	return nil
}
