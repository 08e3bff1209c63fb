package op2_test

import (
	"fmt"
	"math"
	"strconv"
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
