package devrt

import (
	"strconv"
	"testing"

	"github.com/goop2/op2/internal/codegen/device"
	"github.com/goop2/op2/internal/exec"
)

// TestRegistersDeviceOptions: with the device run time linked, the
// settings check the device settings with the device generator's
// vocabulary and show its default work-group size.
func TestRegistersDeviceOptions(t *testing.T) {
	for _, s := range exec.Settings {
		if s.Field == "DeviceWorkGroupSize" && s.Default != strconv.Itoa(device.DefaultWorkGroupSize) {
			t.Errorf("DeviceWorkGroupSize's default is %q, want %d", s.Default, device.DefaultWorkGroupSize)
		}
	}
	for env, v := range map[string]string{"OP2_DEVICE_SCHEME": "bogus", "OP2_DEVICE_LAYOUT": "bogus", "OP2_DEVICE_WORKGROUP": "48"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, v)
			if _, err := exec.ConfigFromEnv(); err == nil {
				t.Errorf("%s=%s: no error", env, v)
			}
		})
	}
}
