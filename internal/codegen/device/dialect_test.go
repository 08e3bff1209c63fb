package device

import (
	"strings"
	"testing"

	"github.com/goop2/op2/internal/core"
)

// marked is a dialect whose every spelling is a marker, to show that the
// generator writes no spelling of its own.
var marked = &Dialect{
	Name:          "marked",
	Preamble:      "/* MARK_PREAMBLE */\n",
	KernelHead:    "MARK_KERNEL(%d) void",
	Global:        "MARK_GLOBAL",
	Local:         "MARK_LOCAL",
	Constant:      "MARK_CONSTANT",
	Private:       "MARK_PRIVATE",
	LocalBarrier:  "MARK_LBARRIER()",
	GlobalBarrier: "MARK_GBARRIER()",
	BothBarrier:   "MARK_BBARRIER()",
	LocalID:       "MARK_LID",
	GroupID:       "MARK_GID",
	GlobalID:      "MARK_GLOBALID",
	GlobalSize:    "MARK_GLOBALSIZE",
	Int64:         "MARK_INT64",
	ConstTable:    "MARK_CONSTTABLE",
}

// TestDialectSpellings: with another dialect, no OpenCL spelling remains
// in the generated code for any loop shape (direct, indirect, vector,
// reductions, constants, large dims), and the dialect's spellings appear.
func TestDialectSpellings(t *testing.T) {
	src := "static double first(const double *v) { return v[0] * eps; }\n" +
		"void k(double *a, double *b, double *c, double *d, double *e, double *f) { a[0] = first(b) + tab[1]; }"
	consts := []*core.Const{newConst("eps", 1), newConst("tab", 1, 2, 3)}
	openCLOnly := []string{"__kernel", "__global", "__local", "__constant", "__private", "barrier(", "CLK_", "get_local_id", "get_group_id", "get_global_id", "get_global_size", "OPENCL", "uchar"}
	for name, l := range shapes(t, src, "k", consts) {
		l.Args = l.Args[:min(len(l.Args), 6)]
		for _, localMem := range []int{48 * 1024, 1024} { // staged, and too large to stage
			lay, err := Analyse(marked, l, localMem)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Generate(l, lay)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range openCLOnly {
				if strings.Contains(s, w) {
					t.Errorf("%s (local memory %d): the marked dialect's source contains %q", name, localMem, w)
				}
			}
			for _, w := range []string{"MARK_PREAMBLE", "MARK_KERNEL(64) void op2_stub", "MARK_CONSTANT char *op2_consts"} {
				if !strings.Contains(s, w) {
					t.Errorf("%s: the source lacks %q", name, w)
				}
			}
			if lay.Indirect && !strings.Contains(s, "MARK_LBARRIER();") {
				t.Errorf("%s: an indirect stub without the dialect's barrier", name)
			}
		}
	}
}
