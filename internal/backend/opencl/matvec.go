package opencl

import (
	"fmt"

	"github.com/goop2/op2/internal/codegen/device"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/devrt"
	"github.com/goop2/op2/internal/exec"
)

// MatVec computes a sparse matrix-vector product on the device
// (exec.MatVecer), building its kernel the first time a shape is seen.
func (b *backend) MatVec(m *exec.MatVec) error {
	if m.Values.Type == core.Float64 && !b.ctx.Device.HasDouble {
		return fmt.Errorf("%s: Mult: float64 values but OpenCL device %q has no double precision", m.Name, b.ctx.Device.Name)
	}
	return b.products.Run(b.drv, b, device.OpenCL, b.opts, m, func(l *core.Loop, src string) (devrt.Kernel, error) {
		k, _, err := b.build(l, src)
		return k, err
	})
}
