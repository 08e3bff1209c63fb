package op2_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// Each edge learns its own number and the number of its second node
// (OP2's op_arg_idx), and an optional argument is switched off.
func ExampleArgIdx() {
	nodes, _ := op2.NewSet(4, "nodes")
	edges, _ := op2.NewSet(3, "edges")
	pedge, _ := op2.NewMap(edges, nodes, 2, []int32{0, 1, 1, 3, 3, 2}, "pedge")
	out, _ := op2.NewDat[int32](edges, 2, nil, "out")
	weight, _ := op2.NewDat(nodes, 1, []int32{5, 6, 7, 8}, "weight")
	k := op2.NewKernel(`
void label(const int *e, const int *n, const int *w, int *out) {
  out[0] = *e;
  out[1] = w ? *n * 100 + *w : *n; /* w is a null pointer when disabled */
}`, "label")
	for _, useWeight := range []bool{false, true} {
		err := op2.ParLoop(k, edges, op2.ArgIdx(), pedge.ArgIdx(1),
			op2.Opt(useWeight, weight.ArgMap(op2.Read, pedge, 1)), out.Arg(op2.Write))
		if err != nil {
			panic(err)
		}
		fmt.Println(out.Data())
	}
	// Output:
	// [0 1 1 3 2 2]
	// [0 106 1 308 2 207]
}

// MIN through a map: each node keeps the smallest weight of its edges.
func ExampleDat_ArgMap_min() {
	nodes, _ := op2.NewSet(3, "nodes")
	edges, _ := op2.NewSet(3, "edges")
	pedge, _ := op2.NewMap(edges, nodes, 2, []int32{0, 1, 1, 2, 2, 0}, "pedge")
	w, _ := op2.NewDat(edges, 1, []float64{4, 2, 9}, "w")
	lo, _ := op2.NewDat(nodes, 1, []float64{3, 10, 10}, "lo")
	k := op2.NewKernel(`void lowest(const double *w, double *a, double *b) { *a = *w; *b = *w; }`, "lowest")
	if err := op2.ParLoop(k, edges, w.Arg(op2.Read), lo.ArgMap(op2.Min, pedge, 0), lo.ArgMap(op2.Min, pedge, 1)); err != nil {
		panic(err)
	}
	fmt.Println(lo.Data())
	// Output: [3 2 2]
}

func TestArgumentKindErrors(t *testing.T) {
	nodes := must(op2.NewSet(4, "nodes"))
	edges := must(op2.NewSet(3, "edges"))
	cells := must(op2.NewSet(2, "cells"))
	pedge := must(op2.NewMap(edges, nodes, 2, []int32{0, 1, 1, 2, 2, 3}, "pedge"))
	pcell := must(op2.NewMap(cells, nodes, 2, []int32{0, 1, 2, 3}, "pcell"))
	x := must(op2.NewDat[float64](nodes, 1, nil, "x"))
	big := must(op2.NewDat[float64](nodes, 40, nil, "big"))
	w := must(op2.NewDat[float64](edges, 1, nil, "w"))
	g := must(op2.NewGlobal[float64](1, nil, "g"))
	idx := op2.NewKernel("void idx(const int *i) { }", "idx")
	dbl := op2.NewKernel("void dbl(double *a) { }", "dbl")
	two := op2.NewKernel("void two(double *a, double *b) { }", "two")
	cases := []struct {
		name string
		k    *op2.Kernel
		set  *op2.Set
		args []op2.Arg
		want []string
	}{
		{"map value column past arity", idx, edges, []op2.Arg{pedge.ArgIdx(2)},
			[]string{"argument 0", `index of the target of map "pedge"[2]`, "index 2 is out of range", "arity 2"}},
		{"map value negative column", idx, edges, []op2.Arg{pedge.ArgIdx(-1)}, []string{"index -1 is out of range"}},
		{"map value from another set", idx, edges, []op2.Arg{pcell.ArgIdx(0)},
			[]string{`map "pcell" goes from set "cells"`, `loop's set "edges"`}},
		{"map value of a nil map", idx, edges, []op2.Arg{(*op2.Map)(nil).ArgIdx(0)}, []string{"map is nil"}},
		{"nil dat", dbl, nodes, []op2.Arg{(*op2.Dat[float64])(nil).Arg(op2.Write)}, []string{"argument 0", "the Dat is nil"}},
		{"nil dat through a map", two, edges, []op2.Arg{w.Arg(op2.Read), (*op2.Dat[float64])(nil).ArgMap(op2.Inc, pedge, 0)},
			[]string{"argument 1", "the Dat is nil"}},
		{"nil dat through every column", dbl, edges, []op2.Arg{(*op2.Dat[float64])(nil).ArgVec(op2.Read, pedge)}, []string{"the Dat is nil"}},
		{"nil dat disabled", dbl, nodes, []op2.Arg{op2.Opt(false, (*op2.Dat[float64])(nil).Arg(op2.Read))}, []string{"the Dat is nil"}},
		{"nil view", dbl, nodes, []op2.Arg{(*op2.DatView[float64])(nil).Arg(op2.Read)}, []string{"the Dat is nil"}},
		{"nil global", dbl, edges, []op2.Arg{(*op2.Global[float64])(nil).Arg(op2.Inc)}, []string{"the Global is nil"}},
		{"nil mat", dbl, edges, []op2.Arg{(*op2.Mat[float64])(nil).Arg(op2.Inc, pedge, pedge)}, []string{"the Mat is nil"}},
		{"nil mixed dat", dbl, edges, []op2.Arg{(*op2.MixedDat[float64])(nil).Arg(op2.Inc)}, []string{"the mixed dat is nil"}},
		{"nil mixed mat", dbl, edges, []op2.Arg{(*op2.MixedMat[float64])(nil).Arg(op2.Inc, nil, nil)}, []string{"the mixed mat is nil"}},
		{"index to a double parameter", dbl, edges, []op2.Arg{op2.ArgIdx()},
			[]string{"iteration index of set \"edges\"", "must be int *"}},
		{"disabled argument still checked", dbl, edges, []op2.Arg{op2.Opt(false, x.ArgMap(op2.Read, pcell, 0))},
			[]string{`map "pcell" goes from set "cells"`}},
		{"disabled index still checked", idx, edges, []op2.Arg{op2.Opt(false, pedge.ArgIdx(5))}, []string{"index 5 is out of range"}},
		{"direct min", dbl, edges, []op2.Arg{w.Arg(op2.Min)}, []string{"access MIN applies to a Dat only through a map", "use RW"}},
		{"min beside inc", two, edges, []op2.Arg{x.ArgMap(op2.Min, pedge, 0), x.ArgMap(op2.Inc, pedge, 1)},
			[]string{"argument 1", "conflicts with argument 0", "MIN may not be mixed with INC"}},
		{"min beside max", two, edges, []op2.Arg{x.ArgMap(op2.Min, pedge, 0), x.ArgMap(op2.Max, pedge, 0)},
			[]string{"MIN may not be mixed with MAX"}},
		{"min beside write", two, edges, []op2.Arg{x.ArgMap(op2.Write, pedge, 0), x.ArgMap(op2.Max, pedge, 0)},
			[]string{"WRITE may not be mixed with MAX"}},
		{"min beside read", two, edges, []op2.Arg{x.ArgMap(op2.Read, pedge, 0), x.ArgMap(op2.Min, pedge, 0)},
			[]string{"may not read a Dat through one argument and modify it"}},
		{"max too large", dbl, edges, []op2.Arg{big.ArgMap(op2.Max, pedge, 0)},
			[]string{`dat "big"`, "at most 256 bytes per element", "op2.MaxMinMaxValues"}},
		{"min of a global beside a read is fine, but two kinds are not", two, edges, []op2.Arg{g.Arg(op2.Min), g.Arg(op2.Inc)},
			[]string{"only one kind of reduction"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := op2.ParLoop(c.k, c.set, c.args...)
			var le *op2.LoopError
			if !errors.As(err, &le) {
				t.Fatalf("got %v, want a *op2.LoopError", err)
			}
			for _, p := range c.want {
				if !strings.Contains(err.Error(), p) {
					t.Errorf("error %q does not mention %q", err, p)
				}
			}
		})
	}
	// Allowed: minima through several maps and columns, a disabled
	// argument beside a conflicting one, and index arguments anywhere.
	ok := []struct {
		name string
		k    *op2.Kernel
		set  *op2.Set
		args []op2.Arg
	}{
		{"minima through two columns", two, edges, []op2.Arg{x.ArgMap(op2.Min, pedge, 0), x.ArgMap(op2.Min, pedge, 1)}},
		{"disabled read beside a min", two, edges, []op2.Arg{x.ArgMap(op2.Min, pedge, 0), op2.Opt(false, x.ArgMap(op2.Read, pedge, 1))}},
		{"disabled inc beside a write", two, nodes, []op2.Arg{x.Arg(op2.Write), op2.Opt(false, x.Arg(op2.Inc))}},
	}
	for _, c := range ok {
		if _, err := op2.Generate("sequential", c.k, c.set, c.args...); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// An optional argument on and off are two programs; each is generated
// once, and the disabled one passes a null pointer.
func TestOptionalArgumentPrograms(t *testing.T) {
	nodes := must(op2.NewSet(5, "nodes"))
	x := must(op2.NewDat(nodes, 1, []float64{1, 2, 3, 4, 5}, "x"))
	y := must(op2.NewDat[float64](nodes, 1, nil, "y"))
	k := op2.NewKernel("void cp(const double *x, double *y) { *y = x ? 2 * *x : -1; }", "cp")
	r := closeAtEnd(t, must(op2.NewRuntime(op2.Config{Backend: "sequential", CacheDir: t.TempDir()})))
	for i := 0; i < 4; i++ {
		on := i%2 == 0
		if err := r.ParLoop(k, nodes, op2.Opt(on, x.Arg(op2.Read)), y.Arg(op2.Write)); err != nil {
			t.Fatal(err)
		}
		want := -1.0
		if on {
			want = 2
		}
		if got := y.Data()[0]; got != want {
			t.Errorf("loop %d (on=%v): y[0] = %v, want %v", i, on, got, want)
		}
	}
	if g := r.Stats().Generations; g != 2 {
		t.Errorf("%d generations for an optional argument on and off, want 2", g)
	}
	src, err := r.Generate("sequential", k, nodes, op2.Opt(false, x.Arg(op2.Read)), y.Arg(op2.Write))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(src, "(void *)(0)") {
		t.Errorf("the disabled argument is not a null pointer in the generated code:\n%s", src)
	}
}

// TestPermutedMap: a permuted map gives each row's entries in the
// permutation's order, runs in loops on every backend and makes the
// map's sparsity pattern; bad permutations are refused naming the map.
// (TestMPIRandomAgreesWithOneRank uses one made after Partition.)
func TestPermutedMap(t *testing.T) {
	cells := must(op2.NewSet(3, "pcells"))
	nodes := must(op2.NewSet(5, "pnodes"))
	m := must(op2.NewMap(cells, nodes, 3, []int32{0, 1, 2, 2, 3, 4, 4, 0, 1}, "pm"))
	p := must(op2.NewPermutedMap(m, []int{2, 0, 1}, "pm rotated"))
	if got, want := p.Values(), []int32{2, 0, 1, 4, 2, 3, 1, 4, 0}; !slices.Equal(got, want) || p.From() != cells || p.To() != nodes {
		t.Fatalf("permuted values %v, want %v", got, want)
	}
	for _, bad := range [][]int{{0, 1}, {0, 0, 1}, {0, 1, 3}, {-1, 0, 1}} {
		if _, err := op2.NewPermutedMap(m, bad, "bad"); err == nil || !strings.Contains(err.Error(), `map "pm"`) {
			t.Errorf("permutation %v: %v", bad, err)
		}
	}
	// Entry j of the kernel's vector is the permuted one: weight it by j.
	k := op2.NewKernel("void w(double **x) { *x[0] += 1; *x[1] += 10; *x[2] += 100; }", "w")
	for _, backend := range allBackends {
		check(t, op2.Use(backend))
		x := must(op2.NewDat[float64](nodes, 1, nil, "x"))
		check(t, op2.ParLoop(k, cells, x.ArgVec(op2.Inc, p)))
		// node: rotated rows (2,0,1) (4,2,3) (1,4,0)
		if got, want := x.DataRO(), []float64{10 + 100, 100 + 1, 1 + 10, 100, 1 + 10}; !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", backend, got, want)
		}
	}
	// The pattern of the permuted pair is the map's: each element couples
	// the same nodes.
	a := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: p, Col: p}}, "psp"))
	b := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: m, Col: m}}, "msp"))
	ra, ca := a.CSR()
	rb, cb := b.CSR()
	if !slices.Equal(ra, rb) || !slices.Equal(ca, cb) {
		t.Errorf("permuted pattern %v %v, the map's %v %v", ra, ca, rb, cb)
	}
	check(t, op2.Use("sequential"))
}
