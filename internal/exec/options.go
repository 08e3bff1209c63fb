package exec

import (
	"strconv"
	"strings"
)

// DeviceOptions is what the device code generator accepts for the
// settings that only it reads: the default and the valid values of
// Config.DeviceWorkGroupSize, DeviceScheme and DeviceLayout. The device
// run time registers codegen/device's (RegisterDeviceOptions), so that the
// settings table checks them without this package importing a code
// generator. Until one is registered those settings take any value (no
// device backend is linked to read them).
type DeviceOptions struct {
	// DefaultWorkGroupSize is the size 0 stands for; the tuner's key
	// names no other size for it.
	DefaultWorkGroupSize int
	// ParseWorkGroupSize reads OP2_DEVICE_WORKGROUP's value, and
	// CheckWorkGroupSize checks a configured size.
	ParseWorkGroupSize func(s string) (int, error)
	CheckWorkGroupSize func(n int) error
	// CheckScheme and CheckLayout check a scheme's and a data layout's
	// name.
	CheckScheme, CheckLayout func(name string) error
}

// HostOptions is what the host code generator accepts for the settings
// that only it reads: the lane counts Config.SIMD may name. The host
// run time registers codegen/hostc's (RegisterHostOptions).
type HostOptions struct {
	LaneWidths []int
}

var (
	deviceOptions DeviceOptions
	hostOptions   HostOptions
)

// RegisterDeviceOptions makes o the device settings' vocabulary and sets
// the configuration table's default work-group size from it. Call it
// from an init function, before any configuration is read.
func RegisterDeviceOptions(o DeviceOptions) {
	deviceOptions = o
	for i := range Settings {
		if Settings[i].Field == "DeviceWorkGroupSize" {
			Settings[i].Default = strconv.Itoa(o.DefaultWorkGroupSize)
		}
	}
}

// RegisterHostOptions makes o the host settings' vocabulary. Call it
// from an init function, before any configuration is read.
func RegisterHostOptions(o HostOptions) { hostOptions = o }

func checkDeviceScheme(s string) error {
	if deviceOptions.CheckScheme == nil {
		return nil
	}
	return deviceOptions.CheckScheme(s)
}

func checkDeviceLayout(s string) error {
	if deviceOptions.CheckLayout == nil {
		return nil
	}
	return deviceOptions.CheckLayout(s)
}

// parseWorkGroupSize reads a work-group size with the registered
// vocabulary, else as a decimal number ("" is 0).
func parseWorkGroupSize(s string) (int, error) {
	if deviceOptions.ParseWorkGroupSize != nil {
		return deviceOptions.ParseWorkGroupSize(s)
	}
	if strings.TrimSpace(s) == "" {
		return 0, nil
	}
	return strconv.Atoi(strings.TrimSpace(s))
}

func checkWorkGroupSize(n int) error {
	if deviceOptions.CheckWorkGroupSize == nil {
		return nil
	}
	return deviceOptions.CheckWorkGroupSize(n)
}
