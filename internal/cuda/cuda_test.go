package cuda

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unsafe"

	"github.com/goop2/op2/internal/testreq"
)

// TestMissingDriverSaysWhatToInstall loads the driver from a library that
// does not exist (in a child process: the driver is loaded once per
// process) and checks the error.
func TestMissingDriverSaysWhatToInstall(t *testing.T) {
	if os.Getenv("OP2_TEST_CUDA_CHILD") != "" {
		_, err := Open(0)
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Open: %v, want ErrUnavailable", err)
		}
		for _, want := range []string{"/nonexistent/libcuda.so.1", "NVIDIA", "driver"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not mention %q", err, want)
			}
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMissingDriverSaysWhatToInstall$", "-test.count=1")
	cmd.Env = append(os.Environ(), "OP2_TEST_CUDA_CHILD=1", LibraryEnv+"=/nonexistent/libcuda.so.1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// TestParamsSlots: the parameter array points at its slots, and growing
// it keeps that true.
func TestParamsSlots(t *testing.T) {
	var p Params
	for _, n := range []int{1, 3, 40, 2} {
		s := p.Slots(n)
		if len(s) != n {
			t.Fatalf("Slots(%d) has %d slots", n, len(s))
		}
		ptrs := unsafe.Slice((*unsafe.Pointer)(p.ptrs), n)
		for i := range s {
			s[i] = uint64(1000 + i)
			if got := *(*uint64)(ptrs[i]); got != uint64(1000+i) {
				t.Fatalf("after Slots(%d): parameter %d points at %d", n, i, got)
			}
		}
	}
}

// TestDeviceRoundTrip runs on a machine with an NVIDIA GPU: memory written,
// zeroed and read back. Elsewhere it skips, saying why.
func TestDeviceRoundTrip(t *testing.T) {
	d, err := Open(0)
	testreq.Check(t, "cuda", err, ErrUnavailable)
	defer d.Close()
	t.Logf("%s sm_%d, %d SMs, %d KiB shared and %d threads per block, driver %d", d.Name, d.Arch, d.SMs, d.SharedMem>>10, d.MaxThreads, d.Driver)
	if d.MaxThreads < 1024 {
		t.Errorf("the device allows %d threads per block; every CUDA device since compute capability 2.0 allows 1024", d.MaxThreads)
	}
	b, err := d.Alloc(64)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(b)
	in := make([]byte, 64)
	for i := range in {
		in[i] = byte(i + 1)
	}
	if err := d.Write(b, unsafe.Pointer(&in[0]), 64); err != nil {
		t.Fatal(err)
	}
	out := make([]byte, 64)
	if err := d.Read(b, unsafe.Pointer(&out[0]), 64); err != nil {
		t.Fatal(err)
	}
	if string(out) != string(in) {
		t.Fatalf("read back %v, wrote %v", out, in)
	}
	if err := d.Zero(b, 32); err != nil {
		t.Fatal(err)
	}
	if err := d.Read(b, unsafe.Pointer(&out[0]), 64); err != nil {
		t.Fatal(err)
	}
	for i, v := range out {
		if want := map[bool]byte{true: 0, false: byte(i + 1)}[i < 32]; v != want {
			t.Fatalf("after zeroing 32 bytes: byte %d = %d, want %d", i, v, want)
		}
	}
}
