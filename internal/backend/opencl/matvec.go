package opencl

import (
	"fmt"

	"github.com/goop2/op2/internal/codegen/device"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/devrt"
	"github.com/goop2/op2/internal/exec"
	cl "github.com/goop2/op2/internal/opencl"
)

// MatVec computes a sparse matrix-vector product on the device
// (exec.MatVecer), building its kernel the first time a shape is seen.
func (b *backend) MatVec(m *exec.MatVec) error {
	if m.Values.Type == core.Float64 && !b.ctx.Device.HasDouble {
		return fmt.Errorf("%s: Mult: float64 values but OpenCL device %q has no double precision", m.Name, b.ctx.Device.Name)
	}
	spec := devrt.MatVecSpec(m, b.opts)
	src, err := device.SpMVSource(device.OpenCL, spec)
	if err != nil {
		return err
	}
	k, ok := b.products[src]
	if !ok {
		if k, _, err = b.build(devrt.MatVecLoop(m), src); err != nil {
			return err
		}
		if b.products == nil {
			b.products = map[string]*cl.Kernel{}
		}
		b.products[src] = k
	}
	wg := b.opts.WorkGroupSize
	if wg == 0 {
		wg = device.DefaultWorkGroupSize
	}
	return devrt.MatVec(b.drv, b, k, wg, b.opts.SoA, m)
}
