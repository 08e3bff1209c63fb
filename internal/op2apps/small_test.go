package op2apps

import (
	"testing"

	"github.com/goop2/op2/mesh"
)

// compareReduction compares r with OP2's reduction output: the two "should
// be" lines.
func compareReduction(t *testing.T, r *ReductionResult) {
	t.Helper()
	e := op2Lines(t, "reduction.txt", `^number of edges:: (\d+) should be: (\d+) $`)[0]
	c := op2Lines(t, "reduction.txt", `^number of cells: (\d+) should be: (\d+) $`)[0]
	if r.Count1 != atoi(t, e[0]) || r.Edges != atoi(t, e[1]) {
		t.Errorf("indirect reduction counted %d of %d edges; OP2 %s of %s", r.Count1, r.Edges, e[0], e[1])
	}
	if r.Count2 != atoi(t, c[0]) || r.Cells != atoi(t, c[1]) {
		t.Errorf("direct reduction counted %d of %d cells; OP2 %s of %s", r.Count2, r.Cells, c[0], c[1])
	}
}

// TestReduction runs reduction on the mesh OP2's build read (new_grid.dat
// from mesh.Generate(ReductionI, ReductionJ)) on every configuration.
func TestReduction(t *testing.T) {
	m, err := mesh.Generate(ReductionI, ReductionJ)
	if err != nil {
		t.Fatal(err)
	}
	forEachConfig(t, func(t *testing.T, c runConfig) {
		r, err := RunReduction(m, nil)
		if err != nil {
			t.Fatal(err)
		}
		compareReduction(t, r)
	})
}

// compareMin compares r with OP2's min_direct or min_indirect output: the
// data lines and the minimum.
func compareMin(t *testing.T, indirect bool, r *MinResult, rank0 bool) {
	t.Helper()
	file := "min_direct.txt"
	if indirect {
		file = "min_indirect.txt"
	}
	m := op2Lines(t, file, `^min: (\d+) \(expected: (\d+)\)$`)[0]
	if int(r.Min) != atoi(t, m[0]) {
		t.Errorf("min %d, OP2 %s", r.Min, m[0])
	}
	if !rank0 {
		return
	}
	if int(r.Expected) != atoi(t, m[1]) {
		t.Errorf("expected %d, OP2 %s", r.Expected, m[1])
	}
	v := op2Lines(t, file, `^i: (\d+), v: (\d+)$`)
	if len(v) != len(r.V) {
		t.Fatalf("%d values, OP2 %d", len(r.V), len(v))
	}
	for i, l := range v {
		if atoi(t, l[0]) != i || int(r.V[i]) != atoi(t, l[1]) {
			t.Errorf("value %d is %d, OP2 i: %s, v: %s", i, r.V[i], l[0], l[1])
		}
	}
}

// TestMin runs min_direct and min_indirect on every configuration: OP2's
// C++ kernel, but its C spelling on opencl, which runs no C++.
func TestMin(t *testing.T) {
	forEachConfig(t, func(t *testing.T, c runConfig) {
		for _, indirect := range []bool{false, true} {
			r, err := RunMin(indirect, c.backend == "opencl", nil)
			if err != nil {
				t.Fatalf("indirect %v: %v", indirect, err)
			}
			compareMin(t, indirect, r, true)
		}
	})
}
