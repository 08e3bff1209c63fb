package host

import (
	"github.com/goop2/op2/internal/codegen/hostc"
	"github.com/goop2/op2/internal/exec"
)

// The settings table checks Config.SIMD with the host code generator's
// lane counts, which it gets from here: exec imports no code generator.
func init() {
	exec.RegisterHostOptions(exec.HostOptions{LaneWidths: hostc.LaneWidths})
}
