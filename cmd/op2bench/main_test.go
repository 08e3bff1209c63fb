package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/hdf5"
	"github.com/goop2/op2/internal/testreq"
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
	// -mgcfd adds its section to the full run.
	mgcfdSettings = &mgcfdOpts{n: 5, levels: 2, cycles: 1, rounds: 1, threads: 2}
	defer func() { mgcfdSettings = nil }()
	if err := run(&out, 0, 2, 0, 0); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"STREAM triad", "GB/s", "ns per loop", "Plan construction", "colours", "speed-up", "MG-CFD, 1 multigrid cycle on a 2-level box mesh"} {
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
	// No round or no iteration: an error, not a panic on an empty list.
	for _, bad := range [][3]int{{2, 0, 2}, {2, -1, 2}, {2, 1, 0}, {0, 1, 1}} {
		if err := schemes(io.Discard, m, bad[0], bad[1], bad[2]); err == nil || !strings.Contains(err.Error(), "each must be at least 1") {
			t.Errorf("%d threads, %d rounds, %d iterations: %v, want an error", bad[0], bad[1], bad[2], err)
		}
	}
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
		"PETSc MatSetValues", "CG iteration (Jacobi), 289 unknowns", "time/bound", "targets", "assembly speed-up, openmp 1 -> 2 threads",
		"Sparsity of the P1 pattern", "GoOP2 op2.NewSparsity"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	// With PETSc, its matrix is GoOP2's: same nonzeros, no mallocs.
	if !strings.Contains(s, "not measured") && !strings.Contains(s, "0 mallocs") {
		t.Errorf("PETSc made mallocs in assembly:\n%s", s)
	}
}

// TestMatrixSectionNoPETSc: with the library (and DOLFINx) missing the
// PETSc (and DOLFINx) lines say so and the rest is measured.
func TestMatrixSectionNoPETSc(t *testing.T) {
	t.Setenv("OP2_PETSC_LIBRARY", "libop2bench-no-such-petsc.so")
	t.Setenv("OP2_PYTHON", "/no/such/python3")
	var out bytes.Buffer
	if err := matrixSection(&out, 16, 1, 1, 20, 20); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"PETSc MatSetValues", "not measured", "install libpetsc-real3.18", "assembly against PETSc: not measured",
		"GoOP2 op2.NewSparsity", "apt-get install python3-dolfinx"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
}

// TestFloorSection runs the compute floor on a small mesh, with several
// threads and with one, and checks its tables; it asserts what was
// printed, never how fast. Bad arguments are errors.
func TestFloorSection(t *testing.T) {
	m, err := mesh.Generate(20, 30)
	if err != nil {
		t.Fatal(err)
	}
	common := []string{"Compute floor: Airfoil's loops against max(memory floor, in-cache floor)", cpuModel(),
		"large mesh: 1800 cells, 3530 edges, 140 boundary edges, 2 iterations per round",
		"in cache: each loop alone, repeated, on generated meshes where its bytes per call are about 16 KiB per thread and a quarter of that",
		"sequential (STREAM triad 10.0 GB/s)", "openmp 1 (STREAM triad 10.0 GB/s)",
		"B/elem", "in-cache", "call µs", "elements", "time/floor", "bound"}
	for _, tc := range []struct {
		threads int
		want    []string
		not     []string
	}{
		{2, []string{"openmp 2 (STREAM triad 20.0 GB/s)", "sequential, simd 8", "openmp 2, simd 8", "SIMD lanes: each loop's time with lanes"}, nil},
		{1, nil, []string{"openmp 2", "SIMD lanes"}},
	} {
		var out bytes.Buffer
		simd := []string{"off"}
		if tc.threads > 1 {
			simd = []string{"off", "8"}
		}
		if err := floorSection(&out, m, tc.threads, 2, 1, 16<<10, 10, 20, simd); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		for _, want := range append(common, tc.want...) {
			if !strings.Contains(s, want) {
				t.Errorf("%d threads: output lacks %q:\n%s", tc.threads, want, s)
			}
		}
		for _, not := range tc.not {
			if strings.Contains(s, not) {
				t.Errorf("%d threads: output has %q:\n%s", tc.threads, not, s)
			}
		}
		// One row per loop and configuration, each naming its floor.
		for _, loop := range []string{"save_soln", "adt_calc", "res_calc", "bres_calc", "update"} {
			rows := 0
			for _, line := range strings.Split(s, "\n") {
				if f := strings.Fields(line); len(f) == 9 && f[0] == loop && (f[8] == "memory" || f[8] == "in-cache") {
					rows++
				}
			}
			if want := (1 + tc.threads) * len(simd); rows != want {
				t.Errorf("%d threads: %d rows for %s, want %d:\n%s", tc.threads, rows, loop, want, s)
			}
		}
		if ts := op2.Timings(); len(ts) != 0 {
			t.Errorf("%d threads: the compute floor left timing records behind: %v", tc.threads, ts)
		}
		t.Log(s)
	}
	for _, bad := range []struct {
		threads, iters, rounds, budget int
		triad                          float64
		want                           string
	}{
		{0, 2, 1, 1024, 10, "0 threads"},
		{2, 0, 1, 1024, 10, "0 iterations"},
		{2, 2, 0, 1024, 10, "0 rounds"},
		{2, 2, 1, 0, 10, "0 bytes in cache"},
		{2, 2, 1, 1024, 0, "STREAM triad rates 0 and 0 GB/s must be positive"},
	} {
		err := floorSection(io.Discard, m, bad.threads, bad.iters, bad.rounds, bad.budget, bad.triad, bad.triad, nil)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("floorSection(%d threads, %d iterations, %d rounds, %d bytes, %g GB/s) = %v, want an error saying %q",
				bad.threads, bad.iters, bad.rounds, bad.budget, bad.triad, err, bad.want)
		}
	}
}

// TestFloorGrid checks the in-cache meshes' sizes against mesh.Generate:
// the smallest grid with at least the elements asked for.
func TestFloorGrid(t *testing.T) {
	for _, tc := range []struct {
		set string
		n   int
	}{
		{"cells", 1}, {"cells", 3000}, {"edges", 3000}, {"bedges", 1900}, {"nodes", 500},
	} {
		i := floorGrid(tc.set, tc.n)
		m, err := mesh.Generate(i, floorJ(i))
		if err != nil {
			t.Fatal(err)
		}
		got := setSizes(m)[tc.set]
		if got != gridSize(tc.set, i) || got < tc.n {
			t.Errorf("%s, %d elements: grid %d has %d (gridSize %d)", tc.set, tc.n, i, got, gridSize(tc.set, i))
		}
		if i > 1 {
			if m, err := mesh.Generate(i-1, floorJ(i-1)); err != nil || setSizes(m)[tc.set] >= tc.n {
				t.Errorf("%s, %d elements: grid %d is not the smallest", tc.set, tc.n, i)
			}
		}
	}
}

// fakeMGCFD is a stand-in for the original MG-CFD binary: it checks the
// command line op2bench gives it and the files it should find, and prints
// the lines op2bench reads.
const fakeMGCFD = `#!/bin/sh
# args: -i input.dat -d DIR -g CYCLES -v
[ "$1" = -i ] && [ "$3" = -d ] && [ "$5" = -g ] && [ "$7" = -v ] || { echo "bad args: $*"; exit 2; }
[ -f "$4/$2" ] && [ -f "$4/mesh_L0.h5" ] && [ -f "$4/mesh_L1.h5" ] || { echo "no mesh in $4"; exit 3; }
echo "threads $OMP_NUM_THREADS"
i=1
while [ $i -le "$6" ]; do echo "Performing MG cycle $i / $6  rms 4.0e-07"; i=$((i+1)); done
echo "Max total runtime = 0.250000"
if [ -f "$4/solution.variables.L0.cycles=$6.h5" ] && [ -f "$4/solution.variables.L1.cycles=$6.h5" ]; then
  echo "Validation passed"
else
  echo "Validation failed"
fi
`

// TestMGCFDSection runs the MG-CFD section on a small mesh, against
// stand-ins for the original's binaries: the figures, the ratio, the
// per-loop table and the original's validation verdict are printed.
func TestMGCFDSection(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"euler3d_genseq", "euler3d_openmp"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(fakeMGCFD), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	err := mgcfdSection(&out, mgcfdOpts{n: 5, levels: 2, cycles: 2, rounds: 1, threads: 2, op2Dir: dir, simd: []string{"off", "8", "8+fused"}})
	if errors.Is(err, hdf5.ErrNoHDF5) {
		testreq.Skip(t, "hdf5", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"MG-CFD, 2 multigrid cycles on a 2-level box mesh (125 nodes, 300 edges", "GoOP2/OP2",
		"0.250 /   0.250", "validated against GoOP2's sequential run)", "OP2 sequential (euler3d_genseq): validation against GoOP2's variables passed (1 of 1 runs)",
		"OP2 openmp 2 (euler3d_openmp): validation against GoOP2's variables passed", "its rms of every cycle within", "mg_flux_edge", "mg_prolong", "openmp 2",
		"sequential simd8", "openmp 2 simd8", "openmp 2 simd8 fused", "fused_*"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// One speed-up line per -mgcfd-simd setting, openmp against the
	// sequential run of the same setting.
	speedUp := regexp.MustCompile(`(?m)^  GoOP2 speed-up openmp 2 threads vs sequential(.*): [0-9.]+x \(medians\)$`)
	if got := speedUp.FindAllStringSubmatch(out.String(), -1); len(got) != 3 || got[0][1] != ", both -mgcfd-simd off" || got[1][1] != ", both -mgcfd-simd 8" || got[2][1] != ", both -mgcfd-simd 8+fused" {
		t.Errorf("speed-up lines %q, want one for each of off, 8 and 8+fused:\n%s", got, out.String())
	}
	if ts := op2.Timings(); len(ts) != 0 {
		t.Errorf("the benchmark left timing records behind: %v", ts)
	}
	// A device backend runs beside them, with no original of its own.
	if err := op2.Use("opencl"); err != nil {
		t.Logf("opencl unavailable, -mgcfd-device not checked: %v", err)
	} else {
		if err := op2.Use("sequential"); err != nil {
			t.Fatal(err)
		}
		out.Reset()
		if err := mgcfdSection(&out, mgcfdOpts{n: 5, levels: 2, cycles: 1, rounds: 1, threads: 2, op2Dir: dir, device: "opencl"}); err != nil {
			t.Fatal(err)
		}
		row := regexp.MustCompile(`(?m)^  opencl +[0-9.]+ / +[0-9.]+ +- +- +[0-9.e+-]+$`)
		if !row.MatchString(out.String()) || strings.Contains(out.String(), "OP2 opencl") {
			t.Errorf("-mgcfd-device opencl: no opencl row, or one with an original:\n%s", out.String())
		}
		if got := speedUp.FindAllStringSubmatch(out.String(), -1); len(got) != 1 || got[0][1] != "" {
			t.Errorf("-mgcfd-device opencl: speed-up lines %q, want the openmp run's, unlabelled:\n%s", got, out.String())
		}
		// -mgcfd-device-only: the device's row alone.
		out.Reset()
		if err := mgcfdSection(&out, mgcfdOpts{n: 5, levels: 2, cycles: 1, rounds: 1, threads: 2, device: "opencl", deviceOnly: true}); err != nil {
			t.Fatal(err)
		}
		if !row.MatchString(out.String()) || strings.Contains(out.String(), "  sequential") || strings.Contains(out.String(), "  openmp") {
			t.Errorf("-mgcfd-device-only: not the opencl row alone:\n%s", out.String())
		}
		// -mgcfd-op2-builds cuda: the original's CUDA build beside the
		// device run, and no other original.
		if err := os.WriteFile(filepath.Join(dir, "euler3d_cuda"), []byte(fakeMGCFD), 0o755); err != nil {
			t.Fatal(err)
		}
		out.Reset()
		t.Chdir(filepath.Dir(dir)) // a relative folder, though runOP2 runs the binary from another
		if err := mgcfdSection(&out, mgcfdOpts{n: 5, levels: 2, cycles: 2, rounds: 1, threads: 1, op2Dir: filepath.Base(dir), device: "opencl", op2Builds: []string{"cuda"}}); err != nil {
			t.Fatal(err)
		}
		row = regexp.MustCompile(`(?m)^  opencl +[0-9.]+ / +[0-9.]+ +0\.250 / +0\.250 +[0-9.]+x +[0-9.e+-]+$`)
		if !row.MatchString(out.String()) || !strings.Contains(out.String(), "OP2 opencl (euler3d_cuda): validation against GoOP2's variables passed (1 of 1 runs); its rms of every cycle within") ||
			strings.Contains(out.String(), "OP2 sequential") || strings.Contains(out.String(), "OP2 openmp") {
			t.Errorf("-mgcfd-op2-builds cuda: no original beside the opencl run, or others:\n%s", out.String())
		}
		// With -mgcfd-device-only there is no sequential run: the
		// device run writes the variables the original validates against.
		out.Reset()
		if err := mgcfdSection(&out, mgcfdOpts{n: 5, levels: 2, cycles: 2, rounds: 2, threads: 2, op2Dir: filepath.Base(dir), device: "opencl", deviceOnly: true, op2Builds: []string{"cuda"}}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "OP2 opencl (euler3d_cuda): validation against GoOP2's variables passed (2 of 2 runs)") ||
			!strings.Contains(out.String(), "validated against GoOP2's opencl run)") {
			t.Errorf("-mgcfd-device-only -mgcfd-op2-builds cuda: the original not validated against the device run's variables:\n%s", out.String())
		}
	}
	// Without the original, GoOP2 alone; a folder without its binaries
	// and bad settings are errors.
	out.Reset()
	if err := mgcfdSection(&out, mgcfdOpts{n: 5, levels: 2, cycles: 1, rounds: 1, threads: 1}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "mg_flux_edge") || strings.Contains(out.String(), "openmp 2") {
		t.Errorf("GoOP2 alone on 1 thread:\n%s", out.String())
	}
	// Originals that fail, print no time, or print cycles out of order.
	broken := func(script string) string {
		d := t.TempDir()
		if err := os.WriteFile(filepath.Join(d, "euler3d_seq"), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, tc := range []struct {
		o    mgcfdOpts
		want string
	}{
		{mgcfdOpts{n: 5, levels: 2, cycles: 1, rounds: 1, threads: 1, op2Dir: broken("echo boom; exit 4\n")}, "exit status 4; its output ends:\nboom"},
		{mgcfdOpts{n: 5, levels: 2, cycles: 1, rounds: 1, threads: 1, op2Dir: broken("echo hello\n")}, `printed no "Max total runtime = " line`},
		{mgcfdOpts{n: 5, levels: 2, cycles: 1, rounds: 1, threads: 1, op2Dir: broken("echo 'Performing MG cycle 2 / 1  rms 1e-7'; echo 'Max total runtime = 1'\n")}, "out of order"},
		{mgcfdOpts{n: 5, levels: 2, cycles: 1, rounds: 1, threads: 1, op2Dir: t.TempDir()}, "holds none of the original's binaries (euler3d_genseq, euler3d_seq, euler3d_openmp)"},
		{mgcfdOpts{n: 5, levels: 2, cycles: 1, rounds: 1, threads: 1, op2Dir: t.TempDir(), op2Builds: []string{"cuda"}, device: "cuda"}, "holds none of the original's binaries (euler3d_cuda)"},
		{mgcfdOpts{n: 5, levels: 2, cycles: 1, rounds: 1, threads: 1, op2Dir: broken(""), op2Builds: []string{"cuda"}}, "-mgcfd-op2-builds cuda wants -mgcfd-device"},
		{mgcfdOpts{n: 5, levels: 2, cycles: 1, rounds: 1, threads: 1, op2Dir: broken(""), op2Builds: []string{"hip"}}, `unknown build "hip"`},
		{mgcfdOpts{n: 5, levels: 2, cycles: 0, rounds: 1, threads: 1}, "0 cycles"},
		{mgcfdOpts{n: 5, levels: 2, cycles: 1, rounds: 1, threads: 1, deviceOnly: true}, "-mgcfd-device-only wants a device"},
		{mgcfdOpts{n: 5, levels: 2, cycles: 1, rounds: 1, threads: 1, device: "openmp"}, `-mgcfd-device "openmp": want cuda or opencl`},
		{mgcfdOpts{n: 6, levels: 2, cycles: 1, rounds: 1, threads: 1}, "multiple of 2^(levels−1)"},
	} {
		if err := mgcfdSection(io.Discard, tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error saying %q", tc.o, err, tc.want)
		}
	}
}

// TestChainSection: the loop-chain section runs every mode on both
// backends and prints their times and bytes against eager execution,
// with the fused loops it ran.
func TestChainSection(t *testing.T) {
	m, err := mesh.Generate(20, 30)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := chainSection(&out, m, chainOpts{iters: 3, rounds: 1, threads: 2, simd: []string{"off", "8"}, tile: 300}, 10, 20); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"Loop chains: Airfoil 1800 cells, 3 iterations per run, 1 rounds", "output lines are the same in every mode",
		"sequential off  eager", "openmp     8    chain+fusion", "ms/iter", "MB/iter", "moved MB", "vs floor",
		"openmp simd 8 chain+fusion: fused_save_soln_adt_calc", "fused_update_adt_calc ×3", "fused_update_save_soln_adt_calc ×2",
		// The defaults' fused loops, built in the background, are timed.
		"sequential simd 8 default: fused_", "openmp simd 8 default: fused_",
		"tiles of 300 cells", "sequential off  chain+tiling", "openmp     8    chain+fus+tile"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	// No round or no iteration: an error, not a table of NaN.
	for _, o := range []chainOpts{{iters: 3, rounds: 0, threads: 2}, {iters: 0, rounds: 1, threads: 2}, {iters: 3, rounds: 1, threads: 0}} {
		o.simd = []string{"off"}
		if err := chainSection(io.Discard, m, o, 10, 20); err == nil || !strings.Contains(err.Error(), "each must be at least 1") {
			t.Errorf("%+v: %v, want an error", o, err)
		}
	}
}

// TestChainModes: the chain section's modes are eager, the defaults,
// the chained modes without tiles, the tiled modes with a tile size, one
// fused tiled mode per further size, and only those named (eager
// always) when some are.
func TestChainModes(t *testing.T) {
	for _, c := range []struct {
		tile int
		more []int
		only []string
		want []string
	}{
		{0, nil, nil, []string{"eager", "default", "auto-tiles", "chain", "chain+fusion"}},
		{300, []int{64, 128}, nil, []string{"eager", "default", "auto-tiles", "chain", "chain+fusion", "chain+tiling", "chain+fus+tile", "fus+tile/64", "fus+tile/128"}},
		{300, []int{64}, []string{"default", "fus+tile/64"}, []string{"eager", "default", "fus+tile/64"}},
	} {
		var got []string
		modes, err := chainModes(c.tile, c.more, c.only)
		for _, m := range modes {
			got = append(got, m.name)
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("chainModes(%d, %v, %v) = %v, %v; want %v", c.tile, c.more, c.only, got, err, c.want)
		}
	}
	if _, err := chainModes(0, nil, []string{"foo"}); err == nil || !strings.Contains(err.Error(), `no mode "foo"`) {
		t.Errorf("chainModes of an unknown mode: %v", err)
	}
}

// TestMGCFDFloorSection runs MG-CFD's compute floor on small meshes: a
// row per loop of the finest level with its floors, for both
// configurations, and bad sizes refused.
func TestMGCFDFloorSection(t *testing.T) {
	var out bytes.Buffer
	if err := mgcfdFloorSection(&out, mgcfdOpts{n: 9, levels: 2, cycles: 2, rounds: 1, threads: 2}, [2]int{3, 5}, 20, 30); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"MG-CFD's loops on the finest level", "729 nodes", "sequential (STREAM triad 20.0 GB/s)",
		"openmp 2 (STREAM triad 30.0 GB/s)", "mg_flux_edge", "mg_calc_dt", "mg_restrict_sum", "time/floor"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if ts := op2.Timings(); len(ts) != 0 {
		t.Errorf("the benchmark left timing records behind: %v", ts)
	}
	for _, small := range [][2]int{{5, 3}, {3, 9}} {
		if err := mgcfdFloorSection(&out, mgcfdOpts{n: 9, levels: 2, cycles: 1, rounds: 1, threads: 1}, small, 20, 20); err == nil || !strings.Contains(err.Error(), "increasing and smaller") {
			t.Errorf("small meshes %v: %v", small, err)
		}
	}
}

func TestCheckSIMDList(t *testing.T) {
	for _, c := range []struct {
		list  string
		fused bool
		ok    bool
	}{
		{"", false, true},
		{"off,8", false, true},
		{"auto,scalar,4", false, true},
		{"8+fused", true, true},
		{"8+fused", false, false},
		{"foo", false, false},
		{"off,", false, false},
		{"+fused", true, false},
		{"7", true, false},
	} {
		err := checkSIMDList("x-simd", c.list, c.fused)
		if (err == nil) != c.ok {
			t.Errorf("checkSIMDList(%q, fused %v) = %v; want ok %v", c.list, c.fused, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "-x-simd") {
			t.Errorf("checkSIMDList(%q): %v does not name the flag", c.list, err)
		}
	}
}
