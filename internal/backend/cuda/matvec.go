package cuda

import (
	"fmt"

	"github.com/goop2/op2/internal/codegen/device"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/devrt"
	"github.com/goop2/op2/internal/exec"
)

// MatVec computes a sparse matrix-vector product on the GPU
// (exec.MatVecer), compiling its kernel the first time a shape is seen.
func (b *backend) MatVec(m *exec.MatVec) error {
	return b.products.Run(b.drv, b, device.CUDA, b.opts, m, func(l *core.Loop, src string) (devrt.Kernel, error) {
		cubin, err := b.compile(l, src)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.Name(), err)
		}
		f, err := b.dev.Load(cubin, stubName, l.Name())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.Name(), err)
		}
		return f, nil
	})
}
