package exec

import (
	"github.com/goop2/op2/internal/codegen/device"
	"github.com/goop2/op2/internal/codegen/hostc"
)

// The tests read the settings with the code generators' vocabulary, as
// a program does once internal/devrt and internal/host register it.
func init() {
	RegisterDeviceOptions(DeviceOptions{
		DefaultWorkGroupSize: device.DefaultWorkGroupSize,
		ParseWorkGroupSize:   device.ParseWorkGroupSize,
		CheckWorkGroupSize:   device.CheckWorkGroupSize,
		CheckScheme:          func(s string) error { _, err := device.ParseScheme(s); return err },
		CheckLayout:          device.CheckLayout,
	})
	RegisterHostOptions(HostOptions{LaneWidths: hostc.LaneWidths})
}
