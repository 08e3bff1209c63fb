package op2_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// TestOpenCLMissingSays what to install: run in a child process whose
// OpenCL library or driver list is made unusable.
func TestOpenCLMissingSaysWhatToInstall(t *testing.T) {
	cases := []struct {
		name string
		env  string
		want []string
	}{
		{"no ICD loader", "OP2_OPENCL_LIBRARY=/nonexistent/libOpenCL.so.1", []string{"cannot load the OpenCL library", "apt-get install", "pocl-opencl-icd"}},
		{"no driver", "OCL_ICD_VENDORS=/nonexistent-vendors-dir", []string{"apt-get install", "pocl-opencl-icd"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "no driver" && !onSystemLoader() {
				t.Skip("the system has no ocl-icd loader to point at an empty driver list")
			}
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "OP2_TEST_HELPER=opencl-error", c.env)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			for _, w := range c.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("error %q does not mention %q", strings.TrimSpace(string(out)), w)
				}
			}
		})
	}
}

func onSystemLoader() bool {
	_, err := os.Stat("/usr/lib/x86_64-linux-gnu/libOpenCL.so.1")
	return err == nil
}

func TestOpenCLDeviceSelection(t *testing.T) {
	requireDevice(t)
	cache := os.Getenv("OP2_CACHE_DIR")
	defer func() { check(t, op2.Configure(op2.Config{CacheDir: cache, PlanCheck: true})) }()
	err := op2.Configure(op2.Config{Backend: "opencl", OpenCLPlatform: "no-such-platform", CacheDir: cache})
	wantErr(t, err, `no device on a platform matching "no-such-platform"`, "found")
	err = op2.Configure(op2.Config{Backend: "opencl", OpenCLDevice: "toaster", CacheDir: cache})
	wantErr(t, err, `unknown device type "toaster"`)
}
