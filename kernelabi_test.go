package op2_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// onHostBackends runs f as a subtest on the host backends.
func onHostBackends(t *testing.T, f func(t *testing.T)) {
	for _, b := range hostBackends {
		t.Run(b, func(t *testing.T) {
			check(t, op2.Use(b))
			defer op2.Use("sequential")
			f(t)
		})
	}
}

// TestKernelABIRefused: a kernel parameter whose C type GoOP2 does not
// know or that does not match its argument refuses the loop, whatever way
// the source spells, hides or conditionally compiles the type, with a
// LoopError naming the loop, the argument, the parameter and the C type it
// must have.
func TestKernelABIRefused(t *testing.T) {
	set := must(op2.NewSet(4, "cells"))
	x := must(op2.NewDat[float64](set, 2, nil, "x"))
	cases := []struct {
		name, src string
		want      []string
	}{
		{"long double", "void k(long double *p) { *p = 1; }", []string{`"long double *p"`, "long double", "does not support"}},
		{"uint64_t", "#include <stdint.h>\nvoid k(uint64_t *p) { *p = 1; }", []string{`"uint64_t *p"`, "uint64_t"}},
		{"unsigned long", "void k(unsigned long *p) { *p = 1; }", []string{`"unsigned long *p"`}},
		{"size_t", "#include <stddef.h>\nvoid k(size_t *p) { *p = 1; }", []string{`"size_t *p"`}},
		{"void", "void k(void p) { }", []string{`"void p"`}},
		{"char", "void k(char *p) { *p = 1; }", []string{`"char *p"`}},
		{"struct", "struct v { double a, b; };\nvoid k(struct v *p) { p->a = 1; }", []string{`"struct v *p"`, "struct v"}},
		{"unknown typedef", "#include <stddef.h>\ntypedef ptrdiff_t idx;\nvoid k(idx *p) { *p = 1; }", []string{`"idx *p"`, "idx (typedef of ptrdiff_t)"}},
		{"typedef of unsigned long", "typedef unsigned long ul;\nvoid k(ul *p) { *p = 1; }", []string{"typedef of unsigned long"}},
		{"macro for long double", "#define real long double\nvoid k(real *p) { *p = 1; }", []string{"macro for long double"}},
		{"typedef float where the data is float64", "typedef float real;\nvoid k(real *p) { *p = 1; }", []string{"element type float32", "real (typedef of float)"}},
		{"#if 0 hides the real definition's type", "#if 0\nvoid k(double *p) { *p = 1; }\n#else\nvoid k(float *p) { *p = 1; }\n#endif",
			[]string{`"float *p"`, "element type float32"}},
		{"typedef chosen by #ifdef of a source macro", "#define SINGLE\n#ifdef SINGLE\ntypedef float real;\n#else\ntypedef double real;\n#endif\nvoid k(real *p) { *p = 1; }",
			[]string{"typedef of float"}},
		{"typedef under an unknown condition", "#include <stddef.h>\n#ifdef USE_FLOAT\ntypedef float real;\n#else\ntypedef double real;\n#endif\nvoid k(real *p) { *p = 1; }",
			[]string{"#ifdef USE_FLOAT", "cannot evaluate"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := op2.NewKernel(c.src, "k")
			for _, err := range []error{op2.ParLoop(k, set, x.Arg(op2.RW)), second(op2.NewLoop(k, set, x.Arg(op2.RW)))} {
				var le *op2.LoopError
				if !errors.As(err, &le) {
					t.Fatalf("error %v is not a *LoopError", err)
				}
				wantErr(t, err, append([]string{`loop "k" over set "cells"`, "argument 0", `dat "x"`, "must be double * (C double)"}, c.want...)...)
			}
		})
	}

	// Sources the reader must refuse as a whole, whatever the arguments.
	refused := []struct {
		name, src string
		want      []string
	}{
		{"definition depends on an unknown macro", "#ifdef __OPENCL_VERSION__\nvoid k(float *p) {}\n#else\nvoid k(double *p) {}\n#endif",
			[]string{`function "k"`, "#ifdef __OPENCL_VERSION__", "cannot evaluate"}},
		{"two active definitions", "void k(double *p) { }\n#if 1\nvoid k(double *p) { }\n#endif", []string{"defined 2 times"}},
		{"K&R definition", "void k(p) double *p; { *p = 1; }", []string{"K&R-style definition; write a prototype"}},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			wantErr(t, op2.ParLoop(op2.NewKernel(c.src, "k"), set, x.Arg(op2.RW)), append([]string{`kernel "k"`}, c.want...)...)
		})
	}
}

// TestKernelABIAccepted: typedefs, macros and conditionals the reader can
// evaluate give the loop the right types, and it runs as written.
func TestKernelABIAccepted(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		set := must(op2.NewSet(4, "cells"))
		// Kernels whose parameter list is chosen by the preprocessor: the
		// compiled branch takes (q, p).
		const two, one = "void k(const int *q, double *p) { p[0] = 7 + 0 * q[0]; }", "void k(double *p) { p[0] = 1; }"
		cases := []struct {
			name, src string
			two       bool // the kernel takes (q, p)
		}{
			{"typedef", "typedef double real;\nvoid k(real *p) { p[0] = 7; }", false},
			{"macro type", "#define real double\nvoid k(const int *q, real *p) { p[0] = 7; }", true},
			{"#if 0 around a wrong definition", "#if 0\nvoid k(float *p) { *p = 1; }\n#endif\nvoid k(double *p) { p[0] = 7; }", false},
			{"#ifdef of a source macro", "#define DBL 1\n#if defined(DBL) && DBL\nvoid k(double *p) { p[0] = 7; }\n#else\nvoid k(float *p) { p[0] = 1; }\n#endif", false},
			{"unsigned #if picks the list", "#if -1 > 0u\n" + two + "\n#else\n" + one + "\n#endif", true},
			{"undefined macro is 0", "#if VARIANT\n" + one + "\n#else\n" + two + "\n#endif", true},
			{"#elif on arithmetic", "#define N 4\n#if N % 2\n" + one + "\n#elif N << 2 == 16\n" + two + "\n#else\n" + one + "\n#endif", true},
			{"#if inside the list", "void k(\n#if 'a' == 97\nconst int *q,\n#endif\ndouble *p) { p[0] = 7; }", true},
			{"continuations", "void k(const in\\\nt *q, dou\\\nble *p) { p[0] = \\\n7; }", true},
			{"attributes", "[[gnu::hot]] __attribute__((noinline)) void k(const int *q __attribute__((unused)), [[maybe_unused]] double *p) { p[0] = 7; }", true},
			{"typedef'd pointers", "typedef double *dp;\ntypedef const int *cip;\nvoid k(cip q, dp p) { p[0] = 7; }", true},
			{"digraphs", "%:define SEVEN 7\nvoid k(const int q<::>, double p<::>) <% p<:0:> = SEVEN; %>", true},
		}
		for _, c := range cases {
			x := must(op2.NewDat[float64](set, 1, nil, "x"))
			q := must(op2.NewDat[int32](set, 1, nil, "q"))
			args := []op2.Arg{x.Arg(op2.Write)}
			if c.two {
				args = []op2.Arg{q.Arg(op2.Read), x.Arg(op2.Write)}
			}
			if err := op2.ParLoop(op2.NewKernel(c.src, "k"), set, args...); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if d := x.Data(); d[0] != 7 || d[3] != 7 {
				t.Errorf("%s: x = %v, want all 7", c.name, d)
			}
		}
	})
}

// TestReservedIdentifiersRefused: kernel sources may not use GoOP2's
// reserved prefix.
func TestReservedIdentifiersRefused(t *testing.T) {
	set := must(op2.NewSet(4, "cells"))
	x := must(op2.NewDat[float64](set, 1, nil, "x"))
	for _, src := range []string{
		"void k(double *p) { double op2_n = 1; *p = op2_n; }",
		"static void op2_range(void) {}\nvoid k(double *p) { }",
		"#define OP2_SCALE 2\nvoid k(double *p) { *p = OP2_SCALE; }",
	} {
		wantErr(t, op2.ParLoop(op2.NewKernel(src, "k"), set, x.Arg(op2.RW)), `kernel "k"`, "reserved for GoOP2's generated code", "op2_")
	}
}

// TestUserNamesCannotBreakGeneratedCode: kernel macros and functions named
// like the identifiers generated wrappers used to have change nothing.
func TestUserNamesCannotBreakGeneratedCode(t *testing.T) {
	names := []string{"k", "n", "end", "start", "first", "last", "d0", "d1", "d2", "m1", "m2", "a0", "a1", "j1", "l1",
		"v2", "r3", "t", "iv", "pv", "nthreads", "tid", "blkmap", "offset", "nelems", "coloff", "ncolors",
		"part3", "b", "blk", "c", "len", "nt", "i", "x", "op2c_g"}
	var macros strings.Builder
	for _, n := range names {
		fmt.Fprintf(&macros, "#define %s oops!\n", n)
	}
	// Host backends: the opencl generator's own names are another part of
	// the work on generated-code hygiene.
	onHostBackends(t, func(t *testing.T) {
		const ne, nn = 300, 100
		edges := must(op2.NewSet(ne, "edges"))
		nodes := must(op2.NewSet(nn, "nodes"))
		emap := make([]int32, 2*ne)
		for i := range emap {
			emap[i] = int32((i*37 + i/2) % nn)
		}
		m := must(op2.NewMap(edges, nodes, 2, emap, "m"))
		w := must(op2.NewDat(edges, 1, iota32[float64](ne), "w"))
		// Kernel functions named like wrapper identifiers, calling
		// helpers named like others; macros named like all of them,
		// #undef'd before the code that needs the names.
		src := macros.String() + `
#undef first
#undef d0
#undef n
#undef i
#undef x
static double d0(double v) { return 2 * v; }
static void n(double *v, double s) { *v += s; }
void first(const double *w, const double *y, double **acc, double *sum) {
  double s = d0(w[0]) + y[0];
  n(acc[0], s);
  n(acc[1], 1);
  *sum += s;
}
`
		y := must(op2.NewDat(nodes, 1, iota32[float64](nn), "y"))
		acc := must(op2.NewDat[float64](nodes, 1, nil, "acc"))
		sum := must(op2.NewGlobal[float64](1, nil, "sum"))
		check(t, op2.ParLoop(op2.NewKernel(src, "first"), edges, w.Arg(op2.Read), y.ArgMap(op2.Read, m, 1), acc.ArgVec(op2.Inc, m), sum.Arg(op2.Inc)))
		want := make([]float64, nn)
		total := 0.0
		for e := 0; e < ne; e++ {
			s := 2*float64(e) + float64(emap[2*e+1])
			want[emap[2*e]] += s
			want[emap[2*e+1]]++
			total += s
		}
		for i, v := range acc.Data() {
			if v != want[i] {
				t.Fatalf("acc[%d] = %v, want %v", i, v, want[i])
			}
		}
		if s := sum.Data()[0]; s != total {
			t.Errorf("sum = %v, want %v", s, total)
		}
		// Kernel functions named d0 and n themselves.
		for _, name := range []string{"d0", "n"} {
			src := macros.String() + "#undef " + name + "\n#undef x\nvoid " + name + "(double *x) { x[0] += 1; }"
			before := w.Data()[5]
			check(t, op2.ParLoop(op2.NewKernel(src, name), edges, w.Arg(op2.RW)))
			if got := w.Data()[5]; got != before+1 {
				t.Errorf("kernel %s: w[5] = %v, want %v", name, got, before+1)
			}
		}
	})
}

// TestConstNamesRefused: a Const may not be named like a C keyword, a
// standard type, a C library function or macro (exp, printf, M_PI...) or a
// reserved name, nor like the kernel that uses it.
func TestConstNamesRefused(t *testing.T) {
	for _, name := range []string{"return", "for", "double", "int", "restrict", "_Bool", "bool", "true", "int32_t", "size_t", "op2_x", "OP2_X", "__x", "_X", "exp", "pow", "printf", "main", "M_PI", "NAN", "MIN"} {
		wantErr(t, second(op2.NewConst(1, []float64{1}, name)), fmt.Sprintf("const %q", name))
	}
	wantErr(t, second(op2.NewConst(1, []float64{1}, "return")), "C keyword")
	// Names OpenCL C reserves break the opencl backend, so they are refused
	// on every backend: a program must run unchanged on each.
	for _, name := range []string{"global", "local", "constant", "kernel", "private", "image2d_t", "half", "float4", "uint", "get_global_id", "barrier"} {
		wantErr(t, second(op2.NewConst(1, []float64{1}, name)), fmt.Sprintf("const %q", name), "OpenCL C", "opencl")
	}
	onEachBackend(t, func(t *testing.T) {
		c := must(op2.NewConst(1, []float64{2}, "scale"))
		defer c.Remove()
		set := must(op2.NewSet(4, "cells"))
		x := must(op2.NewDat[float64](set, 1, nil, "x"))
		err := op2.ParLoop(op2.NewKernel("void scale(double *p) { *p = 1; }", "scale"), set, x.Arg(op2.Write))
		var le *op2.LoopError
		if !errors.As(err, &le) {
			t.Fatalf("error %v is not a *LoopError", err)
		}
		wantErr(t, err, `const "scale"`, `kernel function "scale"`)
	})
}

// TestKernelMacroNamedLikeAConst: a kernel's own macro named like a
// declared Const is what the name means in the kernel, as in C, on every
// backend (the device code declared the Const's local under the macro:
// const int 100 = ...).
func TestKernelMacroNamedLikeAConst(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		c := must(op2.NewConst(1, []int32{3}, "mc_c"))
		defer c.Remove()
		set := must(op2.NewSet(4, "cells"))
		x := must(op2.NewDat(set, 1, []int32{0, 1, 2, 3}, "x"))
		k := op2.NewKernel("#define mc_c 100\nvoid mc(int *x) { x[0] += mc_c; }", "mc")
		if err := op2.ParLoop(k, set, x.Arg(op2.RW)); err != nil {
			t.Fatal(err)
		}
		if got := x.DataRO()[0]; got != 100 {
			t.Errorf("x[0] = %d, want 100", got)
		}
	})
}

// TestConstsReadOnlyInKernels: a kernel assigning to a Const does not
// compile, and the Const keeps its value; reads, indexing, & and sizeof
// work on the host backends.
func TestConstsReadOnlyInKernels(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		sc := must(op2.NewConst(1, []float64{2}, "ro_scalar"))
		defer sc.Remove()
		arr := must(op2.NewConst(3, []float64{1, 2, 3}, "ro_array"))
		defer arr.Remove()
		set := must(op2.NewSet(4, "cells"))
		x := must(op2.NewDat[float64](set, 1, nil, "x"))
		for _, src := range []string{
			"void k(double *p) { ro_scalar = 5; *p = ro_scalar; }",
			"void k(double *p) { ro_array[1] = 5; *p = ro_array[1]; }",
			"void k(double *p) { double *q = (double *)0; *p = 0; ro_scalar += *q; }",
		} {
			err := op2.ParLoop(op2.NewKernel(src, "k"), set, x.Arg(op2.Write))
			if err == nil {
				t.Fatalf("kernel %q assigning to a Const compiled", src)
			}
			// The compilers word it their way: GCC "read-only", Clang
			// "const-qualified", the device compilers otherwise.
			if msg := err.Error(); !isDevice(op2.Backend()) && !strings.Contains(msg, "read-only") && !strings.Contains(msg, "const-qualified") {
				t.Errorf("error %q does not say the Const is read-only", err)
			}
		}
		if v := sc.Value(); v[0] != 2 {
			t.Errorf("ro_scalar = %v, want 2", v)
		}
		if v := arr.Value(); v[1] != 2 {
			t.Errorf("ro_array = %v, want [1 2 3]", v)
		}
		src := "void k(double *p) { *p = ro_scalar * ro_array[2] + *(&ro_array[0] + 1); }"
		want := 2*3 + 2.0
		if !isDevice(op2.Backend()) { // the device backends pass array constants as pointers
			src = "void k(double *p) { const double *q = &ro_scalar; *p = *q * ro_array[2] + *(&ro_array[0] + 1) + sizeof(ro_array) / sizeof(ro_array[0]); }"
			want += 3
		}
		check(t, op2.ParLoop(op2.NewKernel(src, "k"), set, x.Arg(op2.Write)))
		if got := x.Data()[3]; got != want {
			t.Errorf("x[3] = %v, want %v", got, want)
		}
	})
}

// TestMinMaxMacros: kernels may use MIN and MAX without defining them, and
// their own definitions (macros or functions) win.
func TestMinMaxMacros(t *testing.T) {
	onHostBackends(t, func(t *testing.T) {
		set := must(op2.NewSet(4, "cells"))
		cases := []struct {
			name, src string
			want      []float64
		}{
			{"provided", "void k(double *p) { *p = MIN(MAX(*p, -1.5), 1.5); }", []float64{-1.5, -1, 1, 1.5}},
			{"own macros", "#define MAX(a, b) ((a) + (b))\n#define MIN(a, b) ((a) - (b))\nvoid k(double *p) { *p = MAX(*p, 10) + MIN(*p, 1); }", []float64{5, 7, 11, 13}},
			{"own functions", "static double MAX(double a, double b) { return a + b; }\nvoid k(double *p) { *p = MAX(*p, 10); }", []float64{8, 9, 11, 12}},
		}
		for _, c := range cases {
			x := must(op2.NewDat(set, 1, []float64{-2, -1, 1, 2}, "x"))
			if err := op2.ParLoop(op2.NewKernel(c.src, "k"), set, x.Arg(op2.RW)); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			for i, v := range x.Data() {
				if v != c.want[i] {
					t.Errorf("%s: x = %v, want %v", c.name, x.Data(), c.want)
					break
				}
			}
		}
	})
}

// stdioHelper runs when the test binary is started by TestKernelPrintf:
// a loop whose kernel prints, then an exit that flushes nothing.
func init() {
	b := os.Getenv("OP2_TEST_STDIO_BACKEND")
	if b == "" {
		return
	}
	if err := op2.Configure(op2.Config{CacheDir: os.Getenv("OP2_CACHE_DIR"), Backend: b}); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(2)
	}
	set := must(op2.NewSet(3, "cells"))
	x := must(op2.NewDat(set, 1, []int32{10, 11, 12}, "x"))
	k := op2.NewKernel(stdioKernels[os.Getenv("OP2_TEST_STDIO_KERNEL")], "k")
	if err := op2.ParLoop(k, set, x.Arg(op2.Read)); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(2)
	}
	os.Stdout.WriteString("go says after\n")
	os.Exit(0)
}

// stdioKernels are kernels printing "kernel says" and their value
// through C's streams in several ways.
var stdioKernels = map[string]string{
	"printf":           "#include <stdio.h>\nvoid k(const int *x) { printf(\"kernel says %d\\n\", *x); }",
	"__builtin_printf": "void k(const int *x) { __builtin_printf(\"kernel says %d\\n\", *x); }",
	"wprintf":          "#include <wchar.h>\nvoid k(const int *x) { wprintf(L\"kernel says %d\\n\", *x); }",
	"fputs_unlocked":   "#define _GNU_SOURCE\n#include <stdio.h>\nvoid k(const int *x) { char s[32]; snprintf(s, sizeof s, \"kernel says %d\\n\", *x); fputs_unlocked(s, stdout); }",
}

// TestKernelPrintf: what a kernel prints through C's streams (printf,
// GCC's __builtin_printf, the wide and _unlocked forms; on the device
// backends printf) reaches stdout, before what the program prints after
// the loop, when stdout is a file and the program exits right after it.
// On opencl it was lost, or came after, as PoCL writes to the C stream
// when the device runs the kernel and nothing flushed it.
func TestKernelPrintf(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		for name := range stdioKernels {
			if slices.Contains(deviceBackends, op2.Backend()) && name != "printf" {
				continue // OpenCL C and CUDA have printf only
			}
			out := filepath.Join(t.TempDir(), "stdout")
			f := must(os.Create(out))
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "OP2_TEST_STDIO_BACKEND="+op2.Backend(), "OP2_TEST_STDIO_KERNEL="+name)
			cmd.Stdout = f
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			f.Close()
			if err != nil {
				t.Fatalf("helper: %v: %s", err, stderr.String())
			}
			got := string(must(os.ReadFile(out)))
			for _, v := range []string{"10", "11", "12"} {
				if i := strings.Index(got, "kernel says "+v+"\n"); i < 0 || i > strings.Index(got, "go says after") {
					t.Errorf("%s: stdout %q lacks the kernel's line for %s before the program's", name, got, v)
				}
			}
		}
	})
}

// TestLargeDimThroughMaps: a Dat whose element is far larger than a thread
// stack, read and incremented through a map and a vector map, and a vector
// map of very large arity.
func TestLargeDimThroughMaps(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 64 MiB")
	}
	onHostBackends(t, func(t *testing.T) {
		const dim = 1 << 20 // 8 MiB of float64 per element
		cells := must(op2.NewSet(2, "cells"))
		nodes := must(op2.NewSet(2, "nodes"))
		m := must(op2.NewMap(cells, nodes, 2, []int32{0, 1, 1, 0}, "m"))
		src := make([]float64, 2*dim)
		for i := range src {
			src[i] = float64(i % 1000)
		}
		a := must(op2.NewDat(nodes, dim, src, "a"))
		b := must(op2.NewDat[float64](nodes, dim, nil, "b"))
		c := must(op2.NewDat[float64](nodes, dim, nil, "c"))
		k := op2.NewKernel(`void big(const double *a0, const double **a, double *b0, double **c) {
  for (int i = 0; i < 1048576; i += 4096) {
    b0[i] += a0[i] + 1;
    c[0][i] += a[1][i];
    c[1][i] += 2 * a[0][i];
  }
}`, "big")
		check(t, op2.ParLoop(k, cells, a.ArgMap(op2.Read, m, 1), a.ArgVec(op2.Read, m), b.ArgMap(op2.Inc, m, 0), c.ArgVec(op2.Inc, m)))
		bd, cd := b.Data(), c.Data()
		for i := 0; i < dim; i += 4096 {
			v0, v1 := float64(i%1000), float64((dim+i)%1000)
			// cell 0: nodes (0, 1); cell 1: nodes (1, 0).
			if bd[i] != v1+1 || bd[dim+i] != v0+1 {
				t.Fatalf("b at component %d = %v, %v; want %v, %v", i, bd[i], bd[dim+i], v1+1, v0+1)
			}
			if cd[i] != 3*v1 || cd[dim+i] != 3*v0 {
				t.Fatalf("c at component %d = %v, %v; want %v, %v", i, cd[i], cd[dim+i], 3*v1, 3*v0)
			}
		}
		if bd[1] != 0 || cd[dim+1] != 0 {
			t.Errorf("components the kernel did not touch changed")
		}

		// Vector maps of arity 20 (local copies, made in loops) and 1000
		// (pointers into the dat, the pointer array allocated).
		for _, arity := range []int{20, 1000} {
			many := must(op2.NewSet(arity, "many"))
			mm := make([]int32, 2*arity)
			for i := range mm {
				mm[i] = int32((i * 7) % arity)
			}
			wide := must(op2.NewMap(cells, many, arity, mm, "wide"))
			y := must(op2.NewDat(many, 1, iota32[float64](arity), "y"))
			z := must(op2.NewDat[float64](many, 1, nil, "z"))
			kw := op2.NewKernel(fmt.Sprintf(`void wide(const double **y, double **z) {
  for (int i = 0; i < %d; i++) z[i][0] += y[(i + 1) %% %d][0];
}`, arity, arity), "wide")
			check(t, op2.ParLoop(kw, cells, y.ArgVec(op2.Read, wide), z.ArgVec(op2.Inc, wide)))
			want := make([]float64, arity)
			for e := 0; e < 2; e++ {
				for i := 0; i < arity; i++ {
					want[mm[e*arity+i]] += float64(mm[e*arity+(i+1)%arity])
				}
			}
			for i, v := range z.Data() {
				if v != want[i] {
					t.Fatalf("arity %d: z[%d] = %v, want %v", arity, i, v, want[i])
				}
			}
		}
	})
}

// TestKernelTypedefPointersAndArraysOfArrays: a parameter whose pointer
// hides in a typedef receives the data on every backend, also through a
// map and as a vector of pointers, also when it is too large for a
// private copy on opencl; a parameter declared as an array of arrays is
// refused with a LoopError naming it.
func TestKernelTypedefPointersAndArraysOfArrays(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		const dim = 300 // 2400 bytes: a __global pointer on opencl, not a private copy
		nodes := must(op2.NewSet(4, "nodes"))
		edges := must(op2.NewSet(3, "edges"))
		pedge := must(op2.NewMap(edges, nodes, 2, []int32{0, 1, 1, 2, 2, 3}, "pedge"))
		x := must(op2.NewDat(nodes, dim, iota32[float64](4*dim), "x"))
		e := must(op2.NewDat[float64](edges, dim, nil, "e"))
		src := "typedef double *dp;\ntypedef const double *cdp;\ntypedef dp *dpp;\n" +
			"void k(cdp a, const double **v, dp out) { for (int i = 0; i < 300; i++) out[i] = a[i] + v[1][i]; }"
		check(t, op2.ParLoop(op2.NewKernel(src, "k"), edges, x.ArgMap(op2.Read, pedge, 0), x.ArgVec(op2.Read, pedge), e.Arg(op2.Write)))
		d := e.Data()
		for ed, n := range [][2]int{{0, 1}, {1, 2}, {2, 3}} {
			for _, i := range []int{0, dim - 1} {
				if want := float64(n[0]*dim+i) + float64(n[1]*dim+i); d[ed*dim+i] != want {
					t.Fatalf("e[%d][%d] = %v, want %v", ed, i, d[ed*dim+i], want)
				}
			}
		}
		small := must(op2.NewDat[float64](edges, 6, nil, "small"))
		err := op2.ParLoop(op2.NewKernel("void m(double x[3][2]) { x[0][0] = 1; }", "m"), edges, small.Arg(op2.Write))
		var le *op2.LoopError
		if !errors.As(err, &le) {
			t.Fatalf("array of arrays: error %v is not a *LoopError", err)
		}
		wantErr(t, err, `loop "m"`, `"double x[3][2]"`, "parameter x is an array of arrays", "double *x")
	})
}

// TestUntypedPointerParameters: a kernel may declare a parameter as an
// untyped pointer, void * (void ** for a vector argument), as PyOP2's
// tests do, for data of any element type, and cast it to the type it
// knows; it runs the same on every backend (on opencl the arguments
// reach it as private copies, so its casts to plain pointers are valid),
// READ ones with their const, modified ones without. A void parameter
// that is no pointer is refused.
func TestUntypedPointerParameters(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		nodes := must(op2.NewSet(5, "nodes"))
		edges := must(op2.NewSet(4, "edges"))
		tab := []int32{0, 1, 1, 2, 2, 3, 3, 4}
		pedge := must(op2.NewMap(edges, nodes, 2, tab, "pedge"))
		x := must(op2.NewDat(nodes, 2, iota32[float64](10), "x"))
		g := must(op2.NewGlobal(1, []float32{0.5}, "g"))
		inc := must(op2.NewDat[int32](nodes, 1, nil, "inc"))
		out := must(op2.NewDat[float64](edges, 1, nil, "out"))
		k := op2.NewKernel(`
typedef void *vp;
static double twice(const void *p) { return 2 * *(const double *)p; }
void untyped(void *x, void **v, vp g, void *i, void **inc, void *out) {
  double *o = (double *)out;
  o[0] = twice(x) + ((const double *)v[0])[1] + ((const double *)v[1])[1] + *(const float *)g + 100 * *(const int *)i;
  ((int *)inc[0])[0] += 1;
  *(int *)inc[1] += 2;
}`, "untyped")
		check(t, op2.ParLoop(k, edges, x.ArgMap(op2.Read, pedge, 0), x.ArgVec(op2.Read, pedge), g.Arg(op2.Read), op2.ArgIdx(),
			inc.ArgVec(op2.Inc, pedge), out.Arg(op2.Write)))
		wantInc := make([]int32, 5)
		for e, got := range out.Data() {
			a, b := float64(tab[2*e]), float64(tab[2*e+1])
			if want := 2*(2*a) + (2*a + 1) + (2*b + 1) + 0.5 + 100*float64(e); got != want {
				t.Errorf("edge %d: out = %v, want %v", e, got, want)
			}
			wantInc[tab[2*e]]++
			wantInc[tab[2*e+1]] += 2
		}
		if got := inc.Data(); !slices.Equal(got, wantInc) {
			t.Errorf("inc = %v, want %v", got, wantInc)
		}
		err := op2.ParLoop(op2.NewKernel("void nv(void x) { }", "nv"), edges, out.Arg(op2.Write))
		wantErr(t, err, `loop "nv"`, `"void x"`, "does not support")
	})
}

// TestKernelFromFunctionLikeMacro: a kernel whose definition a
// function-like macro writes (its head, its parameters, or all of it),
// valid C, runs on every backend: the reader expands the macros as the
// compiler does, where before it refused the kernel with "no definition
// of function". A definition GoOP2 cannot expand soundly is refused with
// a message naming the macro.
func TestKernelFromFunctionLikeMacro(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		set := must(op2.NewSet(6, "cells"))
		x := must(op2.NewDat(set, 1, iota32[float64](6), "x"))
		y := must(op2.NewDat(set, 2, iota32[int32](12), "y"))
		k := op2.NewKernel(`#define DEF(name) void name(double *x, ARR(int, y))
#define ARR(T, n) const T *n
#define TWICE(v) (2 * (v))
DEF(mk)
{
  *x += TWICE(y[1]);
}`, "mk")
		check(t, op2.ParLoop(k, set, x.Arg(op2.RW), y.Arg(op2.Read)))
		for i, got := range x.Data() {
			if want := float64(i) + 2*float64(2*i+1); got != want {
				t.Errorf("x[%d] = %v, want %v", i, got, want)
			}
		}
		whole := op2.NewKernel(`#define KERNEL(n, ...) void n##_k(double *x) { __VA_ARGS__ }
KERNEL(mk2, *x *= 2; *x += 1;)`, "mk2_k")
		check(t, op2.ParLoop(whole, set, x.Arg(op2.RW)))
		for i, got := range x.Data() {
			if want := 2*(float64(i)+2*float64(2*i+1)) + 1; got != want {
				t.Errorf("x[%d] = %v, want %v", i, got, want)
			}
		}
		err := op2.ParLoop(op2.NewKernel("#define x x\n#define DEF(n) void n(double *x)\nDEF(mk3) { *x = 1; }", "mk3"), set, x.Arg(op2.Write))
		wantErr(t, err, `kernel "mk3"`, "comes from macro DEF at line 3", "names macro x again")
	})
}

// TestKernelNamedLikeLibrary: a kernel, or a helper of it, named like a
// function the C headers declare (exp, rand), or a source declaring a
// type they declare otherwise (typedef long long int64_t), is refused by
// the host compilers ("conflicting types"), which the error explains;
// the device backends, which rename a kernel's functions, take it.
func TestKernelNamedLikeLibrary(t *testing.T) {
	onHostBackends(t, func(t *testing.T) {
		s := must(op2.NewSet(4, "s"))
		x := must(op2.NewDat(s, 1, []float64{1, 2, 3, 4}, "x"))
		for _, c := range []struct{ src, name, fn string }{
			{"void exp(double *x) { *x += 1; }", "exp", "exp"},
			{"static double rand(double v) { return v * 2; }\nvoid twice(double *x) { *x = rand(*x); }", "twice", "rand"},
		} {
			err := op2.ParLoop(op2.NewKernel(c.src, c.name), s, x.Arg(op2.RW))
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("the kernel's function %q has the name of a C library function", c.fn)) {
				t.Errorf("kernel %s: %v, want the name explained", c.name, err)
			}
		}
		// A type the included headers declare otherwise.
		err := op2.ParLoop(op2.NewKernel("typedef long long int64_t;\nvoid own64(double *x) { int64_t v = 3; *x = v; }", "own64"), s, x.Arg(op2.RW))
		if err == nil || !strings.Contains(err.Error(), `the kernel's source declares the type "int64_t", which the headers of the generated code`) {
			t.Errorf("a kernel declaring int64_t: %v, want the type explained", err)
		}
	})
}
