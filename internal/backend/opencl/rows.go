package opencl

import (
	"github.com/goop2/op2/internal/codegen/device"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/devrt"
)

// buildRows builds the kernel that moves halo rows (devrt.Rows).
func (b *backend) buildRows() (devrt.Kernel, error) {
	l := &core.Loop{Kernel: &core.Kernel{Name: "op2_rows"}, Set: &core.Set{Name: "halo rows"}}
	k, _, err := b.build(l, device.RowsSource(device.OpenCL))
	if err != nil {
		return nil, err // not a nil *cl.Kernel in a non-nil Kernel
	}
	return k, nil
}
