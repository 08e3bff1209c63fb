package device

import (
	"fmt"
	"strings"

	"github.com/goop2/op2/internal/cfront"
	"github.com/goop2/op2/internal/codegen/hostc"
	"github.com/goop2/op2/internal/core"
)

// Dialect is how a device language spells what the generator writes: the
// generator's structure (staging, colouring, reductions, private copies)
// is the same for every device, and its spellings come from here.
type Dialect struct {
	// Name names the dialect in generated comments and messages.
	Name string
	// Language names the language it compiles, for messages.
	Language string
	// Preamble follows the header comment: pragmas and the stdint type
	// names the language lacks.
	Preamble string
	// KernelHead starts the stub's definition, up to its name; %d is the
	// work-group size.
	KernelHead string
	// Global, Local, Constant and Private qualify pointers to device
	// memory, work-group shared memory, constant memory and a work item's
	// own memory.
	Global, Local, Constant, Private string
	// ReadOnlyGlobal qualifies pointers to read-only device memory: the
	// constants' buffer when the constants take more than the device's
	// constant memory (Layout.ConstsGlobal).
	ReadOnlyGlobal string
	// ConstsCastable: one address space holds the constants' buffer and
	// a kernel's own pointers, so a kernel casting a constant's const away
	// can write the buffer (CUDA). In OpenCL C 1.2 such a cast crosses
	// address spaces and does not build.
	ConstsCastable bool
	// LocalBarrier synchronises a work group's items and its shared
	// memory; GlobalBarrier its view of device memory; BothBarrier both.
	LocalBarrier, GlobalBarrier, BothBarrier string
	// LocalID, GroupID, GlobalID and GlobalSize are the work item's index
	// in its group, the group's index, the item's index in the launch and
	// the number of items launched.
	LocalID, GroupID, GlobalID, GlobalSize string
	// Int64 spells the 64-bit signed integer, and Int64Suffix the suffix
	// of its literals.
	Int64, Int64Suffix string
	// InfDouble and InfFloat spell positive infinity as a double and as a
	// float (the identity of MIN accumulators).
	InfDouble, InfFloat string
	// ConstTable qualifies file-scope const variables of the kernel source
	// (lookup tables) so that device code may read them.
	ConstTable string
	// SharedOffsets: shared-memory buffers are not kernel parameters; the
	// kernel gets each buffer's byte offset in the block's dynamic shared
	// memory instead (an int parameter named after the buffer with the
	// suffix _at), and the driver sizes that memory at launch (CUDA). Else
	// each buffer is a Local pointer parameter (OpenCL).
	SharedOffsets bool
	// StrictConstPush and StrictConstPop surround the user's source:
	// they make the compiler refuse code that discards a const
	// qualifier (a READ argument's parameter passed where a pointer to
	// modifiable values is expected), as the host backends do (CUDA
	// C++ refuses it by the language's rules).
	StrictConstPush, StrictConstPop string
	// CXXPrelude precedes a C++ kernel's source (core.Kernel.CXX): the
	// declarations that let C++ kernels written for the host compile
	// (CUDA: the math functions under their std:: names, as <cmath>
	// gives them, since NVRTC has no standard headers). Empty for a
	// dialect that refuses C++ kernels.
	CXXPrelude string
	// WarpMatch: the language finds a warp's threads with equal values
	// and exchanges values between them (CUDA's __match_any_sync and
	// __shfl_sync, compute capability 7.0 on), which the Warp scheme
	// uses.
	WarpMatch bool
	// AtomicAdd defines, per element type, the function
	// op2_atomic_add_<type>(pointer, value) that adds value to device
	// memory atomically (the atomics scheme, Scheme).
	AtomicAdd map[core.ScalarType]string
	// Builtin reports whether the language has name built in as a type,
	// keyword or macro (OpenCL C's double3 and uint, CUDA's double3 and
	// dim3), so that the kernel source's own declaration of name is
	// renamed in the device code (see builtinRename); nil: no name is.
	Builtin func(name string) bool
	// Reserved reports whether the language reserves name where no C
	// source can mean the language's own (OpenCL C's global, local,
	// half, uchar, get_global_id...): a source using it at all declared
	// it (a variable, a parameter, a member), so every use is renamed,
	// members included; nil: no name is.
	Reserved func(name string) bool
	// Library are the C library functions the language lacks under
	// their C names, defined for a kernel source that uses one without
	// declaring it (a function the source defines is its own, renamed
	// with funcName).
	Library []Macro
	// Predefined are the macros the device compiler defines itself and
	// those it certainly does not, as far as GoOP2 knows: with them the
	// source's #if groups are evaluated, so that a name the source
	// declares only for other compilers (#ifndef __OPENCL_VERSION__) is
	// the language's own in the device code, not renamed (Builtin).
	Predefined cfront.Predefined
}

// OpenCL is OpenCL C 1.2.
var OpenCL = &Dialect{
	Name:     "opencl",
	Language: "OpenCL C 1.2",
	// Contraction off: a*b+c rounds twice, as C does and the host
	// backends' -ffp-contract=off keeps it (OpenCL C may fuse it by
	// default).
	Preamble: "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" +
		"#pragma OPENCL FP_CONTRACT OFF\n" +
		"typedef signed char int8_t; typedef uchar uint8_t; typedef short int16_t; typedef ushort uint16_t;\n" +
		"typedef int int32_t; typedef uint uint32_t; typedef long int64_t; typedef ulong uint64_t;\n",
	KernelHead:    "__kernel __attribute__((reqd_work_group_size(%d, 1, 1)))\nvoid",
	Global:        "__global",
	Local:         "__local",
	Constant:      "__constant",
	Private:       "__private",
	LocalBarrier:  "barrier(CLK_LOCAL_MEM_FENCE)",
	GlobalBarrier: "barrier(CLK_GLOBAL_MEM_FENCE)",
	BothBarrier:   "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)",
	LocalID:       "get_local_id(0)",
	GroupID:       "get_group_id(0)",
	GlobalID:      "get_global_id(0)",
	GlobalSize:    "get_global_size(0)",
	Int64:         "long",
	Int64Suffix:   "L",
	InfDouble:     "as_double(0x7ff0000000000000UL)",
	InfFloat:      "as_float(0x7f800000u)",
	ConstTable:    "__constant",
	// Clang (PoCL, and most OpenCL compilers today); others ignore the
	// pragmas and warn.
	StrictConstPush: "#ifdef __clang__\n#pragma clang diagnostic push\n" +
		"#pragma clang diagnostic error \"-Wincompatible-pointer-types-discards-qualifiers\"\n" +
		"#pragma clang diagnostic error \"-Wincompatible-pointer-types\"\n#endif\n",
	StrictConstPop: "#ifdef __clang__\n#pragma clang diagnostic pop\n#endif\n",
	// Constants that do not fit constant memory are read with ordinary
	// global loads.
	ReadOnlyGlobal: "__global const",
	Builtin:        openCLBuiltin,
	Reserved:       openCLReserved,
	Library:        openCLLibrary(),
	// As PoCL's clang defines them with -cl-std=CL1.2 (and every OpenCL
	// C 1.2 compiler must).
	Predefined: cfront.Predefined{
		Defined:   []string{"__OPENCL_VERSION__", "__OPENCL_C_VERSION__", "CL_VERSION_1_0", "CL_VERSION_1_1", "CL_VERSION_1_2"},
		Undefined: []string{"__cplusplus", "__CUDACC__", "__CUDACC_RTC__", "__CUDA_ARCH__", "__NVCC__"},
	},
	AtomicAdd: map[core.ScalarType]string{
		// OpenCL 1.2 has no floating-point atomics: compare and swap.
		core.Float64: "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n" +
			"inline void op2_atomic_add_double(__global double *op2_a, double op2_v) {\n" +
			"  union { ulong u; double d; } op2_old, op2_new;\n" +
			"  do { op2_old.d = *(volatile __global double *)op2_a; op2_new.d = op2_old.d + op2_v; }\n" +
			"  while (atom_cmpxchg((volatile __global ulong *)op2_a, op2_old.u, op2_new.u) != op2_old.u);\n}\n",
		core.Float32: "inline void op2_atomic_add_float(__global float *op2_a, float op2_v) {\n" +
			"  union { uint u; float f; } op2_old, op2_new;\n" +
			"  do { op2_old.f = *(volatile __global float *)op2_a; op2_new.f = op2_old.f + op2_v; }\n" +
			"  while (atomic_cmpxchg((volatile __global uint *)op2_a, op2_old.u, op2_new.u) != op2_old.u);\n}\n",
		core.Int32:  "inline void op2_atomic_add_int(__global int *op2_a, int op2_v) { atomic_add(op2_a, op2_v); }\n",
		core.Uint32: "inline void op2_atomic_add_uint(__global unsigned int *op2_a, unsigned int op2_v) { atomic_add(op2_a, op2_v); }\n",
		core.Int64: "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n" +
			"inline void op2_atomic_add_long(__global long *op2_a, long op2_v) { atom_add(op2_a, op2_v); }\n",
	},
}

// CUDA is CUDA C++ as NVRTC compiles it with --device-as-default-execution-space
// (every function the kernel source defines is a __device__ function).
// CUDA has one generic address space, so the qualifiers are empty; shared
// memory is the block's dynamic shared memory, carved by offsets.
var CUDA = &Dialect{
	Name:     "cuda",
	Language: "CUDA C++",
	Preamble: "typedef signed char int8_t; typedef unsigned char uint8_t; typedef short int16_t; typedef unsigned short uint16_t;\n" +
		"typedef int int32_t; typedef unsigned int uint32_t; typedef long long int64_t; typedef unsigned long long uint64_t;\n" +
		"#define restrict __restrict__\n",
	KernelHead:    "extern \"C\" __global__ void __launch_bounds__(%d)",
	Constant:      "const",
	LocalBarrier:  "__syncthreads()",
	GlobalBarrier: "__syncthreads()",
	BothBarrier:   "__syncthreads()",
	LocalID:       "(int)threadIdx.x",
	GroupID:       "(int)blockIdx.x",
	GlobalID:      "(int)(blockIdx.x * blockDim.x + threadIdx.x)",
	GlobalSize:    "(int)(gridDim.x * blockDim.x)",
	Int64:         "long long",
	Int64Suffix:   "LL",
	InfDouble:     "__longlong_as_double(0x7ff0000000000000LL)",
	InfFloat:      "__int_as_float(0x7f800000)",
	ConstTable:    "__device__",
	SharedOffsets: true,
	Builtin:       cudaBuiltin,
	// As NVRTC defines them (11.8, checked; its guide lists them). It
	// does not define __NVCC__, which nvcc does: left unknown.
	Predefined: cfront.Predefined{
		Defined:   []string{"__CUDACC__", "__CUDACC_RTC__", "__CUDA_ARCH__", "__cplusplus", "__CUDACC_VER_MAJOR__", "__CUDACC_VER_MINOR__", "__CUDACC_VER_BUILD__"},
		Undefined: []string{"__OPENCL_VERSION__", "__OPENCL_C_VERSION__", "CL_VERSION_1_0", "CL_VERSION_1_1", "CL_VERSION_1_2"},
	},
	// <cmath>'s functions under std:: (NVRTC declares them in the global
	// namespace); pow with an int exponent converts it, as NVRTC has no
	// device definition of pow(double, int).
	CXXPrelude: "namespace std {\n" +
		"using ::sqrt; using ::cbrt; using ::exp; using ::exp2; using ::expm1; using ::log; using ::log10; using ::log2; using ::log1p;\n" +
		"using ::sin; using ::cos; using ::tan; using ::asin; using ::acos; using ::atan; using ::atan2; using ::sinh; using ::cosh; using ::tanh;\n" +
		"using ::fabs; using ::abs; using ::floor; using ::ceil; using ::round; using ::trunc; using ::fmin; using ::fmax; using ::fmod;\n" +
		"using ::hypot; using ::copysign; using ::erf; using ::min; using ::max; using ::isnan; using ::isinf; using ::isfinite; using ::signbit;\n" +
		"inline double pow(double op2_x, double op2_y) { return ::pow(op2_x, op2_y); }\n" +
		"inline float pow(float op2_x, float op2_y) { return ::powf(op2_x, op2_y); }\n" +
		"inline double pow(double op2_x, int op2_y) { return ::pow(op2_x, (double)op2_y); }\n" +
		"inline float pow(float op2_x, int op2_y) { return ::powf(op2_x, (float)op2_y); }\n" +
		"}\n",
	// The constants reach the kernel as a parameter pointing to device
	// memory whatever their size (Constant is no __constant__ bank);
	// when they take more than the device's constant memory the pointer
	// is also restrict (Layout.hiddenParam), so that the compiler may
	// read them through the read-only data cache.
	ReadOnlyGlobal: "const",
	ConstsCastable: true,
	WarpMatch:      true,
	AtomicAdd: map[core.ScalarType]string{
		core.Float64: "static inline void op2_atomic_add_double(double *op2_a, double op2_v) { atomicAdd(op2_a, op2_v); }\n",
		core.Float32: "static inline void op2_atomic_add_float(float *op2_a, float op2_v) { atomicAdd(op2_a, op2_v); }\n",
		core.Int32:   "static inline void op2_atomic_add_int(int *op2_a, int op2_v) { atomicAdd(op2_a, op2_v); }\n",
		core.Uint32:  "static inline void op2_atomic_add_uint(unsigned int *op2_a, unsigned int op2_v) { atomicAdd(op2_a, op2_v); }\n",
		core.Int64:   "static inline void op2_atomic_add_long(long long *op2_a, long long op2_v) { atomicAdd((unsigned long long *)op2_a, (unsigned long long)op2_v); }\n",
	},
}

// atomicSuffix names the op2_atomic_add_ function of an element type.
func atomicSuffix(t core.ScalarType) string {
	switch t {
	case core.Float64:
		return "double"
	case core.Float32:
		return "float"
	case core.Int32:
		return "int"
	case core.Uint32:
		return "uint"
	}
	return "long"
}

// spell replaces the $words of a generator format string by the dialect's
// spellings.
func (d *Dialect) spell(format string) string {
	if !strings.Contains(format, "$") {
		return format
	}
	return strings.NewReplacer(
		"$globalsize", d.GlobalSize, "$globalid", d.GlobalID, "$global", d.Global,
		"$localid", d.LocalID, "$local", d.Local, "$groupid", d.GroupID,
		"$lbarrier", d.LocalBarrier, "$gbarrier", d.GlobalBarrier, "$bbarrier", d.BothBarrier,
		"$kernel", d.KernelHead,
	).Replace(format)
}

// identity spells the value a private accumulator with access acc of
// element type t starts from (see hostc.Identity).
func (d *Dialect) identity(acc core.Access, t core.ScalarType) string {
	return hostc.Identity(acc, t, d.InfDouble, d.InfFloat, d.Int64Suffix)
}

// openCLLibrary maps the math.h and stdlib.h functions that OpenCL C 1.2
// lacks under their C names onto its built-in functions: the float forms
// (sqrtf, expf, fmaf, ldexpf...) onto the built-ins overloaded for float;
// nearbyint onto rint (the rounding mode is always to nearest); lround,
// llround, lrint and llrint onto round and rint; abs, labs and llabs onto
// functions with C's signed result (OpenCL C's abs of a signed integer is
// unsigned); isinf onto one giving -1 for minus infinity, as glibc's. Each is a function at file scope, op2_NAME, whose parameters
// convert the arguments as C's prototype does, and a macro NAME calling
// it: the built-in is called at file scope, where a kernel's local of its
// name (double round = ...; lround(x)) cannot hide it. frexpf, modff and
// remquof, which take pointers in any address space, stay macros.
func openCLLibrary() []Macro {
	var lib []Macro
	// fn defines name as op2_name(params) returning ret, the value of
	// call, whose arguments are the parameters a, b, c.
	fn := func(name, ret string, params []string, call string) {
		var decl, args []string
		for k, t := range params {
			v := string(rune('a' + k))
			decl = append(decl, t+" op2_"+v)
			args = append(args, v)
			call = strings.ReplaceAll(call, "$"+v, "op2_"+v)
		}
		lib = append(lib, Macro{name, fmt.Sprintf("static %s op2_%s(%s) { return %s; }\n#define %s(%s) op2_%s(%s)",
			ret, name, strings.Join(decl, ", "), call, name, strings.Join(args, ", "), name, strings.Join(args, ", "))})
	}
	def := func(name, params, body string) {
		lib = append(lib, Macro{name, "#define " + name + "(" + params + ") " + body})
	}
	for _, f := range strings.Fields(`acos asin atan cos sin tan acosh asinh atanh cosh sinh tanh
		exp exp2 expm1 log log10 log1p log2 logb cbrt fabs sqrt erf erfc lgamma tgamma
		ceil floor rint round trunc`) {
		fn(f+"f", "float", []string{"float"}, f+"($a)")
	}
	for _, f := range strings.Fields(`atan2 hypot pow fmod remainder copysign nextafter fdim fmax fmin`) {
		fn(f+"f", "float", []string{"float", "float"}, f+"($a, $b)")
	}
	fn("fmaf", "float", []string{"float", "float", "float"}, "fma($a, $b, $c)")
	fn("ilogbf", "int", []string{"float"}, "ilogb($a)")
	fn("nearbyint", "double", []string{"double"}, "rint($a)")
	fn("nearbyintf", "float", []string{"float"}, "rint($a)")
	// ldexp, frexp, modf and remquo themselves are OpenCL C's (and may
	// be the driver's macros, which a definition here would replace).
	fn("ldexpf", "float", []string{"float", "int"}, "ldexp($a, $b)")
	def("frexpf", "x, e", "frexp((float)(x), e)")
	def("modff", "x, i", "modf((float)(x), i)")
	def("remquof", "x, y, q", "remquo((float)(x), (float)(y), q)")
	for _, t := range []struct{ suffix, typ string }{{"", "double"}, {"f", "float"}} {
		fn("scalbn"+t.suffix, t.typ, []string{t.typ, "int"}, "ldexp($a, $b)")
		for _, r := range []string{"round", "rint"} {
			fn("l"+r+t.suffix, "long", []string{t.typ}, "(long)"+r+"($a)")
			fn("ll"+r+t.suffix, "long", []string{t.typ}, "(long)"+r+"($a)")
		}
	}
	// The driver may define abs as a macro (PoCL does): C's is defined
	// in its place.
	lib = append(lib, Macro{"abs", "#undef abs\nstatic int op2_abs(int op2_x) { return op2_x < 0 ? -op2_x : op2_x; }\n#define abs(x) op2_abs((int)(x))"})
	for _, f := range []string{"labs", "llabs"} {
		lib = append(lib, Macro{f, "static long op2_" + f + "(long op2_x) { return op2_x < 0 ? -op2_x : op2_x; }\n#define " + f + "(x) op2_" + f + "((long)(x))"})
	}
	// isinf as glibc's: -1 for minus infinity (OpenCL C's gives 1).
	// Overloaded, so that a float argument stays float (a device may
	// have no double) and the argument is evaluated once, as C's.
	lib = append(lib, Macro{"isinf", "#undef isinf\n" +
		"static int __attribute__((overloadable)) op2_isinf(float op2_x) { return op2_x == INFINITY ? 1 : op2_x == -INFINITY ? -1 : 0; }\n" +
		"#ifdef cl_khr_fp64\nstatic int __attribute__((overloadable)) op2_isinf(double op2_x) { return op2_x == (double)INFINITY ? 1 : op2_x == -(double)INFINITY ? -1 : 0; }\n#endif\n" +
		"#define isinf(x) op2_isinf(x)"})
	return lib
}
