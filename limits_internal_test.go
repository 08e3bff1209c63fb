package op2

import (
	"testing"

	"github.com/goop2/op2/internal/engine"
)

// TestLimitsMatchEngine: the limits the API documents are the ones the
// engine enforces (each is written out in both, so that godoc shows the
// value).
func TestLimitsMatchEngine(t *testing.T) {
	for _, c := range []struct {
		name      string
		api, engn int
	}{
		{"MaxRecordedLoops", MaxRecordedLoops, engine.MaxRecordedLoops},
		{"MaxReductionDim", MaxReductionDim, engine.MaxReductionDim},
		{"MaxMinMaxValues", MaxMinMaxValues, engine.MaxMinMaxValues},
		{"MaxDeviceVectorArity", MaxDeviceVectorArity, engine.MaxDeviceVectorArity},
		{"MaxElementMatrixBytes", MaxElementMatrixBytes, engine.MaxElementMatrixBytes},
		{"MaxDeviceElementMatrixBytes", MaxDeviceElementMatrixBytes, engine.MaxDeviceElementMatrixBytes},
	} {
		if c.api != c.engn {
			t.Errorf("op2.%s = %d but the engine uses %d", c.name, c.api, c.engn)
		}
	}
}
