package cuda

import (
	"slices"
	"testing"

	"github.com/goop2/op2/internal/core"
	cu "github.com/goop2/op2/internal/cuda"
	"github.com/goop2/op2/internal/devrt"
)

// TestPackParams: device addresses and ints go into their slots, and the
// shared-memory buffers become offsets into one dynamic allocation, each
// aligned, in the order the generated kernel declares them.
func TestPackParams(t *testing.T) {
	args := []devrt.Arg{
		{Kind: devrt.ArgBuffer, Buf: &cu.Buffer{Ptr: 0x7f0000001000}},
		{Kind: devrt.ArgInt, Int: -3},
		{Kind: devrt.ArgLocal, Int: 100}, // staging: 100 bytes, rounded up to 112
		{Kind: devrt.ArgBuffer, Buf: &cu.Buffer{Ptr: 0x7f0000002000}},
		{Kind: devrt.ArgLocal, Int: 512}, // a reduction's tree
		{Kind: devrt.ArgLocal, Int: 8},
	}
	slots := make([]uint64, len(args))
	shared := packParams(args, slots)
	want := []uint64{0x7f0000001000, 0xfffffffd, 0, 0x7f0000002000, 112, 624}
	for i := range want {
		if slots[i] != want[i] {
			t.Errorf("slot %d = %#x, want %#x", i, slots[i], want[i])
		}
	}
	if shared != 640 {
		t.Errorf("dynamic shared memory %d, want 640", shared)
	}
}

// TestDeviceForRank: the ranks on a machine get its GPUs in turn.
func TestDeviceForRank(t *testing.T) {
	for _, c := range []struct{ local, gpus, want int }{
		{0, 1, 0}, {3, 1, 0}, {0, 4, 0}, {1, 4, 1}, {5, 4, 1}, {2, 0, 0},
	} {
		if got := deviceForRank(c.local, c.gpus); got != c.want {
			t.Errorf("local rank %d of a machine with %d GPUs: device %d, want %d", c.local, c.gpus, got, c.want)
		}
	}
}

// TestCompileOptionsNoFMAD: NVRTC contracts a*b+c into fused
// multiply-adds unless told not to; every loop is compiled with
// --fmad=false, C and C++ kernels alike, so that it rounds as the host
// backends do (the root's TestDevicesDoNotContract checks the bits on a
// GPU).
func TestCompileOptionsNoFMAD(t *testing.T) {
	for _, cxx := range []bool{false, true} {
		l := &core.Loop{Kernel: &core.Kernel{Name: "k", CXX: cxx}}
		if opts := CompileOptions(l); !slices.Contains(opts, "--fmad=false") {
			t.Errorf("C++ %v: options %q lack --fmad=false", cxx, opts)
		}
	}
}
