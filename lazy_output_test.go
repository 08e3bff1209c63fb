package op2_test

import (
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// TestLazyRunsOutputKernelsAtOnce: in lazy mode a loop whose kernel
// writes output (printf, its _unlocked, wide and __builtin_ forms,
// dprintf, C++'s streams and files...) or may end the process (exit)
// runs when issued, after the loops recorded
// before it, so that its output comes in program order and a program
// ending after it still prints; other loops are recorded, and a Chain
// records both.
func TestLazyRunsOutputKernelsAtOnce(t *testing.T) {
	r := must(op2.NewRuntime(op2.Config{Backend: "sequential", Lazy: true}))
	set := must(op2.NewSet(2, "out_set"))
	x := must(op2.NewDat[float64](set, 1, nil, "x"))
	quiet := op2.NewKernel("void out_quiet(double *x) { x[0] += 1; }", "out_quiet")
	for _, c := range []struct {
		name, src string
		atOnce    bool
	}{
		{"out_quiet", "void out_quiet(double *x) { x[0] += 1; }", false},
		{"out_printf", "#include <stdio.h>\nvoid out_printf(double *x) { x[0] += 1; if (x[0] < 0) printf(\"%g\\n\", x[0]); }", true},
		{"out_fputs", "#include <stdio.h>\nvoid out_fputs(double *x) { x[0] += 1; if (x[0] < 0) fputs(\"negative\\n\", stderr); }", true},
		{"out_word", "void out_word(double *x) { double printed = 1; x[0] += printed; }", false},
		{"out_putchar_unlocked", "#include <stdio.h>\nvoid out_putchar_unlocked(double *x) { x[0] += 1; if (x[0] < 0) putchar_unlocked('-'); }", true},
		{"out_dprintf", "#include <stdio.h>\nvoid out_dprintf(double *x) { x[0] += 1; if (x[0] < 0) dprintf(2, \"negative\\n\"); }", true},
		{"out_wprintf", "#include <wchar.h>\nvoid out_wprintf(double *x) { x[0] += 1; if (x[0] < 0) wprintf(L\"negative\\n\"); }", true},
		{"out_builtin", "void out_builtin(double *x) { x[0] += 1; if (x[0] < 0) __builtin_printf(\"negative\\n\"); }", true},
		{"out_exit", "#include <stdlib.h>\nvoid out_exit(double *x) { x[0] += 1; if (x[0] < 0) exit(3); }", true},
		{"out_assert", "#include <assert.h>\nvoid out_assert(double *x) { x[0] += 1; assert(x[0] > 0); }", true},
		{"out_wcout", "#include <iostream>\nvoid out_wcout(double *x) { x[0] += 1; if (x[0] < 0) std::wcout << L\"negative\" << std::endl; }", true},
		{"out_ofstream", "#include <fstream>\nvoid out_ofstream(double *x) { x[0] += 1; if (x[0] < 0) { std::ofstream f(\"/dev/null\"); f << x[0]; } }", true},
	} {
		k := op2.NewKernel(c.src, c.name)
		if strings.Contains(c.src, "std::") {
			k = k.CXX()
		}
		check(t, r.ParLoop(quiet, set, x.Arg(op2.RW)))
		check(t, r.ParLoop(k, set, x.Arg(op2.RW)))
		want := 2 // both recorded
		if c.atOnce {
			want = 0 // the second ran, after the first
		}
		if n := op2.RecordedLoops(); n != want {
			t.Errorf("%s: %d loops recorded, want %d", c.name, n, want)
		}
		check(t, r.Chain(func() error {
			check(t, r.ParLoop(k, set, x.Arg(op2.RW)))
			if n := op2.RecordedLoops(); n != want+1 {
				t.Errorf("%s in a Chain: %d loops recorded, want %d", c.name, n, want+1)
			}
			return nil
		}))
	}
	if v := x.DataRO(); v[0] != 36 || v[1] != 36 {
		t.Errorf("x = %v, want [36 36]", v)
	}
	// Over a mixed set: each block's loop runs when issued too.
	ms := must(op2.NewMixedSet([]*op2.Set{set, must(op2.NewSet(3, "out_other"))}, "out_mixed"))
	md := must(op2.NewMixedDat[float64](ms, []int{1, 1}, nil, "out_md"))
	printing := op2.NewKernel("#include <stdio.h>\nvoid out_mixed(double *x) { x[0] += 1; if (x[0] < 0) printf(\"%g\\n\", x[0]); }", "out_mixed")
	check(t, r.ParLoop(quiet, set, x.Arg(op2.RW)))
	check(t, r.ParLoop(printing, ms, md.Arg(op2.RW)))
	if n := op2.RecordedLoops(); n != 0 {
		t.Errorf("a kernel that prints over a mixed set: %d loops recorded, want 0", n)
	}
}
