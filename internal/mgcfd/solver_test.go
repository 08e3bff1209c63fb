package mgcfd

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/hdf5"
	"github.com/goop2/op2/internal/testreq"
)

// goldenRMS is the rms of the first cycles on Generate(9, 3) as the
// original MG-CFD (MG-CFD-app-OP2 15d5833 built on OP2-Common's genseq,
// patched to print each cycle's rms) prints them on this mesh written by
// WriteHDF5. GoOP2's sequential backend gave the same values to the last
// digit when compiled, as the original is, with GCC's contraction of
// a*b+c into fused multiply-adds; its default flags turn that off
// (exec.DefaultCFlags), and the values agree within 3e-15 (relative). The backends
// agree to about 1e-14; the tolerance leaves room for contractions of the
// residual, a small difference of large values. The rms falls by about
// 7e-8 of its value per cycle.
var goldenRMS = []float64{3.1681599415387277e-07, 3.1681597116844335e-07, 3.1681594815115458e-07}

// solve runs cycles cycles on m with the current configuration and
// returns the rms of each cycle and every level's variables.
func solve(t *testing.T, m *Mesh, cycles int) ([]float64, [][]float64) {
	t.Helper()
	s, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rms, _, err := s.Run(cycles, nil)
	if err != nil {
		t.Fatal(err)
	}
	vars := make([][]float64, s.Levels())
	for l := range vars {
		if vars[l], err = s.Variables(l); err != nil {
			t.Fatal(err)
		}
	}
	return rms, vars
}

// sequentialMesh generates an n³-node mesh of levels levels and
// configures the sequential backend.
func sequentialMesh(t *testing.T, n, levels int) *Mesh {
	t.Helper()
	m, err := Generate(n, levels)
	if err != nil {
		t.Fatal(err)
	}
	if err := op2.Configure(op2.Config{Backend: "sequential"}); err != nil {
		t.Fatal(err)
	}
	return m
}

func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))
}

// TestBackendsAgree runs the cycle on sequential, openmp (both schemes, 2
// threads), opencl and cuda (where they open), and checks each cycle's rms and every level's
// variables against sequential's, to the reassociation of increments; and
// sequential's rms against the golden values.
func TestBackendsAgree(t *testing.T) {
	m := sequentialMesh(t, 9, 3)
	const cycles = 3
	wantRMS, wantVars := solve(t, m, cycles)
	t.Logf("sequential rms %.17g", wantRMS)
	if len(wantRMS) != cycles {
		t.Fatalf("%d rms values for %d cycles", len(wantRMS), cycles)
	}
	for i, want := range goldenRMS {
		if !near(wantRMS[i], want, 1e-10) {
			t.Errorf("cycle %d: rms %.17g, golden %.17g", i+1, wantRMS[i], want)
		}
	}
	for _, tc := range []struct {
		backend, scheme string
		threads         int
	}{{"openmp", "owner", 2}, {"openmp", "colour", 2}, {"opencl", "", 0}, {"cuda", "", 0}} {
		t.Run(tc.backend+" "+tc.scheme, func(t *testing.T) {
			err := op2.Configure(op2.Config{Backend: tc.backend, Threads: tc.threads, OpenMPScheme: tc.scheme})
			if tc.backend == "opencl" || tc.backend == "cuda" {
				testreq.Check(t, tc.backend, err, op2.ErrBackendUnavailable)
			} else if err != nil {
				t.Fatal(err)
			}
			rms, vars := solve(t, m, cycles)
			for i := range wantRMS {
				if !near(rms[i], wantRMS[i], 1e-10) {
					t.Errorf("cycle %d: rms %.17g, sequential %.17g", i+1, rms[i], wantRMS[i])
				}
			}
			for l := range wantVars {
				// Momentum across the flow is zero to rounding: compare
				// to the level's largest value.
				scale := 0.0
				for _, v := range wantVars[l] {
					scale = math.Max(scale, math.Abs(v))
				}
				for i := range wantVars[l] {
					if math.Abs(vars[l][i]-wantVars[l][i]) > 1e-12*scale {
						t.Fatalf("level %d: variable %d = %.17g, sequential %.17g", l, i, vars[l][i], wantVars[l][i])
					}
				}
			}
		})
	}
}

// TestOneLevel runs a single-level mesh: every smoothing step is a cycle.
func TestOneLevel(t *testing.T) {
	m := sequentialMesh(t, 5, 1)
	rms, _ := solve(t, m, 4)
	if len(rms) != 4 {
		t.Fatalf("%d rms values for 4 cycles", len(rms))
	}
	for i, r := range rms {
		if !(r > 0) || math.IsInf(r, 0) {
			t.Fatalf("cycle %d: rms %g", i+1, r)
		}
	}
}

func TestSolverErrors(t *testing.T) {
	m := sequentialMesh(t, 5, 2)
	s, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(m); err == nil || !strings.Contains(err.Error(), "mg_smooth") {
		t.Errorf("a second Solver while the first is open: %v, want an error naming the constant mg_smooth", err)
	}
	if _, _, err := s.Run(-1, nil); err == nil || !strings.Contains(err.Error(), "-1 cycles") {
		t.Errorf("Run(-1): %v", err)
	}
	if _, err := s.Variables(2); err == nil || !strings.Contains(err.Error(), "levels 0 to 1") {
		t.Errorf("Variables(2): %v", err)
	}
	// A non-finite state stops the run with an error.
	s.levels[0].vars.Data()[7] = math.NaN()
	if _, _, err := s.Run(1, nil); err == nil || !strings.Contains(err.Error(), "not finite") {
		t.Errorf("Run with a NaN variable: %v, want an error saying the variables are not finite", err)
	}
	s.Close()
	s, err = New(m) // the constants were withdrawn
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, _, err := NewDistributed(m, "metis"); err == nil || !strings.Contains(err.Error(), `unknown partitioner "metis" (rcb or block)`) {
		t.Errorf("NewDistributed(m, \"metis\"): %v", err)
	}
	// Without MPI NewDistributed is New.
	s, info, err := NewDistributed(m, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if info.Ranks != 1 || info.Partitioner != "rcb" {
		t.Errorf("partition without MPI: %+v", info)
	}
}

// TestWriteSolution writes every level's variables as the original's
// validation files and reads them back.
func TestWriteSolution(t *testing.T) {
	m := sequentialMesh(t, 5, 2)
	s, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, _, err := s.Run(2, nil); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	testreq.Check(t, "hdf5", WriteSolution(dir, s, 2), hdf5.ErrNoHDF5)
	for l := 0; l < 2; l++ {
		want, err := s.Variables(l)
		if err != nil {
			t.Fatal(err)
		}
		f, err := hdf5.Open(filepath.Join(dir, fmt.Sprintf("solution.variables.L%d.cycles=2.h5", l)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := hdf5.ReadAll[float64](f, fmt.Sprintf("p_variables_result_L%d", l), 5)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("level %d: the validation file differs from the variables", l)
		}
	}
}

// TestChainedAndFusedAgree: the cycle with its loops recorded (lazy
// mode) and fused (Config.Fusion "on"; with 8 SIMD lanes too) gives the
// bits of running each loop at once, and fused loops ran.
func TestChainedAndFusedAgree(t *testing.T) {
	m := sequentialMesh(t, 9, 3)
	const cycles = 2
	for _, simd := range []string{"off", "8"} {
		if err := op2.Configure(op2.Config{Backend: "sequential", SIMD: simd}); err != nil {
			t.Fatal(err)
		}
		wantRMS, wantVars := solve(t, m, cycles)
		if err := op2.Configure(op2.Config{Backend: "sequential", SIMD: simd, Lazy: true, Fusion: "on", Timing: true}); err != nil {
			t.Fatal(err)
		}
		rms, vars := solve(t, m, cycles)
		var fused []string
		for _, lt := range op2.Timings() {
			if strings.HasPrefix(lt.Kernel, "fused_") {
				fused = append(fused, lt.Kernel)
			}
		}
		if len(fused) == 0 {
			t.Errorf("simd %s: no loop fused", simd)
		}
		t.Logf("simd %s: fused %v", simd, fused)
		if !slices.Equal(rms, wantRMS) {
			t.Errorf("simd %s: rms %v, at once %v", simd, rms, wantRMS)
		}
		for l := range wantVars {
			if !slices.Equal(vars[l], wantVars[l]) {
				t.Errorf("simd %s: level %d's variables differ from running each loop at once", simd, l)
			}
		}
	}
	if err := op2.Configure(op2.Config{Backend: "sequential"}); err != nil {
		t.Fatal(err)
	}
}
