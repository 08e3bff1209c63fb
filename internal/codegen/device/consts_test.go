package device

import (
	"regexp"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/core"
)

// constsSrc reads a scalar constant, a small array (a private copy) and a
// large one (a pointer into the constants' buffer), in the kernel and in
// a helper function, which takes the constants as its hidden parameter.
const constsSrc = `static double look(int i) { return c_tab[i] + c_small[i % 4]; }
void k(double *a) { a[0] = c_s * look(3) + c_tab[1] + c_small[2]; }`

// constsLoop is a direct loop of constsSrc whose constants take 40 + 8n
// bytes: c_s at offset 0, c_small at 8 and n doubles of c_tab at 40.
func constsLoop(t *testing.T, n int) *core.Loop {
	tl := newTestLoop()
	consts := []*core.Const{newConst("c_s", 2), newConst("c_small", 1, 2, 3, 4), newConst("c_tab", make([]float64, n)...)}
	return loop(t, constsSrc, "k", tl.edges, consts,
		core.Arg{Data: tl.dat("q", 1, tl.edges), Access: core.Write, Kind: core.ArgDirect})
}

// TestConstantsBeyondConstantMemory: the constants' buffer is in constant
// memory while the constants fit the device's (Options.ConstMem; 0 for
// NominalConstMem), at the limit included, and in read-only device
// memory exactly when they take more (or when the device takes no
// constant buffer): the kernel, its helper and the stub then take it as a
// restrict pointer to read-only global memory, and the constants' locals
// read it there, private copies included. Within the limit the source is
// what it is with no limit in sight.
func TestConstantsBeyondConstantMemory(t *testing.T) {
	const limit = 4096
	// nAt is the length of c_tab with which the constants take bytes.
	nAt := func(bytes int) int { return (bytes - 40) / 8 }
	cases := []struct {
		name     string
		d        *Dialect
		n        int // doubles of c_tab
		constMem int
		global   bool
	}{
		{"opencl below", OpenCL, nAt(limit - 8), limit, false},
		{"opencl at the limit", OpenCL, nAt(limit), limit, false},
		{"opencl over", OpenCL, nAt(limit + 8), limit, true},
		{"opencl nominal at the limit", OpenCL, nAt(NominalConstMem), 0, false},
		{"opencl nominal over", OpenCL, nAt(NominalConstMem + 8), 0, true},
		{"opencl 2 MiB", OpenCL, 1 << 18, 1 << 20, true},
		{"opencl no constant buffer", OpenCL, 200, -1, true},
		{"cuda at the limit", CUDA, nAt(limit), limit, false},
		{"cuda over", CUDA, nAt(limit + 8), limit, true},
		{"cuda nominal over", CUDA, nAt(NominalConstMem + 8), 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := constsLoop(t, c.n)
			lay, err := AnalyseWith(c.d, l, 48<<10, Options{ConstMem: c.constMem})
			if err != nil {
				t.Fatal(err)
			}
			src, err := Generate(l, lay)
			if err != nil {
				t.Fatal(err)
			}
			if lay.ConstsGlobal() != c.global {
				t.Fatalf("%d bytes of constants, %d of constant memory: ConstsGlobal() = %v, want %v", lay.ConstBytes, c.constMem, lay.ConstsGlobal(), c.global)
			}
			param, q := c.d.Constant+" char *op2_consts", c.d.Constant
			if c.global {
				param, q = c.d.ReadOnlyGlobal+" char *restrict op2_consts", c.d.ReadOnlyGlobal
			}
			want := []string{
				"static double op2_f_look(" + param + ", int i) {",
				"void op2_f_k(" + param + ", ",
				"    " + param + ")\n{",
				"op2_f_look(op2_consts, 3)",
				"const double c_s = *(" + q + " double *)(op2_consts + 0);",
				"op2_cv_c_small[op2_k] = ((" + q + " double *)(op2_consts + 8))[op2_k]; const double *const c_small = op2_cv_c_small;",
				q + " double *const c_tab = (" + q + " double *)(op2_consts + 40);",
			}
			for _, w := range want {
				if !strings.Contains(src, w) {
					t.Errorf("no %q in\n%s", w, src[:min(len(src), 4000)])
				}
			}
			if n := strings.Count(src, "op2_consts,") + strings.Count(src, "op2_consts)"); n < 4 {
				t.Errorf("op2_consts passed or declared %d times", n)
			}
			if old := c.d.Constant + " char *op2_consts"; c.global && strings.Contains(src, old) {
				t.Errorf("%q left in\n%s", old, src)
			}
			if !c.global {
				// No limit in sight: the same source.
				big, err := AnalyseWith(c.d, l, 48<<10, Options{ConstMem: 1 << 30})
				if err != nil {
					t.Fatal(err)
				}
				if s, _ := Generate(l, big); s != src {
					t.Errorf("the source within the limit differs from the one with no limit")
				}
			}
		})
	}
}

// TestConstantsBeyondConstantMemoryHint: a build that fails because a
// helper function takes a large constant as a plain pointer explains
// that the constant is a pointer of the qualifier the constants have.
func TestConstantsBeyondConstantMemoryHint(t *testing.T) {
	for _, c := range []struct {
		constMem int
		want     string
	}{
		{0, "as a __constant pointer"},
		{4096, "as a __global const pointer"},
	} {
		l := constsLoop(t, 1000)
		lay, err := AnalyseWith(OpenCL, l, 48<<10, Options{ConstMem: c.constMem})
		if err != nil {
			t.Fatal(err)
		}
		if h := lay.BuildHint(l); !strings.Contains(h, `constant "c_tab" is larger than 1024 bytes`) || !strings.Contains(h, c.want) {
			t.Errorf("constant memory %d: hint %q, want %q", c.constMem, h, c.want)
		}
	}
}

// TestConstantNamedLikeAMacro: a constant whose name the source also
// defines as a macro has its local declared under #ifndef, so that the
// macro, where defined at the body's start, is what the name means (as in
// C); a constant no macro names is declared as ever, on both dialects.
func TestConstantNamedLikeAMacro(t *testing.T) {
	for _, d := range []*Dialect{OpenCL, CUDA} {
		tl := newTestLoop()
		consts := []*core.Const{newConst("c_m", 2), newConst("c_s", 3)}
		l := loop(t, "#define c_m 100.0\nvoid k(double *a) { a[0] = c_m + c_s; }", "k", tl.edges, consts,
			core.Arg{Data: tl.dat("q", 1, tl.edges), Access: core.Write, Kind: core.ArgDirect})
		lay, err := Analyse(d, l, 48<<10)
		if err != nil {
			t.Fatal(err)
		}
		src, err := Generate(l, lay)
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`\n#ifndef c_m\n const double c_m = [^\n]*; \(void\)c_m;\n#endif\n`).MatchString(src) {
			t.Errorf("%s: no local of c_m under #ifndef c_m in\n%s", d.Name, src)
		}
		if strings.Contains(src, "#ifndef c_s") || !strings.Contains(src, " const double c_s = ") {
			t.Errorf("%s: c_s not declared as ever in\n%s", d.Name, src)
		}
	}
}
