package exec

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/goop2/op2/internal/codegen/device"
	"github.com/goop2/op2/internal/codegen/hostc"
	"github.com/goop2/op2/internal/core"
)

// A choice is a setting whose value is one of a fixed set of names: its
// Config field, the environment variable that sets it, and its check.
// Every choice is checked when it is configured or read from the
// environment, whatever the backend: a value the chosen backend does not
// use is still refused, so that a typo is found at once rather than when
// another backend opens.
type choice struct {
	field, env string
	value      func(*Config) string
	check      func(string) error
}

// choices are every setting that names one of a fixed set of values.
var choices = []choice{
	{"Backend", "OP2_BACKEND", func(c *Config) string { return c.Backend }, CheckBackend},
	{"OpenCLDevice", "OP2_OPENCL_DEVICE", func(c *Config) string { return c.OpenCLDevice }, CheckOpenCLDevice},
	{"DeviceScheme", "OP2_DEVICE_SCHEME", func(c *Config) string { return c.DeviceScheme }, func(s string) error {
		_, err := device.ParseScheme(s)
		return err
	}},
	{"DeviceLayout", "OP2_DEVICE_LAYOUT", func(c *Config) string { return c.DeviceLayout }, func(s string) error {
		_, err := device.ParseLayout(s)
		return err
	}},
	{"OpenMPScheme", "OP2_OPENMP_SCHEME", func(c *Config) string { return c.OpenMPScheme }, func(s string) error {
		_, err := ParseOpenMPScheme(s)
		return err
	}},
	{"SIMD", "OP2_SIMD", func(c *Config) string { return c.SIMD }, func(s string) error {
		_, _, err := ParseSIMD(s)
		return err
	}},
	{"Fusion", "OP2_FUSION", func(c *Config) string { return c.Fusion }, CheckFusion},
}

// CheckChoices returns an error naming the first setting of c that names
// no value GoOP2 knows (an unknown backend, device type, device scheme or
// layout, openmp scheme, SIMD setting or fusion setting), as "Config.F".
// Empty values, the defaults, are accepted.
func (c *Config) CheckChoices() error {
	for _, ch := range choices {
		if v := ch.value(c); v != "" {
			if err := ch.check(v); err != nil {
				return fmt.Errorf("Config.%s: %w", ch.field, err)
			}
		}
	}
	return nil
}

// checkEnvChoices is CheckChoices for a configuration read from the
// environment: the error names the variable and its value.
func (c *Config) checkEnvChoices() error {
	for _, ch := range choices {
		if v := ch.value(c); v != "" {
			if err := ch.check(v); err != nil {
				return fmt.Errorf("%s=%q: %w", ch.env, v, err)
			}
		}
	}
	return nil
}

// CheckBackend returns an error when no backend of that name is
// registered; it matches core.ErrBackendUnavailable.
func CheckBackend(name string) error {
	if !slices.Contains(Backends(), name) {
		return core.Unavailable(fmt.Errorf("unknown backend %q (available: %s)", name, strings.Join(Backends(), ", ")))
	}
	return nil
}

// OpenCLDeviceTypes are the names Config.OpenCLDevice accepts ("" means
// any, as "all" and "any" do), in lower case; the opencl backend maps them
// to OpenCL's device types.
var OpenCLDeviceTypes = []string{"all", "any", "cpu", "gpu", "accelerator", "default"}

// CheckOpenCLDevice returns an error when name (any case) is not an
// OpenCL device type of OpenCLDeviceTypes.
func CheckOpenCLDevice(name string) error {
	if name == "" || slices.Contains(OpenCLDeviceTypes, strings.ToLower(name)) {
		return nil
	}
	return fmt.Errorf("unknown OpenCL device type %q (cpu, gpu, accelerator, default, or all)", name)
}

// The openmp backend's schemes (Config.OpenMPScheme).
const (
	OpenMPOwner  = "owner"
	OpenMPColour = "colour"
	// DefaultOpenMPScheme is the scheme used when none is configured.
	DefaultOpenMPScheme = OpenMPOwner
)

// ParseOpenMPScheme reports whether scheme (a Config.OpenMPScheme value;
// empty means DefaultOpenMPScheme; "color" is accepted for "colour";
// any case) is the owner-compute scheme, or returns an error for an
// unknown scheme.
func ParseOpenMPScheme(scheme string) (owner bool, err error) {
	switch strings.ToLower(strings.TrimSpace(scheme)) {
	case "":
		return DefaultOpenMPScheme == OpenMPOwner, nil
	case OpenMPOwner:
		return true, nil
	case OpenMPColour, "color":
		return false, nil
	}
	return false, fmt.Errorf("unknown openmp scheme %q (%s or %s)", scheme, OpenMPOwner, OpenMPColour)
}

// ParseSIMD reads a Config.SIMD value: "" or "auto" (scalar code, the
// tuner tries lanes: lanes 0, off false), "off" (scalar code only: off
// true), "scalar" (lanes 0, off false), or a lane count of
// hostc.LaneWidths ("4", "8"; also "simd4", "simd8"), any case.
func ParseSIMD(s string) (lanes int, off bool, err error) {
	v := strings.ToLower(strings.TrimSpace(s))
	switch v {
	case "", "auto", "scalar":
		return 0, false, nil
	case "off":
		return 0, true, nil
	}
	n, err := strconv.Atoi(strings.TrimPrefix(v, "simd"))
	if err != nil || !slices.Contains(hostc.LaneWidths, n) {
		w := make([]string, len(hostc.LaneWidths))
		for i, n := range hostc.LaneWidths {
			w[i] = strconv.Itoa(n)
		}
		return 0, false, fmt.Errorf("unknown SIMD setting %q: want auto, off, or a lane count (%s)", s, strings.Join(w, ", "))
	}
	return n, false, nil
}
