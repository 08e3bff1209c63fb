package devrt

import (
	"github.com/goop2/op2/internal/codegen/device"
	"github.com/goop2/op2/internal/exec"
)

// The settings table checks the device settings with the device code
// generator's vocabulary, which it gets from here: exec imports no code
// generator.
func init() {
	exec.RegisterDeviceOptions(exec.DeviceOptions{
		DefaultWorkGroupSize: device.DefaultWorkGroupSize,
		ParseWorkGroupSize:   device.ParseWorkGroupSize,
		CheckWorkGroupSize:   device.CheckWorkGroupSize,
		CheckScheme:          func(s string) error { _, err := device.ParseScheme(s); return err },
		CheckLayout:          device.CheckLayout,
	})
}
