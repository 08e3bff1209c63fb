package opencl

import (
	"strings"
	"testing"
	"unsafe"
)

func device(t *testing.T) *Context {
	t.Helper()
	devs, err := Devices(TypeAll)
	if err != nil {
		t.Skipf("opencl: skipped, no OpenCL runtime: %v", err)
	}
	if len(devs) == 0 {
		t.Skip("opencl: skipped, no OpenCL device")
	}
	ctx, err := NewContext(devs[0])
	if err != nil {
		t.Fatal(err)
	}
	return ctx
}

func TestRoundTrip(t *testing.T) {
	ctx := device(t)
	prog, err := ctx.BuildSource(`__kernel void twice(__global double *x, int n) {
  int i = get_global_id(0);
  if (i < n) x[i] *= 2.0;
}`, "")
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel("twice")
	if err != nil {
		t.Fatal(err)
	}
	host := []float64{1, 2, 3, 4, 5}
	buf, err := ctx.Alloc(8 * len(host))
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Free(buf)
	if err := ctx.Write(buf, unsafe.Pointer(&host[0]), 8*len(host)); err != nil {
		t.Fatal(err)
	}
	if err := k.SetBuffer(0, buf); err != nil {
		t.Fatal(err)
	}
	if err := k.SetInt(1, len(host)); err != nil {
		t.Fatal(err)
	}
	if err := ctx.Launch(k, 1, 8); err != nil {
		t.Fatal(err)
	}
	out := make([]float64, len(host))
	if err := ctx.Read(buf, unsafe.Pointer(&out[0]), 8*len(out)); err != nil {
		t.Fatal(err)
	}
	for i := range host {
		if out[i] != 2*host[i] {
			t.Fatalf("out = %v", out)
		}
	}
	bin, err := prog.Binary()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ctx.BuildBinary(bin, ""); err != nil {
		t.Fatalf("rebuilding from the binary: %v", err)
	}
}

func TestBuildLog(t *testing.T) {
	ctx := device(t)
	_, err := ctx.BuildSource("__kernel void bad(__global int *x) { x[0] = ; }", "")
	if err == nil || !strings.Contains(err.Error(), "build log") || !strings.Contains(err.Error(), "error") {
		t.Fatalf("error %v, want the build log", err)
	}
}
