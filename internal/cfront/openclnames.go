package cfront

import (
	"strings"
)

// openCLWords are identifiers that OpenCL C reserves or predefines and
// that a C program may use freely: keywords (address-space, access and
// function qualifiers without their underscores), type names, and the
// built-in functions and macros the generated device code relies on. A
// Const with one of these names would break the OpenCL source GoOP2
// generates (each constant becomes a local variable of that name in the
// kernel's functions), so such names are refused.
var openCLWords = map[string]string{}

func init() {
	add := func(what, words string) {
		for _, w := range strings.Fields(words) {
			openCLWords[w] = what
		}
	}
	add("an OpenCL C keyword", `global local constant private kernel generic
		read_only write_only read_write uniform pipe`)
	add("an OpenCL C type name", `bool half quad uchar ushort uint ulong
		event_t sampler_t queue_t ndrange_t clk_event_t reserve_id_t cl_mem_fence_flags
		memory_order memory_scope atomic_flag atomic_int atomic_uint atomic_long atomic_ulong
		atomic_float atomic_double atomic_intptr_t atomic_uintptr_t atomic_size_t atomic_ptrdiff_t
		image1d_t image1d_array_t image1d_buffer_t image2d_t image2d_array_t image3d_t
		image2d_depth_t image2d_array_depth_t image2d_msaa_t image2d_array_msaa_t
		image2d_msaa_depth_t image2d_array_msaa_depth_t`)
	add("an OpenCL C built-in function", `get_work_dim get_global_size get_global_id
		get_local_size get_enqueued_local_size get_local_id get_num_groups get_group_id
		get_global_offset get_global_linear_id get_local_linear_id
		barrier work_group_barrier mem_fence read_mem_fence write_mem_fence
		async_work_group_copy async_work_group_strided_copy wait_group_events prefetch
		atomic_add atomic_sub atomic_xchg atomic_inc atomic_dec atomic_cmpxchg
		atomic_min atomic_max atomic_and atomic_or atomic_xor`)
	add("an OpenCL C built-in macro", `CLK_LOCAL_MEM_FENCE CLK_GLOBAL_MEM_FENCE CLK_IMAGE_MEM_FENCE
		MAXFLOAT HUGE_VALF FLT_MAX FLT_MIN FLT_EPSILON DBL_MAX DBL_MIN DBL_EPSILON
		CHAR_BIT INT_MAX INT_MIN UINT_MAX LONG_MAX LONG_MIN ULONG_MAX`)
}

// openCLScalars are the OpenCL C scalar types that have vector forms and
// conversion functions.
var openCLScalars = []string{"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "double", "half", "bool"}

// OpenCLNameProblem says why name cannot be used as a Const's name in the
// OpenCL source GoOP2 generates, or returns "" when it can: it must not be
// an OpenCL C keyword (global, local, constant, kernel, ...), type name
// (half, uint, image2d_t, vector types such as float4), built-in function
// (get_global_id, barrier, vload4, convert_int, as_float, ...) or built-in
// macro.
func OpenCLNameProblem(name string) string {
	if what, ok := openCLWords[name]; ok {
		return what
	}
	for _, s := range openCLScalars {
		if n, ok := strings.CutPrefix(name, s); ok {
			switch n {
			case "2", "3", "4", "8", "16":
				return "an OpenCL C vector type name"
			}
		}
	}
	for _, p := range []string{"vload", "vstore", "vloada_half", "vstorea_half", "convert_", "as_"} {
		rest, ok := strings.CutPrefix(name, p)
		if !ok {
			continue
		}
		if p == "convert_" || p == "as_" {
			// convert_float4_rte, as_uint2: a type name, then suffixes.
			t, _, _ := strings.Cut(rest, "_")
			if !isOpenCLTypeName(t) {
				continue
			}
		}
		return "an OpenCL C built-in function"
	}
	return ""
}

// isOpenCLTypeName reports whether t is an OpenCL C scalar or vector type.
func isOpenCLTypeName(t string) bool {
	for _, s := range openCLScalars {
		if n, ok := strings.CutPrefix(t, s); ok {
			switch n {
			case "", "2", "3", "4", "8", "16":
				return true
			}
		}
	}
	return false
}
