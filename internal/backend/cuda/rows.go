package cuda

import (
	"github.com/goop2/op2/internal/codegen/device"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/devrt"
)

// buildRows compiles the kernel that moves halo rows (devrt.Rows).
func (b *backend) buildRows() (devrt.Kernel, error) {
	l := &core.Loop{Kernel: &core.Kernel{Name: "op2_rows"}, Set: &core.Set{Name: "halo rows"}}
	cubin, err := b.compile(l, device.RowsSource(device.CUDA))
	if err != nil {
		return nil, err
	}
	f, err := b.dev.Load(cubin, stubName, l.Name())
	if err != nil {
		return nil, err // not a nil *cu.Function in a non-nil Kernel
	}
	return f, nil
}
