package cfront

import (
	"strings"
	"testing"
)

// TestOpenCLNameProblem: names OpenCL C reserves or predefines are
// refused as Const names, with what they are; ordinary names, including
// ones that merely start like an OpenCL name, are not.
func TestOpenCLNameProblem(t *testing.T) {
	cases := []struct {
		name string
		want string // substring of the problem; "" if the name is fine
	}{
		{"gam", ""}, {"float", ""}, {"floats", ""}, {"float5", ""}, {"int1", ""}, {"vec4", ""},
		{"as_is", ""}, {"convert_units", ""}, {"vloadx", "built-in function"}, {"length", ""}, {"dot", ""},
		{"global", "keyword"}, {"local", "keyword"}, {"constant", "keyword"}, {"private", "keyword"},
		{"kernel", "keyword"}, {"read_only", "keyword"}, {"write_only", "keyword"}, {"generic", "keyword"},
		{"half", "type name"}, {"uint", "type name"}, {"ulong", "type name"}, {"uchar", "type name"},
		{"image2d_t", "type name"}, {"image3d_t", "type name"}, {"sampler_t", "type name"}, {"event_t", "type name"},
		{"float4", "vector type"}, {"double2", "vector type"}, {"int16", "vector type"}, {"uchar3", "vector type"},
		{"half8", "vector type"}, {"bool2", "vector type"},
		{"get_global_id", "built-in function"}, {"get_local_size", "built-in function"}, {"barrier", "built-in function"},
		{"mem_fence", "built-in function"}, {"atomic_add", "built-in function"},
		{"vload4", "built-in function"}, {"vstore_half", "built-in function"},
		{"convert_int", "built-in function"}, {"convert_float4_rte", "built-in function"}, {"as_uint2", "built-in function"},
		{"CLK_LOCAL_MEM_FENCE", "macro"}, {"MAXFLOAT", "macro"},
	}
	for _, c := range cases {
		got := OpenCLNameProblem(c.name)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("OpenCLNameProblem(%q) = %q, want %q", c.name, got, c.want)
		}
		if c.want != "" {
			if why := ConstNameProblem(c.name); !strings.Contains(why, "opencl") {
				t.Errorf("ConstNameProblem(%q) = %q, want it to name the opencl backend", c.name, why)
			}
		}
	}
}
