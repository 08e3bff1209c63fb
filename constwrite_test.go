package op2_test

import (
	"errors"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/goop2/op2"
)

// constWriter is a loop whose kernel sums two constants into y and, when
// the Global flag is set, casts their const qualifiers away and writes to
// them: misuse that must not leak into later loops.
type constWriter struct {
	set  *op2.Set
	flag *op2.Global[int32]
	y    *op2.Dat[float64]
	k    *op2.Kernel
	want float64 // y of a loop that sees the declared values
}

func newConstWriter(name string, scalar, array string) *constWriter {
	set := must(op2.NewSet(1200, "s")) // several blocks and threads (openmp.MinPerThread each)
	return &constWriter{
		set:  set,
		flag: must(op2.NewGlobal(1, []int32{0}, "flag")),
		y:    must(op2.NewDat[float64](set, 1, nil, "y")),
		k: op2.NewKernel(`void `+name+`(const int *flag, double *y)
{
  *y = `+scalar+` + `+array+`[0] + `+array+`[1] + `+array+`[2];
  if (*flag) {
    *(double *)&`+scalar+` = 99;
    ((int *)`+array+`)[1] = -40;
  }
}`, name),
		want: 2.5 + 1 + 2 + 3,
	}
}

// run runs the loop with the flag set or not.
func (c *constWriter) run(write bool) error {
	c.flag.Data()[0] = 0
	if write {
		c.flag.Data()[0] = 1
	}
	return op2.ParLoop(c.k, c.set, c.flag.Arg(op2.Read), c.y.Arg(op2.Write))
}

// checkModeFromEnv reports whether OP2_CHECK turns check mode on for the
// whole test run.
func checkModeFromEnv() bool {
	on, _ := strconv.ParseBool(os.Getenv("OP2_CHECK"))
	return on
}

// TestKernelWritingConstIsUndone: a kernel that casts a Const's const
// qualifier away and writes to it changes nothing for later loops of the
// same program on any backend: every loop sees the declared value, and
// the Const's Go-side value is unchanged.
func TestKernelWritingConstIsUndone(t *testing.T) {
	sc := must(op2.NewConst(1, []float64{2.5}, "wc_scalar"))
	ar := must(op2.NewConst(3, []int32{1, 2, 3}, "wc_array"))
	defer sc.Remove()
	defer ar.Remove()
	onEachBackend(t, func(t *testing.T) {
		c := newConstWriter("wc_undone", "wc_scalar", "wc_array")
		for i, write := range []bool{false, true, false, true, false} {
			err := c.run(write)
			if write && checkModeFromEnv() && !isDevice(op2.Backend()) {
				wantErr(t, err, "check mode", `const "wc_array"`)
				continue
			}
			check(t, err)
			got := c.y.Data()
			if write {
				// The writing loop itself: the first element at least
				// saw the declared values.
				if !slices.Contains(got, c.want) {
					t.Errorf("loop %d (writes): no element saw the declared values", i)
				}
				continue
			}
			for e, v := range got {
				if v != c.want {
					t.Fatalf("loop %d, after a loop that wrote to the constants: y[%d] = %v, want %v (the declared values)", i, e, v, c.want)
				}
			}
		}
		if sc.Value()[0] != 2.5 || !slices.Equal(ar.Value(), []int32{1, 2, 3}) {
			t.Errorf("declared values changed: %v %v", sc.Value(), ar.Value())
		}
	})
}

// TestCheckModeFindsWritesToConsts: in check mode, a kernel that writes to
// a Const makes the loop fail on the host backends with a *LoopError
// naming the loop, the constant and the value; the next loop still sees
// the declared value. On the device backends each work item reads small
// constants into private variables, so such a write reaches nothing and
// the loop passes.
func TestCheckModeFindsWritesToConsts(t *testing.T) {
	cache := os.Getenv("OP2_CACHE_DIR")
	defer func() { check(t, op2.Configure(op2.Config{CacheDir: cache, PlanCheck: true})) }()
	sc := must(op2.NewConst(1, []float64{2.5}, "ck_scalar"))
	ar := must(op2.NewConst(3, []int32{1, 2, 3}, "ck_array"))
	defer sc.Remove()
	defer ar.Remove()
	for _, b := range allBackends {
		t.Run(b, func(t *testing.T) {
			check(t, op2.Configure(op2.Config{Backend: b, Check: true, CacheDir: cache, PlanCheck: true}))
			c := newConstWriter("ck_constw", "ck_scalar", "ck_array")
			check(t, c.run(false))
			err := c.run(true)
			if isDevice(b) {
				check(t, err)
			} else {
				var le *op2.LoopError
				if !errors.As(err, &le) || le.Arg != -1 {
					t.Fatalf("error %v, want a *LoopError about the loop", err)
				}
				wantErr(t, err, `loop "ck_constw"`, "check mode", `const "ck_array"`, "int32, dim 3", "value 1 changed from 2 to -40")
			}
			check(t, c.run(false))
			for e, v := range c.y.Data() {
				if v != c.want {
					t.Fatalf("after the writing loop: y[%d] = %v, want %v", e, v, c.want)
				}
			}
		})
	}
}

// TestKernelWritingLargeConstIsUndone: the same for a constant too large
// for the device backends' private copies. On opencl it stays in the
// __constant buffer, which a kernel cannot write (casting its address
// space away is a build error); on cuda the buffer is restored before
// each launch (devrt, Layout.ConstsWritable), and check mode does not see
// the write.
func TestKernelWritingLargeConstIsUndone(t *testing.T) {
	vals := make([]int32, 300)
	for i := range vals {
		vals[i] = int32(i)
	}
	big := must(op2.NewConst(300, vals, "wc_big"))
	defer big.Remove()
	set := must(op2.NewSet(600, "s"))
	flag := must(op2.NewGlobal(1, []int32{0}, "flag"))
	y := must(op2.NewDat[int32](set, 1, nil, "y"))
	k := op2.NewKernel(`void wc_big_k(const int *flag, int *y)
{
  *y = wc_big[7] + wc_big[299];
  if (*flag) ((int *)wc_big)[7] = -1000;
}`, "wc_big_k")
	onEachBackend(t, func(t *testing.T) {
		for i, write := range []bool{true, false} {
			flag.Data()[0] = 0
			if write {
				flag.Data()[0] = 1
			}
			err := op2.ParLoop(k, set, flag.Arg(op2.Read), y.Arg(op2.Write))
			if op2.Backend() == "opencl" {
				var be *op2.DeviceBuildError
				if !errors.As(err, &be) {
					t.Fatalf("error %v, want a *DeviceBuildError (the __constant buffer cannot be written)", err)
				}
				return
			}
			if write && checkModeFromEnv() && !isDevice(op2.Backend()) {
				wantErr(t, err, "check mode", `const "wc_big"`)
				continue
			}
			check(t, err)
			if write {
				continue
			}
			for e, v := range y.Data() {
				if v != 7+299 {
					t.Fatalf("loop %d: y[%d] = %d, want %d (the declared values)", i, e, v, 7+299)
				}
			}
		}
		if got := big.Value(); !slices.Equal(got, vals) {
			t.Errorf("declared values changed")
		}
	})
}

// TestRepeatedLoopWithConstsAllocatesNothing: refreshing a loop's
// constants from their declared values on every call allocates nothing.
// Check mode is named off, whatever OP2_CHECK says (it copies every READ
// argument per loop).
func TestRepeatedLoopWithConstsAllocatesNothing(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		r := must(op2.NewRuntime(op2.Config{Backend: op2.Backend()}.Explicit("Check")))
		dt := must(op2.NewConstIn(r, 1, []float64{0.5}, "alloc_dt"))
		gam := must(op2.NewConstIn(r, 3, []float64{1.4, 0.4, 2.5}, "alloc_gam"))
		defer dt.Remove()
		defer gam.Remove()
		set := must(op2.NewSet(100, "s"))
		x := must(op2.NewDat[float64](set, 1, nil, "x"))
		k := op2.NewKernel("void alloc_consts(double *x) { *x += alloc_dt * alloc_gam[2]; }", "alloc_consts")
		run := func() { check(t, r.ParLoop(k, set, x.Arg(op2.RW))) }
		for range 25 { // more than AllocsPerRun records (lazy mode's slots)
			run()
		}
		check(t, r.Wait())
		if a := testing.AllocsPerRun(20, run); a != 0 {
			t.Errorf("a repeated loop with constants allocates %v times per call, want 0", a)
		}
		if got := x.Data()[0]; got != 46*0.5*2.5 {
			t.Errorf("x[0] = %v after 46 loops, want %v", got, 46*0.5*2.5)
		}
	})
}
