package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/mesh"
)

// TestBenchRuns runs every measurement except Airfoil once, so the command
// keeps working; it asserts what was printed, never how fast.
func TestBenchRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates about 1 GB and runs for several seconds: skipped in -short mode")
	}
	var out bytes.Buffer
	if err := run(&out, 0, 2, 0, 0); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"STREAM triad", "GB/s", "ns per loop", "Plan construction", "colours", "speed-up"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestAirfoilFigures runs the Airfoil part on a small mesh: the per-loop
// figures come from op2's timing report, one row per loop.
func TestAirfoilFigures(t *testing.T) {
	m, err := mesh.Generate(8, 12)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := airfoilRuns(&out, m, 3, 2, 1, 1); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"per loop, seconds (GB/s)", "save_soln", "adt_calc", "res_calc", "bres_calc", "update", "GB moved per iteration"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if ts := op2.Timings(); len(ts) != 0 {
		t.Errorf("the benchmark left timing records behind: %v", ts)
	}
}

// TestSchemes runs the scheme comparison on a small mesh.
func TestSchemes(t *testing.T) {
	m, err := mesh.Generate(8, 12)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := schemes(&out, m, 2, 2, 2); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"openmp schemes on Airfoil", "colour", "owner", "res_calc speed-up 1 -> 2 threads"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	t.Log(out.String())
}

// TestLocalityAndTuningRuns runs the locality and tuning comparison on a
// small mesh and checks its rows; it asserts what was printed, never how
// fast.
func TestLocalityAndTuningRuns(t *testing.T) {
	m, err := mesh.Generate(20, 30)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := localityAndTuning(&out, m, 12, 2, 10); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ordered ", "shuffled ", "shuffled+rcm", "shuffled+rcb", "ordered tuned", "time/bound"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
