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
