package hostc

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoCgo: code generation (host C here, device code in ../device)
// depends on no cgo package, so source can be generated on a machine
// without a C compiler or driver.
func TestNoCgo(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{len .CgoFiles}}", ".", "../device").Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, n, _ := strings.Cut(line, " ")
		if n != "0" || path == "C" || path == "runtime/cgo" {
			t.Errorf("code generation depends on %s, which uses cgo", path)
		}
	}
}
