package cuda_test

import (
	"testing"

	"github.com/goop2/op2"
	cudadrv "github.com/goop2/op2/internal/cuda"
	"github.com/goop2/op2/internal/testreq"
)

// bandwidthElems is the length of the vectors the bandwidth benchmarks
// copy: 10⁸ doubles, 800 MB each way.
const bandwidthElems = 100_000_000

// useCUDA configures the cuda backend, skipping where none opens.
func useCUDA(b *testing.B) {
	b.Helper()
	testreq.Check(b, "cuda", op2.Configure(op2.Config{Backend: "cuda"}), op2.ErrBackendUnavailable)
	b.Cleanup(func() { _ = op2.Configure(op2.Config{Backend: "sequential"}) })
}

// BenchmarkDeviceCopy is the device's own copy bandwidth
// (cuMemcpyDtoD of 10⁸ doubles): the figure BenchmarkDirectLoop is held
// against. Bytes count what is read and written.
func BenchmarkDeviceCopy(b *testing.B) {
	d, err := cudadrv.Open(0)
	testreq.Check(b, "cuda", err, cudadrv.ErrUnavailable)
	defer d.Close()
	const n = bandwidthElems * 8
	src, err := d.Alloc(n)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Free(src)
	dst, err := d.Alloc(n)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Free(dst)
	if err := d.Zero(src, n); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(2 * n)
	b.ResetTimer()
	for range b.N {
		if err := d.Copy(dst, src, n); err != nil {
			b.Fatal(err)
		}
	}
	if err := d.Synchronize(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkDirectLoop times a direct loop over 10⁸ doubles that copies one
// Dat into another on the cuda backend, with the configured scheme,
// layout and work-group size. A reduction over a one-element set after
// the loops waits for them. Bytes count what is read and written.
func BenchmarkDirectLoop(b *testing.B) {
	useCUDA(b)
	set := must(op2.NewSet(bandwidthElems, "bw"))
	x := must(op2.NewDat[float64](set, 1, nil, "bwx"))
	y := must(op2.NewDat[float64](set, 1, nil, "bwy"))
	k := op2.NewKernel("void bwcopy(const double *x, double *y) { *y = *x; }", "bwcopy")
	one := must(op2.NewSet(1, "bwone"))
	g := must(op2.NewGlobal[float64](1, nil, "bwg"))
	wait := op2.NewKernel("void bwwait(double *g) { *g += 1; }", "bwwait")
	run := func(n int) {
		for range n {
			if err := op2.ParLoop(k, set, x.Arg(op2.Read), y.Arg(op2.Write)); err != nil {
				b.Fatal(err)
			}
		}
		if err := op2.ParLoop(wait, one, g.Arg(op2.Inc)); err != nil {
			b.Fatal(err)
		}
	}
	run(1)
	b.SetBytes(2 * bandwidthElems * 8)
	b.ResetTimer()
	run(b.N)
}

// BenchmarkLaunchOverhead is the host cost of a cached loop on the cuda
// backend without a reduction (BenchmarkParLoopOverhead in the root
// package has one, and so waits for the device each loop): validation,
// cache lookup, binding and the launch. A reduction after the loops
// waits for them.
func BenchmarkLaunchOverhead(b *testing.B) {
	useCUDA(b)
	set := must(op2.NewSet(1, "lo"))
	x := must(op2.NewDat[float64](set, 1, nil, "lox"))
	g := must(op2.NewGlobal[float64](1, nil, "log"))
	k := op2.NewKernel("void lok(double *x) { *x += 1; }", "lok")
	wait := op2.NewKernel("void lowait(const double *x, double *g) { *g += *x; }", "lowait")
	run := func(n int) {
		for range n {
			if err := op2.ParLoop(k, set, x.Arg(op2.RW)); err != nil {
				b.Fatal(err)
			}
		}
		if err := op2.ParLoop(wait, set, x.Arg(op2.Read), g.Arg(op2.Inc)); err != nil {
			b.Fatal(err)
		}
	}
	run(1)
	b.ReportAllocs()
	b.ResetTimer()
	run(b.N)
}
