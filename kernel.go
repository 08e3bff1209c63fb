package op2

import (
	"github.com/goop2/op2/internal/clex"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/engine"
)

// Kernel is the C source of the work done for one element, and the name of
// the function in it to call. The function takes one pointer parameter per
// loop argument, in order (see the package documentation for the types;
// void * and void ** are accepted for any data, which the kernel casts).
// It may use math.h and refer to any declared Const by name. The
// parameters of READ arguments are const in the generated code, whether
// the source says so or not, so the kernel may only read through them
// (and pass them to helpers taking pointers to const values).
type Kernel struct {
	c engine.Kernel
	// src is the source as declared (normalised): c.Source becomes the
	// source with its definition's macros expanded when a loop first
	// reads it, under the lock.
	src string
}

// NewKernel declares a kernel: C source defining function name. The source
// is read when a loop first uses the kernel; errors are reported then.
// Kernels with the same name and source share their compiled programs, so
// declaring a kernel again (even on every loop) costs no new program.
func NewKernel(source, name string) *Kernel {
	// The source is kept normalised (clex.Normalize): continuations moved
	// out of the tokens they split and digraphs spelled out, so that every
	// reader and generator sees plain tokens at the offsets the kernel
	// reader reports. The compiler reads the same program.
	return newKernel(source, name, false)
}

// CXX returns the kernel declared as C++ rather than C: a new Kernel with
// the same source and name (k itself is unchanged), as in
//
//	k := op2.NewKernel(src, "compute_flux").CXX()
//
// A C++ kernel is what OP2's C++ applications write: helper functions
// taking references, inline and static inline functions, functional casts
// (double(x)), constexpr, namespaces, structs with member functions and
// templates. Its parameters follow the same rules as a C kernel's (one
// pointer per argument, a pointer to pointers for ArgVec), and a
// parameter may also be a reference to the element type (double &x, const
// double &x) where the argument passes one value per element (dim 1, not
// ArgVec): the kernel gets that value itself. The host backends
// (sequential, openmp) compile the generated wrapper with the C++
// compiler (Config.CXX: $CXX, else g++) and the kernel inlined as for C;
// cuda compiles it with NVRTC, which is C++; opencl refuses it with an
// error naming the kernel, since its generator writes OpenCL C and PoCL
// and most OpenCL drivers have no C++ for OpenCL.
func (k *Kernel) CXX() *Kernel {
	if k.c.CXX {
		return k
	}
	return newKernel(k.src, k.c.Name, true)
}

// IsCXX reports whether the kernel was declared C++ (Kernel.CXX).
func (k *Kernel) IsCXX() bool { return k.c.CXX }

func newKernel(source, name string, cxx bool) *Kernel {
	src := clex.Normalize(source)
	return &Kernel{c: engine.Kernel{Kernel: core.Kernel{Name: name, Source: src, ID: core.NewID(), CXX: cxx, Sum: core.KernelSum(name, src, cxx)}}, src: src}
}

// Name is the kernel function's name.
func (k *Kernel) Name() string { return k.c.Name }

// parse reads the kernel's source on first use (engine.Kernel.Parse).
func (k *Kernel) parse() (*core.KernelInfo, error) { return k.c.Parse(apiError) }

// usedConsts returns the constants the kernel refers to, recomputed only
// when constants have been declared or removed since the last call.
func (k *Kernel) usedConsts(reg *engine.Consts) []*core.Const { return k.c.UsedConsts(reg) }
