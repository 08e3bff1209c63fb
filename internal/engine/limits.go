package engine

import (
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
)

// MaxDeviceVectorArity is the largest number of map entries the vector
// arguments of one loop may pass together on a device backend (see
// op2.MaxDeviceVectorArity).
const MaxDeviceVectorArity = 8192

// fusedWithinDeviceLimits reports whether loop next may join the loops of
// group in one fused loop (see Config.Fusion) on the named backend: on
// device backends the fused loop must keep to the limit checkDeviceLimits
// sets for each loop (the root package's checkDeviceLimits), MaxDeviceVectorArity map entries of vector
// arguments in all (counted per loop, before arguments merge).
func fusedWithinDeviceLimits(backend string, group []*core.Loop, next *core.Loop) bool {
	if !exec.IsDevice(backend) {
		return true
	}
	total := vectorEntries(next)
	for _, l := range group {
		total += vectorEntries(l)
	}
	return total <= MaxDeviceVectorArity
}

// vectorEntries is the number of map entries loop l's enabled vector
// arguments pass per element.
func vectorEntries(l *core.Loop) int {
	n := 0
	for i := range l.Args {
		if a := &l.Args[i]; a.Kind == core.ArgVector && !a.Off {
			n += a.Map.Arity
		}
	}
	return n
}
