package cuda

import (
	"unsafe"

	"github.com/goop2/op2/internal/core"
	cu "github.com/goop2/op2/internal/cuda"
	"github.com/goop2/op2/internal/devrt"
)

// pokeMax is the most bytes a write takes as a kernel launch (poke) when
// launches are batched (Config.CUDAGraphs): a Global's value or a
// changed constant, which a program may set before every loop.
const pokeMax = 64

// pokeSource is the kernel that writes n (at most pokeMax) bytes, given
// as its parameters, to dst: one thread.
const pokeSource = `extern "C" __global__ void op2_poke(unsigned char *dst, int n,
    unsigned long long v0, unsigned long long v1, unsigned long long v2, unsigned long long v3,
    unsigned long long v4, unsigned long long v5, unsigned long long v6, unsigned long long v7) {
  const unsigned long long v[8] = {v0, v1, v2, v3, v4, v5, v6, v7};
  const unsigned char *s = (const unsigned char *)v;
  for (int i = 0; i < n; i++) dst[i] = s[i];
}
`

// poker writes small buffers with a kernel launch instead of a copy when
// launches are batched: the launch joins the batch (and its graph, the
// bytes being parameters), where a copy would send the batch and wait
// for the host's bytes to be copied.
type poker struct {
	build func() (*cu.Function, error) // compiles pokeSource
	f     *cu.Function
	err   error // the build's, kept: writes then go as copies
}

// buildPoke compiles the poke kernel.
func (b *backend) buildPoke() (*cu.Function, error) {
	l := &core.Loop{Kernel: &core.Kernel{Name: "op2_poke"}, Set: &core.Set{Name: "device memory"}}
	cubin, err := b.compile(l, pokeSource)
	if err != nil {
		return nil, err
	}
	return b.dev.Load(cubin, "op2_poke", l.Name())
}

// Write copies n bytes from src to b (WriteAt at offset 0).
func (d *driver) Write(b devrt.Buffer, src unsafe.Pointer, n int) error {
	return d.WriteAt(b, 0, src, n)
}

// WriteAt copies n bytes from src to byte offset off of b: at most
// pokeMax bytes, while launches are batched, by a launch of the poke
// kernel; else by a copy.
func (d *driver) WriteAt(b devrt.Buffer, off int, src unsafe.Pointer, n int) error {
	if n <= 0 || n > pokeMax || !d.dev.Batching() || d.poke.build == nil {
		return d.Buffers.WriteAt(b, off, src, n)
	}
	if d.poke.f == nil && d.poke.err == nil {
		d.poke.f, d.poke.err = d.poke.build()
	}
	if d.poke.err != nil {
		return d.Buffers.WriteAt(b, off, src, n)
	}
	slots := d.params.Slots(10)
	clear(slots)
	slots[0] = b.(*cu.Buffer).Ptr + uint64(off)
	slots[1] = uint64(n)
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&slots[2])), 8*8), unsafe.Slice((*byte)(src), n))
	return d.dev.Launch(d.poke.f, 1, 1, 0, &d.params)
}
