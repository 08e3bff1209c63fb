package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestModelRuns lays out a small Airfoil mesh on 1 to 3 ranks with every
// partitioner and checks the table: one row per case, no halo and full
// efficiency on one rank.
func TestModelRuns(t *testing.T) {
	var out bytes.Buffer
	m := model{stepMs: 23.1, resShare: 0.57, latencyUs: 1.5, bandwidthGBs: 12}
	if err := run(&out, []float64{0.002}, []int{1, 2, 3}, []string{"block", "rcb", "metis"}, m, nil); err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Split(line, " | ")
		if len(f) != 11 || f[0] == "| ranks" || strings.HasPrefix(f[0], "| ---") {
			continue
		}
		rows++
		if f[0] == "| 1" && (!strings.HasPrefix(f[3], "0 (0.0%)") || f[10] != "100% |") {
			t.Errorf("one rank has a halo or loses time: %s", line)
		}
		if f[0] != "| 1" && strings.HasPrefix(f[3], "0 ") {
			t.Errorf("several ranks and no halo: %s", line)
		}
	}
	if rows != 9 {
		t.Errorf("%d rows, want 9:\n%s", rows, out.String())
	}
}

func TestBadFlags(t *testing.T) {
	if _, err := floats("2,x"); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("floats(\"2,x\"): %v", err)
	}
	var out bytes.Buffer
	if err := run(&out, []float64{0.002}, []int{2}, []string{"scotch"}, model{stepMs: 1, latencyUs: 1, bandwidthGBs: 1}, nil); err == nil || !strings.Contains(err.Error(), "scotch") {
		t.Errorf("unknown partitioner: %v", err)
	}
}
