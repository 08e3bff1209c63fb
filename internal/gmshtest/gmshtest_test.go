package gmshtest

import (
	"errors"
	"os/exec"
	"testing"

	"github.com/goop2/op2/internal/testreq"
)

// TestPython: no python3 imports a module that does not exist; the one
// found for gmsh imports it, and is remembered.
func TestPython(t *testing.T) {
	if p := Python("op2_no_such_module"); p != "" {
		t.Errorf("Python(op2_no_such_module) = %q, want none", p)
	}
	p := Python()
	if p == "" {
		testreq.Skip(t, "gmsh", errors.New("no python3 imports gmsh (Debian: apt-get install python3-gmsh)"))
	}
	if err := exec.Command(p, "-c", "import gmsh").Run(); err != nil {
		t.Errorf("%s cannot import gmsh: %v", p, err)
	}
	if q := Python(); q != p {
		t.Errorf("second call %q, first %q", q, p)
	}
}
