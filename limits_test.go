package op2_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// TestHugeShapesRefused: a dim or arity whose products with the set size and
// the value size overflow, or exceed what can be stored and indexed, is
// refused with an error naming the object, the set and the numbers, never
// accepted (wrapped products) and never a panic.
func TestHugeShapesRefused(t *testing.T) {
	huge := []int{1 << 62, math.MaxInt, math.MaxInt/2 + 1, op2.MaxDim + 1, 1 << 40}
	for _, size := range []int{0, 1, 3} {
		set := must(op2.NewSet(size, "s"+strconv.Itoa(size)))
		to := must(op2.NewSet(3, "to"))
		for _, n := range huge {
			num := strconv.Itoa(n)
			cases := []struct {
				kind string
				f    func() error
				want []string
			}{
				{"dat float64", func() error { return second(op2.NewDat[float64](set, n, nil, "d")) }, []string{`dat "d"`, set.Name(), num}},
				{"dat int32", func() error { return second(op2.NewDat[int32](set, n, nil, "d")) }, []string{`dat "d"`, set.Name(), num}},
				{"dat with data", func() error { return second(op2.NewDat(set, n, []float64{1, 2, 3}, "d")) }, []string{`dat "d"`, num}},
				{"map", func() error { return second(op2.NewMap(set, to, n, nil, "m")) }, []string{`map "m"`, set.Name(), num}},
				{"map with values", func() error { return second(op2.NewMap(set, to, n, []int32{0, 1, 2}, "m")) }, []string{`map "m"`, num}},
				{"global", func() error { return second(op2.NewGlobal[float64](n, nil, "g")) }, []string{`global "g"`, num}},
				{"const", func() error { return second(op2.NewConst(n, []float64{1}, "hugeconst")) }, []string{`const "hugeconst"`, num}},
			}
			for _, c := range cases {
				t.Run(fmt.Sprintf("%s/size%d/%d", c.kind, size, n), func(t *testing.T) {
					var err error
					func() {
						defer func() {
							if r := recover(); r != nil {
								t.Fatalf("panic: %v", r)
							}
						}()
						err = c.f()
					}()
					wantErr(t, err, c.want...)
				})
			}
		}
	}
}

// TestShapeProductsRefused: dims and arities that are allowed on their own
// but whose product with a large set overflows 64 bits or exceeds
// MaxDataBytes are refused.
func TestShapeProductsRefused(t *testing.T) {
	big := must(op2.NewSet(math.MaxInt32, "big"))
	to := must(op2.NewSet(3, "to"))
	wantErr(t, second(op2.NewDat[float64](big, op2.MaxDim, nil, "d")), `dat "d" on set "big"`, "2147483647 elements", "dim 2147483647", "8 bytes")
	wantErr(t, second(op2.NewDat[float32](big, 1<<16, nil, "d")), `dat "d" on set "big"`, "dim 65536", "MaxDataBytes")
	wantErr(t, second(op2.NewMap(big, to, op2.MaxDim, nil, "m")), `map "m" from "big" to "to"`, "arity 2147483647")
	wantErr(t, second(op2.NewMap(big, to, 1<<16, nil, "m")), `map "m" from "big" to "to"`, "arity 65536")

	// Within the limits: accepted (nothing is allocated for a dat declared
	// without values, and a map needs its values).
	check(t, second(op2.NewDat[float64](must(op2.NewSet(0, "empty")), op2.MaxDim, nil, "d")))
	check(t, second(op2.NewDat[float64](big, 1<<10, nil, "d")))
	wantErr(t, second(op2.NewMap(big, to, 2, nil, "m")), "0 values given")
}

// TestOpenCLIndexRange: a direct loop over more elements than the opencl
// stub's int element numbers can count past is refused with an error
// before anything runs.
func TestOpenCLIndexRange(t *testing.T) {
	requireDevice(t)
	set := must(op2.NewSet(math.MaxInt32, "huge"))
	g := must(op2.NewGlobal(1, []int32{1}, "g"))
	k := op2.NewKernel("void range_k(const int *g) { (void)g; }", "range_k")
	wantErr(t, op2.ParLoop(k, set, g.Arg(op2.Read)), `set "huge"`, "at most", "opencl")
}

// vectorMesh is a set of cells, each reaching every node through maps of
// the given arities, with a value per node and a result per cell.
type vectorMesh struct {
	cells, nodes *op2.Set
	maps         []*op2.Map
	x            *op2.Dat[float64]
	y            *op2.Dat[float64]
}

func newVectorMesh(arities ...int) *vectorMesh {
	const ncells, nnodes = 5, 11
	v := &vectorMesh{cells: must(op2.NewSet(ncells, "cells")), nodes: must(op2.NewSet(nnodes, "nodes"))}
	for i, ar := range arities {
		tab := make([]int32, ncells*ar)
		for e := 0; e < ncells; e++ {
			for k := 0; k < ar; k++ {
				tab[e*ar+k] = int32((7*e + 3*k + i) % nnodes)
			}
		}
		v.maps = append(v.maps, must(op2.NewMap(v.cells, v.nodes, ar, tab, fmt.Sprintf("m%d", i))))
	}
	v.x = must(op2.NewDat(v.nodes, 1, iota32[float64](nnodes), "x"))
	v.y = must(op2.NewDat[float64](v.cells, 1, nil, "y"))
	return v
}

// loop returns a kernel summing, into y, x through every column of every
// map, each map passed as one vector argument, and the loop's arguments.
func (v *vectorMesh) loop(name string) (*op2.Kernel, []op2.Arg) {
	var params, body []string
	var args []op2.Arg
	for i, m := range v.maps {
		params = append(params, fmt.Sprintf("const double **x%d", i))
		body = append(body, fmt.Sprintf("  for (int k = 0; k < %d; k++) s += *x%d[k];\n", m.Arity(), i))
		args = append(args, v.x.ArgVec(op2.Read, m))
	}
	params = append(params, "double *y")
	args = append(args, v.y.Arg(op2.Write))
	src := fmt.Sprintf("void %s(%s)\n{\n  double s = 0;\n%s  *y = s;\n}\n", name, strings.Join(params, ", "), strings.Join(body, ""))
	return op2.NewKernel(src, name), args
}

// want is the sum the kernel of loop computes for each cell.
func (v *vectorMesh) want() []float64 {
	x := v.x.DataRO()
	out := make([]float64, v.cells.Size())
	for e := range out {
		for _, m := range v.maps {
			for _, g := range m.Values()[e*m.Arity() : (e+1)*m.Arity()] {
				out[e] += x[g]
			}
		}
	}
	return out
}

// TestHugeVectorArity: a loop whose vector argument passes more map entries
// than op2.MaxDeviceVectorArity is refused on the opencl backend (and by its
// static generation) with a *LoopError saying why, before anything is
// generated; the host backends run it.
func TestHugeVectorArity(t *testing.T) {
	const arity = 9000
	v := newVectorMesh(arity)
	k, args := v.loop("huge_vec")
	refused := func(t *testing.T, backend string, err error) {
		t.Helper()
		var le *op2.LoopError
		if !errors.As(err, &le) || le.Arg != -1 {
			t.Fatalf("error %v, want a *LoopError about the loop", err)
		}
		wantErr(t, err, `loop "huge_vec"`, "9000 map entries", "op2.MaxDeviceVectorArity = 8192", backend+" backend")
	}
	for _, b := range []string{"opencl", "cuda"} {
		_, err := op2.Generate(b, k, v.cells, args...)
		refused(t, b, err)
	}
	for _, b := range hostBackends {
		src, err := op2.Generate(b, k, v.cells, args...)
		if err != nil || src == "" {
			t.Errorf("%s: static generation failed: %v", b, err)
		}
	}
	onEachBackend(t, func(t *testing.T) {
		err := op2.ParLoop(k, v.cells, args...)
		if isDevice(op2.Backend()) {
			refused(t, op2.Backend(), err)
			_, err = op2.NewLoop(k, v.cells, args...)
			refused(t, op2.Backend(), err)
			return
		}
		check(t, err)
		if got, want := v.y.Data(), v.want(); !slices.Equal(got, want) {
			t.Errorf("y = %v, want %v", got, want)
		}
	})
}

// TestDeviceVectorArityCounted: the device limit is on the sum of the
// arities of all vector arguments of a loop (the same map passed twice
// counts twice); arguments through one map column do not count.
func TestDeviceVectorArityCounted(t *testing.T) {
	cases := []struct {
		arities []int
		ok      bool
	}{
		{[]int{op2.MaxDeviceVectorArity}, true},
		{[]int{op2.MaxDeviceVectorArity + 1}, false},
		{[]int{3000, 3000, 2192}, true},
		{[]int{3000, 3000, 2193}, false},
		{[]int{4000, 4000, 4000}, false},
		{[]int{1, op2.MaxDeviceVectorArity}, false},
	}
	for ci, tc := range cases {
		v := newVectorMesh(tc.arities...)
		k, args := v.loop(fmt.Sprintf("count_vec_%d", ci))
		_, err := op2.Generate("opencl", k, v.cells, args...)
		total := 0
		for _, a := range tc.arities {
			total += a
		}
		switch {
		case tc.ok && err != nil:
			t.Errorf("%v: refused: %v", tc.arities, err)
		case !tc.ok:
			wantErr(t, err, fmt.Sprintf("%d map entries", total), "op2.MaxDeviceVectorArity")
		case total == op2.MaxDeviceVectorArity && len(tc.arities) > 1 && slices.Contains(allBackends, "opencl"):
			// At the limit, the device runs the loop.
			check(t, op2.Use("opencl"))
			err := op2.ParLoop(k, v.cells, args...)
			check(t, op2.Use("sequential"))
			check(t, err)
			if got, want := v.y.Data(), v.want(); !slices.Equal(got, want) {
				t.Errorf("%v on opencl: y = %v, want %v", tc.arities, got, want)
			}
		}
	}
	// The same map twice.
	v := newVectorMesh(4097)
	k := op2.NewKernel("void twice_vec(const double **a, const double **b, double *y) { *y = *a[0] + *b[4096]; }", "twice_vec")
	_, err := op2.Generate("opencl", k, v.cells, v.x.ArgVec(op2.Read, v.maps[0]), v.x.ArgVec(op2.Read, v.maps[0]), v.y.Arg(op2.Write))
	wantErr(t, err, "8194 map entries", "op2.MaxDeviceVectorArity")
	// Columns of a huge map, beside a vector argument at the limit.
	v = newVectorMesh(op2.MaxDeviceVectorArity, 9000)
	k = op2.NewKernel("void cols_vec(const double **a, const double *b, const double *c, double *y) { *y = *a[0] + *b + *c; }", "cols_vec")
	_, err = op2.Generate("opencl", k, v.cells, v.x.ArgVec(op2.Read, v.maps[0]), v.x.ArgMap(op2.Read, v.maps[1], 0),
		v.x.ArgMap(op2.Read, v.maps[1], 8999), v.y.Arg(op2.Write))
	check(t, err)
}
