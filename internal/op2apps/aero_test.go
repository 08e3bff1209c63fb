package op2apps

import (
	"math"
	"strconv"
	"testing"
)

// aeroExact is the number of iterations whose figures every
// configuration must give as OP2 printed them but for rounding: the
// conjugate-gradient iteration counts exactly, the rms within aeroTol of
// the first iteration's rms. After them the rms nears rounding level (1e-13
// of its first value), where the order of sums decides the counts. OP2's
// sequential library passes a kernel the Dat's own values for an OP_INC
// argument, so res_calc's four increments per node add to it one by one;
// GoOP2, on every backend, passes zeroed values and adds them once the
// kernel returns (as OP2's CUDA and OpenMP code does), which rounds
// otherwise: the last of the 16 digits OP2 prints differs from the first
// iteration on, so no configuration gives OP2's bits.
const (
	aeroExact = 10
	aeroTol   = 1e-9
)

// compareAero compares steps with OP2's aero output ("%d %d %3.15E" per
// iteration): the first aeroExact iterations' counts exactly and their rms
// within aeroTol of the first rms.
func compareAero(t *testing.T, steps []AeroStep) {
	t.Helper()
	lines := op2Lines(t, "aero.txt", `^(\d+) (\d+) (\d\.\d{15}E[-+]\d\d)$`)
	if len(lines) != AeroIters || len(steps) != AeroIters {
		t.Fatalf("%d iterations from OP2, %d from GoOP2", len(lines), len(steps))
	}
	var first float64
	for i, l := range lines[:aeroExact] {
		s := steps[i]
		want, err := strconv.ParseFloat(l[2], 64)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = want
		}
		if s.Iter != atoi(t, l[0]) || s.Inner != atoi(t, l[1]) || math.Abs(s.RMS-want) > aeroTol*first {
			t.Errorf("GoOP2: %d %d %3.15E\n          OP2: %s %s %s", s.Iter, s.Inner, s.RMS, l[0], l[1], l[2])
		}
	}
}

// TestAero runs aero on the channel OP2's build read as FE_grid.dat
// (ChannelBump(AeroNI, AeroNJ)) on every configuration, and checks that
// sequential gives the same bits lazy and not.
func TestAero(t *testing.T) {
	m, err := ChannelBump(AeroNI, AeroNJ)
	if err != nil {
		t.Fatal(err)
	}
	var seq []AeroStep
	forEachConfig(t, func(t *testing.T, c runConfig) {
		steps, err := RunAero(m, nil)
		if err != nil {
			t.Fatal(err)
		}
		compareAero(t, steps)
		if c.backend != "sequential" {
			return
		}
		if seq == nil {
			seq = steps
			return
		}
		for i := range steps {
			if steps[i] != seq[i] {
				t.Errorf("iteration %d: %+v, lazy %v: %+v", i+1, steps[i], !c.lazy, seq[i])
			}
		}
	})
}
