package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
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
	for _, s := range []string{"0.5", "2.5", "0", "-1", "2,x"} {
		if _, err := rankCounts(s); err == nil || !strings.Contains(err.Error(), "-ranks") {
			t.Errorf("rankCounts(%q): %v, want an error naming -ranks", s, err)
		}
	}
	// Every flag is checked before any work: nothing is printed, and the
	// error comes at once (a bad partitioner after good ones once ran
	// every good case first; 10^8 ranks ran for minutes).
	for _, c := range []struct {
		name   string
		scales []float64
		ranks  []int
		parts  []string
		want   string
	}{
		{"unknown partitioner", []float64{0.002}, []int{2}, []string{"scotch"}, `"scotch"`},
		{"unknown after known", []float64{0.002}, []int{2, 3}, []string{"block", "bogus"}, `"bogus"`},
		{"owners is not offered", []float64{0.002}, []int{2}, []string{"owners"}, "(block, rcb, metis)"},
		{"more ranks than cells", []float64{0.002}, []int{2, 1459}, []string{"block"}, "-ranks 1459: more ranks than the 1458 cells"},
		{"far more ranks", []float64{0.01}, []int{99999999}, []string{"block"}, "-ranks 99999999"},
		{"second mesh too small", []float64{1, 1e-4}, []int{100}, []string{"rcb"}, "the 72 cells of the 0.0001× mesh"},
		{"no cells", []float64{1e-9}, []int{1}, []string{"rcb"}, "-scale 1e-09"},
		{"too many cells", []float64{1, 1e9}, []int{2}, []string{"rcb"}, "-scale 1e+09: the mesh would have 7.2e+14 cells, too many for int32 indices"},
		{"just too many", []float64{1492}, []int{2}, []string{"rcb"}, "-scale 1492: the mesh would have"},
		{"far too many", []float64{1e300}, []int{2}, []string{"rcb"}, "-scale 1e+300: the mesh would have"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			start := time.Now()
			err := run(&out, c.scales, c.ranks, c.parts, model{stepMs: 1, latencyUs: 1, bandwidthGBs: 1}, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one saying %q", err, c.want)
			}
			if out.Len() > 0 || time.Since(start) > 5*time.Second {
				t.Errorf("printed %q in %v before refusing", out.String(), time.Since(start))
			}
		})
	}
}

// TestStartupModel prints the start-up table for a small mesh on 1, 2 and
// 4 ranks and checks its rows: one per case, no negative figure, a
// positive read, total, peak and final memory, and the largest rank's
// peak shrinking as ranks are added. No timing is asserted beyond signs.
func TestStartupModel(t *testing.T) {
	var out bytes.Buffer
	m := model{stepMs: 23.1, resShare: 0.57, latencyUs: 1.5, bandwidthGBs: 12}
	c := startupCosts{readParseNs: 124, readSkipNs: 11, rcbNs: 72, queryNs: 26, migrateNs: 37, layoutNs: 48, valuesNs: 2.1, baseMB: 18}
	parts := []string{"block", "rcb", "metis"}
	if err := run(&out, []float64{0.02}, []int{1, 2, 4}, parts, m, &c); err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(out.String(), "Start-up model")
	if !ok {
		t.Fatalf("no start-up table:\n%s", out.String())
	}
	peaks := map[string][]float64{} // per partitioner, in rank order
	for _, line := range strings.Split(table, "\n") {
		f := strings.Split(strings.Trim(line, "| "), " | ")
		if len(f) != 11 || f[0] == "ranks" || strings.HasPrefix(f[0], "---") {
			continue
		}
		var v [9]float64 // read .. final, the peak without its phase
		for i := range v {
			num, _, _ := strings.Cut(f[2+i], " ")
			x, err := strconv.ParseFloat(num, 64)
			if err != nil || x < 0 {
				t.Fatalf("column %d of %q: %q is not a figure >= 0", 2+i, line, f[2+i])
			}
			v[i] = x
		}
		if v[0] <= 0 || v[5] <= 0 || v[7] <= 0 || v[8] <= 0 {
			t.Errorf("read, total, peak and final must be positive: %s", line)
		}
		if f[0] == "1" && v[6] != 0 {
			t.Errorf("one rank receives over the network: %s", line)
		}
		if !strings.Contains(f[9], "(") {
			t.Errorf("peak without its phase: %s", line)
		}
		peaks[f[1]] = append(peaks[f[1]], v[7])
	}
	for _, p := range parts {
		ps := peaks[p]
		if len(ps) != 3 {
			t.Fatalf("%s: %d rows, want 3:\n%s", p, len(ps), table)
		}
		for i := 1; i < len(ps); i++ {
			if ps[i] >= ps[i-1] {
				t.Errorf("%s: peak %.1f MB on %d ranks, not below %.1f MB on %d", p, ps[i], 1<<i, ps[i-1], 1<<(i-1))
			}
		}
	}
}

// TestSpreadSteps checks the order in which owners spread from the set a
// partitioner gives them to: from the nodes (RCB) every set takes them
// from its targets; from the cells (METIS) the edges and boundary edges
// do, then the nodes take votes from the cells.
func TestSpreadSteps(t *testing.T) {
	_, d, err := airfoilMesh(0.002)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		given int
		want  string
	}{
		{nodes, "pedge<-, pbedge<-, pcell<-"},
		{cells, "pecell<-, pbecell<-, pcell->"},
		{-1, ""},
	} {
		steps, from := spreadSteps(d, tc.given)
		var got []string
		for i, mi := range steps {
			dir := "->"
			if from[i] {
				dir = "<-"
			}
			got = append(got, d.Maps[mi].Name+dir)
		}
		if s := strings.Join(got, ", "); s != tc.want {
			t.Errorf("from set %d: %s, want %s", tc.given, s, tc.want)
		}
	}
}

// TestDefaultRanksFit: the default rank counts (-startup's go to 1024)
// are those every mesh of -scale can take; a -ranks the user gave is
// checked as given.
func TestDefaultRanksFit(t *testing.T) {
	if got := fitting([]int{1, 2, 64, 128, 1024}, []float64{1, 1e-4}); !slices.Equal(got, []int{1, 2, 64}) {
		t.Errorf("fitting = %v, want [1 2 64] (the 0.0001× mesh has 72 cells)", got)
	}
	if got := fitting([]int{128}, []float64{1e-4}); !slices.Equal(got, []int{128}) {
		t.Errorf("fitting with none fitting = %v, want the counts as given, for check to refuse", got)
	}
}

func TestMain(m *testing.M) {
	if os.Getenv("GOOP2_OP2HALO_MAIN") == "1" {
		main() // as the command, for tests of its exit status
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestArguments: an argument that is not a flag is refused, with the
// flags after it that Go's flag parsing would leave out, before any
// work.
func TestArguments(t *testing.T) {
	for _, args := range [][]string{
		{"-ranks", "2", "8", "-scale", "1"},
		{"extra"},
		{"-scale", "0.002", "--", "-ranks", "2"},
	} {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "GOOP2_OP2HALO_MAIN=1")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.HasPrefix(stderr.String(), "op2halo: unexpected arguments") || stdout.Len() > 0 {
			t.Errorf("op2halo %s: %v, stderr %q, stdout %q; want exit status 1, nothing printed and \"op2halo: unexpected arguments\"",
				strings.Join(args, " "), err, stderr.String(), stdout.String())
		}
	}
}
