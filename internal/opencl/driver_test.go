package opencl

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/goop2/op2/internal/testreq"
)

func device(t *testing.T) *Context {
	t.Helper()
	devs, err := Devices(TypeAll)
	testreq.Check(t, "opencl", err, ErrUnavailable)
	if len(devs) == 0 {
		testreq.Skip(t, "opencl", errors.New("opencl: no OpenCL device"))
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
	wg, err := ctx.WorkGroupSize(k)
	if err != nil {
		t.Fatal(err)
	}
	if wg < 8 || ctx.Device.MaxWorkGroup > 0 && wg > ctx.Device.MaxWorkGroup {
		t.Errorf("kernel work-group size %d (device limit %d)", wg, ctx.Device.MaxWorkGroup)
	}
	t.Logf("device %q: work groups of at most %d items, %d for this kernel", ctx.Device.Name, ctx.Device.MaxWorkGroup, wg)
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

// TestCaptureStderr: what is written to file descriptor 2 while a build
// runs is captured, and standard error works as before afterwards.
// fd2 is a Go file on standard error's descriptor: os.Stderr is not one
// under go test -json, which points it at standard output.
var fd2 = os.NewFile(uintptr(syscall.Stderr), "/dev/stderr")

func TestCaptureStderr(t *testing.T) {
	out := captureStderr(func() {
		syscall.Write(2, []byte("from the driver\n"))
		fd2.WriteString("from Go\n")
	})
	if out != "from the driver\nfrom Go\n" {
		t.Errorf("captured %q", out)
	}
	if _, err := syscall.Write(2, nil); err != nil {
		t.Errorf("standard error after the capture: %v", err)
	}
}

// TestBuildOutput: a failed build's error carries what the driver
// printed on standard error (PoCL's "1 error generated.") besides its
// log, and a build that succeeds leaves standard error to the process:
// what the program writes meanwhile reaches it (a capture around the
// build here; the build waited for it when it captured every build).
func TestBuildOutput(t *testing.T) {
	ctx := device(t)
	_, err := ctx.BuildSource("__kernel void bad(__global int *x) { x[0] = undefined_fn(1); }", "")
	var be *BuildError
	if !errors.As(err, &be) {
		t.Fatalf("error %v is not a *BuildError", err)
	}
	if !strings.Contains(be.Log+be.Output, "undefined_fn") {
		t.Errorf("neither log %q nor output %q names the function", be.Log, be.Output)
	}
	done := make(chan string)
	go func() {
		done <- captureStderr(func() {
			if _, err := ctx.BuildSource("__kernel void fine(__global int *x) { x[0] = 2; }", ""); err != nil {
				t.Error(err)
			}
			fd2.WriteString("the program's line\n")
		})
	}()
	select {
	case out := <-done:
		if !strings.Contains(out, "the program's line") {
			t.Errorf("standard error around a build: %q", out)
		}
	case <-time.After(time.Minute):
		t.Fatal("a build that succeeds redirected standard error (it waited for the capture around it)")
	}
}

// TestDeviceConstantMemory: the device reports its constant memory and
// how many __constant kernel arguments it takes, at least what OpenCL 1.2
// guarantees (64 KiB and 8 arguments for the full profile, 1 KiB and 4
// for the embedded one), which the backend gives the code generator.
func TestDeviceConstantMemory(t *testing.T) {
	d := device(t).Device
	if d.ConstMem < 1<<10 || d.ConstArgs < 4 {
		t.Errorf("device %q: %d bytes of constant memory, %d __constant arguments; want at least 1 KiB and 4", d.Name, d.ConstMem, d.ConstArgs)
	}
	t.Logf("device %q: %d bytes of constant memory, %d __constant arguments", d.Name, d.ConstMem, d.ConstArgs)
}

// TestMissingLibraryIsUnavailable: a library that is not OpenCL's, or one
// that finds no platform, gives an error matching ErrUnavailable, which
// the tests skip on (and nothing else).
func TestMissingLibraryIsUnavailable(t *testing.T) {
	for _, err := range []error{
		unavailable{errors.New("opencl: cannot load the OpenCL library")},
		fmt.Errorf("wrapped: %w", unavailable{errors.New("opencl: no OpenCL platform found")}),
	} {
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("%v does not match ErrUnavailable", err)
		}
		if strings.Contains(err.Error(), ErrUnavailable.Error()) {
			t.Errorf("%v: the marker changed the text", err)
		}
	}
	if errors.Is(&Error{Call: "clBuildProgram", Code: -11}, ErrUnavailable) {
		t.Error("a failed call matches ErrUnavailable")
	}
}
