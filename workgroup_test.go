package op2_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// TestDeviceWorkGroupSize: with DeviceWorkGroupSize (or
// OP2_DEVICE_WORKGROUP) the opencl backend generates and runs its kernels
// for that many work items per group, with the sequential backend's
// results; a size that is not a power of two from 32 to 1024 is refused,
// from the Config or the environment, with an error naming the value and
// the sizes allowed.
func TestDeviceWorkGroupSize(t *testing.T) {
	defer func() { check(t, op2.Configure(op2.Config{Backend: "sequential"})) }()
	for _, bad := range []int{48, 2048, 16, -64} {
		_, err := op2.NewRuntime(op2.Config{Backend: "sequential", DeviceWorkGroupSize: bad})
		wantErr(t, err, "Config.DeviceWorkGroupSize", "32, 64, 128, 256, 512, 1024")
	}
	for _, bad := range []string{"48", "2048", "abc"} {
		t.Run("env="+bad, func(t *testing.T) {
			t.Setenv("OP2_DEVICE_WORKGROUP", bad)
			_, err := op2.NewRuntime(op2.Config{Backend: "sequential"})
			wantErr(t, err, `OP2_DEVICE_WORKGROUP="`+bad+`"`, "32, 64, 128, 256, 512, 1024")
		})
	}
	needBackend(t, "opencl")

	edges, nodes, m := scatteredEdges(3000, 1000, 37, 3)
	w := must(op2.NewDat(edges, 1, iota32[float64](3000), "w"))
	k := op2.NewKernel("void wg_spread(const double *w, double *a, double *b, double *s, double *hi) { *a += *w; *b += 0.5 * *w; *s += *w; *hi = fmax(*hi, *w); }", "wg_spread")
	type result struct {
		acc     []float64
		sum, hi float64
		src     string
	}
	run := func(backend string, size int) result {
		check(t, op2.Configure(op2.Config{Backend: backend, DeviceWorkGroupSize: size}))
		acc := must(op2.NewDat[float64](nodes, 1, nil, "acc"))
		sum := must(op2.NewGlobal[float64](1, nil, "sum"))
		hi := must(op2.NewGlobal(1, []float64{-1}, "hi"))
		lp := must(op2.NewLoop(k, edges, w.Arg(op2.Read), acc.ArgMap(op2.Inc, m, 0), acc.ArgMap(op2.Inc, m, 1), sum.Arg(op2.Inc), hi.Arg(op2.Max)))
		check(t, lp.Compute())
		return result{acc.Data(), sum.Data()[0], hi.Data()[0], must(lp.Generate())}
	}
	want := run("sequential", 0)
	for _, size := range []int{32, 256} {
		got := run("opencl", size)
		if head := fmt.Sprintf("reqd_work_group_size(%d, 1, 1)", size); !strings.Contains(got.src, head) {
			t.Errorf("size %d: the source lacks %q", size, head)
		}
		// Sums of halves of small integers: exact in any order.
		if !slices.Equal(got.acc, want.acc) || got.sum != want.sum || got.hi != want.hi {
			t.Errorf("size %d: results differ from sequential (sum %g, max %g; want %g, %g)", size, got.sum, got.hi, want.sum, want.hi)
		}
	}
}
