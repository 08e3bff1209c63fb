package device

import (
	"strings"
	"testing"

	"github.com/goop2/op2/internal/core"
)

// TestSpMVSource: the product's kernel reads x and writes y in the
// layout asked for, sums a scalar row's terms in the order of its
// columns, and refuses bad shapes.
func TestSpMVSource(t *testing.T) {
	for _, tc := range []struct {
		m    SpMV
		want []string
	}{
		{SpMV{Type: core.Float64, RDim: 1, CDim: 1}, []string{
			"reqd_work_group_size(64, 1, 1)", "__global const double *restrict op2_v",
			"op2_s[op2_a] += op2_v[(size_t)op2_k * 1 + op2_a * 1 + op2_b] * op2_x[op2_c * 1 + op2_b];",
			"op2_y[(size_t)op2_r * 1 + op2_a] = op2_s[op2_a];"}},
		{SpMV{Type: core.Float32, RDim: 2, CDim: 3, XSoA: true, YSoA: true, WorkGroupSize: 128}, []string{
			"reqd_work_group_size(128, 1, 1)", "float op2_s[2];",
			"op2_v[(size_t)op2_k * 6 + op2_a * 3 + op2_b] * op2_x[op2_c + (size_t)op2_b * op2_xs];",
			"op2_y[(size_t)op2_r + (size_t)op2_a * op2_ys] = op2_s[op2_a];"}},
	} {
		src, err := SpMVSource(OpenCL, tc.m)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(src, w) {
				t.Errorf("%+v: no %q in\n%s", tc.m, w, src)
			}
		}
	}
	for _, m := range []SpMV{{Type: core.Float64, RDim: 0, CDim: 1}, {Type: core.Float64, RDim: 1, CDim: 1, WorkGroupSize: 48}} {
		if _, err := SpMVSource(OpenCL, m); err == nil {
			t.Errorf("%+v accepted", m)
		}
	}
}

// TestTypeClashes: a kernel source declaring a type named like a
// built-in vector type of the dialect is refused with an error naming
// the kernel, the type and the clash; scalar redeclarations C11 allows,
// other names, and uses of the built-in types pass.
func TestTypeClashes(t *testing.T) {
	tl := newTestLoop()
	q := tl.dat("q", 3, tl.edges)
	for _, tc := range []struct {
		src          string
		opencl, cuda string // "" when accepted
	}{
		{"typedef struct { double x, y, z; } double3;\nvoid k(double *q) { double3 v = {q[0], q[1], q[2]}; q[0] = v.x; }",
			`the typedef "double3" is an OpenCL C vector type name`, `the typedef "double3" is a CUDA built-in vector type`},
		{"struct float4 { float a[4]; };\nvoid k(double *q) { struct float4 f; f.a[0] = 1; q[0] = f.a[0]; }",
			`the tag "float4" is an OpenCL C vector type name`, `the tag "float4" is a CUDA built-in vector type`},
		{"#define uchar16 int\nvoid k(double *q) { q[0] = 1; }", `the macro "uchar16" is an OpenCL C vector type name`, ""},
		{"typedef struct { int a; } dim3;\nvoid k(double *q) { q[0] = 1; }", "", `the typedef "dim3" is a CUDA built-in vector type`},
		{"typedef unsigned int uint;\ntypedef struct { double v[3]; } vec3;\nvoid k(double *q) { uint i = 0; vec3 v; v.v[i] = 1; q[0] = v.v[0]; }", "", ""},
	} {
		l := loop(t, tc.src, "k", tl.edges, nil, core.Arg{Data: q, Access: core.RW, Kind: core.ArgDirect})
		for _, c := range []struct {
			d    *Dialect
			want string
		}{{OpenCL, tc.opencl}, {CUDA, tc.cuda}} {
			_, err := Analyse(c.d, l, 48*1024)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("%s: %q refused: %v", c.d.Name, tc.src, err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `kernel "k"`)):
				t.Errorf("%s: %q: %v, want an error containing %q", c.d.Name, tc.src, err, c.want)
			}
		}
	}
}
