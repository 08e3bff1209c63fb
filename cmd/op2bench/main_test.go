package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestBenchRuns runs every measurement except Airfoil once, so the command
// keeps working; it asserts what was printed, never how fast.
func TestBenchRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates about 1 GB and runs for several seconds: skipped in -short mode")
	}
	var out bytes.Buffer
	if err := run(&out, 0, 2); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"STREAM triad", "GB/s", "ns per loop", "Plan construction", "colours", "speed-up"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
