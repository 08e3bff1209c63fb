package probe_test

import (
	"testing"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/nvrtc"
	"github.com/goop2/op2/internal/testreq"
)

// Issue 37, item 7: constants larger than the device's constant memory
// are kept in read-only device memory on opencl and cuda. These probes
// use several constants of several types that only together exceed it
// (PoCL: 1 MiB), change them between loops, record them in fused chains
// and in check mode, and compile constants exactly at CUDA's 64 KiB
// limit (NVRTC) beside file-scope lookup tables.

// TestLargeConstsMixedTypes: a float32 and an int32 constant of
// 600 000 bytes each (1.2 MB together, each alone within PoCL's 1 MiB)
// and a double scalar; a direct loop reads all three at spread indices,
// in plain, check and lazy fused modes, and a new value of the int
// table reaches the next loop.
func TestLargeConstsMixedTypes(t *testing.T) {
	const n = 150000
	fv := make([]float32, n)
	iv := make([]int32, n)
	for i := range fv {
		fv[i] = float32(i%977) + 0.5
		iv[i] = int32(i % 1013)
	}
	k1 := op2.NewKernel(`static double p37_f(int i) { return p37_ftab[i % 150000]; }
void p37_lc1(double *y, const int *e) { *y = p37_sc * p37_f(*e * 7919) + p37_itab[(*e * 104729) % 150000]; }`, "p37_lc1")
	k2 := op2.NewKernel(`void p37_lc2(double *z, const double *y, const int *e) { *z = *y + p37_itab[(*e * 31 + 149999) % 150000]; }`, "p37_lc2")
	want := func(e int) (float64, float64) {
		y := 3*float64(fv[(e*7919)%n]) + float64(iv[(e*104729)%n])
		return y, y + float64(iv[(e*31+149999)%n])
	}
	cfgs := []op2.Config{{Backend: "sequential"}, {Backend: "sequential", Lazy: true, Fusion: "on"}}
	if haveOpenCL() {
		cfgs = append(cfgs, op2.Config{Backend: "opencl"}, op2.Config{Backend: "opencl", Check: true},
			op2.Config{Backend: "opencl", Lazy: true, Fusion: "on", DeviceLayout: "soa"})
	}
	for _, cfg := range cfgs {
		cfg.CacheDir = cacheDir
		name := cfgName(cfg)
		if cfg.Lazy {
			name += "-lazy"
		}
		if cfg.Check {
			name += "-check"
		}
		t.Run(name, func(t *testing.T) {
			r := must(op2.NewRuntime(cfg))
			must(op2.NewConstIn(r, n, fv, "p37_ftab"))
			it := must(op2.NewConstIn(r, n, iv, "p37_itab"))
			must(op2.NewConstIn(r, 1, []float64{3}, "p37_sc"))
			set := must(op2.NewSet(2000, "elems"))
			y := must(op2.NewDat[float64](set, 1, nil, "y"))
			z := must(op2.NewDat[float64](set, 1, nil, "z"))
			for pass := range 2 {
				if pass == 1 {
					for i := range iv {
						iv[i] = int32(-(i % 517))
					}
					check(t, it.Set(iv...))
				}
				check(t, r.ParLoop(k1, set, y.Arg(op2.Write), op2.ArgIdx()))
				check(t, r.ParLoop(k2, set, z.Arg(op2.Write), y.Arg(op2.Read), op2.ArgIdx()))
				check(t, r.Wait())
				for e := range set.Size() {
					wy, wz := want(e)
					if y.DataRO()[e] != wy || z.DataRO()[e] != wz {
						t.Fatalf("pass %d: element %d: y, z = %v, %v, want %v, %v", pass, e, y.DataRO()[e], z.DataRO()[e], wy, wz)
					}
				}
			}
			// Restore the first table for the next configuration.
			for i := range iv {
				iv[i] = int32(i % 1013)
			}
		})
	}
}

// TestConstsAtCUDALimit: CUDA code (NVRTC, sm_80) for constants
// of exactly 64 KiB (in __constant__ memory, as the fix places constants
// that fit), alone and beside a file-scope lookup table of the kernel,
// which the generator also puts in constant memory.
func TestConstsAtCUDALimit(t *testing.T) {
	nv, err := nvrtc.Load()
	testreq.Check(t, "nvrtc", err, nvrtc.ErrUnavailable)
	const n = 64 << 10 / 8
	c := must(op2.NewConst(n, make([]float64, n), "p37_cudatab"))
	defer c.Remove()
	set := must(op2.NewSet(10, "elems"))
	y := must(op2.NewDat[float64](set, 1, nil, "y"))
	compile := func(t *testing.T, k *op2.Kernel) {
		src, err := op2.Generate("cuda", k, set, y.Arg(op2.Write), op2.ArgIdx())
		check(t, err)
		if _, log, err := nv.Compile(src, k.Name()+".cu", 80); err != nil {
			t.Errorf("%v\n%s", err, log)
		}
	}
	t.Run("alone", func(t *testing.T) {
		compile(t, op2.NewKernel(`void p37_cl1(double *y, const int *e) { *y = p37_cudatab[(*e * 7) % 8192]; }`, "p37_cl1"))
	})
	t.Run("with-table", func(t *testing.T) {
		compile(t, op2.NewKernel(`static const double p37_w[4] = {1, 2, 3, 4};
void p37_cl2(double *y, const int *e) { *y = p37_w[*e % 4] * p37_cudatab[(*e * 7) % 8192]; }`, "p37_cl2"))
	})
}

// TestLargeConstSetInsideChain: in lazy mode, a large constant
// set between two recorded loops: the first loop sees the old value, the
// second the new one (as without Lazy).
func TestLargeConstSetInsideChain(t *testing.T) {
	const n = 200000 // 1.6 MB of doubles: beyond PoCL's 1 MiB
	cfgs := []op2.Config{{Backend: "sequential", Lazy: true, Fusion: "on"}}
	if haveOpenCL() {
		cfgs = append(cfgs, op2.Config{Backend: "opencl", Lazy: true, Fusion: "on"})
	}
	for _, cfg := range cfgs {
		cfg.CacheDir = cacheDir
		t.Run(cfgName(cfg), func(t *testing.T) {
			r := must(op2.NewRuntime(cfg))
			v := make([]float64, n)
			for i := range v {
				v[i] = float64(i)
			}
			c := must(op2.NewConstIn(r, n, v, "p37_chaintab"))
			set := must(op2.NewSet(100, "elems"))
			y := must(op2.NewDat[float64](set, 1, nil, "y"))
			z := must(op2.NewDat[float64](set, 1, nil, "z"))
			k1 := op2.NewKernel(`void p37_ch1(double *y, const int *e) { *y = p37_chaintab[*e * 1999]; }`, "p37_ch1")
			k2 := op2.NewKernel(`void p37_ch2(double *z, const double *y, const int *e) { *z = *y + p37_chaintab[*e * 1999]; }`, "p37_ch2")
			check(t, r.ParLoop(k1, set, y.Arg(op2.Write), op2.ArgIdx()))
			for i := range v {
				v[i] = -2 * float64(i)
			}
			check(t, c.Set(v...))
			check(t, r.ParLoop(k2, set, z.Arg(op2.Write), y.Arg(op2.Read), op2.ArgIdx()))
			for e := range 100 {
				wy := float64(e * 1999)
				if y.DataRO()[e] != wy || z.DataRO()[e] != wy-2*wy {
					t.Fatalf("element %d: y, z = %v, %v, want %v, %v", e, y.DataRO()[e], z.DataRO()[e], wy, -wy)
				}
			}
		})
	}
}
