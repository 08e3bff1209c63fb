package cuda

import (
	"fmt"

	"github.com/goop2/op2/internal/codegen/device"
	"github.com/goop2/op2/internal/devrt"
	"github.com/goop2/op2/internal/exec"
)

// MatVec computes a sparse matrix-vector product on the GPU
// (exec.MatVecer), compiling its kernel the first time a shape is seen.
func (b *backend) MatVec(m *exec.MatVec) error {
	spec := devrt.MatVecSpec(m, b.opts)
	src, err := device.SpMVSource(device.CUDA, spec)
	if err != nil {
		return err
	}
	k, ok := b.products[src]
	if !ok {
		l := devrt.MatVecLoop(m)
		cubin, err := b.compile(l, src)
		if err != nil {
			return fmt.Errorf("%s: %w", l.Name(), err)
		}
		f, err := b.dev.Load(cubin, stubName)
		if err != nil {
			return fmt.Errorf("%s: %w", l.Name(), err)
		}
		if b.products == nil {
			b.products = map[string]devrt.Kernel{}
		}
		b.products[src], k = f, f
	}
	wg := b.opts.WorkGroupSize
	if wg == 0 {
		wg = device.DefaultWorkGroupSize
	}
	return devrt.MatVec(b.drv, b, k, wg, b.opts.SoA, m)
}
