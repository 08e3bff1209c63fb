package gmshtest

import (
	"os/exec"
	"testing"
)

// TestPython: no python3 imports a module that does not exist; the one
// found for gmsh imports it, and is remembered.
func TestPython(t *testing.T) {
	if p := Python("op2_no_such_module"); p != "" {
		t.Errorf("Python(op2_no_such_module) = %q, want none", p)
	}
	p := Python()
	if p == "" {
		t.Skip("no python3 with Gmsh's module here (Debian: apt-get install python3-gmsh)")
	}
	if err := exec.Command(p, "-c", "import gmsh").Run(); err != nil {
		t.Errorf("%s cannot import gmsh: %v", p, err)
	}
	if q := Python(); q != p {
		t.Errorf("second call %q, first %q", q, p)
	}
}
