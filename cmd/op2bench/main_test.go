package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/mesh"
)

// TestBenchRuns runs every measurement except Airfoil once, and the
// -locality-only run on a small mesh, so the command keeps working; it
// asserts what was printed, never how fast.
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
	// -locality-only: the triad, then the comparison against it.
	m, err := mesh.Generate(20, 30)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := localityOnly(&out, m, 2, 3, 1); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"STREAM triad", "Locality and tuning", "per loop, GB/s", "targets"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("-locality-only output lacks %q:\n%s", want, out.String())
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
// small mesh, with several threads in two rounds and with one thread in
// one, and checks its rows, tables and targets; it asserts what was
// printed, never how fast.
func TestLocalityAndTuningRuns(t *testing.T) {
	m, err := mesh.Generate(20, 30)
	if err != nil {
		t.Fatal(err)
	}
	common := []string{"sequential ordered ", "sequential shuffled ", "sequential shuffled+rcm", "sequential shuffled+rcb",
		"ordered tuned", "time/bound", "per loop, GB/s", "save_soln", "adt_calc", "res_calc", "bres_calc", "update", "all loops",
		"targets", "(target <= 1.30x)", "(target <= 1.10x)", "sequential has no tuned run"}
	for _, tc := range []struct {
		threads int
		rounds  int
		want    []string
		not     []string
	}{
		{2, 2, []string{"medians of 2 rounds", "(min-max)", "openmp 1 ordered", "openmp 2 ordered", "openmp 2 shuffled ", "openmp 2 shuffled+rcm", "openmp 2 shuffled+rcb",
			"openmp 2 ordered tuned: time/bound", "res_calc speed-up, openmp 1 -> 2 threads", "(target >= 1.80x)",
			"res_calc speed-up, sequential -> openmp 2 threads", "omp2 tuned", "omp2 tuned: the tuner's choices", "STREAM triad 10.0 GB/s", "STREAM triad 20.0 GB/s"},
			[]string{"openmp 1 shuffled"}},
		{1, 1, []string{"openmp 1 ordered", "openmp 1 shuffled+rcm", "openmp 1 ordered tuned", "not measured (1 thread only)"},
			[]string{"openmp 2", "(target >= 1.80x)", "rounds", "(min-max)"}},
	} {
		var out bytes.Buffer
		if err := localityAndTuning(&out, m, 12, tc.threads, tc.rounds, 10, 20); err != nil {
			t.Fatal(err)
		}
		for _, want := range append(common, tc.want...) {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%d threads: output lacks %q:\n%s", tc.threads, want, out.String())
			}
		}
		for _, not := range tc.not {
			if strings.Contains(out.String(), not) {
				t.Errorf("%d threads: output has %q:\n%s", tc.threads, not, out.String())
			}
		}
		if ts := op2.Timings(); len(ts) != 0 {
			t.Errorf("%d threads: the comparison left timing records behind: %v", tc.threads, ts)
		}
		t.Log(out.String())
	}
	for _, bad := range [][3]int{{0, 2, 1}, {12, 0, 1}, {12, 2, 0}} {
		if err := localityAndTuning(io.Discard, m, bad[0], bad[1], bad[2], 10, 20); err == nil {
			t.Errorf("%d iterations, %d threads, %d rounds: no error", bad[0], bad[1], bad[2])
		}
	}
}

// TestShortIters checks how many iterations a short run makes.
func TestShortIters(t *testing.T) {
	for _, tc := range []struct {
		iters, probe    int
		budget, perIter float64
		want            int
	}{
		{100, 2, 2.0, 0.16, 13},  // 12.5 iterations fit: rounded up
		{100, 2, 2.0, 0.02, 100}, // all fit
		{100, 2, 2.0, 0.01, 100}, // more than all fit: at most iters
		{100, 2, 0.1, 1.0, 2},    // fewer than the probe fit: the probe
		{1, 2, 0.1, 1.0, 1},      // the probe is longer than the run
		{100, 2, 0, 0.16, 100},   // no budget: all
		{100, 2, 2.0, 0, 100},    // no time measured: all
	} {
		if got := shortIters(tc.iters, tc.probe, tc.budget, tc.perIter); got != tc.want {
			t.Errorf("shortIters(%d, %d, %g, %g) = %d, want %d", tc.iters, tc.probe, tc.budget, tc.perIter, got, tc.want)
		}
	}
}

// TestVerdict checks the met / not met verdicts on both kinds of target.
func TestVerdict(t *testing.T) {
	for _, tc := range []struct {
		v, target float64
		atMost    bool
		want      string
	}{
		{1.05, 1.3, true, "met"},
		{1.3, 1.3, true, "met"},
		{1.31, 1.3, true, "not met"},
		{1.98, 1.8, false, "met"},
		{1.8, 1.8, false, "met"},
		{1.5, 1.8, false, "not met"},
	} {
		if got := verdict(tc.v, tc.target, tc.atMost); got != tc.want {
			t.Errorf("verdict(%g, %g, %v) = %q, want %q", tc.v, tc.target, tc.atMost, got, tc.want)
		}
	}
}

// TestMatrixSection runs the matrix section on a small mesh: GoOP2's
// assembly on every configuration, the PETSc program (or the line
// saying PETSc is missing) and the CG iterations against their bound.
func TestMatrixSection(t *testing.T) {
	var out bytes.Buffer
	if err := matrixSection(&out, 16, 1, 2, 20, 30); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"Matrix assembly", "512 triangles, 289 nodes", "GoOP2 sequential", "GoOP2 openmp 1", "GoOP2 openmp 2",
		"PETSc MatSetValues", "CG iteration (Jacobi), 289 unknowns", "time/bound", "targets", "assembly speed-up, openmp 1 -> 2 threads"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	// With PETSc, its matrix is GoOP2's: same nonzeros, no mallocs.
	if !strings.Contains(s, "not measured") && !strings.Contains(s, "0 mallocs") {
		t.Errorf("PETSc made mallocs in assembly:\n%s", s)
	}
}

// TestMatrixSectionNoPETSc: with the library missing the PETSc line
// says so and the rest is measured.
func TestMatrixSectionNoPETSc(t *testing.T) {
	t.Setenv("OP2_PETSC_LIBRARY", "libop2bench-no-such-petsc.so")
	var out bytes.Buffer
	if err := matrixSection(&out, 16, 1, 1, 20, 20); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"PETSc MatSetValues", "not measured", "install libpetsc-real3.18", "assembly against PETSc: not measured"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
}
